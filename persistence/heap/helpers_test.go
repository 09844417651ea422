package heap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

const (
	testFile = 7
	testPage = 3
)

// head returns the head of an inline record of key and value.
func head(key, value []byte, lsn uint64) RecordHead {
	return RecordHead{Kind: 0, Expiry: 0, KeyLSN: lsn, KeyLen: uint32(len(key)), ValueLen: uint64(len(value)), Overflow: NoPage}
}

// kvPage returns a slotted page of testFile/testPage holding one inline
// record per key (value "v-"+key), with key LSNs 1, 2, ...
func kvPage(t testing.TB, keys ...string) *Page {
	t.Helper()
	p := new(Page)
	p.Init(PageKV, testFile, testPage)
	for i, k := range keys {
		if _, err := p.InsertRecord(head([]byte(k), []byte("v-"+k), uint64(i+1)), []byte(k), []byte("v-"+k)); err != nil {
			t.Fatalf("insert %q: %v", k, err)
		}
	}
	return p
}

// image returns a sealed copy of p's bytes.
func image(p *Page) []byte {
	b := make([]byte, PageSize)
	p.EncodeInto(b)
	return b
}

// reseal recomputes the CRC of a page image.
func reseal(img []byte) {
	binary.LittleEndian.PutUint32(img[offCRC:], pageCRC(img))
}

// records returns the live records of a slotted page by slot, as
// "key=value@lsn".
func records(t testing.TB, p *Page) map[int]string {
	t.Helper()
	out := make(map[int]string)
	for slot := range p.SlotCount() {
		v, err := p.Record(slot)
		if err != nil {
			continue
		}
		k, ok1 := v.Key()
		val, ok2 := v.Value()
		if !ok1 || !ok2 {
			t.Fatalf("slot %d is not inline", slot)
		}
		out[slot] = fmt.Sprintf("%s=%s@%d", k, val, v.KeyLSN)
	}
	return out
}

// counterIDs is a FileIDAllocator for tests.
type counterIDs struct{ next uint32 }

func (c *counterIDs) AllocateFileID() (uint32, error) {
	c.next++
	return c.next, nil
}

// testHeap opens a heap in a fresh directory.
type testHeap struct {
	*Heap
	dir string
	fs  vfs.FS
	ids *counterIDs
}

func newTestHeap(t *testing.T, cachePages int, maxFileSize int64) *testHeap {
	t.Helper()
	dir := t.TempDir() + "/heap"
	ids := &counterIDs{}
	h, err := Open(Options{Dir: dir, Cache: NewCache(int64(cachePages) * PageSize), MaxFileSize: maxFileSize,
		FileIDs: ids, ReadMisses: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return &testHeap{Heap: h, dir: dir, fs: vfs.Default, ids: ids}
}

// reopen writes every dirty page, closes the heap and opens it again from
// its live files, collecting an index.
func (th *testHeap) reopen(t *testing.T, fsys vfs.FS, cachePages int) (*Heap, *Index) {
	t.Helper()
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	var files []uint32
	for _, f := range th.Files() {
		files = append(files, f.ID)
	}
	th.Close()
	ix := NewIndex()
	h, err := Open(Options{FS: fsys, Dir: th.dir, Files: files, Cache: NewCache(int64(cachePages) * PageSize),
		FileIDs: th.ids, ReadMisses: true, OnRecord: ix.Add})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h, ix
}

// mustCheck verifies the heap's free-space map.
func mustCheck(t testing.TB, h *Heap) {
	t.Helper()
	if err := h.space.check(); err != nil {
		t.Fatalf("free-space map: %v", err)
	}
}

// randBytes returns n pseudo-random bytes from seed.
func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustRead(t testing.TB, h *Heap, id RecordID) Record {
	t.Helper()
	r, err := h.Read(id, nil)
	if err != nil {
		t.Fatalf("read %v: %v", id, err)
	}
	return r
}

func sameRecord(a, b Record) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.Kind == b.Kind &&
		a.Expiry == b.Expiry && a.KeyLSN == b.KeyLSN
}
