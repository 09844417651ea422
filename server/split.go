package server

import (
	"bytes"
	"strconv"

	"github.com/moond-db/moond/resp"
)

// splitter describes how a multi-key command is cut into one command per
// shard and how the shards' replies are put back together.
type splitter struct {
	pairs bool // keys come with a value each (MSET)
	merge func(c *conn, parts [][]byte, positions [][]int, total int, w *resp.Writer)
}

var splitters = map[string]*splitter{
	"mget":   {merge: mergeArrays},
	"mset":   {pairs: true, merge: mergeOK},
	"del":    {merge: mergeSum},
	"unlink": {merge: mergeSum},
	"exists": {merge: mergeSum},
	"touch":  {merge: mergeSum},
}

// split sends each shard the part of a multi-key command that concerns its
// keys, and queues one reply that merges the parts in argument order.
// Keys on several shards run as a txn (txn.go), so that no other command
// sees the command half done.
func (c *conn) split(sp *splitter, args [][]byte, pos []int) {
	order, sub, partPos := c.splitParts(sp, args, pos)
	total := len(pos)
	reply := c.newPending(len(order), func(parts [][]byte, w *resp.Writer) {
		sp.merge(c, parts, partPos, total, w)
	})
	ownArgs(sub)
	c.runParts(reply, order, sub)
}

// splitParts cuts a multi-key command into one sub-command per shard:
// the shards in order of first appearance, each one's sub-command, and
// which key (0-based) each element of its reply answers. The
// sub-commands' arguments are args' own (see ownArgs); every slice it
// returns is carved from a few allocations, sized in a first pass.
func (c *conn) splitParts(sp *splitter, args [][]byte, pos []int) (order []int, subs [][][]byte, partPos [][]int) {
	n := c.w.srv.nshards
	per := 1 // arguments per key
	if sp.pairs {
		per = 2
	}
	// ints holds, in turn: each key's shard, the keys' positions grouped
	// by shard (partPos), the keys per shard, each shard's index in
	// order, and order.
	ints := make([]int, 2*len(pos)+3*n)
	of, at := ints[:len(pos)], ints[len(pos):2*len(pos)]
	count, index := ints[2*len(pos):2*len(pos)+n], ints[2*len(pos)+n:2*len(pos)+2*n]
	order = ints[2*len(pos)+2*n : 2*len(pos)+2*n : len(ints)]
	for k, p := range pos {
		s := c.w.srv.shardOf(args[p])
		of[k] = s
		if count[s] == 0 {
			index[s] = len(order)
			order = append(order, s)
		}
		count[s]++
	}
	elems := make([][]byte, len(order)+per*len(pos))
	subs = make([][][]byte, len(order))
	partPos = make([][]int, len(order))
	e, a := 0, 0 // where the next shard's sub-command and positions begin
	for i, s := range order {
		size := 1 + per*count[s]
		subs[i] = elems[e : e+1 : e+size]
		subs[i][0] = args[0]
		partPos[i] = at[a : a : a+count[s]]
		e, a = e+size, a+count[s]
	}
	for k, p := range pos {
		i := index[of[k]]
		subs[i] = append(subs[i], args[p:p+per]...)
		partPos[i] = append(partPos[i], k)
	}
	return order, subs, partPos
}

// ownArgs makes the arguments of subs (which the connection's buffer
// holds, and reuses) copies of their own, all in one allocation.
func ownArgs(subs [][][]byte) {
	n := 0
	for _, sub := range subs {
		for _, a := range sub {
			n += len(a)
		}
	}
	buf := make([]byte, 0, n)
	for _, sub := range subs {
		for j, a := range sub {
			buf = append(buf, a...)
			sub[j] = buf[len(buf)-len(a) : len(buf) : len(buf)]
		}
	}
}

// firstError returns the first part that is an error reply.
func firstError(parts [][]byte) []byte {
	for _, p := range parts {
		if len(p) > 0 && p[0] == '-' {
			return p
		}
	}
	return nil
}

// mergeArrays interleaves the shards' array replies back into key order (MGET).
func mergeArrays(c *conn, parts [][]byte, positions [][]int, total int, w *resp.Writer) {
	if e := firstError(parts); e != nil {
		w.Raw(e)
		return
	}
	elems := make([][]byte, total)
	for i, p := range parts {
		es, err := resp.SplitArray(p)
		if err != nil || len(es) != len(positions[i]) {
			w.Error("ERR internal error: malformed reply from a shard")
			return
		}
		for j, e := range es {
			elems[positions[i][j]] = e
		}
	}
	w.ArrayHeader(total)
	for _, e := range elems {
		w.Raw(e)
	}
}

// mergeOK answers +OK when every shard did (MSET).
func mergeOK(c *conn, parts [][]byte, _ [][]int, _ int, w *resp.Writer) {
	if e := firstError(parts); e != nil {
		w.Raw(e)
		return
	}
	w.SimpleString("OK")
}

// mergeSum adds the shards' integer replies (DEL, UNLINK, EXISTS, TOUCH).
func mergeSum(c *conn, parts [][]byte, _ [][]int, _ int, w *resp.Writer) {
	if e := firstError(parts); e != nil {
		w.Raw(e)
		return
	}
	var sum int64
	for _, p := range parts {
		n, ok := parseIntReply(p)
		if !ok {
			w.Error("ERR internal error: malformed reply from a shard")
			return
		}
		sum += n
	}
	w.Int(sum)
}

// parseIntReply reads ":<n>\r\n".
func parseIntReply(p []byte) (int64, bool) {
	if len(p) < 4 || p[0] != ':' || !bytes.HasSuffix(p, []byte("\r\n")) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p[1:len(p)-2]), 10, 64)
	return n, err == nil
}
