package server

import (
	"sync"
	"sync/atomic"

	"github.com/moond-db/moond/resp"
)

// How invalidations travel (tracking.go): a shard queues them during its
// loop's iteration by the home shard of their target client, and sends
// each home one message before the loop waits; the home checks the
// client's mode now, follows its REDIRECT, and pushes the message in
// order with the client's replies.

// serverTracking is CLIENT TRACKING's server-wide state.
type serverTracking struct {
	clients atomic.Int64 // connections with tracking on (INFO tracking_clients)
	// homes maps every open connection's id to its shard, for delivering
	// to a client and checking a REDIRECT target.
	homes sync.Map // int64 → int
	// The BCAST prefixes (tracking_bcast.go).
	mu       sync.Mutex // serializes writers of prefixes
	prefixes atomic.Pointer[map[string][]bcastSub]
}

// homeOf returns the shard of the open connection with client id id.
func (s *Server) homeOf(id int64) (int, bool) {
	v, ok := s.tracking.homes.Load(id)
	if !ok {
		return 0, false
	}
	return v.(int), true
}

// invalidationKind says what an invalidation invalidates.
type invalidationKind uint8

const (
	invalidateKeys      invalidationKind = iota // keys read in the default mode
	invalidateBroadcast                         // keys matching a BCAST prefix
	invalidateAll                               // a flush: every key (a null)
)

// invalidation is one message for one tracking client. Its slices are
// owned and never modified once queued: a message to another shard
// shares them.
type invalidation struct {
	target int64
	kind   invalidationKind
	keys   [][]byte
	// modifier is the client that wrote the key (invalidateKeys), 0 for
	// none; modifiers is the one of each key (invalidateBroadcast).
	modifier  int64
	modifiers []int64
}

// queue adds inv, for client id, to what goes to id's home shard before
// the loop waits. A client that is gone needs none.
func (t *shardTracking) queue(id int64, inv invalidation) {
	home, ok := t.w.srv.homeOf(id)
	if !ok {
		return
	}
	if t.out[home] == nil {
		t.targets = append(t.targets, home)
	}
	t.out[home] = append(t.out[home], inv)
}

// due reports whether invalidations wait to be sent.
func (t *shardTracking) due() bool {
	return len(t.targets) > 0 || t.flushed || len(t.bcast) > 0
}

// flush sends the invalidations due: after each command a connection of
// this shard runs, after a batch of other shards' commands, and before
// the loop waits (runtime.Loop.BeforeWait) for the rest (expiry):
// the flush nulls of this shard's clients and the broadcasts first, then
// one message per home shard.
func (t *shardTracking) flush() {
	if t.flushed {
		t.flushed = false
		for id, c := range t.w.conns {
			if c.track != nil {
				t.queue(id, invalidation{target: id, kind: invalidateAll})
			}
		}
	}
	if len(t.bcast) > 0 {
		t.queueBroadcasts()
	}
	for _, home := range t.targets {
		list := t.out[home]
		t.out[home] = nil
		if home == t.w.id {
			t.w.deliverInvalidations(list)
			continue
		}
		tw := t.w.srv.workers[home]
		t.w.send(tw, func() { tw.deliverInvalidations(list) })
	}
	t.targets = t.targets[:0]
}

// deliverInvalidations runs on the target clients' home shard: each
// client that still tracks in the mode the message is for gets it, but
// for the keys a NOLOOP client wrote itself.
func (w *worker) deliverInvalidations(list []invalidation) {
	for i := range list {
		inv := &list[i]
		c := w.conns[inv.target]
		if c == nil || c.track == nil {
			continue
		}
		keys := inv.keys
		switch inv.kind {
		case invalidateKeys:
			// A client that switched to BCAST no longer hears of the keys
			// it read before (Redis skips BCAST clients here).
			if c.track.bcast || c.track.noloop && inv.modifier == c.id {
				continue
			}
		case invalidateBroadcast:
			if !c.track.bcast {
				continue
			}
			if c.track.noloop {
				if keys = notWrittenBy(keys, inv.modifiers, c.id); len(keys) == 0 {
					continue
				}
			}
		}
		c.sendInvalidation(keys, inv.kind == invalidateAll)
	}
}

// notWrittenBy returns the keys whose last writer was not id.
func notWrittenBy(keys [][]byte, modifiers []int64, id int64) [][]byte {
	var out [][]byte
	for i, k := range keys {
		if modifiers[i] != id {
			out = append(out, k)
		}
	}
	return out
}

// sendInvalidation is Redis's sendTrackingMessage: to c itself, or to the
// client it redirects to, wherever that one lives. all is a flush's null.
// A RESP3 client whose redirect target is gone hears so
// (tracking-redir-broken).
func (c *conn) sendInvalidation(keys [][]byte, all bool) {
	t := c.track
	if t.redirect == 0 {
		c.pushInvalidation(keys, all, false)
		return
	}
	rid := t.redirect
	home, ok := c.w.srv.homeOf(rid)
	if !ok {
		t.broken = true
		if c.out.Proto == 3 {
			w := resp.Writer{Proto: 3}
			w.PushHeader(2)
			w.BulkString("tracking-redir-broken")
			w.Int(rid)
			c.pushBehind(w.Buf)
		}
		return
	}
	tw := c.w.srv.workers[home]
	deliver := func() {
		if r := tw.conns[rid]; r != nil {
			r.pushInvalidation(keys, all, true)
		}
	}
	if tw == c.w {
		deliver()
		return
	}
	c.w.send(tw, deliver)
}

// pushInvalidation writes an invalidation to c: a RESP3 push
// ["invalidate", keys], or, for a RESP2 client that others redirect to and
// that is in Pub/Sub mode, a message on __redis__:invalidate. A RESP2
// client gets nothing otherwise: RESP2 has no pushes.
func (c *conn) pushInvalidation(keys [][]byte, all, redirected bool) {
	w := resp.Writer{Proto: c.out.Proto}
	switch {
	case c.out.Proto == 3:
		w.PushHeader(2)
		w.BulkString("invalidate")
	case redirected && c.subscribed():
		w.PushHeader(3)
		w.BulkString("message")
		w.BulkString("__redis__:invalidate")
	default:
		return
	}
	if all {
		w.Null()
	} else {
		w.ArrayHeader(len(keys))
		for _, k := range keys {
			w.Bulk(k)
		}
	}
	c.pushBehind(w.Buf)
}
