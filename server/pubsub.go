package server

import (
	"slices"

	"github.com/moond-db/moond/resp"
)

// Pub/Sub (Redis 7.0's tests/unit/pubsub.tcl and pubsubshard.tcl): a
// connection subscribes on its own shard (pubsub_local.go); a PUBLISH on
// any shard reaches the shards that the directory (pubsub_dir.go) names
// for the channel, one batch item per shard, in publish order per
// publisher (batches to one shard keep their order), and replies with the
// receivers every shard counted. Nothing of it is persisted.

func init() {
	register(
		&serverCmd{name: "subscribe", arity: -2, run: cmdSubscribe},
		&serverCmd{name: "unsubscribe", arity: -1, run: cmdUnsubscribe},
		&serverCmd{name: "psubscribe", arity: -2, run: cmdPsubscribe},
		&serverCmd{name: "punsubscribe", arity: -1, run: cmdPunsubscribe},
		&serverCmd{name: "ssubscribe", arity: -2, run: cmdSsubscribe},
		&serverCmd{name: "sunsubscribe", arity: -1, run: cmdSunsubscribe},
		&serverCmd{name: "publish", arity: 3, run: cmdPublish},
		&serverCmd{name: "spublish", arity: 3, run: cmdSpublish},
	)
}

// connSubs are one connection's subscriptions. Patterns keep their order
// (PUNSUBSCRIBE without arguments answers in it, as Redis 7.0's list does).
type connSubs struct {
	channels      map[string]struct{}
	shardChannels map[string]struct{}
	patterns      []string
}

func (s *connSubs) names(shardKind bool) *map[string]struct{} {
	if shardKind {
		return &s.shardChannels
	}
	return &s.channels
}

// count is the number Redis's (p)subscribe replies carry: channels and
// patterns.
func (s *connSubs) count() int64 { return int64(len(s.channels) + len(s.patterns)) }

// subscribed reports whether the connection is in Pub/Sub mode (Redis's
// CLIENT_PUBSUB flag): subscribed to anything.
func (c *conn) subscribed() bool {
	s := c.subs
	return s != nil && len(s.channels)+len(s.patterns)+len(s.shardChannels) > 0
}

func (c *conn) connSubs() *connSubs {
	if c.subs == nil {
		c.subs = &connSubs{}
	}
	return c.subs
}

func cmdSubscribe(c *conn, args [][]byte)  { c.subscribeNames(false, args[1:]) }
func cmdSsubscribe(c *conn, args [][]byte) { c.subscribeNames(true, args[1:]) }

func cmdUnsubscribe(c *conn, args [][]byte)  { c.unsubscribeNames(false, args[1:], true) }
func cmdSunsubscribe(c *conn, args [][]byte) { c.unsubscribeNames(true, args[1:], true) }

// subscribeNames is SUBSCRIBE (SSUBSCRIBE with shardKind): one
// confirmation per name, in order, a repeated name included.
func (c *conn) subscribeNames(shardKind bool, names [][]byte) {
	s := c.connSubs()
	set := s.names(shardKind)
	if *set == nil {
		*set = make(map[string]struct{})
	}
	kind := "subscribe"
	if shardKind {
		kind = "ssubscribe"
	}
	for _, n := range names {
		name := string(n)
		if _, ok := (*set)[name]; !ok {
			(*set)[name] = struct{}{}
			c.w.addName(shardKind, name, c)
		}
		c.subReply(kind, n, c.subCount(shardKind))
	}
}

// subCount is the count a (un)subscribe reply carries: shard channels for
// the S forms, channels and patterns for the others.
func (c *conn) subCount(shardKind bool) int64 {
	if shardKind {
		return int64(len(c.subs.shardChannels))
	}
	return c.subs.count()
}

// unsubscribeNames is UNSUBSCRIBE (SUNSUBSCRIBE with shardKind): from the
// names given, or from every one when none is given; with no subscription
// at all the one reply names no channel. notify false (RESET, a closed
// connection) sends no reply.
func (c *conn) unsubscribeNames(shardKind bool, names [][]byte, notify bool) {
	s := c.connSubs()
	set := s.names(shardKind)
	kind := "unsubscribe"
	if shardKind {
		kind = "sunsubscribe"
	}
	if len(names) == 0 {
		for name := range *set {
			names = append(names, []byte(name))
		}
		if len(names) == 0 && notify {
			c.subReply(kind, nil, c.subCount(shardKind))
		}
	}
	for _, n := range names {
		name := string(n)
		if _, ok := (*set)[name]; ok {
			delete(*set, name)
			c.w.removeName(shardKind, name, c)
		}
		if notify {
			c.subReply(kind, n, c.subCount(shardKind))
		}
	}
}

func cmdPsubscribe(c *conn, args [][]byte) {
	s := c.connSubs()
	for _, p := range args[1:] {
		pat := string(p)
		if !slices.Contains(s.patterns, pat) {
			s.patterns = append(s.patterns, pat)
			c.w.addPattern(pat, c)
		}
		c.subReply("psubscribe", p, s.count())
	}
}

func cmdPunsubscribe(c *conn, args [][]byte) { c.unsubscribePatterns(args[1:], true) }

// unsubscribePatterns is PUNSUBSCRIBE: from the patterns given, or from
// every one in the order they were subscribed.
func (c *conn) unsubscribePatterns(pats [][]byte, notify bool) {
	s := c.connSubs()
	if len(pats) == 0 {
		for _, p := range s.patterns {
			pats = append(pats, []byte(p))
		}
		if len(pats) == 0 && notify {
			c.subReply("punsubscribe", nil, s.count())
		}
	}
	for _, p := range pats {
		pat := string(p)
		if i := slices.Index(s.patterns, pat); i >= 0 {
			s.patterns = slices.Delete(s.patterns, i, i+1)
			c.w.removePattern(pat, c)
		}
		if notify {
			c.subReply("punsubscribe", p, s.count())
		}
	}
}

// unsubscribeAll drops every subscription without replies (RESET, close).
func (c *conn) unsubscribeAll() {
	if c.subs == nil {
		return
	}
	c.unsubscribeNames(false, nil, false)
	c.unsubscribeNames(true, nil, false)
	c.unsubscribePatterns(nil, false)
	c.subs = nil
}

// subReply writes a (un)subscribe confirmation: a push in RESP3, an array
// in RESP2; name nil is a null (unsubscribing with no subscription).
func (c *conn) subReply(kind string, name []byte, count int64) {
	c.replyLocal(func(w *resp.Writer) {
		w.PushHeader(3)
		w.BulkString(kind)
		if name == nil {
			w.Null()
		} else {
			w.Bulk(name)
		}
		w.Int(count)
	})
}

func cmdPublish(c *conn, args [][]byte)  { c.publish(false, args[1], args[2]) }
func cmdSpublish(c *conn, args [][]byte) { c.publish(true, args[1], args[2]) }

// publish delivers a message to every shard with a subscriber to the
// channel (or a matching pattern) and replies with the number of
// receivers. The shards with none are skipped; this shard delivers at
// once, the others when their batch item runs, and the reply waits for
// all of their counts.
func (c *conn) publish(shardKind bool, channel, payload []byte) {
	w := c.w
	w.pubsub.targets = w.srv.pubsub.targets(shardKind, channel, w.pubsub.targets)
	var buf [16]int
	shards := buf[:0]
	for s := range w.srv.nshards {
		if w.pubsub.targets.has(s) {
			shards = append(shards, s)
		}
	}
	switch {
	case len(shards) == 0:
		c.replyLocal(func(w *resp.Writer) { w.Int(0) })
		return
	case len(shards) == 1 && shards[0] == w.id:
		n := w.deliver(&pubMessage{shardKind: shardKind, channel: channel, payload: payload})
		c.replyLocal(func(w *resp.Writer) { w.Int(n) })
		return
	}
	msg := &pubMessage{shardKind: shardKind,
		channel: append([]byte(nil), channel...), payload: append([]byte(nil), payload...)}
	counts := make([]int64, len(shards))
	// This shard delivers first: a RESP3 publisher subscribed to the
	// channel gets its message before the reply, as in Redis.
	local := slices.Index(shards, w.id)
	if local >= 0 {
		counts[local] = w.deliver(msg)
	}
	reply := c.newPending(len(shards), func(_ [][]byte, out *resp.Writer) {
		var n int64
		for _, k := range counts {
			n += k
		}
		out.Int(n)
	})
	for i, s := range shards {
		if i == local {
			reply.fill(i, nil)
			continue
		}
		w.queueRemote(s, batchItem{conn: c, reply: reply, part: i, proto: c.out.Proto,
			fn: func(tw *worker, _ *resp.Writer) { counts[i] = tw.deliver(msg) }})
	}
}
