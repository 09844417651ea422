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
	for i := range sub {
		sub[i] = copyArgs(sub[i])
	}
	c.runParts(reply, order, sub)
}

// splitParts cuts a multi-key command into one sub-command per shard:
// the shards in order of first appearance, each one's sub-command, and
// which key (0-based) each element of its reply answers.
func (c *conn) splitParts(sp *splitter, args [][]byte, pos []int) (order []int, subs [][][]byte, partPos [][]int) {
	n := c.w.srv.nshards
	sub := make([][][]byte, n)    // per shard: the sub-command
	positions := make([][]int, n) // per shard: which key (0-based) each element answers
	for k, p := range pos {
		s := c.w.srv.shardOf(args[p])
		if sub[s] == nil {
			sub[s] = [][]byte{args[0]}
			order = append(order, s)
		}
		sub[s] = append(sub[s], args[p])
		if sp.pairs {
			sub[s] = append(sub[s], args[p+1])
		}
		positions[s] = append(positions[s], k)
	}
	subs = make([][][]byte, len(order))
	partPos = make([][]int, len(order))
	for i, s := range order {
		subs[i], partPos[i] = sub[s], positions[s]
	}
	return order, subs, partPos
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
