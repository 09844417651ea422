package keyspace

import "strconv"

// SSCAN key cursor [MATCH pattern] [COUNT count]
//
// As Redis's scanGenericCommand: an intset or listpack is returned whole
// with cursor 0 (COUNT is a hint it ignores); a hashtable is walked with
// the dict's reverse-binary cursor (dict.scan), which returns every member
// present for the whole scan at least once, visiting segments until COUNT
// members were gathered or ten times COUNT segments were visited. MATCH
// filters what was gathered. A missing key is an empty scan; the options
// are checked only for a set that exists, as in Redis.
func cmdSScan(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	cursor, ok := parseCursor(args[2])
	if !ok {
		w.Error(errInvalidCur)
		return
	}
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	if !ok {
		return
	}
	if sl == nil {
		w.ArrayHeader(2)
		w.BulkString("0")
		w.ArrayHeader(0)
		return
	}
	count, pattern, _, msg := parseScanOptions(args, 3, false)
	if msg != "" {
		w.Error(msg)
		return
	}
	p := sl.v.p
	var a memberArena
	keep := func(m []byte) {
		if pattern == nil || Match(pattern, m, false) {
			a.add(m)
		}
	}
	next := uint64(0)
	if setEnc(p) != setEncHash {
		setEach(p, keep)
	} else {
		d := &setTab(p).d
		gathered := 0
		visit := func(s *slot[struct{}]) {
			gathered++
			keep(s.keyBytes())
		}
		next = cursor
		for iterations := count * 10; ; iterations-- {
			next = d.scan(next, visit)
			if next == 0 || iterations == 0 || int64(gathered) >= count {
				break
			}
		}
	}
	w.ArrayHeader(2)
	w.BulkString(strconv.FormatUint(next, 10))
	w.ArrayHeader(len(a.ends))
	start := 0
	for _, end := range a.ends {
		w.Bulk(a.buf[start:end])
		start = end
	}
}
