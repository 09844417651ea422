package keyspace

import (
	"strconv"
	"testing"

	"github.com/moond-db/moond/resp"
)

// hllBench is a keyspace journaling to a log that drops its records, with
// the HLL "dense" of 100,000 elements and the HLL "sparse" of 100.
type hllBench struct {
	ks *Keyspace
	c  Client
	w  resp.Writer
}

func newHLLBench(tb testing.TB) *hllBench {
	hb := &hllBench{ks: NewKeyspace(16, func() int64 { return startClock })}
	setJournal(hb.ks, func(int, [][]byte) {})
	for i := range 100_000 {
		hb.do("PFADD", "dense", "d"+strconv.Itoa(i))
		hb.do("PFADD", "dense2", "e"+strconv.Itoa(i))
	}
	for i := range 100 {
		hb.do("PFADD", "sparse", "s"+strconv.Itoa(i))
	}
	if enc := hb.do("PFDEBUG", "ENCODING", "dense"); enc != "+dense\r\n" {
		tb.Fatalf("dense is %q", enc)
	}
	return hb
}

func (hb *hllBench) do(args ...string) string {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return string(hb.exec(b))
}

func (hb *hllBench) exec(args [][]byte) []byte {
	hb.w.Reset()
	hb.ks.Exec(&hb.c, args, &hb.w)
	return hb.w.Buf
}

// invalidate marks key's cached cardinality stale, as a PFADD that
// changed a register does, so that PFCOUNT computes it.
func (hb *hllBench) invalidate(key []byte) {
	sl, _ := hb.ks.lookup(0, key)
	hllInvalidateCache(*sl.v.buf())
}

// elements returns n distinct elements.
func benchElements(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte("element:" + strconv.Itoa(i))
	}
	return out
}

// BenchmarkPFAdd adds one element a command, as redis-benchmark's PFADD
// does, to a dense HLL (most elements change no register) and to a
// sparse one of 100 elements (elements it already holds: the sparse walk).
func BenchmarkPFAdd(b *testing.B) {
	hb := newHLLBench(b)
	for _, key := range []string{"dense", "sparse"} {
		b.Run(key, func(b *testing.B) {
			eles := benchElements(1 << 16)
			if key == "sparse" {
				for i := range eles {
					eles[i] = []byte("s" + strconv.Itoa(i%100))
				}
			}
			args := [][]byte{[]byte("PFADD"), []byte(key), nil}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				args[2] = eles[i&(1<<16-1)]
				hb.exec(args)
			}
		})
	}
}

// BenchmarkPFCountDense counts a dense HLL whose cache is stale each
// time, and the union of two dense HLLs (never cached).
func BenchmarkPFCountDense(b *testing.B) {
	hb := newHLLBench(b)
	b.Run("one", func(b *testing.B) {
		args := [][]byte{[]byte("PFCOUNT"), []byte("dense")}
		b.ReportAllocs()
		for b.Loop() {
			hb.invalidate(args[1])
			hb.exec(args)
		}
	})
	b.Run("union", func(b *testing.B) {
		args := [][]byte{[]byte("PFCOUNT"), []byte("dense"), []byte("dense2")}
		b.ReportAllocs()
		for b.Loop() {
			hb.exec(args)
		}
	})
}

// TestHLLHotPathsDoNotAllocate: PFADD on a dense HLL, with journaling,
// PFADD that changes nothing on a sparse one, and PFCOUNT of one stale
// dense HLL or of several, allocate nothing.
func TestHLLHotPathsDoNotAllocate(t *testing.T) {
	hb := newHLLBench(t)
	eles := benchElements(1000)
	i := 0
	pfadd := [][]byte{[]byte("PFADD"), []byte("dense"), nil}
	sparse := [][]byte{[]byte("PFADD"), []byte("sparse"), []byte("s7")}
	count := [][]byte{[]byte("PFCOUNT"), []byte("dense")}
	union := [][]byte{[]byte("PFCOUNT"), []byte("dense"), []byte("dense2"), []byte("sparse")}
	for name, run := range map[string]func(){
		"PFADD dense":      func() { pfadd[2] = eles[i%len(eles)]; i++; hb.exec(pfadd) },
		"PFADD sparse":     func() { hb.exec(sparse) },
		"PFCOUNT stale":    func() { hb.invalidate(count[1]); hb.exec(count) },
		"PFCOUNT of three": func() { hb.exec(union) },
	} {
		run()
		if a := testing.AllocsPerRun(100, run); a != 0 {
			t.Errorf("%s: %.1f allocations a command", name, a)
		}
	}
}
