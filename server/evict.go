package server

import (
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/keyspace"
)

// maxmemory (Redis 7.0's evict.c and processCommand's OOM check).
//
// Each shard gets an even share of maxmemory and keeps its own data under
// it: after every write it runs (and before none: memory grows only by
// writes), it asks its keyspace to evict by the policy (keyspace/evict.go)
// until the data fits, for at most the time maxmemory-eviction-tenacity
// allows; a shard still over goes on at its next loop iteration. Never
// while a transaction holds the shard or runs on it: Redis does not evict
// in the middle of EXEC either.
//
// A shard that could not get under its share (noeviction, or no key the
// policy may take, or a shard that cannot log the deletions) is failing:
// it counts in Server.oomShards, and the other shards take over its excess
// (their limit shrinks by it, effectiveLimit; a failing shard nudges them
// to evict again as it grows), so that a shard with no key to evict does
// not refuse data while others have keys they could evict. Once every
// shard fails and the shards' data, summed, is over maxmemory, every shard
// refuses the commands that add data (the denyoom ones) at
// dispatch, before they are routed, so that a command on keys of several
// shards is refused whole or runs whole. Under noeviction that is Redis's
// rule exactly: refused once the data is over maxmemory. As in Redis, a
// transaction refuses every queued command then, and EXEC of one that
// holds a denyoom command is aborted.

// oomError is Redis's reply to a command refused under maxmemory.
const oomError = "OOM command not allowed when used memory > 'maxmemory'."

// shardMemory is a worker's share of maxmemory and where its eviction
// stands. Touched on the worker's thread only, but for the atomics other
// shards read.
type shardMemory struct {
	limit      int64         // the share of maxmemory, bytes; 0: no limit
	used       atomic.Int64  // the shard's data after its last eviction run (read by other shards)
	failing    atomic.Bool   // the last run could not get under the limit (read by other shards)
	nudged     atomic.Bool   // a failing shard posted this one an eviction run
	timeLimit  time.Duration // one eviction run's time, from the tenacity
	result     keyspace.EvictResult
	overSince  time.Time     // when the shard last went over its share; zero while under
	overTotal  time.Duration // the time over its share, in the episodes that ended
	continuing bool          // an eviction run is posted for the next iteration
}

// evictionSettings are the eviction's configuration as each shard takes it.
type evictionSettings struct {
	eviction  keyspace.Eviction
	limit     int64 // per shard
	timeLimit time.Duration
}

// evictionSettings reads the configuration.
func (s *Server) evictionSettings() evictionSettings {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.evictionSettingsLocked()
}

// evictionSettingsLocked is evictionSettings for a caller holding cfgMu.
func (s *Server) evictionSettingsLocked() evictionSettings {
	policy, _ := keyspace.ParseEvictionPolicy(s.cfg.MaxMemoryPolicy)
	st := evictionSettings{
		eviction: keyspace.Eviction{Policy: policy, Samples: s.cfg.MaxMemorySamples,
			LFULogFactor: s.cfg.LFULogFactor, LFUDecayTime: s.cfg.LFUDecayTime, Tiered: s.cfg.TieredStorage},
		timeLimit: tenacityLimit(s.cfg.MaxMemoryEvictionTenacity),
	}
	if s.cfg.MaxMemory > 0 {
		st.limit = max(s.cfg.MaxMemory/int64(s.nshards), 1)
	}
	return st
}

// tenacityLimit is Redis's evictionTimeLimitUs: 50 µs per step up to 10,
// then 15% more per step, none at 100.
func tenacityLimit(t int) time.Duration {
	switch {
	case t <= 10:
		return time.Duration(50*t) * time.Microsecond
	case t < 100:
		return time.Duration(500*math.Pow(1.15, float64(t-10))) * time.Microsecond
	}
	return math.MaxInt64
}

// applyEviction takes new settings on w's thread, and evicts at once when
// the share shrank (CONFIG SET maxmemory evicts before it replies in
// Redis; here each shard does before CONFIG SET replies), unless a
// transaction holds the shard: its release does. With no limit left the
// shard's state is cleared.
func (w *worker) applyEviction(st evictionSettings) {
	w.mem.limit, w.mem.timeLimit = st.limit, st.timeLimit
	if w.sh != nil {
		w.sh.SetEviction(st.eviction)
	}
	if w.mem.limit == 0 || w.mayEvict() {
		w.enforceMemory()
	}
}

// mayEvict reports whether the shard may evict now: it has a limit, no
// transaction holds it or runs on it, no CLIENT PAUSE is on, and the
// server is no replica (as Redis's replica-ignore-maxmemory yes: the
// master's DELs keep a replica in step, its own evictions would make it
// differ).
func (w *worker) mayEvict() bool {
	return w.mem.limit > 0 && w.holder == nil && !w.serving && !w.paused() && !w.srv.repl.gate.Load()
}

// enforceMemory evicts until the shard's data fits its share, or the run's
// time is up, notes the outcome, and returns the LSN of the last deletion
// it logged (0 for none).
func (w *worker) enforceMemory() uint64 {
	ev := keyspace.Evicted{}
	if w.mem.limit > 0 && w.sh != nil {
		ev = w.sh.Evict(w.effectiveLimit(), w.mem.timeLimit)
	}
	w.mem.used.Store(ev.Used)
	if ev.Took > 0 {
		w.srv.latencyEvent("eviction-cycle", ev.Took)
	}
	w.noteEviction(ev.Result)
	if ev.Result == keyspace.EvictFail && w.srv.overMaxmemory() {
		w.nudgeOthers()
	}
	return ev.LSN
}

// nudgeOthers posts an eviction run to every shard that is not failing:
// this one grew past what they left it (effectiveLimit), and they are to
// make room before data is refused.
func (w *worker) nudgeOthers() {
	for _, o := range w.srv.workers {
		if o == w || o.mem.failing.Load() || !o.mem.nudged.CompareAndSwap(false, true) {
			continue
		}
		w.send(o, func() {
			o.mem.nudged.Store(false)
			if o.mayEvict() {
				o.enforceMemory()
			}
		})
	}
}

// effectiveLimit is the shard's share of maxmemory, less its part of what
// failing shards hold beyond theirs: the shards that can evict make room
// for those that cannot.
func (w *worker) effectiveLimit() int64 {
	if w.srv.oomShards.Load() == 0 || w.srv.nshards == 1 {
		return w.mem.limit
	}
	var held int64
	failing := 0
	for _, o := range w.srv.workers {
		if o != w && o.mem.failing.Load() {
			held += o.mem.used.Load()
			failing++
		}
	}
	if failing == 0 {
		return w.mem.limit
	}
	rest := (w.srv.maxmemory.Load() - held) / int64(w.srv.nshards-failing)
	return max(min(w.mem.limit, rest), 0)
}

// noteEviction records an eviction run's outcome: the server's count of
// shards that refuse data, the time over the share, and a continuation
// at the next loop iteration when the run ran out of time.
func (w *worker) noteEviction(r keyspace.EvictResult) {
	m := &w.mem
	if (r == keyspace.EvictFail) != (m.result == keyspace.EvictFail) {
		m.failing.Store(r == keyspace.EvictFail)
		if r == keyspace.EvictFail {
			w.srv.oomShards.Add(1)
		} else {
			w.srv.oomShards.Add(-1)
		}
	}
	m.result = r
	now := w.loop.Now()
	switch over := r != keyspace.EvictOK; {
	case over && m.overSince.IsZero():
		m.overSince = now
	case !over && !m.overSince.IsZero():
		m.overTotal += now.Sub(m.overSince)
		m.overSince = time.Time{}
	}
	if r == keyspace.EvictRunning && !m.continuing {
		m.continuing = true
		_ = w.loop.Post(func() {
			m.continuing = false
			if w.mayEvict() {
				w.enforceMemory()
			}
		})
	}
}

// overTimes are INFO's total_eviction_exceeded_time and
// current_eviction_exceeded_time for this shard, in ms.
func (m *shardMemory) overTimes(now time.Time) (total, current int64) {
	cur := time.Duration(0)
	if !m.overSince.IsZero() {
		cur = now.Sub(m.overSince)
	}
	return (m.overTotal + cur).Milliseconds(), cur.Milliseconds()
}

// refusesData reports whether commands that add data are refused now: no
// shard can evict, and the data of all shards is over maxmemory.
func (s *Server) refusesData() bool {
	return int(s.oomShards.Load()) == s.nshards && s.overMaxmemory()
}

// overMaxmemory reports whether the shards' data, as each last measured
// it, is over maxmemory in all.
func (s *Server) overMaxmemory() bool {
	var used int64
	for _, w := range s.workers {
		used += w.mem.used.Load()
	}
	return used > s.maxmemory.Load()
}

// denyOOMQueued reports whether a queued transaction holds a command that
// adds data.
func denyOOMQueued(cmds []queuedCmd) bool {
	for _, q := range cmds {
		if q.cmd.spec != nil && q.cmd.spec.DenyOOM() {
			return true
		}
	}
	return false
}

// goMemoryLimit is the Go runtime's soft memory limit under maxmemory:
// room for the data, half as much again for the garbage the collector has
// not yet taken and for what is not data (buffers, connections, the names
// of deleted keys the next checkpoint still needs), and 64 MiB more for
// the process itself. A tighter limit keeps the collector running most of
// the time under eviction churn (SET at -P 16 over 1M keys, maxmemory
// 50 MB, a fifth of room, before evicted buffers were reused: GC over
// half the CPU, 0.22x redis-server). The checkpoints' page cache
// (pagecache-size, all shards together) lives in the Go heap too and is
// not data: it is added, or a cache larger than maxmemory (the default
// 128 MiB under a small maxmemory, as the cold tier runs) keeps the live
// heap above the limit and the collector running back to back (bench-cold:
// 55% of the CPU in marking, 33 collections during 30,000 GETs). The
// limit the process had before (its GOMEMLIMIT) wins when lower.
func goMemoryLimit(maxmemory, pageCache, before int64) int64 {
	room := maxmemory/2 + 64<<20 + max(pageCache, 0)
	if maxmemory > math.MaxInt64-room {
		return before
	}
	return min(maxmemory+room, before)
}

// goLimit is what applyGoMemoryLimit changed: the limit the process had
// before maxmemory set one, -1 while maxmemory set none.
var goLimit = struct {
	sync.Mutex
	before int64
}{before: -1}

// applyGoMemoryLimit sets the runtime's soft memory limit from maxmemory
// and the page cache's size, and puts back the one the process had when
// maxmemory goes back to 0.
func applyGoMemoryLimit(maxmemory, pageCache int64) {
	goLimit.Lock()
	defer goLimit.Unlock()
	if maxmemory <= 0 {
		if goLimit.before >= 0 {
			debug.SetMemoryLimit(goLimit.before)
			goLimit.before = -1
		}
		return
	}
	if goLimit.before < 0 {
		goLimit.before = debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(goMemoryLimit(maxmemory, pageCache, goLimit.before))
}
