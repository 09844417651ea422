package shard

// Database commands: FLUSHDB, FLUSHALL, SWAPDB. SELECT is the server's (a
// connection's state), with SelectIndex's validation.

// flushOK parses FLUSHDB's and FLUSHALL's optional ASYNC|SYNC. Both flush
// at once here: dropping the tables is O(1), the GC frees the memory. (With
// dirty tracking on, every key leaves its heap record to a grave first:
// O(keys), as Redis's flush.)
func flushOK(args [][]byte, w ReplyWriter) bool {
	if len(args) == 1 || len(args) == 2 && (equalFold(args[1], "sync") || equalFold(args[1], "async")) {
		return true
	}
	w.Error(errSyntax)
	return false
}

func cmdFlushDB(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if !flushOK(args, w) {
		return
	}
	if ks.dbs[c.DB].keys.count > 0 {
		ks.dropDB(c.DB)
		ks.journal(c.DB, "FLUSHDB")
	}
	replyOK(w)
}

func cmdFlushAll(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if !flushOK(args, w) {
		return
	}
	if ks.FlushAll() > 0 {
		ks.journal(c.DB, "FLUSHALL")
	}
	replyOK(w)
}

// FlushAll empties every database and returns how many keys it dropped.
func (ks *Keyspace) FlushAll() int {
	n := 0
	for i, d := range ks.dbs {
		n += d.keys.count
		ks.dropDB(i)
	}
	return n
}

// parseSwapDB parses SWAPDB's arguments; msg is the error reply, "" if
// none.
func (ks *Keyspace) parseSwapDB(args [][]byte) (a, b int, msg string) {
	x, ok := parseInt(args[1])
	if !ok {
		return 0, 0, "ERR invalid first DB index"
	}
	y, ok := parseInt(args[2])
	if !ok {
		return 0, 0, "ERR invalid second DB index"
	}
	n := int64(len(ks.dbs))
	if x < 0 || x >= n || y < 0 || y >= n {
		return 0, 0, errDBRange
	}
	return int(x), int(y), ""
}

func cmdSwapDB(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	a, b, msg := ks.parseSwapDB(args)
	if msg != "" {
		w.Error(msg)
		return
	}
	if a != b {
		ks.swapDB(a, b)
		ks.journal(c.DB, "SWAPDB", args[1], args[2])
	}
	replyOK(w)
}
