package server

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/moond-db/moond/keyspace"
)

// pubsubDir is the server-wide summary of Pub/Sub subscriptions: for each
// channel, shard channel and pattern, the set of shards that have at least
// one subscriber to it. The subscribers themselves live on their
// connection's shard (pubsub_local.go); the directory only lets a
// publisher post a message to the shards that have receivers and skip the
// others, so that a PUBLISH costs one message per shard that delivers.
//
// Publishers read it without a lock. A shard changes it (under mu) when
// the number of its local subscribers to a name goes from 0 to 1 or back
// to 0, before the (un)subscribe's reply is written: a PUBLISH that starts
// after a client saw its subscription confirmed finds its shard here.
type pubsubDir struct {
	mu            sync.Mutex // serializes writers; readers take none
	channels      sync.Map   // string → shardSet
	shardChannels sync.Map   // string → shardSet
	patterns      atomic.Pointer[[]dirPattern]

	// Unique names subscribed to on some shard (INFO pubsub_channels,
	// pubsubshard_channels, pubsub_patterns; PUBSUB NUMPAT).
	nChannels, nShardChannels, nPatterns atomic.Int64
	// nKeyChannels counts the channels whose name starts "__key", of
	// which keyspace notifications' are: with it and nPatterns at 0, no
	// notification has a receiver (notify.go).
	nKeyChannels atomic.Int64
}

// isKeyChannel reports whether a channel may carry keyspace
// notifications.
func isKeyChannel(name string) bool { return strings.HasPrefix(name, "__key") }

// dirPattern is one subscribed pattern and the shards that subscribe to it.
type dirPattern struct {
	pattern []byte
	shards  shardSet
}

// shardSet is a set of shard indexes, one bit each. A set stored in the
// directory is never modified: a change stores a new one.
type shardSet []uint64

func (s shardSet) has(i int) bool {
	w := i / 64
	return w < len(s) && s[w]&(1<<(uint(i)%64)) != 0
}

// with returns a copy of s with shard i added (on) or removed; nil when
// the result is empty.
func (s shardSet) with(i int, on bool) shardSet {
	n := max(len(s), i/64+1)
	out := make(shardSet, n)
	copy(out, s)
	bit := uint64(1) << (uint(i) % 64)
	if on {
		out[i/64] |= bit
	} else {
		out[i/64] &^= bit
	}
	for _, w := range out {
		if w != 0 {
			return out
		}
	}
	return nil
}

// orInto adds the shards of s to dst, growing it as needed.
func (s shardSet) orInto(dst shardSet) shardSet {
	for len(dst) < len(s) {
		dst = append(dst, 0)
	}
	for i, w := range s {
		dst[i] |= w
	}
	return dst
}

// setName records that shard has (on) or no longer has subscribers to
// name, a channel or, with shardKind, a shard channel.
func (d *pubsubDir) setName(shardKind bool, name string, shard int, on bool) {
	m, count := &d.channels, &d.nChannels
	if shardKind {
		m, count = &d.shardChannels, &d.nShardChannels
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var old shardSet
	if v, ok := m.Load(name); ok {
		old = v.(shardSet)
	}
	next := old.with(shard, on)
	switch {
	case next == nil && old != nil:
		m.Delete(name)
		count.Add(-1)
		if !shardKind && isKeyChannel(name) {
			d.nKeyChannels.Add(-1)
		}
	case next != nil:
		if old == nil {
			count.Add(1)
			if !shardKind && isKeyChannel(name) {
				d.nKeyChannels.Add(1)
			}
		}
		m.Store(name, next)
	}
}

// setPattern records that shard has (on) or no longer has subscribers to
// the pattern.
func (d *pubsubDir) setPattern(pattern string, shard int, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var old []dirPattern
	if p := d.patterns.Load(); p != nil {
		old = *p
	}
	next := make([]dirPattern, 0, len(old)+1)
	found := false
	for _, e := range old {
		if string(e.pattern) == pattern {
			found = true
			e = dirPattern{pattern: e.pattern, shards: e.shards.with(shard, on)}
			if e.shards == nil {
				continue
			}
		}
		next = append(next, e)
	}
	if !found && on {
		next = append(next, dirPattern{pattern: []byte(pattern), shards: shardSet(nil).with(shard, true)})
	}
	d.nPatterns.Store(int64(len(next)))
	d.patterns.Store(&next)
}

// targets returns, in dst, the shards that have a subscriber to channel
// (a shard channel with shardKind) or, for a channel, to a pattern that
// matches it.
func (d *pubsubDir) targets(shardKind bool, channel []byte, dst shardSet) shardSet {
	dst = dst[:0]
	m := &d.channels
	if shardKind {
		m = &d.shardChannels
	}
	if v, ok := m.Load(string(channel)); ok {
		dst = v.(shardSet).orInto(dst)
	}
	if shardKind {
		return dst
	}
	if p := d.patterns.Load(); p != nil {
		for _, e := range *p {
			if keyspace.Match(e.pattern, channel, false) {
				dst = e.shards.orInto(dst)
			}
		}
	}
	return dst
}

// names lists the channels (shard channels with shardKind) that have a
// subscriber on some shard and match pattern (every one when it is nil).
func (d *pubsubDir) names(shardKind bool, pattern []byte) []string {
	m := &d.channels
	if shardKind {
		m = &d.shardChannels
	}
	var out []string
	m.Range(func(k, _ any) bool {
		name := k.(string)
		if pattern == nil || keyspace.Match(pattern, []byte(name), false) {
			out = append(out, name)
		}
		return true
	})
	return out
}
