package keyspace

import "math"

// HyperLogLog commands (Redis's hyperloglog.c): PFADD, PFCOUNT, PFMERGE,
// PFDEBUG and PFSELFTEST over string values in Redis's HLL format
// (hll.go).
//
// Journal (see journal.go):
//
//	PFADD that changed registers   PFADD k <the elements that changed one>
//	PFADD creating the key         PFADD k [elements]
//	PFMERGE dst src ...            MOOND.APPLY PUT <db> dst 0 <bytes> <expiry>
//	PFDEBUG GETREG|TODENSE turning a sparse value dense
//	                               PFDEBUG TODENSE k
//
// A PFADD record's effect depends only on the key's prior bytes, and an
// element that changed no register would change none on replay either, so
// the record leaves it out. A sparse value turns dense at a size that
// hll-sparse-max-bytes sets, which is not logged and may differ at
// replay: so the PFADD that promoted a value logs the value it left, once
// in the key's life, and replay never promotes by size (hllSparseMax).
// With that, replay rebuilds the same bytes, damaged values included.
//
// PFCOUNT writes the cardinality it computed into the header's cache, as
// Redis does, but logs nothing and leaves the key clean for the
// checkpoint: the cache is an optimization that a PFADD changing a
// register invalidates, so a replayed or reloaded value may differ from
// the live one only in the 8 cache bytes (stale where the live one is
// valid, or a stale remnant of another count), never in a register
// (Redis propagates the PFCOUNT instead; logging a read here would make
// its reply wait for the WAL and rewrite 12 KiB heap records for nothing).

// hllSpecs are the HyperLogLog commands.
var hllSpecs = []*CommandSpec{
	{Name: "pfadd", Arity: -2, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: []string{"@write", "@hyperloglog", "@fast"}, run: cmdPFAdd},
	{Name: "pfcount", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: []string{"@read", "@hyperloglog", "@slow"}, run: cmdPFCount},
	{Name: "pfmerge", Arity: -2, Flags: fWDeny, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: []string{"@write", "@hyperloglog", "@slow"}, run: cmdPFMerge},
	{Name: "pfdebug", Arity: 3, Flags: []string{"write", "denyoom", "admin"}, FirstKey: 2, LastKey: 2, Step: 1, ACLCategories: []string{"@write", "@hyperloglog", "@admin", "@slow", "@dangerous"}, run: cmdPFDebug},
	{Name: "pfselftest", Arity: 1, Flags: []string{"admin"}, ACLCategories: []string{"@hyperloglog", "@admin", "@slow", "@dangerous"}, run: cmdPFSelfTest},
}

// hllOf returns the HLL bytes of the value in sl, or the error to reply:
// WRONGTYPE for another kind, Redis's "not a valid HyperLogLog" for a
// string that is not one.
func hllOf(sl *slot[entry]) ([]byte, string) {
	v := sl.v.value
	switch {
	case v.kind() != KindString:
		return nil, errWrongType
	case v.isInt():
		return nil, errNotHLL
	}
	b := v.bytes()
	if !isHLL(b) {
		return nil, errNotHLL
	}
	return b, ""
}

// hllBuf makes the HLL in sl a mutable string, copying it if it is not
// one already (the bytes do not change: the key stays clean), and returns
// its buffer.
func (ks *Keyspace) hllBuf(d *db, sl *slot[entry]) *[]byte {
	if sl.v.tag() == tagBuf {
		return sl.v.buf()
	}
	old := sl.v.heapBytes()
	b := sl.v.bytes()
	room := 16 // a sparse value grows by a few bytes at a time
	if b[4] == hllDense {
		room = 0 // a dense value never grows
	}
	nb := make([]byte, len(b), len(b)+room)
	copy(nb, b)
	sl.v.value = bufValue(nb)
	d.dataBytes += sl.v.heapBytes() - old
	return sl.v.buf()
}

// hllSparseMax is the size past which a sparse value turns dense:
// hll-sparse-max-bytes, except while loading, when only the records
// decide (a PFADD that promoted its value was logged as the value it
// left), so that replay rebuilds the same bytes whatever the limit is now.
func (ks *Keyspace) hllSparseMax() int64 {
	if ks.Loading {
		return math.MaxInt64
	}
	return ks.Limits.HLLSparseMaxBytes
}

// PFADD key [element ...]
func cmdPFAdd(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	created := sl == nil
	if created {
		sl = ks.addKey(d, h, key, "", bufValue(newHLL()))
	} else if _, msg := hllOf(sl); msg != "" {
		w.Error(msg)
		return
	}
	bp := ks.hllBuf(d, sl)
	before := sl.v.heapBytes()
	wasSparse := (*bp)[4] == hllSparse
	updated, err := ks.pfAddElements(bp, key, args[2:])
	if updated || created { // a new key counts as an update, as in Redis
		hllInvalidateCache(*bp)
		ks.changed(d, sl)
		d.dataBytes += sl.v.heapBytes() - before
	}
	if ks.journaling() {
		switch {
		case wasSparse && (*bp)[4] == hllDense: // promoted: see hllSparseMax
			ks.jstart(applyName)
			ks.jput(c.DB, key, sl.v.value, ks.expiryOf(d, h, sl))
			ks.jend(c.DB)
		case updated || created:
			ks.jend(c.DB)
		}
		clear(ks.jargs)
		ks.jargs = ks.jargs[:0]
	}
	if updated || created {
		ks.notify(NotifyString, "pfadd", key, c.DB)
	}
	switch {
	case err != nil:
		w.Error(errHLLCorrupt)
	case updated || created:
		w.Int(1)
	default:
		w.Int(0)
	}
}

// pfAddElements adds elements to the HLL in *bp, stopping at the first
// error (a damaged value), and reports whether a register changed. While
// journaling it leaves in ks.jargs the record PFADD key <the elements
// that changed a register>, for the caller to log or drop.
func (ks *Keyspace) pfAddElements(bp *[]byte, key []byte, elements [][]byte) (bool, error) {
	journal := ks.journaling()
	if journal {
		ks.jstart("PFADD")
		ks.jadd(key)
	}
	b, updated, limit := *bp, false, ks.hllSparseMax()
	defer func() { *bp = b }()
	for _, ele := range elements {
		index, count := hllPatLen(ele)
		var changed bool
		var err error
		if b, changed, err = hllAddTo(b, index, count, limit); err != nil {
			return updated, err
		}
		if changed {
			updated = true
			if journal {
				ks.jadd(ele)
			}
		}
	}
	return updated, nil
}

// PFCOUNT key [key ...]
func cmdPFCount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if len(args) > 2 {
		ks.pfCountUnion(c, args[1:], w)
		return
	}
	sl, _ := ks.lookupRead(c, args[1])
	if sl == nil {
		w.Int(0)
		return
	}
	b, msg := hllOf(sl)
	if msg != "" {
		w.Error(msg)
		return
	}
	if card, ok := hllValidCache(b); ok {
		w.Int(int64(card))
		return
	}
	card, err := hllCount(b)
	if err != nil {
		w.Error(errHLLCorrupt)
		return
	}
	hllSetCache(*ks.hllBuf(ks.db(c), sl), card) // not a change: see above
	ks.signalKey(ks.db(c), args[1])             // but Redis signals it
	w.Int(int64(card))
}

// PFMERGE destkey [sourcekey ...]: destkey's registers become the
// maximum of its own and the sources'. destkey is dense if any input was.
func cmdPFMerge(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	var max [hllRegisters]uint8
	useDense := false
	for _, key := range args[1:] {
		dense, msg := ks.hllMergeKey(c, key, max[:])
		if msg != "" {
			w.Error(msg)
			return
		}
		useDense = useDense || dense
	}
	key := args[1]
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		sl = ks.addKey(d, h, key, "", bufValue(newHLL()))
	}
	bp := ks.hllBuf(d, sl)
	before := sl.v.heapBytes()
	b, err := hllSetRegisters(*bp, max[:], useDense, ks.hllSparseMax())
	if err != nil { // the key was read above: only a damaged value fails
		w.Error(errHLLCorrupt)
		return
	}
	*bp = b
	ks.changed(d, sl)
	d.dataBytes += sl.v.heapBytes() - before
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(c.DB, key, sl.v.value, ks.expiryOf(d, h, sl))
		ks.jend(c.DB)
	}
	ks.notify(NotifyString, "pfadd", key, c.DB)
	replyOK(w)
}

// hllSetRegisters raises the registers of the HLL b to those of max (one
// a byte), turning it dense first if dense, in register order as Redis
// does (the order decides the sparse bytes), and invalidates its cache.
func hllSetRegisters(b []byte, max []uint8, dense bool, maxBytes int64) ([]byte, error) {
	var err error
	if dense {
		if b, err = hllToDense(b); err != nil {
			return nil, err
		}
	}
	for i, v := range max[:hllRegisters] {
		switch {
		case v == 0:
		case b[4] == hllDense:
			denseMax(b[hllHdrSize:], i, v)
		default:
			if b, _, err = hllSparseSet(b, i, v, maxBytes); err != nil {
				return nil, err
			}
		}
	}
	hllInvalidateCache(b)
	return b, nil
}

// pfCountUnion is PFCOUNT of several keys: the cardinality of their
// union, the keys left as they are.
func (ks *Keyspace) pfCountUnion(c *Client, keys [][]byte, w ReplyWriter) {
	var max [hllRegisters]uint8
	for _, key := range keys {
		if _, msg := ks.hllMergeKey(c, key, max[:]); msg != "" {
			w.Error(msg)
			return
		}
	}
	var h hllHisto
	h.raw(max[:])
	w.Int(int64(h.estimate()))
}

// hllMergeKey raises each register of max to key's, if key exists, and
// reports whether key is dense. msg is the error to reply.
func (ks *Keyspace) hllMergeKey(c *Client, key []byte, max []uint8) (dense bool, msg string) {
	sl, _ := ks.lookupRead(c, key)
	if sl == nil {
		return false, ""
	}
	b, msg := hllOf(sl)
	if msg != "" {
		return false, msg
	}
	if err := hllMergeInto(max, b); err != nil {
		return false, errHLLCorrupt
	}
	return b[4] == hllDense, ""
}

// hllMergeInto raises each of the registers in max (one a byte) to the
// HLL b's.
func hllMergeInto(max []uint8, b []byte) error {
	max = max[:hllRegisters]
	if b[4] != hllDense {
		return sparseEach(b, func(first, n int, val uint8) {
			if val == 0 {
				return // zero runs may pass the end of a damaged value
			}
			for i := first; i < first+n; i++ {
				max[i] = maxU8(max[i], val)
			}
		})
	}
	r := b[hllHdrSize:hllDenseSize]
	for i, j := 0, 0; i+2 < len(r); i, j = i+3, j+4 {
		b0, b1, b2 := r[i], r[i+1], r[i+2]
		m := max[j : j+4 : j+4]
		m[0] = maxU8(m[0], b0&63)
		m[1] = maxU8(m[1], (b0>>6|b1<<2)&63)
		m[2] = maxU8(m[2], (b1>>4|b2<<4)&63)
		m[3] = maxU8(m[3], b2>>2)
	}
	return nil
}

func maxU8(a, b uint8) uint8 { return max(a, b) }
