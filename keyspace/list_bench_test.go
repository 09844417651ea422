package keyspace

import (
	"testing"

	"github.com/moond-db/moond/resp"
)

// BenchmarkLPush is redis-benchmark's LPUSH: one list that grows.
func BenchmarkLPush(b *testing.B) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("LPUSH"), []byte("mylist"), []byte("xxx")}
	b.ReportAllocs()
	for b.Loop() {
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkRPop pops from a list that an LPUSH refills, a queue's steady
// state.
func BenchmarkRPop(b *testing.B) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	var w resp.Writer
	c := &Client{}
	push := [][]byte{[]byte("LPUSH"), []byte("mylist"), []byte("xxx")}
	pop := [][]byte{[]byte("RPOP"), []byte("mylist")}
	for range 1000 {
		ks.Exec(c, push, &w)
	}
	b.ReportAllocs()
	for b.Loop() {
		ks.Exec(c, pop, &w)
		ks.Exec(c, push, &w)
		w.Reset()
	}
}

// BenchmarkLRange100 is redis-benchmark's LRANGE_100: the first 100
// elements of a list of 600.
func BenchmarkLRange100(b *testing.B) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	var w resp.Writer
	c := &Client{}
	push := [][]byte{[]byte("LPUSH"), []byte("mylist"), []byte("xxx")}
	for range 600 {
		ks.Exec(c, push, &w)
	}
	args := [][]byte{[]byte("LRANGE"), []byte("mylist"), []byte("0"), []byte("99")}
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		ks.Exec(c, args, &w)
	}
}

// TestListQueueDoesNotAllocate checks the hot path: LPUSH and RPOP on a
// list of steady length, in both representations, allocate nothing.
func TestListQueueDoesNotAllocate(t *testing.T) {
	for _, size := range []int{10, 5000} {
		h := newHarness(t)
		push := [][]byte{[]byte("LPUSH"), []byte("q"), []byte("element")}
		pop := [][]byte{[]byte("RPOP"), []byte("q")}
		for range size {
			h.ks.Exec(&h.c, push, &h.w)
		}
		for range 3 * size { // let the buffers reach their steady size
			h.ks.Exec(&h.c, push, &h.w)
			h.ks.Exec(&h.c, pop, &h.w)
			h.w.Reset()
		}
		allocs := testing.AllocsPerRun(1000, func() {
			h.ks.Exec(&h.c, push, &h.w)
			h.ks.Exec(&h.c, pop, &h.w)
			h.w.Reset()
		})
		if allocs > 0.01 {
			t.Errorf("a list of %d: LPUSH+RPOP allocates %.2f times", size, allocs)
		}
	}
}
