package server

import (
	"strconv"
	"strings"
	"time"
)

// The slow log (SLOWLOG): the commands that ran for at least
// slowlog-log-slower-than microseconds. Each shard keeps the entries of
// the commands its connections ran in a ring of its own (slowRing), touched
// only on its thread; the ids come from one server-wide counter, so SLOWLOG
// GET merges the shards' rings newest first into one log, and SLOWLOG LEN
// and GET show at most slowlog-max-len entries of it.

// Redis's limits on what an entry keeps of a command's arguments.
const (
	slowlogMaxArgc   = 32
	slowlogMaxString = 128
)

// slowEntry is one slow log entry, as SLOWLOG GET shows it.
type slowEntry struct {
	id   int64
	unix int64 // when the command ended, in seconds
	usec int64
	argv []string
	addr string
	name string
}

// slowlogArgv copies the arguments an entry shows: at most 32, the last of
// them "... (N more arguments)" when there are more, each cut at 128 bytes
// with "... (N more bytes)"; sensitive values are "(redacted)", as Redis
// shows them. The kept bytes are copied into one string that the elements
// share: a command whose reply comes later pays this for every call.
func slowlogArgv(args [][]byte) []string {
	n := min(len(args), slowlogMaxArgc)
	size := 0
	for _, a := range args[:n] {
		size += min(len(a), slowlogMaxString)
	}
	var b strings.Builder
	b.Grow(size)
	for _, a := range args[:n] {
		b.Write(a[:min(len(a), slowlogMaxString)])
	}
	kept := b.String()
	argv := make([]string, n)
	for i, a := range args[:n] {
		if i == slowlogMaxArgc-1 && len(args) > slowlogMaxArgc {
			argv[i] = "... (" + strconv.Itoa(len(args)-slowlogMaxArgc+1) + " more arguments)"
			break
		}
		k := min(len(a), slowlogMaxString)
		argv[i], kept = kept[:k], kept[k:]
		if len(a) > slowlogMaxString {
			argv[i] += "... (" + strconv.Itoa(len(a)-slowlogMaxString) + " more bytes)"
		}
	}
	redact(argv)
	return argv
}

// redact hides the passwords a command carries: AUTH's arguments, HELLO's
// AUTH username and password, MIGRATE's AUTH password and AUTH2 username
// and password, CONFIG SET's value of requirepass or masterauth.
func redact(argv []string) {
	if len(argv) == 0 {
		return
	}
	switch strings.ToLower(argv[0]) {
	case "auth":
		for i := 1; i < len(argv); i++ {
			argv[i] = "(redacted)"
		}
	case "hello":
		for i := 2; i < len(argv); i++ {
			if strings.EqualFold(argv[i], "auth") {
				for j := i + 1; j < len(argv) && j <= i+2; j++ {
					argv[j] = "(redacted)"
				}
				i += 2
			}
		}
	case "migrate":
		redactMigrate(argv)
	case "config":
		if len(argv) < 2 || !strings.EqualFold(argv[1], "set") {
			return
		}
		for i := 2; i+1 < len(argv); i += 2 {
			if name := strings.ToLower(argv[i]); name == "requirepass" || name == "masterauth" {
				argv[i+1] = "(redacted)"
			}
		}
	}
}

// redactMigrate hides MIGRATE's credentials: its options follow the five
// fixed arguments, up to KEYS (whose keys are not options).
func redactMigrate(argv []string) {
	for i := 6; i < len(argv); i++ {
		n := 0
		switch strings.ToLower(argv[i]) {
		case "keys":
			return
		case "auth":
			n = 1
		case "auth2":
			n = 2
		}
		for j := i + 1; j < len(argv) && j <= i+n; j++ {
			argv[j] = "(redacted)"
		}
		i += n
	}
}

// newSlowEntry makes the entry of a command that ran for ns nanoseconds;
// c, when not nil, is the client that sent it.
func (s *Server) newSlowEntry(c *conn, argv []string, ns int64) *slowEntry {
	now := time.Now()
	e := &slowEntry{id: s.slowlogID.Add(1) - 1, unix: now.Unix(), usec: ns / 1000, argv: argv}
	if c != nil {
		e.addr, e.name = c.addr, c.name
	}
	return e
}

// slowRing is one shard's slow log, newest last. It may hold up to twice
// max entries: dropping the oldest only then keeps an addition O(1)
// amortized under any slowlog-max-len; len and newest show the max newest.
type slowRing struct {
	entries []*slowEntry
}

// add appends e, and drops the oldest entries above max once there are
// twice as many.
func (r *slowRing) add(e *slowEntry, max int) {
	r.entries = append(r.entries, e)
	if len(r.entries) > 2*max {
		r.trim(max)
	}
}

// len is how many entries the log shows at max.
func (r *slowRing) len(max int) int { return min(len(r.entries), max) }

// trim keeps the newest max entries.
func (r *slowRing) trim(max int) {
	if extra := len(r.entries) - max; extra > 0 {
		clear(r.entries[:extra])
		r.entries = append(r.entries[:0], r.entries[extra:]...)
	}
}

// newest returns up to n of the ring's entries, newest first (n is at
// most slowlog-max-len).
func (r *slowRing) newest(n int) []*slowEntry {
	n = min(n, len(r.entries))
	out := make([]*slowEntry, n)
	for i := range n {
		out[i] = r.entries[len(r.entries)-1-i]
	}
	return out
}

// mergeSlow merges the shards' entries (each newest first) into the log's
// n newest, newest first.
func mergeSlow(parts [][]*slowEntry, n int) []*slowEntry {
	var out []*slowEntry
	for len(out) < n {
		best := -1
		for i, p := range parts {
			if len(p) > 0 && (best < 0 || p[0].id > parts[best][0].id) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out = append(out, parts[best][0])
		parts[best] = parts[best][1:]
	}
	return out
}

// keepSlow completes an entry another shard made for a command of c (the
// client's address and name) and keeps it in this shard's log.
func (w *worker) keepSlow(c *conn, e *slowEntry) {
	e.addr, e.name = c.addr, c.name
	w.slowlog.add(e, w.srv.timing.Load().slowlogMax)
}
