package keyspace

import (
	"bytes"
	"math"
	"slices"
)

// Bitmap commands on strings (Redis's bitops.c): SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITOP here, BITFIELD and BITFIELD_RO in bitfield.go. A bitmap is
// a string; bit 0 is the most significant bit of its first byte. SETBIT
// and BITFIELD change the string in place, grown with zero bytes as far as
// the highest bit they write, like SETRANGE; the integer form is read as
// its decimal digits, as everywhere.
//
// Journal forms (journal.go's rules):
//
//	SETBIT that changed a bit or grew the string   SETBIT k <offset> <0|1>
//	BITFIELD with writes                           BITFIELD k OVERFLOW WRAP SET <type> <offset> <value> ...
//	BITOP op dst src...                            MOOND.APPLY PUT <db> dst 0 <result> 0, or DEL dst
//	                                               for an empty result over an existing dst
//
// SETBIT and BITFIELD log the change, not the value. BITOP reads keys it
// does not write, so it logs the value it stored.

var (
	cBitReadFast  = []string{"@read", "@bitmap", "@fast"}
	cBitReadSlow  = []string{"@read", "@bitmap", "@slow"}
	cBitWriteSlow = []string{"@write", "@bitmap", "@slow"}
)

// bitmapSpecs are the bitmap commands on strings.
var bitmapSpecs = []*CommandSpec{
	{Name: "setbit", Arity: 4, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cBitWriteSlow, run: cmdSetBit},
	{Name: "getbit", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cBitReadFast, run: cmdGetBit},
	{Name: "bitcount", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cBitReadSlow, run: cmdBitCount},
	{Name: "bitpos", Arity: -3, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cBitReadSlow, run: cmdBitPos},
	{Name: "bitop", Arity: -4, Flags: fWDeny, FirstKey: 2, LastKey: -1, Step: 1, ACLCategories: cBitWriteSlow, run: cmdBitOp},
	{Name: "bitfield", Arity: -2, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cBitWriteSlow, run: cmdBitField},
	{Name: "bitfield_ro", Arity: -2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cBitReadFast, run: cmdBitFieldRO},
}

const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
)

// maxBitOffset bounds every bit offset, even while Loading: a field of up
// to 64 bits past it still has an end that fits an int64.
const maxBitOffset = math.MaxInt64 - 64

// bitOffset parses a bit offset as Redis's getBitOffsetFromArgument: a
// non-negative integer whose byte lies within proto-max-bulk-len (not
// checked while Loading, see tooLong); with bits > 0 (BITFIELD) the form
// #n means n*bits.
func (ks *Keyspace) bitOffset(arg []byte, bits int) (int64, bool) {
	hash := bits > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	off, ok := parseInt(arg)
	if !ok || off < 0 {
		return 0, false
	}
	if hash {
		if off > maxBitOffset/int64(bits) {
			return 0, false
		}
		off *= int64(bits)
	}
	if off > maxBitOffset || !ks.Loading && off>>3 >= ks.MaxBulkLen {
		return 0, false
	}
	return off, true
}

// stringBytes returns the bytes of a string value without allocating: an
// integer's digits go to ks.scratch. They are valid until the next use of
// the scratch and must not be modified.
func (ks *Keyspace) stringBytes(v value) []byte {
	if v.isInt() {
		ks.scratch = v.appendTo(ks.scratch[:0])
		return ks.scratch
	}
	return v.bytes()
}

// bitBuffer returns the string in sl as a mutable buffer of at least n
// bytes, zero-padded as Redis's sdsgrowzero does, for a write in place. The
// key is marked dirty.
func (ks *Keyspace) bitBuffer(d *db, sl *slot[entry], n int64) []byte {
	b := ks.mutableString(d, sl)
	if old := len(*b); int64(old) < n {
		oldCap := cap(*b)
		*b = slices.Grow(*b, int(n)-old)[:n]
		clear((*b)[old:])
		d.dataBytes += allocSize(int64(cap(*b))) - allocSize(int64(oldCap))
	}
	return *b
}

// SETBIT key offset 0|1
func cmdSetBit(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	off, ok := ks.bitOffset(args[2], 0)
	if !ok {
		w.Error(errBitOffset)
		return
	}
	on, ok := parseInt(args[3])
	if !ok || on&^1 != 0 {
		w.Error(errBitValue)
		return
	}
	byteIdx, mask := off>>3, byte(0x80)>>(off&7)
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	old := int64(0)
	switch {
	case sl == nil:
		b := make([]byte, byteIdx+1)
		if on == 1 {
			b[byteIdx] = mask
		}
		ks.setKey(d, h, nil, key, bufValue(b), false)
	case sl.v.kind() != KindString:
		w.Error(errWrongType)
		return
	default:
		p := ks.stringBytes(sl.v.value)
		grows := byteIdx >= int64(len(p))
		if !grows && p[byteIdx]&mask != 0 {
			old = 1
		}
		if !grows && old == on {
			// Nothing changed: nothing logged. Redis still makes the
			// string raw, which OBJECT ENCODING shows.
			if sl.v.isInt() || sl.v.tag() != tagBuf {
				ks.changedQuietly(d, sl) // no touch of the watches either
				ks.makeMutable(d, sl)
			}
			w.Int(old)
			return
		}
		b := ks.bitBuffer(d, sl, byteIdx+1)
		b[byteIdx] = b[byteIdx]&^mask | byte(on)*mask
	}
	w.Int(old)
	if ks.journaling() {
		ks.jstart("SETBIT")
		ks.jadd(key)
		ks.jint(off)
		ks.jint(on)
		ks.jend(c.DB)
	}
	ks.notify(NotifyString, "setbit", key, c.DB)
}

// GETBIT key offset
func cmdGetBit(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	off, ok := ks.bitOffset(args[2], 0)
	if !ok {
		w.Error(errBitOffset)
		return
	}
	sl, _ := ks.lookupRead(c, args[1])
	if sl == nil {
		w.Int(0)
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	p := ks.stringBytes(sl.v.value)
	if byteIdx := off >> 3; byteIdx < int64(len(p)) && p[byteIdx]&(0x80>>(off&7)) != 0 {
		w.Int(1)
		return
	}
	w.Int(0)
}

// bitUnit parses the BYTE|BIT argument of BITCOUNT and BITPOS: true for
// BIT.
func bitUnit(arg []byte) (isBit, ok bool) {
	switch {
	case equalFold(arg, "bit"):
		return true, true
	case equalFold(arg, "byte"):
		return false, true
	}
	return false, false
}

// bitRange turns a start..end range in bytes or bits (negative counting
// from the end) over a string of n bytes into the inclusive bit range it
// covers, as Redis clamps it; ok is false when the range is empty.
func bitRange(start, end, n int64, isBit bool) (first, last int64, ok bool) {
	total := n
	if isBit {
		total = n << 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if start > end {
		return 0, 0, false
	}
	if isBit {
		return start, end, true
	}
	return start << 3, end<<3 + 7, true
}

// BITCOUNT key [start end [BYTE|BIT]]
func cmdBitCount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _ := ks.lookupRead(c, args[1])
	if sl == nil {
		w.Int(0) // Redis 7.0 answers a missing key before it reads the range
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	p := ks.stringBytes(sl.v.value)
	start, end, isBit := int64(0), int64(-1), false
	switch len(args) {
	case 2:
	case 4, 5:
		var ok1, ok2 bool
		start, ok1 = parseInt(args[2])
		end, ok2 = parseInt(args[3])
		if !ok1 || !ok2 {
			w.Error(errNotInteger)
			return
		}
		if start < 0 && end < 0 && start > end {
			// Redis 7.0 answers this before it reads BYTE|BIT, and
			// before the clamping would make a one-unit range of it.
			w.Int(0)
			return
		}
		if len(args) == 5 {
			var ok bool
			if isBit, ok = bitUnit(args[4]); !ok {
				w.Error(errSyntax)
				return
			}
		}
	default:
		w.Error(errSyntax)
		return
	}
	first, last, ok := bitRange(start, end, int64(len(p)), isBit)
	if !ok {
		w.Int(0)
		return
	}
	w.Int(countRange(p, first, last))
}

// BITPOS key bit [start [end [BYTE|BIT]]]
//
// Past the end of the string the bits are clear: looking for a clear bit
// in a string of set bits finds the first bit after it, unless the
// command gave an end, which bounds the search (-1 then).
func cmdBitPos(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	bit, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if bit != 0 && bit != 1 {
		w.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	sl, _ := ks.lookupRead(c, args[1])
	if sl == nil {
		w.Int(-bit) // an endless run of clear bits: 0 finds 0, 1 finds none
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	p := ks.stringBytes(sl.v.value)
	r, msg := parseBitPosRange(args)
	if msg != "" {
		w.Error(msg)
		return
	}
	first, last, ok := bitRange(r.start, r.end, int64(len(p)), r.isBit)
	if !ok {
		w.Int(-1) // an empty range holds neither a 0 nor a 1
		return
	}
	pos := findBit(p, first, last, byte(bit))
	if pos < 0 && bit == 0 && !r.endGiven {
		pos = last + 1
	}
	w.Int(pos)
}

// bitPosRange is BITPOS's optional range.
type bitPosRange struct {
	start, end      int64
	isBit, endGiven bool
}

// parseBitPosRange parses BITPOS's [start [end [BYTE|BIT]]] in Redis 7.0's
// order, or returns the error reply. A missing end is the string's last
// unit.
func parseBitPosRange(args [][]byte) (bitPosRange, string) {
	r := bitPosRange{end: -1}
	var ok bool
	switch len(args) {
	case 3:
	case 4, 5, 6:
		if r.start, ok = parseInt(args[3]); !ok {
			return r, errNotInteger
		}
		if len(args) == 6 {
			if r.isBit, ok = bitUnit(args[5]); !ok {
				return r, errSyntax
			}
		}
		if len(args) >= 5 {
			if r.end, ok = parseInt(args[4]); !ok {
				return r, errNotInteger
			}
			r.endGiven = true
		}
	default:
		return r, errSyntax
	}
	return r, ""
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
func cmdBitOp(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	op, ok := bitopName(args[1])
	if !ok {
		w.Error(errSyntax)
		return
	}
	if op == bitNot && len(args) != 4 {
		w.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	var srcBuf [8][]byte
	srcs, ok := ks.bitopSources(c, args[3:], srcBuf[:0])
	if !ok {
		w.Error(errWrongType)
		return
	}
	dest, n := args[2], bitopLen(srcs)
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, dest)
	if n == 0 {
		if sl != nil {
			ks.deleteKey(d, h, dest)
			ks.journal(c.DB, "DEL", dest)
			ks.notify(NotifyGeneric, "del", dest, c.DB)
		}
		w.Int(0)
		return
	}
	var v value
	if b := ks.reusableBitopDest(sl, n, args[3:]); b != nil {
		*b = (*b)[:n]
		bitopInto(op, srcs, *b)
		v = sl.v.value
	} else {
		res := make([]byte, n)
		bitopInto(op, srcs, res)
		v = bufValue(res)
	}
	ks.setKey(d, h, sl, dest, v, false)
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(c.DB, dest, v, 0)
		ks.jend(c.DB)
	}
	ks.notify(NotifyString, "set", dest, c.DB)
	w.Int(int64(n))
}

// bitopName parses BITOP's operation.
func bitopName(name []byte) (int, bool) {
	switch {
	case equalFold(name, "and"):
		return bitAnd, true
	case equalFold(name, "or"):
		return bitOr, true
	case equalFold(name, "xor"):
		return bitXor, true
	case equalFold(name, "not"):
		return bitNot, true
	}
	return 0, false
}

// bitopSources appends to dst the bytes of BITOP's source keys, nil for a
// missing one; false when one is not a string. The bytes stay valid until
// the result is computed: nothing changes a string in place before.
func (ks *Keyspace) bitopSources(c *Client, keys [][]byte, dst [][]byte) ([][]byte, bool) {
	for _, key := range keys {
		sl, _ := ks.lookupRead(c, key)
		switch {
		case sl == nil:
			dst = append(dst, nil)
		case sl.v.kind() != KindString:
			return nil, false
		case sl.v.isInt():
			dst = append(dst, sl.v.appendTo(nil))
		default:
			dst = append(dst, sl.v.bytes())
		}
	}
	return dst, true
}

// reusableBitopDest returns the buffer of BITOP's destination in sl when
// the result of n bytes may be computed into it: a mutable string that is
// none of the sources (srcKeys) and whose capacity fits n without wasting
// more than n. A repeated BITOP into the same key then allocates nothing;
// it is as safe as SETRANGE's write in place (see overwriteString: every
// reader of a value's bytes copies them).
func (ks *Keyspace) reusableBitopDest(sl *slot[entry], n int, srcKeys [][]byte) *[]byte {
	if sl == nil || sl.v.isInt() || sl.v.tag() != tagBuf {
		return nil
	}
	b := sl.v.buf()
	if cap(*b) < n || cap(*b) > 2*n {
		return nil
	}
	key := sl.keyBytes()
	for _, k := range srcKeys {
		if bytes.Equal(k, key) {
			return nil
		}
	}
	return b
}
