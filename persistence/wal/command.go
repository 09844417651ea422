package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The payload of a data record is a command in deterministic form:
//
//	uvarint db | uvarint argc | argc × (uvarint len | len bytes)
//
// Varints are unsigned LEB128 (encoding/binary's Uvarint) in their shortest
// form; argc is at least 1 (the command name).

// ErrBadCommand is returned by DecodeCommand for a malformed payload.
var ErrBadCommand = errors.New("wal: malformed command payload")

// CommandSize is the size of the encoded command.
func CommandSize(db int, args [][]byte) int {
	n := uvarintLen(uint64(db)) + uvarintLen(uint64(len(args)))
	for _, a := range args {
		n += uvarintLen(uint64(len(a))) + len(a)
	}
	return n
}

// AppendCommand appends the encoded command to dst. It allocates only when
// dst lacks capacity. It panics when db is negative or args is empty.
func AppendCommand(dst []byte, db int, args [][]byte) []byte {
	if db < 0 {
		panic(fmt.Sprintf("wal: command for negative db %d", db))
	}
	if len(args) == 0 {
		panic("wal: command without arguments")
	}
	dst = binary.AppendUvarint(dst, uint64(db))
	dst = binary.AppendUvarint(dst, uint64(len(args)))
	for _, a := range args {
		dst = binary.AppendUvarint(dst, uint64(len(a)))
		dst = append(dst, a...)
	}
	return dst
}

// EncodeCommand returns the encoded command in a new slice.
func EncodeCommand(db int, args [][]byte) []byte {
	return AppendCommand(make([]byte, 0, CommandSize(db, args)), db, args)
}

// DecodeCommand decodes a data record's payload. The returned arguments
// alias payload.
func DecodeCommand(payload []byte) (db int, args [][]byte, err error) {
	return DecodeCommandInto(nil, payload)
}

// DecodeCommandInto is DecodeCommand appending the arguments to args[:0],
// so that a caller replaying many records can reuse one slice.
func DecodeCommandInto(args [][]byte, payload []byte) (db int, out [][]byte, err error) {
	p := payload
	v, p, err := readUvarint(p, "db")
	if err != nil {
		return 0, nil, err
	}
	if v > math.MaxInt32 {
		return 0, nil, fmt.Errorf("%w: db %d out of range", ErrBadCommand, v)
	}
	db = int(v)
	argc, p, err := readUvarint(p, "argc")
	if err != nil {
		return 0, nil, err
	}
	// Every argument takes at least one byte (its length), so a count above
	// the bytes left is damage, and the bound keeps the allocation honest.
	if argc == 0 || argc > uint64(len(p)) {
		return 0, nil, fmt.Errorf("%w: argc %d with %d bytes left", ErrBadCommand, argc, len(p))
	}
	out = args[:0]
	if cap(out) < int(argc) {
		out = make([][]byte, 0, argc)
	}
	for i := range argc {
		var n uint64
		n, p, err = readUvarint(p, "argument length")
		if err != nil {
			return 0, nil, err
		}
		if n > uint64(len(p)) {
			return 0, nil, fmt.Errorf("%w: argument %d of %d bytes with %d left", ErrBadCommand, i, n, len(p))
		}
		out = append(out, p[:n:n])
		p = p[n:]
	}
	if len(p) != 0 {
		return 0, nil, fmt.Errorf("%w: %d trailing bytes", ErrBadCommand, len(p))
	}
	return db, out, nil
}

func readUvarint(p []byte, what string) (uint64, []byte, error) {
	v, n := binary.Uvarint(p)
	if n <= 0 {
		return 0, nil, fmt.Errorf("%w: bad %s varint", ErrBadCommand, what)
	}
	if n > 1 && p[n-1] == 0 {
		return 0, nil, fmt.Errorf("%w: %s varint not in shortest form", ErrBadCommand, what)
	}
	return v, p[n:], nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
