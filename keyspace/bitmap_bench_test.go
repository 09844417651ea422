package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/moond-db/moond/resp"
)

// bitmapKeyspace holds, in database 0, the keys of vals with those values,
// and journals into a Log that drops the records (the WAL's copy is the
// shard's cost, not the command's).
func bitmapKeyspace(vals map[string][]byte) (*Keyspace, *Client) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	c := &Client{}
	var w resp.Writer
	for k, v := range vals {
		ks.Exec(c, [][]byte{[]byte("SET"), []byte(k), v}, &w)
		w.Reset()
	}
	setJournal(ks, func(int, [][]byte) {})
	return ks, c
}

func randomBitmap(n int, seed uint64) []byte {
	return randBytes(rand.New(rand.NewPCG(seed, seed)), n)
}

// offsets returns bit offsets spread over a string of n bytes, with their
// decimal arguments made in advance.
func offsets(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 1))
	out := make([][]byte, 4096)
	for i := range out {
		out[i] = []byte(strconv.Itoa(rng.IntN(n * 8)))
	}
	return out
}

// BenchmarkBitCount counts the bits of a 1 MB string.
func BenchmarkBitCount(b *testing.B) {
	ks, c := bitmapKeyspace(map[string][]byte{"bm": randomBitmap(1<<20, 1)})
	var w resp.Writer
	args := [][]byte{[]byte("BITCOUNT"), []byte("bm")}
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkSetBit flips bits at random offsets of a 1 MB string: every
// SETBIT changes a bit, so every one is journaled.
func BenchmarkSetBit(b *testing.B) {
	ks, c := bitmapKeyspace(map[string][]byte{"bm": randomBitmap(1<<20, 2)})
	var w resp.Writer
	offs := offsets(1 << 20)
	args := [][]byte{[]byte("SETBIT"), []byte("bm"), nil, nil}
	one, zero := []byte("1"), []byte("0")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		args[2] = offs[i%len(offs)]
		args[3] = one
		if i/len(offs)%2 == 1 {
			args[3] = zero
		}
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkGetBit reads bits at random offsets of a 1 MB string.
func BenchmarkGetBit(b *testing.B) {
	ks, c := bitmapKeyspace(map[string][]byte{"bm": randomBitmap(1<<20, 3)})
	var w resp.Writer
	offs := offsets(1 << 20)
	args := [][]byte{[]byte("GETBIT"), []byte("bm"), nil}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		args[2] = offs[i%len(offs)]
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkBitOp computes AND, OR and XOR of two 1 MB strings into a
// third key (the result is a new 1 MB value each time, as in Redis).
func BenchmarkBitOp(b *testing.B) {
	for _, op := range []string{"AND", "OR", "XOR", "NOT"} {
		b.Run(op, func(b *testing.B) {
			ks, c := bitmapKeyspace(map[string][]byte{"a": randomBitmap(1<<20, 4), "b": randomBitmap(1<<20, 5)})
			var w resp.Writer
			args := [][]byte{[]byte("BITOP"), []byte(op), []byte("dest"), []byte("a"), []byte("b")}
			if op == "NOT" {
				args = args[:4]
			}
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for b.Loop() {
				ks.Exec(c, args, &w)
				w.Reset()
			}
		})
	}
}

// TestSetBitAndGetBitDoNotAllocate: on a string that needs no growth,
// GETBIT and SETBIT (journaled) allocate nothing, whatever the form the
// string had before the first write.
func TestSetBitAndGetBitDoNotAllocate(t *testing.T) {
	ks, c := bitmapKeyspace(map[string][]byte{"bm": randomBitmap(4096, 6), "n": []byte("12345")})
	var w resp.Writer
	offs := offsets(4096)
	set := [][]byte{[]byte("SETBIT"), []byte("bm"), nil, nil}
	get := [][]byte{[]byte("GETBIT"), []byte("bm"), nil}
	ks.Exec(c, [][]byte{[]byte("SETBIT"), []byte("bm"), []byte("0"), []byte("1")}, &w) // into the mutable form
	bitArgs := [2][]byte{[]byte("0"), []byte("1")}
	i := 0
	allocs := testing.AllocsPerRun(10000, func() {
		set[2], get[2] = offs[i%len(offs)], offs[(i+7)%len(offs)]
		set[3] = bitArgs[i/len(offs)%2]
		i++
		w.Reset()
		ks.Exec(c, set, &w)
		ks.Exec(c, get, &w)
	})
	if allocs > 0 {
		t.Errorf("SETBIT and GETBIT allocate %.1f times", allocs)
	}
	getInt := [][]byte{[]byte("GETBIT"), []byte("n"), []byte("10")}
	if allocs := testing.AllocsPerRun(100, func() { w.Reset(); ks.Exec(c, getInt, &w) }); allocs > 0 {
		t.Errorf("GETBIT of an integer allocates %.1f times", allocs)
	}
}
