package server

import (
	"time"

	"github.com/moond-db/moond/server/config"
)

// client-output-buffer-limit pubsub: a subscriber that does not read its
// messages is disconnected once its pending output reaches the hard
// limit, or stays at the soft limit or above for longer than its seconds,
// as Redis does, so that a slow subscriber never makes the server's
// memory grow without bound. The check runs when a message is added to
// the connection's output (push), as Redis checks on every reply added.
// The normal and replica classes are not applied.

// pubsubLimit is the pubsub class's limit, cached for the shards (read on
// every message delivered); CONFIG SET renews it (applyRuntimeConfig).
func (s *Server) pubsubLimit() config.OutputBufferLimit {
	if l := s.obufPubsub.Load(); l != nil {
		return *l
	}
	return config.OutputBufferLimit{}
}

// cachePubsubLimit copies the configured pubsub limit into the cache; the
// caller holds cfgMu (either way).
func (s *Server) cachePubsubLimit() {
	l := s.cfg.OutputBufferLimits[config.ClassPubSub]
	s.obufPubsub.Store(&l)
}

// pendingOutput is what the connection has to send: its output, the
// replies queued, and the send in flight.
func (c *conn) pendingOutput() int64 {
	n := len(c.out.Buf)
	if c.state == connSending {
		n += len(c.sending)
	}
	for _, p := range c.queue.items[c.queue.head:] {
		n += len(p.data)
	}
	return int64(n)
}

// checkOutputLimit closes the connection when its pending output is over
// the pubsub limit, and reports whether it did.
func (c *conn) checkOutputLimit() bool {
	lim := c.w.srv.pubsubLimit()
	if lim.Hard <= 0 && lim.Soft <= 0 {
		return false
	}
	used := c.pendingOutput()
	over := lim.Hard > 0 && used >= lim.Hard
	if !over && lim.Soft > 0 && used >= lim.Soft {
		now := c.w.loop.Now()
		if c.softLimitSince.IsZero() {
			c.softLimitSince = now
		} else {
			over = now.Sub(c.softLimitSince) > lim.SoftFor
		}
	} else if !over {
		c.softLimitSince = time.Time{}
	}
	if !over {
		return false
	}
	c.w.stats.obufLimitDisconnections++
	c.w.srv.log.Warn("client closed for overcoming of output buffer limits",
		"id", c.id, "addr", c.addr, "class", "pubsub", "pending", used)
	c.out.Buf = nil // what it did not read is dropped, as in Redis
	c.closeAfterReply = true
	c.close()
	return true
}
