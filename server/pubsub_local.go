package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// localPubsub is one shard's side of Pub/Sub: the subscribers among the
// connections this shard owns, by channel, shard channel and pattern.
// Touched only on the shard's thread. The server-wide directory
// (pubsub_dir.go) knows which shards have subscribers to a name; this
// table knows which connections.
type localPubsub struct {
	channels      map[string]*subscriberSet
	shardChannels map[string]*subscriberSet
	patterns      map[string]*patternSubs
	targets       shardSet // scratch for PUBLISH
}

// patternSubs are the connections subscribed to one pattern.
type patternSubs struct {
	pattern []byte
	conns   *subscriberSet
}

func (l *localPubsub) table(shardKind bool) *map[string]*subscriberSet {
	if shardKind {
		return &l.shardChannels
	}
	return &l.channels
}

// addName subscribes c to a channel (shard channel with shardKind) on
// this shard, telling the directory when c is its first subscriber here.
func (w *worker) addName(shardKind bool, name string, c *conn) {
	t := w.pubsub.table(shardKind)
	if *t == nil {
		*t = make(map[string]*subscriberSet)
	}
	subs := (*t)[name]
	if subs == nil {
		subs = newSubscriberSet()
		(*t)[name] = subs
		w.srv.pubsub.setName(shardKind, name, w.id, true)
	}
	subs.add(c)
}

// removeName undoes addName.
func (w *worker) removeName(shardKind bool, name string, c *conn) {
	t := w.pubsub.table(shardKind)
	subs := (*t)[name]
	if subs == nil {
		return
	}
	subs.remove(c)
	if subs.len() == 0 {
		delete(*t, name)
		w.srv.pubsub.setName(shardKind, name, w.id, false)
	}
}

// addPattern subscribes c to a pattern on this shard.
func (w *worker) addPattern(pattern string, c *conn) {
	if w.pubsub.patterns == nil {
		w.pubsub.patterns = make(map[string]*patternSubs)
	}
	p := w.pubsub.patterns[pattern]
	if p == nil {
		p = &patternSubs{pattern: []byte(pattern), conns: newSubscriberSet()}
		w.pubsub.patterns[pattern] = p
		w.srv.pubsub.setPattern(pattern, w.id, true)
	}
	p.conns.add(c)
}

// removePattern undoes addPattern.
func (w *worker) removePattern(pattern string, c *conn) {
	p := w.pubsub.patterns[pattern]
	if p == nil {
		return
	}
	p.conns.remove(c)
	if p.conns.len() == 0 {
		delete(w.pubsub.patterns, pattern)
		w.srv.pubsub.setPattern(pattern, w.id, false)
	}
}

// pubMessage is one published message as it travels to the shards that
// deliver it: owned copies, read-only once built.
type pubMessage struct {
	shardKind        bool // SPUBLISH: to shard channel subscribers only
	channel, payload []byte
}

// deliver pushes msg to this shard's subscribers and returns how many
// received it: the channel's subscribers, plus one per (connection,
// pattern) pair whose pattern matches the channel, as Redis counts.
func (w *worker) deliver(msg *pubMessage) int64 {
	kind := "message"
	if msg.shardKind {
		kind = "smessage"
	}
	n := (*w.pubsub.table(msg.shardKind))[string(msg.channel)].deliver(kind, nil, msg)
	if msg.shardKind {
		return n
	}
	for _, p := range w.pubsub.patterns {
		if keyspace.Match(p.pattern, msg.channel, false) {
			n += p.conns.deliver("pmessage", p.pattern, msg)
		}
	}
	return n
}

func protoIndex(c *conn) int {
	if c.out.Proto == 3 {
		return 1
	}
	return 0
}

// encodeMessage builds a message push: [kind, channel, payload], or
// [pmessage, pattern, channel, payload] when pattern is set.
func encodeMessage(proto int, kind string, pattern, channel, payload []byte) []byte {
	w := resp.Writer{Proto: proto}
	if pattern != nil {
		w.PushHeader(4)
		w.BulkString(kind)
		w.Bulk(pattern)
	} else {
		w.PushHeader(3)
		w.BulkString(kind)
	}
	w.Bulk(channel)
	w.Bulk(payload)
	return w.Buf
}

// push writes an out-of-band message (b is shared and never modified) to
// the connection: in order with its replies, and sent now when the
// connection is idle, waiting for input. A client blocked in a command
// (BLPOP) gets it at once, as Redis pushes to a blocked client.
func (c *conn) push(b []byte) { c.pushMessage(b, c.onlyBlockWaits()) }

// pushBehind is push after every reply the connection owes, a blocking
// command's or a transaction's included: an invalidation that the client's
// own command caused comes after that command's reply, as in Redis.
func (c *conn) pushBehind(b []byte) { c.pushMessage(b, false) }

// pushMessage is push; pastWait writes b ahead of the one reply still
// queued, a blocked command's.
func (c *conn) pushMessage(b []byte, pastWait bool) {
	if c.state == connClosed {
		return
	}
	if c.queue.empty() || pastWait {
		c.out.Raw(b)
	} else {
		c.queue.push(&pendingReply{data: b})
	}
	if c.checkOutputLimit() {
		return
	}
	if c.state == connReading {
		// The read in flight completes later (onRecv waits for the send).
		// The send waits for the end of the loop's iteration, so that
		// every message of it leaves in one send, as Redis writes a
		// client's output once per event loop iteration.
		c.state = connRunning
		c.w.flushBeforeWait(c)
	}
}

// flushBeforeWait sends c's output before the loop waits (flushPushed).
func (w *worker) flushBeforeWait(c *conn) {
	if !c.flushQueued {
		c.flushQueued = true
		w.pushed = append(w.pushed, c)
	}
}

// flushPushed sends the output of the idle connections that messages
// were pushed to in this iteration (runtime.Loop.BeforeWait).
func (w *worker) flushPushed() {
	for i, c := range w.pushed {
		w.pushed[i] = nil
		c.flushQueued = false
		if c.state == connRunning {
			c.maybeFlush()
		}
	}
	w.pushed = w.pushed[:0]
}
