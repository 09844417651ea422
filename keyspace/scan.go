package keyspace

import "strconv"

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
//
// The cursor is the table's reverse-binary segment cursor (see dict.scan):
// every key present in the database from the call with cursor 0 to the call
// that returns 0 is returned at least once, whatever keys were added or
// deleted meanwhile and however the table grew or shrank; a key may be
// returned more than once. Each call visits segments until it has gathered
// COUNT keys (before filtering) or visited ten times COUNT segments, so a
// call may return more or fewer than COUNT keys, as in Redis. MATCH, TYPE
// and expiry filter the gathered keys afterwards; an expired key found by
// the walk is deleted, as Redis does.
func cmdScan(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		w.Error(errInvalidCur)
		return
	}
	count, pattern, typ, msg := parseScanOptions(args, 2, true)
	if msg != "" {
		w.Error(msg)
		return
	}

	d := ks.db(c)
	keys := ks.keysTmp[:0]
	collect := func(sl *slot[entry]) { keys = append(keys, sl.key()) }
	for iterations := count * 10; ; iterations-- {
		cursor = d.keys.scan(cursor, collect)
		if cursor == 0 || iterations == 0 || int64(len(keys)) >= count {
			break
		}
	}

	kept := keys[:0]
	for _, k := range keys {
		key := unsafeBytes(k)
		if pattern != nil && !Match(pattern, key, false) {
			continue
		}
		if typ != nil {
			sl, _ := ks.lookupReadNoTouch(c, key)
			name := "none"
			if sl != nil {
				name = sl.v.kind().String()
			}
			if !equalFold(typ, name) {
				continue
			}
		}
		if sl, _ := ks.lookup(c.DB, key); sl == nil {
			continue // expired, and now deleted
		}
		kept = append(kept, k)
	}

	w.ArrayHeader(2)
	ks.scratch = strconv.AppendUint(ks.scratch[:0], cursor, 10)
	w.Bulk(ks.scratch)
	w.ArrayHeader(len(kept))
	for _, k := range kept {
		w.BulkString(k)
	}
	ks.releaseKeysTmp(keys)
}

// parseScanOptions parses the options of SCAN (withType) and of HSCAN,
// SSCAN and ZSCAN, args[from:]: [MATCH pattern] [COUNT count] [TYPE type],
// with Redis's errors ("" when they parse). A MATCH of "*" is returned as
// nil: it matches everything.
func parseScanOptions(args [][]byte, from int, withType bool) (count int64, pattern, typ []byte, msg string) {
	count = 10
	for i := from; i < len(args); i += 2 {
		more := i+1 < len(args)
		switch {
		case equalFold(args[i], "count") && more:
			n, ok := parseInt(args[i+1])
			if !ok {
				return 0, nil, nil, errNotInteger
			}
			if n < 1 {
				return 0, nil, nil, errSyntax
			}
			count = n
		case equalFold(args[i], "match") && more:
			pattern = args[i+1]
			if len(pattern) == 1 && pattern[0] == '*' {
				pattern = nil
			}
		case withType && equalFold(args[i], "type") && more:
			typ = args[i+1]
		default:
			return 0, nil, nil, errSyntax
		}
	}
	return count, pattern, typ, ""
}
