package keyspace

import (
	"testing"
	"unsafe"
)

func TestPrefaultKeepsTheMemoryZeroAndWritable(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 3<<20 + 17} {
		b := make([]byte, n)
		if n > 0 {
			prefault(unsafe.Pointer(&b[0]), uintptr(n))
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("n=%d: byte %d is %d after prefault, want 0", n, i, c)
			}
		}
		for i := range b {
			b[i] = byte(i)
		}
		for i, c := range b {
			if c != byte(i) {
				t.Fatalf("n=%d: byte %d reads %d, want %d", n, i, c, byte(i))
			}
		}
	}
}
