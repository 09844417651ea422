package heap

import (
	"fmt"
	"testing"
)

func benchPage(b *testing.B) *Page {
	p := new(Page)
	p.Init(PageKV, testFile, testPage)
	for i := 0; ; i++ {
		k := []byte(fmt.Sprintf("key:%012d", i))
		v := make([]byte, 32)
		if _, err := p.InsertRecord(head(k, v, uint64(i+1)), k, v); err != nil {
			return p
		}
	}
}

func BenchmarkPageEncode(b *testing.B) {
	p := benchPage(b)
	dst := make([]byte, PageSize)
	b.SetBytes(PageSize)
	b.ReportAllocs()
	for b.Loop() {
		p.EncodeInto(dst)
	}
}

func BenchmarkPageDecode(b *testing.B) {
	img := image(benchPage(b))
	var p Page
	b.SetBytes(PageSize)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Decode(img, testFile, testPage); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPageInsertRecord inserts 16-byte keys with 32-byte values into
// a page, emptying it when it is full.
func BenchmarkPageInsertRecord(b *testing.B) {
	p := new(Page)
	p.Init(PageKV, testFile, testPage)
	k, v := []byte("key:000000000001"), make([]byte, 32)
	h := head(k, v, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.InsertRecord(h, k, v); err != nil {
			p.Init(PageKV, testFile, testPage)
		}
	}
}

// BenchmarkHeapInsert places records through the free-space map and the
// cache, as a checkpoint does (a fresh heap every 1024 records, so that
// memory stays bounded).
func BenchmarkHeapInsert(b *testing.B) {
	for _, size := range []int{32, 1000, 64 << 10} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			dir := b.TempDir()
			var h *Heap
			r := Record{Key: []byte("key:000000000001"), Value: make([]byte, size), KeyLSN: 1}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%1024 == 0 {
					b.StopTimer()
					var err error
					if h, err = Open(Options{Dir: dir, Cache: NewCache(1 << 40)}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if _, err := h.Insert(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCacheLookup looks up resident pages in a random order: a hot
// set that fits the CPU caches, and 64 MiB of pages that does not.
func BenchmarkCacheLookup(b *testing.B) {
	for _, n := range []uint32{64, 1 << 14} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			c := NewCache(1 << 30)
			for no := range n {
				if _, err := c.AddClean(PageID{1, no}, cleanImage(no)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := uint32(0)
			for b.Loop() {
				if c.Lookup(PageID{1, i % n}) == nil {
					b.Fatal("miss")
				}
				i += 7919
			}
		})
	}
}
