package keyspace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
)

// heapColdReader reads cold values from a heap opened on the test's files.
type heapColdReader struct{ h *heap.Heap }

func (r heapColdReader) ReadColdRecord(id heap.RecordID) (heap.Record, error) {
	return r.h.Read(id, nil)
}

func TestBootLoadsRecordsOverTheShareColdAndReplayReadsThem(t *testing.T) {
	dir := t.TempDir()
	val := func(i int) string { return fmt.Sprintf("%d|%s", i, strings.Repeat("v", 500)) }
	var recs []heap.Record
	for i := range 200 {
		recs = append(recs, rec(0, fmt.Sprint("k", i), val(i), uint64(i+1), 0))
	}
	_, files := writeHeap(t, dir, nil, recs...)

	h := newHarness(t)
	const share = 30_000
	h.ks.SetColdLoad(share)
	bootHeapWith(t, h.ks, dir, files, 201, true)
	cold := h.ks.ColdStats().Keys
	if cold == 0 || cold == 200 {
		t.Fatalf("%d of 200 keys loaded cold under a share of %d bytes", cold, share)
	}
	// Records load in heap order: the last ones are the cold ones.
	if ck := h.ks.ColdKeys(&h.c, Lookup([]byte("get")), [][]byte{[]byte("GET"), []byte("k199")}, nil); len(ck) != 1 {
		t.Fatal("k199, loaded last, is not cold")
	}
	hp, err := heap.Open(heap.Options{Dir: dir, Files: files, Cache: heap.NewCache(1 << 20), ReadMisses: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close()
	h.ks.Cold = heapColdReader{hp}
	// The WAL above the redo point changes a cold key and overwrites
	// another: the first needs its value, read during the replay.
	replay(t, h.ks,
		walRecord{lsn: 201, args: []string{"APPEND", "k199", "!"}},
		walRecord{lsn: 202, args: []string{"SET", "k198", "new"}})
	h.ks.EndLoad()
	if st := h.ks.ColdStats(); st.SyncReads != 1 {
		t.Fatalf("the replay read %d cold values, want 1 (APPEND's)", st.SyncReads)
	}
	for i := range 200 {
		want := val(i)
		switch i {
		case 199:
			want += "!"
		case 198:
			want = "new"
		}
		if got := h.doWarm("GET", fmt.Sprint("k", i)); got != q(want) {
			t.Fatalf("GET k%d = %.40s..., want %.40s...", i, got, q(want))
		}
	}
	if st := h.ks.ColdStats(); st.Keys != 0 || st.Misses != 0 {
		t.Fatalf("after reading every key: %+v", st)
	}
}
