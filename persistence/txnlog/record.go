package txnlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Command is the name of the markers' command in the WAL.
const Command = "MOOND.TXN"

// Marker kinds.
const (
	Begin = "BEGIN"
	End   = "END"
	// Abort is logged at a boot by each shard whose replay left out a
	// part: a txn decided not committed stays so on every later boot,
	// whatever the shards' redo points pass meanwhile.
	Abort = "ABORT"
	// Group, in an END, names the first txid of the txn's group (see
	// Marker.Group).
	Group = "GROUP"
)

// ErrMarker is a MOOND.TXN record that does not decode.
var ErrMarker = errors.New("txnlog: bad transaction marker")

// Marker is one decoded MOOND.TXN record.
type Marker struct {
	End   bool     // END
	Abort bool     // ABORT; neither: BEGIN
	Txid  uint64   // never 0
	Parts []uint32 // END: the shards that take part, ascending
	// Group (END only, 0 for none) is the txid of the first txn that may
	// write in the txn's group: the txns a coordinator holds its shards for
	// at once, with consecutive txids, whose parts follow one another on
	// each shard without waiting for the earlier ones to commit. A txn
	// may thus have read what an earlier txn of its group wrote, so it
	// commits only when every txn of its group below it whose markers a
	// log holds committed too (Decide).
	Group uint64
}

// BeginArgs is the command of a BEGIN marker for txid.
func BeginArgs(txid uint64) [][]byte {
	return [][]byte{[]byte(Command), []byte(Begin), strconv.AppendUint(nil, txid, 10)}
}

// AbortArgs is the command of an ABORT marker for txid.
func AbortArgs(txid uint64) [][]byte {
	return [][]byte{[]byte(Command), []byte(Abort), strconv.AppendUint(nil, txid, 10)}
}

// EndArgs is the command of an END marker for txid over the shards parts,
// in the group that begins at txid group (0, or txid itself, for none).
func EndArgs(txid, group uint64, parts []int) [][]byte {
	args := make([][]byte, 0, 5+len(parts))
	args = append(args, []byte(Command), []byte(End), strconv.AppendUint(nil, txid, 10))
	if group != 0 && group < txid {
		args = append(args, []byte(Group), strconv.AppendUint(nil, group, 10))
	}
	for _, p := range parts {
		args = append(args, strconv.AppendInt(nil, int64(p), 10))
	}
	return args
}

// IsEncodedMarker reports whether a data record's payload (wal.AppendCommand's
// encoding) is a marker's, without decoding the rest: a recovery's first
// pass reads every record and looks at markers only.
func IsEncodedMarker(payload []byte) bool {
	p := payload
	for range 2 { // the database, the argument count
		_, k := binary.Uvarint(p)
		if k <= 0 {
			return false
		}
		p = p[k:]
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n != uint64(len(Command)) || len(p)-k < len(Command) {
		return false
	}
	return bytes.EqualFold(p[k:k+len(Command)], []byte(Command))
}

// IsMarker reports whether a decoded WAL command is a MOOND.TXN marker.
func IsMarker(args [][]byte) bool {
	return len(args) > 0 && bytes.EqualFold(args[0], []byte(Command))
}

// Parse decodes a marker's arguments (IsMarker(args) must hold). It checks
// everything: the log is untrusted input.
func Parse(args [][]byte) (Marker, error) {
	if len(args) < 3 {
		return Marker{}, fmt.Errorf("%w: %d arguments", ErrMarker, len(args))
	}
	var m Marker
	switch string(args[1]) {
	case Begin, Abort:
		if len(args) != 3 {
			return Marker{}, fmt.Errorf("%w: %s with %d arguments", ErrMarker, args[1], len(args))
		}
		m.Abort = string(args[1]) == Abort
	case End:
		m.End = true
	default:
		return Marker{}, fmt.Errorf("%w: kind %q", ErrMarker, args[1])
	}
	id, err := strconv.ParseUint(string(args[2]), 10, 64)
	if err != nil || id == 0 {
		return Marker{}, fmt.Errorf("%w: txid %q", ErrMarker, args[2])
	}
	m.Txid = id
	rest := args[3:]
	if m.End && len(rest) >= 2 && string(rest[0]) == Group {
		g, err := strconv.ParseUint(string(rest[1]), 10, 64)
		if err != nil || g == 0 || g >= id {
			return Marker{}, fmt.Errorf("%w: END %d: group %q", ErrMarker, id, rest[1])
		}
		m.Group, rest = g, rest[2:]
	}
	for _, a := range rest {
		p, err := strconv.ParseUint(string(a), 10, 32)
		if err != nil || (len(m.Parts) > 0 && uint32(p) <= m.Parts[len(m.Parts)-1]) {
			return Marker{}, fmt.Errorf("%w: END %d: shard %q", ErrMarker, id, a)
		}
		m.Parts = append(m.Parts, uint32(p))
	}
	if m.End && len(m.Parts) == 0 {
		return Marker{}, fmt.Errorf("%w: END %d names no shard", ErrMarker, id)
	}
	return m, nil
}
