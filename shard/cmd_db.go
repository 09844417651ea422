package shard

// Database commands: FLUSHDB, FLUSHALL, SWAPDB. SELECT is the server's (a
// connection's state), with SelectIndex's validation.

// flushOK parses FLUSHDB's and FLUSHALL's optional ASYNC|SYNC. Both flush
// at once here: dropping the tables is O(1), the GC frees the memory.
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
		ks.dbs[c.DB] = ks.newDB()
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
		ks.dbs[i] = ks.newDB()
	}
	return n
}

func cmdSwapDB(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	a, ok := parseInt(args[1])
	if !ok {
		w.Error("ERR invalid first DB index")
		return
	}
	b, ok := parseInt(args[2])
	if !ok {
		w.Error("ERR invalid second DB index")
		return
	}
	n := int64(len(ks.dbs))
	if a < 0 || a >= n || b < 0 || b >= n {
		w.Error(errDBRange)
		return
	}
	if a != b {
		ks.dbs[a], ks.dbs[b] = ks.dbs[b], ks.dbs[a]
		ks.journal(c.DB, "SWAPDB", args[1], args[2])
	}
	replyOK(w)
}
