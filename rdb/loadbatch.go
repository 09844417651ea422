package rdb

import "encoding/binary"

// A load batch is how a replica's link hands the keys of a full sync's
// snapshot to one shard at a time (MOOND.LOAD): a sequence of entries,
// each
//
//	flags                 one byte: loadExpire, loadIdle, loadFreq
//	[expiry]              eight bytes little-endian, unix ms (loadExpire)
//	[idle]                a length: seconds idle (loadIdle)
//	[freq]                one byte: the LFU counter (loadFreq)
//	<len> key             a length and the key's bytes
//	<len> value           a length and the value's RDB type byte and
//	                      encoding (a DUMP payload without its footer)
//
// Every part is delimited by the batch itself, not by the value's
// encoding, so a value that does not decode costs its own key only: the
// entries after it still load.

// The flags of a load batch entry.
const (
	loadExpire = 1 << iota
	loadIdle
	loadFreq
)

// LoadEntry is one key of a load batch.
type LoadEntry struct {
	Key []byte
	// Value is the RDB type byte and encoding (DecodeObject reads it).
	Value []byte
	// ExpireMS is the absolute expiry in unix ms, or -1 for none.
	ExpireMS int64
	// Idle (seconds) and Freq (the LFU counter) are the eviction figures
	// the master saved, or -1.
	Idle int64
	Freq int
}

// AppendLoadEntry appends e to a load batch.
func AppendLoadEntry(dst []byte, e *LoadEntry) []byte {
	var flags byte
	if e.ExpireMS >= 0 {
		flags |= loadExpire
	}
	if e.Idle >= 0 {
		flags |= loadIdle
	}
	if e.Freq >= 0 {
		flags |= loadFreq
	}
	dst = append(dst, flags)
	if e.ExpireMS >= 0 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(e.ExpireMS))
	}
	if e.Idle >= 0 {
		dst = AppendLen(dst, uint64(e.Idle))
	}
	if e.Freq >= 0 {
		dst = append(dst, byte(e.Freq))
	}
	dst = AppendLen(dst, uint64(len(e.Key)))
	dst = append(dst, e.Key...)
	dst = AppendLen(dst, uint64(len(e.Value)))
	return append(dst, e.Value...)
}

// NextLoadEntry reads the entry at the start of b into e (whose slices
// alias b) and returns the bytes after it. An error wraps ErrFormat: the
// batch is malformed from there on.
func NextLoadEntry(b []byte, e *LoadEntry) ([]byte, error) {
	r := &reader{b: b}
	flags, err := r.readByte()
	if err != nil {
		return nil, err
	}
	if flags&^(loadExpire|loadIdle|loadFreq) != 0 {
		return nil, formatErr("load entry flags %#x", flags)
	}
	*e = LoadEntry{ExpireMS: -1, Idle: -1, Freq: -1}
	if flags&loadExpire != 0 {
		t, err := r.take(8)
		if err != nil {
			return nil, err
		}
		e.ExpireMS = int64(binary.LittleEndian.Uint64(t))
		if e.ExpireMS < 0 {
			return nil, formatErr("load entry expiry %d", e.ExpireMS)
		}
	}
	if flags&loadIdle != 0 {
		n, err := r.plainLen()
		if err != nil {
			return nil, err
		}
		e.Idle = int64(n)
	}
	if flags&loadFreq != 0 {
		c, err := r.readByte()
		if err != nil {
			return nil, err
		}
		e.Freq = int(c)
	}
	if e.Key, err = r.lenPrefixed(); err != nil {
		return nil, err
	}
	if e.Value, err = r.lenPrefixed(); err != nil {
		return nil, err
	}
	if len(e.Value) == 0 {
		return nil, formatErr("load entry without a value")
	}
	return b[r.off:], nil
}

// plainLen reads a length that must not be a special encoding and fits
// an int64.
func (r *reader) plainLen() (uint64, error) {
	n, special, err := r.readLen()
	if err != nil {
		return 0, err
	}
	if special || n > 1<<62 {
		return 0, formatErr("bad length at byte %d", r.off)
	}
	return n, nil
}

// lenPrefixed reads a length and that many bytes, aliasing the input.
func (r *reader) lenPrefixed() ([]byte, error) {
	n, err := r.plainLen()
	if err != nil {
		return nil, err
	}
	return r.take(n)
}
