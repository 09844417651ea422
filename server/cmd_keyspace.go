package server

import (
	"math/bits"
	"math/rand/v2"
	"strconv"

	"github.com/moond-db/moond/resp"
)

// Data commands that concern every shard's slice of the keyspace.
func init() {
	register(
		&serverCmd{name: "dbsize", arity: 1, run: func(c *conn, a [][]byte) { c.fanoutExec(a, sumParts) }},
		&serverCmd{name: "flushdb", arity: -1, run: func(c *conn, a [][]byte) { c.fanoutExec(a, okParts) }},
		&serverCmd{name: "flushall", arity: -1, run: func(c *conn, a [][]byte) { c.fanoutExec(a, okParts) }},
		&serverCmd{name: "swapdb", arity: 3, run: func(c *conn, a [][]byte) { c.fanoutExec(a, okParts) }},
		&serverCmd{name: "keys", arity: 2, run: func(c *conn, a [][]byte) { c.fanoutExec(a, concatArrays) }},
		&serverCmd{name: "randomkey", arity: 1, run: func(c *conn, a [][]byte) { c.fanoutExec(a, randomPart) }},
		&serverCmd{name: "scan", arity: -2, run: cmdScan},
	)
}

func sumParts(parts [][]byte, w *resp.Writer) { mergeSum(nil, parts, nil, 0, w) }
func okParts(parts [][]byte, w *resp.Writer)  { mergeOK(nil, parts, nil, 0, w) }

func concatArrays(parts [][]byte, w *resp.Writer) {
	if e := firstError(parts); e != nil {
		w.Raw(e)
		return
	}
	var all [][]byte
	for _, p := range parts {
		es, err := resp.SplitArray(p)
		if err != nil {
			w.Error("ERR internal error: malformed reply from a shard")
			return
		}
		all = append(all, es...)
	}
	w.ArrayHeader(len(all))
	for _, e := range all {
		w.Raw(e)
	}
}

// randomPart picks a key from a random shard that has one.
func randomPart(parts [][]byte, w *resp.Writer) {
	if e := firstError(parts); e != nil {
		w.Raw(e)
		return
	}
	start := rand.IntN(len(parts))
	for i := range parts {
		p := parts[(start+i)%len(parts)]
		if len(p) > 0 && p[0] == '$' && p[1] != '-' {
			w.Raw(p)
			return
		}
	}
	w.Null()
}

// shardBits is how many low bits of a SCAN cursor name the shard.
func (s *Server) shardBits() int {
	if s.nshards == 1 {
		return 0
	}
	return bits.Len(uint(s.nshards - 1))
}

// cmdScan walks the shards one after the other: the cursor's low bits name
// the shard, the rest is that shard's own cursor.
func cmdScan(c *conn, args [][]byte) {
	srv := c.w.srv
	if srv.nshards == 1 {
		c.execLocal(args)
		return
	}
	cur, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		c.errorReply("ERR invalid cursor")
		return
	}
	nb := srv.shardBits()
	target := int(cur & (1<<nb - 1))
	if target >= srv.nshards {
		target = srv.nshards - 1
	}
	inner := cur >> nb
	sub := make([][]byte, len(args))
	copy(sub, args)
	sub[1] = strconv.AppendUint(nil, inner, 10)
	reply := c.newPending(1, func(parts [][]byte, w *resp.Writer) {
		rewriteScanCursor(parts[0], target, srv.nshards, nb, w)
	})
	if target == c.w.id {
		reply.fill(0, c.execPart(sub))
		c.queue.popReady(&c.out)
		return
	}
	c.w.queueRemote(target, batchItem{conn: c, reply: reply, db: c.client.DB, proto: c.out.Proto, args: copyArgs(sub)})
}

// rewriteScanCursor turns a shard's [cursor, keys] reply into the global
// cursor: the same shard while it has more, then the next shard, then 0.
func rewriteScanCursor(part []byte, shard, nshards, nb int, w *resp.Writer) {
	if len(part) > 0 && part[0] == '-' {
		w.Raw(part)
		return
	}
	es, err := resp.SplitArray(part)
	if err != nil || len(es) != 2 {
		w.Error("ERR internal error: malformed reply from a shard")
		return
	}
	inner, ok := bulkUint(es[0])
	if !ok {
		w.Error("ERR internal error: malformed cursor from a shard")
		return
	}
	var next uint64
	switch {
	case inner != 0:
		next = inner<<nb | uint64(shard)
	case shard+1 < nshards:
		next = uint64(shard + 1)
	}
	w.ArrayHeader(2)
	w.BulkString(strconv.FormatUint(next, 10))
	w.Raw(es[1])
}

// bulkUint reads "$n\r\n<digits>\r\n".
func bulkUint(b []byte) (uint64, bool) {
	if len(b) < 5 || b[0] != '$' {
		return 0, false
	}
	i := 1
	for i < len(b) && b[i] != '\r' {
		i++
	}
	if i+2 > len(b)-2 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i+2:len(b)-2]), 10, 64)
	return v, err == nil
}
