package keyspace

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// A randomized test of the watches against a model of "touched since the
// watch", built from the keys' states rather than from the keyspace's
// hooks: before and after each command, a snapshot of every key of every
// database (present, kind, encoded value, expiry time), read raw (no
// expiry). The model's rules, Redis 7.0's:
//   - a command whose snapshot of a key differs touches the key's watches;
//     for a watch of a stale key, the key's deletion is no change (the
//     watch then watches a missing key): a write of a stale key deletes
//     it first, so only a key present after the command touches;
//   - a few commands touch their key even when it comes out the same
//     (signalsAnyway): SET, INCRBY, LTRIM, EXPIRE, the destination of
//     RENAME and COPY, as Redis's call sites do;
//   - FLUSHDB and FLUSHALL, and SWAPDB, by touchAllWatchedKeysInDb's rules
//     over the snapshots before the command;
//   - EXEC (Touched) also aborts for a watch, not of a stale key, whose
//     key is past its TTL now.
//
// Where the model differs from Redis on purpose: a change of a value's
// representation alone (OBJECT ENCODING) is not a change in the model and
// is no touch in Redis either; the commands are chosen so that the
// encoded value has one form per content (small sets, lists, sorted sets).
// Redis 7.0.15's `break` in touchWatchedKey (watch.go) cannot arise here:
// every write deletes a stale key before it writes it.

var (
	watchRandDBs  = 3
	watchRandKeys = []string{"a", "b", "c"}
)

type keySnap struct {
	present bool
	kind    Kind
	val     string
	exp     int64
}

func snapKey(ks *Keyspace, dbi int, key string) keySnap {
	d := ks.dbs[dbi]
	kb := []byte(key)
	h := d.keys.hash(kb)
	sl := d.keys.find(h, kb)
	if sl == nil {
		return keySnap{}
	}
	return keySnap{true, sl.v.kind(), string(sl.v.appendEncoded(nil)), ks.expiryOf(d, h, sl)}
}

func (s keySnap) staleAt(now int64) bool { return s.present && s.exp >= 0 && now > s.exp }

type watchModel struct {
	w       *Watch
	db      int
	key     string
	touched bool
	stale   bool
}

type watchRand struct {
	t      *testing.T
	h      *harness
	r      *rand.Rand
	models []*watchModel
	before map[[2]string]keySnap
	log    []string
}

func snapKeyID(db int, key string) [2]string { return [2]string{fmt.Sprint(db), key} }

func (x *watchRand) snapAll() map[[2]string]keySnap {
	m := make(map[[2]string]keySnap)
	for db := 0; db < watchRandDBs; db++ {
		for _, k := range watchRandKeys {
			m[snapKeyID(db, k)] = snapKey(x.h.ks, db, k)
		}
	}
	return m
}

func (x *watchRand) pick(s ...string) string { return s[x.r.Intn(len(s))] }

func (x *watchRand) key() string { return watchRandKeys[x.r.Intn(len(watchRandKeys))] }

// command returns a random command line and the keys of the current
// database it signals even when they come out the same.
func (x *watchRand) command() (string, []string) {
	k, j := x.key(), x.key()
	switch x.r.Intn(24) {
	case 0, 1:
		return "SET " + k + " " + x.pick("1", "2"), []string{k}
	case 2:
		return "SET " + k + " " + x.pick("1", "2") + " PX " + x.pick("1", "5", "50"), []string{k}
	case 3:
		return "DEL " + k, nil
	case 4:
		return "INCRBY " + k + " " + x.pick("0", "1"), []string{k}
	case 5:
		return "APPEND " + k + " x", nil
	case 6:
		return "PEXPIRE " + k + " " + x.pick("1", "10", "100"), []string{k}
	case 7:
		return "PERSIST " + k, nil
	case 8:
		return x.pick("GET ", "EXISTS ", "TTL ", "TYPE ") + k, nil
	case 9:
		return "SADD " + k + " " + x.pick("m", "n"), nil
	case 10:
		return "SREM " + k + " " + x.pick("m", "n"), nil
	case 11:
		return "RPUSH " + k + " " + x.pick("m", "n"), nil
	case 12:
		return "LPOP " + k, nil
	case 13:
		return "LTRIM " + k + " " + x.pick("0", "1") + " -1", []string{k}
	case 14:
		if k == j {
			return "RENAME " + k + " " + j, nil // Redis signals nothing then
		}
		return "RENAME " + k + " " + j, []string{j}
	case 15:
		return fmt.Sprintf("MOVE %s %d", k, x.r.Intn(watchRandDBs)), nil
	case 16:
		return "COPY " + k + " " + j + " REPLACE", []string{j}
	case 17:
		return "ZADD " + k + " " + x.pick("1", "2") + " " + x.pick("m", "n"), nil
	case 18:
		return "ZREM " + k + " " + x.pick("m", "n"), nil
	case 19:
		return "HSET " + k + " f " + x.pick("1", "2"), []string{k}
	case 20:
		return "SETBIT " + k + " " + x.pick("0", "2", "7") + " 1", nil
	case 21:
		return "FLUSHDB", nil
	case 22:
		return fmt.Sprintf("SWAPDB %d %d", x.r.Intn(watchRandDBs), x.r.Intn(watchRandDBs)), nil
	default:
		return "FLUSHALL", nil
	}
}

// changed applies a changed key (db, key) to the models: after is its
// state after the command.
func (x *watchRand) changed(db int, key string, after keySnap) {
	for _, m := range x.models {
		if m.db != db || m.key != key {
			continue
		}
		if m.stale {
			// A write reaches a stale key only after its lazy deletion,
			// which is no change: only a key there now, a new one, is.
			m.stale = false
			if !after.present {
				continue
			}
		}
		m.touched = true
	}
}

// flushed applies FLUSHDB of db (with -1) or SWAPDB of db with with, over
// the states before the command.
func (x *watchRand) flushed(db, with int) {
	now := x.h.clock
	for _, m := range x.models {
		if m.db != db {
			continue
		}
		e := x.before[snapKeyID(db, m.key)]
		var r keySnap
		if with >= 0 {
			r = x.before[snapKeyID(with, m.key)]
		}
		switch {
		case !e.present && !r.present:
		case m.stale && !r.present:
			m.stale = false
		case m.stale && r.staleAt(now):
		case !m.stale && !e.present && r.staleAt(now):
			m.stale = true
		default:
			m.touched = true
		}
	}
}

func (x *watchRand) step() {
	switch n := x.r.Intn(20); {
	case n == 0 && len(x.models) < 8:
		db, k := x.r.Intn(watchRandDBs), x.key()
		m := &watchModel{w: x.h.ks.Watch(db, []byte(k)), db: db, key: k}
		m.stale = snapKey(x.h.ks, db, k).staleAt(x.h.clock)
		x.models = append(x.models, m)
		x.log = append(x.log, fmt.Sprintf("WATCH %d %s (stale %v)", db, k, m.stale))
		return
	case n == 1 && len(x.models) > 0:
		i := x.r.Intn(len(x.models))
		m := x.models[i]
		x.h.ks.Unwatch(m.w)
		x.models = append(x.models[:i], x.models[i+1:]...)
		x.log = append(x.log, fmt.Sprintf("UNWATCH %d %s", m.db, m.key))
		if m.w.Touched() != m.touched && m.touched {
			x.t.Fatalf("an unwatched watch forgot its touch\n%s", strings.Join(x.log, "\n"))
		}
		return
	case n == 2:
		ms := int64Of(x.pick("1", "2", "30"))
		x.h.advance(ms)
		x.log = append(x.log, fmt.Sprintf("advance %dms", ms))
		return
	case n == 3:
		x.h.c.DB = x.r.Intn(watchRandDBs)
		x.log = append(x.log, fmt.Sprintf("SELECT %d", x.h.c.DB))
		return
	case n == 4:
		x.before = x.snapAll()
		x.h.ks.ActiveExpire(1 << 30)
		x.log = append(x.log, "active expiry")
		x.applyDiff(nil)
		return
	}
	line, anyway := x.command()
	x.before = x.snapAll()
	reply := x.h.run(line)
	x.log = append(x.log, fmt.Sprintf("[db %d] %s -> %s", x.h.c.DB, line, reply))
	fields := strings.Fields(line)
	switch fields[0] {
	case "FLUSHDB":
		x.flushed(x.h.c.DB, -1)
		return
	case "FLUSHALL":
		for db := 0; db < watchRandDBs; db++ {
			x.flushed(db, -1)
		}
		return
	case "SWAPDB":
		a, b := int(fields[1][0]-'0'), int(fields[2][0]-'0')
		if a != b {
			x.flushed(a, b)
			x.flushed(b, a)
		}
		return
	}
	if strings.HasPrefix(reply, "(error)") || reply == "(integer) 0" && (fields[0] == "COPY" || fields[0] == "PEXPIRE") {
		anyway = nil
	}
	if fields[0] == "LTRIM" && !x.before[snapKeyID(x.h.c.DB, fields[1])].present {
		anyway = nil
	}
	x.applyDiff(anyway)
}

// int64 parses a number the test chose.
func int64Of(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// applyDiff applies to the models the keys whose snapshots changed since
// x.before, and the keys of the current database in anyway.
func (x *watchRand) applyDiff(anyway []string) {
	after := x.snapAll()
	for db := 0; db < watchRandDBs; db++ {
		for _, k := range watchRandKeys {
			id := snapKeyID(db, k)
			if after[id] != x.before[id] {
				x.changed(db, k, after[id])
			}
		}
	}
	for _, k := range anyway {
		x.changed(x.h.c.DB, k, after[snapKeyID(x.h.c.DB, k)])
	}
}

func (x *watchRand) check() {
	for _, m := range x.models {
		want := m.touched || !m.stale && snapKey(x.h.ks, m.db, m.key).staleAt(x.h.clock)
		if got := m.w.Touched(); got != want {
			x.t.Fatalf("watch of %d %s: Touched() = %v, model %v (touched %v, stale %v)\n%s",
				m.db, m.key, got, want, m.touched, m.stale, strings.Join(x.log, "\n"))
		}
	}
	registered := 0
	for _, m := range x.models {
		if !m.touched {
			registered++ // a touched watch leaves the registry
		}
	}
	if got := x.h.ks.Watching(); got != registered {
		x.t.Fatalf("Watching() = %d, want %d", got, registered)
	}
}

func TestWatchRandomAgainstModel(t *testing.T) {
	seeds, steps := 200, 400
	if testing.Short() {
		seeds = 20
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		h := newHarness(t)
		x := &watchRand{t: t, h: h, r: rand.New(rand.NewSource(seed))}
		for i := 0; i < steps; i++ {
			x.step()
			x.check()
			if len(x.log) > 60 {
				x.log = x.log[len(x.log)-60:]
			}
		}
	}
}
