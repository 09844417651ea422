package keyspace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/heap"
)

// ReadColdRecord makes the model heap the keyspace's ColdReader.
func (m *modelHeap) ReadColdRecord(id heap.RecordID) (heap.Record, error) {
	r, ok := m.recs[id]
	if !ok {
		return heap.Record{}, fmt.Errorf("no record at %v", id)
	}
	return r, nil
}

// failingReader is a ColdReader whose every read fails.
type failingReader struct{}

func (failingReader) ReadColdRecord(heap.RecordID) (heap.Record, error) {
	return heap.Record{}, errors.New("page damaged")
}

// doWarm runs a command as the shard does: its cold keys warmed first
// (WarmSync), an error reply when one cannot be read.
func (h *harness) doWarm(args ...string) string {
	h.t.Helper()
	bargs := make([][]byte, len(args))
	for i, a := range args {
		bargs[i] = []byte(a)
	}
	if msg := h.ks.WarmSync(&h.c, Lookup(bargs[0]), bargs); msg != "" {
		return "(error) " + msg
	}
	return h.do(args...)
}

// coldModel fills a tracked keyspace with keys of every kind, some with a
// TTL, checkpoints them into a model heap and returns the heap and every
// key's DUMP and TTL.
func coldModel(t *testing.T, h *harness) (*modelHeap, map[string][2]string) {
	m := newModelHeap()
	h.ks.Cold = m
	for i := range 300 {
		k := "k" + strconv.Itoa(i)
		switch i % 6 {
		case 0:
			h.do("SET", k, strings.Repeat(strconv.Itoa(i), 200))
		case 1:
			h.do("SET", k, strconv.Itoa(i*7))
		case 2:
			h.do("HSET", k, "a", strconv.Itoa(i), "b", "x")
		case 3:
			h.do("RPUSH", k, "1", "2", strconv.Itoa(i))
		case 4:
			h.do("SADD", k, "m", strconv.Itoa(i))
		case 5:
			h.do("ZADD", k, "1.5", "m", strconv.Itoa(i), "n")
		}
		if i%5 == 0 {
			h.do("PEXPIREAT", k, strconv.FormatInt(h.clock+1_000_000, 10))
		}
	}
	m.checkpoint(t, h.ks)
	want := make(map[string][2]string)
	for i := range 300 {
		k := "k" + strconv.Itoa(i)
		want[k] = [2]string{h.do("DUMP", k), h.do("PTTL", k)}
	}
	return m, want
}

func TestColdKeysReadBackExactlyEveryKind(t *testing.T) {
	h := newTracked(t)
	_, want := coldModel(t, h)
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	before := h.ks.DatasetMemory()
	if r := h.ks.Evict(before-8000, time.Hour).Result; r != EvictOK {
		t.Fatalf("eviction under tiered-storage: %v, want EvictOK", r)
	}
	st := h.ks.ColdStats()
	if st.Keys == 0 || st.Bytes == 0 || h.do("DBSIZE") != n(300) {
		t.Fatalf("after cooling: %d cold keys, %d bytes, DBSIZE %s: want cold keys and all 300 kept", st.Keys, st.Bytes, h.do("DBSIZE"))
	}
	if h.ks.Stats().EvictedKeys != 0 {
		t.Fatalf("tiered-storage deleted %d keys", h.ks.Stats().EvictedKeys)
	}
	// TYPE and PTTL answer from the cold entry, without a read.
	for k, w := range want {
		if got := h.doWarm("PTTL", k); got != w[1] {
			t.Fatalf("PTTL %s = %s, want %s", k, got, w[1])
		}
	}
	if got := h.ks.ColdStats(); got.Reads != 0 || got.Keys != st.Keys {
		t.Fatalf("TYPE/PTTL read %d cold values (cold keys %d -> %d)", got.Reads, st.Keys, got.Keys)
	}
	for k, w := range want {
		if got := h.doWarm("DUMP", k); got != w[0] {
			t.Fatalf("DUMP %s after a cold read = %s, want %s", k, got, w[0])
		}
	}
	if got := h.ks.ColdStats(); got.Keys != 0 || got.Bytes != 0 || got.Reads != st.Keys {
		t.Fatalf("after reading every key: %+v, want no cold key and %d reads", got, st.Keys)
	}
}

func TestColdKeyOverwriteNeedsNoReadAndSupersedesItsRecord(t *testing.T) {
	h := newTracked(t)
	m, _ := coldModel(t, h)
	h.ks.SetEviction(Eviction{Policy: AllKeysRandom, Samples: 5, Tiered: true})
	h.ks.Evict(0, time.Hour) // everything that may be cold is
	if st := h.ks.ColdStats(); st.Keys != 300 {
		t.Fatalf("%d cold keys, want all 300", st.Keys)
	}
	old := map[string]heap.RecordID{}
	for _, k := range []string{"k0", "k2", "k3"} {
		d := h.ks.dbs[0]
		id, _ := h.ks.slotLoc(0, d.keys.find(d.keys.hash([]byte(k)), []byte(k)))
		old[k] = id
	}
	h.expectArgs("OK", "SET", "k0", "new")
	h.expectArgs("(integer) 1", "DEL", "k2")
	h.expectArgs("OK", "MSET", "k3", "three")
	if st := h.ks.ColdStats(); st.Reads != 0 || st.Keys != 297 {
		t.Fatalf("overwrites: %d reads, %d cold keys; want none and 297", st.Reads, st.Keys)
	}
	h.expectArgs(q("new"), "GET", "k0")
	h.expectArgs(q("three"), "GET", "k3")
	m.checkpoint(t, h.ks)
	for k, id := range old {
		if _, ok := m.recs[id]; ok {
			t.Fatalf("the cold record of %s at %v survived its overwrite's checkpoint", k, id)
		}
	}
	checkOwnership(t, h.ks, m)
}

func TestColdEvictionNeverTakesADirtyKey(t *testing.T) {
	h := newTracked(t)
	m, _ := coldModel(t, h)
	for i := range 300 {
		h.do("APPEND", "dirty"+strconv.Itoa(i), strings.Repeat("d", 500))
	}
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	if r := h.ks.Evict(0, time.Hour).Result; r != EvictFail {
		t.Fatalf("eviction with only dirty keys left: %v, want EvictFail", r)
	}
	if !h.ks.ColdStuck() || h.ks.ColdStuck() {
		t.Fatal("ColdStuck is not reported once after a run that found nothing to cool")
	}
	if h.do("DBSIZE") != n(600) || h.ks.ColdStats().Keys != 300 {
		t.Fatalf("DBSIZE %s, %d cold: want 600 keys, the 300 checkpointed ones cold", h.do("DBSIZE"), h.ks.ColdStats().Keys)
	}
	for i := range 300 {
		k := "dirty" + strconv.Itoa(i)
		h.expectArgs(q(strings.Repeat("d", 500)), "GET", k)
	}
	m.checkpoint(t, h.ks)
	if r := h.ks.Evict(0, time.Hour).Result; r != EvictFail || h.ks.ColdStats().Keys != 600 {
		t.Fatalf("after the checkpoint: %v, %d cold keys; want all 600 cold", r, h.ks.ColdStats().Keys)
	}
}

func TestColdReadFailureAnswersAnErrorAndKeepsTheKey(t *testing.T) {
	h := newTracked(t)
	_, want := coldModel(t, h)
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	h.ks.Evict(0, time.Hour)
	h.ks.Cold = failingReader{}
	got := h.doWarm("GET", "k0")
	if !strings.HasPrefix(got, "(error) IOERR cold value of key 'k0' cannot be read: page damaged") {
		t.Fatalf("GET of an unreadable cold key: %s", got)
	}
	if st := h.ks.ColdStats(); st.Misses != 1 || st.Keys != 300 {
		t.Fatalf("after the failed read: %+v, want 1 miss and the key still cold", st)
	}
	h.expectArgs(n(1), "EXISTS", "k0")
	h.expectArgs("string", "TYPE", "k0")
	h.ks.Cold = nil
	if got := h.doWarm("DUMP", "k1"); !strings.HasPrefix(got, "(error) IOERR") || got == want["k1"][0] {
		t.Fatalf("DUMP with no heap: %s", got)
	}
}

func TestColdInstallRefusesAKeyNoLongerColdThere(t *testing.T) {
	h := newTracked(t)
	m, _ := coldModel(t, h)
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	h.ks.Evict(0, time.Hour)
	var ck []ColdKey
	ck = h.ks.ColdKeys(&h.c, Lookup([]byte("get")), [][]byte{[]byte("GET"), []byte("k0")}, ck)
	if len(ck) != 1 {
		t.Fatalf("ColdKeys of GET k0: %v", ck)
	}
	rec := m.recs[ck[0].Loc]
	h.expectArgs("OK", "SET", "k0", "written meanwhile")
	if err := h.ks.InstallCold(ck[0], rec); !errors.Is(err, ErrColdGone) {
		t.Fatalf("install over a key written meanwhile: %v, want ErrColdGone", err)
	}
	h.expectArgs(q("written meanwhile"), "GET", "k0")
	if ck = h.ks.ColdKeys(&h.c, Lookup([]byte("set")), [][]byte{[]byte("SET"), []byte("k1"), []byte("v")}, ck[:0]); len(ck) != 0 {
		t.Fatalf("SET without GET needs the cold value of %v", ck)
	}
}

func TestNeedsValueOnlyForCommandsThatReadOrRewriteTheValue(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"GET k", true}, {"SET k v", false}, {"SET k v NX KEEPTTL", false}, {"SET k v GET", true},
		{"SET k get", false}, {"set k v ex 10 get", true}, {"DEL k", false}, {"UNLINK k", false},
		{"EXISTS k", false}, {"TYPE k", false}, {"TTL k", false}, {"TOUCH k", false},
		{"OBJECT IDLETIME k", false}, {"OBJECT ENCODING k", true}, {"EXPIRE k 10", true},
		{"PERSIST k", true}, {"MSET k v", false}, {"APPEND k v", true}, {"RENAME k j", true},
		{"HGETALL k", true}, {"DUMP k", true},
	} {
		args := [][]byte{}
		for _, a := range strings.Fields(tc.cmd) {
			args = append(args, []byte(a))
		}
		spec := Lookup(args[0])
		if spec == nil {
			t.Fatalf("%s: unknown command", tc.cmd)
		}
		if got := NeedsValue(spec, args); got != tc.want {
			t.Errorf("NeedsValue(%s) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestColdEvictionWaitsForTakenKeysToBeWritten: between the take that
// clears their dirty bits and the checkpoint's writing of their versions,
// keys look clean but their locations name their old versions: eviction
// makes none of them cold then (the checkpoint used to find such a key
// cold and panic, its current value lost), and all of them once the
// versions are placed; each reads back its new value.
func TestColdEvictionWaitsForTakenKeysToBeWritten(t *testing.T) {
	h := newTracked(t)
	m, _ := coldModel(t, h)
	for i := range 300 {
		h.do("SET", "k"+strconv.Itoa(i), "new"+strconv.Itoa(i))
	}
	h.ks.BeginTake()
	var taken [][]byte
	for done := false; !done; {
		var keys [][]byte
		keys, done = h.ks.TakeSome(64)
		for _, k := range keys {
			taken = append(taken, append([]byte(nil), k...))
		}
	}
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	h.ks.Evict(0, time.Hour)
	if c := h.ks.ColdStats().Keys; c != 0 {
		t.Fatalf("%d keys made cold while their taken versions were unwritten", c)
	}
	for _, k := range taken {
		m.write(t, h.ks, k)
	}
	m.release(t)
	h.ks.Evict(0, time.Hour)
	if c := h.ks.ColdStats().Keys; c != 300 {
		t.Fatalf("%d keys cold once the checkpoint placed them, want 300", c)
	}
	for i := range 300 {
		if got := h.doWarm("GET", "k"+strconv.Itoa(i)); got != q("new"+strconv.Itoa(i)) {
			t.Fatalf("k%d reads back %s", i, got)
		}
	}
}

// The shard reads every cold record into one scratch buffer (shard/cold.go):
// a value InstallCold made warm must keep none of the record's bytes, or
// the next read would rewrite a value a reply is still to be made from.
func TestInstallColdKeepsNoBytesOfTheRecordEveryKind(t *testing.T) {
	h := newTracked(t)
	m, want := coldModel(t, h)
	h.ks.SetEviction(Eviction{Policy: AllKeysRandom, Samples: 5, Tiered: true})
	h.ks.Evict(0, time.Hour)
	if st := h.ks.ColdStats(); st.Keys != 300 {
		t.Fatalf("%d cold keys, want all 300", st.Keys)
	}
	var scratch []byte
	for k := range want {
		keys := h.ks.ColdKeys(&h.c, Lookup([]byte("DUMP")), [][]byte{[]byte("DUMP"), []byte(k)}, nil)
		if len(keys) != 1 {
			t.Fatalf("DUMP %s: %d cold keys, want 1", k, len(keys))
		}
		rec := m.recs[keys[0].Loc]
		// The record as the shard has it: in the scratch buffer.
		scratch = append(append(scratch[:0], rec.Key...), rec.Value...)
		in := heap.Record{Key: scratch[:len(rec.Key)], Kind: rec.Kind, Expiry: rec.Expiry, KeyLSN: rec.KeyLSN, Value: scratch[len(rec.Key):]}
		if err := h.ks.InstallCold(keys[0], in); err != nil {
			t.Fatalf("install %s: %v", k, err)
		}
		for i := range scratch {
			scratch[i] = 0xff // the next read
		}
	}
	for k, w := range want {
		if got := h.do("DUMP", k); got != w[0] {
			t.Fatalf("DUMP %s after its record's buffer was reused = %s, want %s", k, got, w[0])
		}
	}
}

// A string read back in takes the bytes a value made cold left (spare.go):
// under tiered storage every cold read makes another value leave, and the
// collector runs in proportion to what is allocated.
func TestInstallColdStringTakesASpareBuffer(t *testing.T) {
	h := newTracked(t)
	m := newModelHeap()
	h.ks.Cold = m
	val := strings.Repeat("v", 1000)
	h.do("SET", "a", val)
	h.do("SET", "b", val)
	m.checkpoint(t, h.ks)
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	h.ks.Evict(0, time.Hour)
	if st := h.ks.ColdStats(); st.Keys != 2 {
		t.Fatalf("%d cold keys, want 2", st.Keys)
	}
	spare := h.ks.spare.n
	if spare == 0 {
		t.Fatal("cooling kept no spare buffer")
	}
	if got := h.doWarm("GET", "a"); got != strconv.Quote(val) {
		t.Fatalf("GET a = %.20q, want %d bytes of v", got, len(val))
	}
	if got := h.ks.spare.n; got != spare-1 {
		t.Fatalf("%d spare buffers after a string was read back in, want %d", got, spare-1)
	}
}

// Once most keys are cold, the LRU policy under tiered storage still makes
// the idle warm keys cold, not the ones just written: a refill samples
// enough keys to hold maxmemory-samples warm ones (tieredSamples).
func TestTieredLRUCoolsIdleWarmKeysWhenMostKeysAreCold(t *testing.T) {
	h := newTracked(t)
	m := newModelHeap()
	h.ks.Cold = m
	val := strings.Repeat("v", 100)
	for i := range 2000 {
		h.do("SET", "c"+strconv.Itoa(i), val)
	}
	h.clock += 300_000
	for i := range 200 {
		h.do("SET", "idle"+strconv.Itoa(i), val)
	}
	h.clock += 100_000
	for i := range 100 {
		h.do("SET", "hot"+strconv.Itoa(i), val)
	}
	m.checkpoint(t, h.ks)
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, Tiered: true})
	// 2000 keys are made cold: 13% of the keys stay warm.
	for h.ks.ColdStats().Keys < 2000 {
		h.ks.Evict(h.ks.DatasetMemory()-1, time.Hour)
	}
	// While most warm keys are idle ones, the victims are.
	hot0 := warmCount(h, "hot", 100)
	warmIdle := func() int { return h.ks.dbs[0].keys.count - int(h.ks.ColdStats().Keys) - warmCount(h, "hot", 100) }
	cooled := 0
	for ; warmIdle() >= 100 && cooled < 1000; cooled++ {
		h.ks.Evict(h.ks.DatasetMemory()-1, time.Hour)
	}
	if hot := hot0 - warmCount(h, "hot", 100); hot > 2 {
		t.Fatalf("%d keys made cold with 87%% of the keys cold and 100 or more idle ones warm: %d of them just written", cooled, hot)
	}
}

// warmCount is how many of the keys prefix0..prefix(n-1) are warm.
func warmCount(h *harness, prefix string, n int) int {
	warm := 0
	for i := range n {
		k := []byte(prefix + strconv.Itoa(i))
		d := h.ks.dbs[0]
		if sl := d.keys.find(d.keys.hash(k), k); sl != nil && !sl.v.isCold() {
			warm++
		}
	}
	return warm
}
