package keyspace

import "math"

// BITFIELD and BITFIELD_RO: integer fields of 1 to 64 bits (u1..u63,
// i1..i64) at any bit offset of a string, read (GET), written (SET) and
// incremented (INCRBY) in one command, with the overflow mode that the
// last OVERFLOW before each write chose (WRAP by default).
//
// A BITFIELD with writes is journaled as
//
//	BITFIELD key OVERFLOW WRAP SET <type> <offset> <value> ...
//
// one SET per write the command ran, in order, with the value the field
// held after it (absolute bit offsets, #n resolved): INCRBY's result, the
// SET's stored value after WRAP or SAT, and for a write that OVERFLOW FAIL
// refused the value the field already held. Such a SET is in range, so
// replaying it neither wraps nor saturates whatever the original modes,
// and stores exactly the bits the command left; the refused writes stay
// in the record because Redis grows the string to the highest field a
// command writes even when the write is refused, and the replay must grow
// it as far. Logging the touched bytes with SETRANGE would be as exact,
// but writes far apart would log every byte between them.

// bitfield op codes.
const (
	bfGet = iota
	bfSet
	bfIncrBy
)

// Overflow modes.
const (
	owWrap = iota
	owSat
	owFail
)

// bfOp is one parsed BITFIELD operation.
type bfOp struct {
	op     uint8
	ow     uint8
	signed bool
	bits   uint8
	off    int64 // bit offset of the field's first (most significant) bit
	val    int64 // SET's value, INCRBY's increment
	typ    []byte
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// parseBitfieldType parses a field type: i1..i64 or u1..u63.
func parseBitfieldType(arg []byte) (signed bool, bits int, ok bool) {
	if len(arg) == 0 || arg[0] != 'i' && arg[0] != 'u' {
		return false, 0, false
	}
	signed = arg[0] == 'i'
	n, ok := parseInt(arg[1:])
	if !ok || n < 1 || signed && n > 64 || !signed && n > 63 {
		return false, 0, false
	}
	return signed, int(n), true
}

// parseBitfield parses BITFIELD's operations as Redis does, in order, the
// first bad one answering its error. highest is the last bit the writes
// reach, -1 when there are none.
func (ks *Keyspace) parseBitfield(args [][]byte) (ops []bfOp, highest int64, msg string) {
	highest = -1
	ow := uint8(owWrap)
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1
		var op bfOp
		switch sub := args[j]; {
		case equalFold(sub, "get") && rem >= 2:
			op.op = bfGet
		case equalFold(sub, "set") && rem >= 3:
			op.op = bfSet
		case equalFold(sub, "incrby") && rem >= 3:
			op.op = bfIncrBy
		case equalFold(sub, "overflow") && rem >= 1:
			j++
			switch mode := args[j]; {
			case equalFold(mode, "wrap"):
				ow = owWrap
			case equalFold(mode, "sat"):
				ow = owSat
			case equalFold(mode, "fail"):
				ow = owFail
			default:
				return nil, 0, "ERR Invalid OVERFLOW type specified"
			}
			continue
		default:
			return nil, 0, errSyntax
		}
		signed, bits, ok := parseBitfieldType(args[j+1])
		if !ok {
			return nil, 0, errBitfieldType
		}
		if op.off, ok = ks.bitOffset(args[j+2], bits); !ok {
			return nil, 0, errBitOffset
		}
		op.ow, op.signed, op.bits, op.typ = ow, signed, uint8(bits), args[j+1]
		if op.op != bfGet {
			highest = max(highest, op.off+int64(bits)-1)
			if op.val, ok = parseInt(args[j+3]); !ok {
				return nil, 0, errNotInteger
			}
			j++
		}
		j += 2
		ops = append(ops, op)
	}
	return ops, highest, ""
}

func cmdBitField(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.bitfield(c, args, w, false)
}

func cmdBitFieldRO(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.bitfield(c, args, w, true)
}

// bitfield runs BITFIELD, or BITFIELD_RO (readOnly), which takes GETs only.
func (ks *Keyspace) bitfield(c *Client, args [][]byte, w ReplyWriter, readOnly bool) {
	ops, highest, msg := ks.parseBitfield(args)
	switch {
	case msg != "":
		w.Error(msg)
	case highest < 0:
		ks.bitfieldGets(c, args[1], ops, w)
	case readOnly:
		w.Error("ERR BITFIELD_RO only supports the GET subcommand")
	default:
		ks.bitfieldWrites(c, args[1], ops, highest, w)
	}
}

// bitfieldGets runs a BITFIELD of GETs only: a read, as in Redis.
func (ks *Keyspace) bitfieldGets(c *Client, key []byte, ops []bfOp, w ReplyWriter) {
	sl, _ := ks.lookupRead(c, key)
	var p []byte
	if sl != nil {
		if sl.v.kind() != KindString {
			w.Error(errWrongType)
			return
		}
		p = ks.stringBytes(sl.v.value)
	}
	w.ArrayHeader(len(ops))
	for _, op := range ops {
		w.Int(op.get(p))
	}
}

// bitfieldWrites runs a BITFIELD with writes, the last bit of which is
// highest: the string is made or grown that far first (even if OVERFLOW
// FAIL then refuses every write, as in Redis), and journaled when it grew
// or a field changed.
func (ks *Keyspace) bitfieldWrites(c *Client, key []byte, ops []bfOp, highest int64, w ReplyWriter) {
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	var p []byte
	changed := false
	switch {
	case sl == nil:
		p = make([]byte, highest>>3+1)
		ks.setKey(d, h, nil, key, bufValue(p), false)
		changed = true
	case sl.v.kind() != KindString:
		w.Error(errWrongType)
		return
	default:
		changed = int64(sl.v.strLen()) <= highest>>3
		p = ks.bitBuffer(d, sl, highest>>3+1)
	}
	w.ArrayHeader(len(ops))
	for i := range ops {
		op := &ops[i]
		if op.op == bfGet {
			w.Int(op.get(p))
			continue
		}
		old := op.get(p)
		stored, reply, ok := op.apply(old)
		if ok {
			w.Int(reply)
		} else {
			w.Null()
			stored = old
		}
		if stored != old {
			setField(p, op.off, int(op.bits), uint64(stored))
			changed = true
		}
		op.val = stored // the journal's SET value
	}
	if changed {
		ks.journalBitfield(c.DB, key, ops)
		ks.notify(NotifyString, "setbit", key, c.DB)
	}
}

// journalBitfield logs the writes of a BITFIELD as SETs of the values the
// fields held after them (see the top of the file).
func (ks *Keyspace) journalBitfield(dbi int, key []byte, ops []bfOp) {
	if !ks.journaling() {
		return
	}
	ks.jstart("BITFIELD")
	ks.jadd(key, kwOverflow, kwWrap)
	for _, op := range ops {
		if op.op == bfGet {
			continue
		}
		ks.jadd(kwSet, op.typ)
		ks.jint(op.off)
		ks.jint(op.val)
	}
	ks.jend(dbi)
}

var (
	kwOverflow = []byte("OVERFLOW")
	kwWrap     = []byte("WRAP")
	kwSet      = []byte("SET")
)

// get reads the op's field from p, whose bytes past its end read as zero:
// an unsigned field as its value, a signed one sign-extended. An unsigned
// field has at most 63 bits, so both fit an int64.
func (op *bfOp) get(p []byte) int64 {
	u := getField(p, op.off, int(op.bits))
	if op.signed {
		return signExtend(u, int(op.bits))
	}
	return int64(u)
}

// apply computes a SET or INCRBY over the field's current value old: the
// value to store, the reply (SET: old; INCRBY: the new value), and false
// when OVERFLOW FAIL refuses the write.
func (op *bfOp) apply(old int64) (stored, reply int64, ok bool) {
	var over bool
	if op.signed {
		if op.op == bfSet {
			stored, over = signedField(op.val, 0, int(op.bits), op.ow)
		} else {
			stored, over = signedField(old, op.val, int(op.bits), op.ow)
		}
	} else {
		var u uint64
		if op.op == bfSet {
			u, over = unsignedField(uint64(op.val), 0, int(op.bits), op.ow)
		} else {
			u, over = unsignedField(uint64(old), op.val, int(op.bits), op.ow)
		}
		stored = int64(u)
	}
	if over && op.ow == owFail {
		return 0, 0, false
	}
	if op.op == bfSet {
		return stored, old, true
	}
	return stored, stored, true
}

// unsignedField adds incr to v in a field of bits (< 64) bits, as Redis's
// checkUnsignedBitfieldOverflow: v itself may be out of range (a SET's
// value, negative ones read as huge). It returns the result under the
// overflow mode (FAIL's result is unused) and whether it overflowed.
func unsignedField(v uint64, incr int64, bits int, ow uint8) (uint64, bool) {
	maxV := uint64(1)<<bits - 1
	sum := (v + uint64(incr)) & maxV // the wrapped result
	switch {
	case v > maxV || incr > 0 && uint64(incr) > maxV-v:
		if ow == owSat {
			return maxV, true
		}
		return sum, true
	case incr < 0 && uint64(-incr) > v: // -MinInt64 reads as 1<<63 > v
		if ow == owSat {
			return 0, true
		}
		return sum, true
	}
	return v + uint64(incr), false
}

// signedField adds incr to v in a field of bits (<= 64) bits, as Redis's
// checkSignedBitfieldOverflow, v itself possibly out of range (a SET's
// value). The limits it checks against, maxV-v and minV-v, are computed as
// Redis computes them, wrapping in 64 bits: a SET of a value so far below
// the range that maxV-v wraps negative counts as an overflow upwards, and
// SAT stores the maximum. (An increment never wraps there: v is in range.)
func signedField(v, incr int64, bits int, ow uint8) (int64, bool) {
	maxV := int64(math.MaxInt64)
	if bits < 64 {
		maxV = int64(1)<<(bits-1) - 1
	}
	minV := -maxV - 1
	maxIncr := int64(uint64(maxV) - uint64(v))
	minIncr := int64(uint64(minV) - uint64(v))
	wrapped := signExtend(uint64(v)+uint64(incr), bits)
	switch {
	case v > maxV || bits < 64 && incr > maxIncr || v >= 0 && incr > 0 && incr > maxIncr:
		if ow == owSat {
			return maxV, true
		}
		return wrapped, true
	case v < minV || bits < 64 && incr < minIncr || v < 0 && incr < 0 && incr < minIncr:
		if ow == owSat {
			return minV, true
		}
		return wrapped, true
	}
	return v + incr, false
}

// signExtend reads the low bits of u as a signed integer of that width.
func signExtend(u uint64, bits int) int64 {
	if bits == 64 {
		return int64(u)
	}
	shift := 64 - bits
	return int64(u<<shift) >> shift
}

// getField reads the bits-wide field at bit off of p, big-endian, bits
// past the end of p reading as zero.
func getField(p []byte, off int64, bits int) uint64 {
	var u uint64
	for i := int64(0); i < int64(bits); i++ {
		u <<= 1
		if b := (off + i) >> 3; b < int64(len(p)) {
			u |= uint64(p[b]>>(7-(off+i)&7)) & 1
		}
	}
	return u
}

// setField stores the low bits of u in the bits-wide field at bit off of
// p, which reaches that far.
func setField(p []byte, off int64, bits int, u uint64) {
	for i := int64(0); i < int64(bits); i++ {
		pos := off + i
		mask := byte(0x80) >> (pos & 7)
		if u>>(int64(bits)-1-i)&1 != 0 {
			p[pos>>3] |= mask
		} else {
			p[pos>>3] &^= mask
		}
	}
}
