package keyspace

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/moond-db/moond/persistence/heap"
)

func TestLoadSlabCarvesChunksAndGivesIntegersBack(t *testing.T) {
	var s loadSlab
	a := s.str([]byte("key-a"))
	b := s.alloc(6)
	copy(b, "123456")
	if v := s.stringValue(b); !v.isInt() || v.intVal() != 123456 {
		t.Fatalf("stringValue(123456) = %+v, want the integer", v)
	}
	c := s.str([]byte("key-c")) // takes the bytes the integer gave back
	if got, want := uintptr(unsafe.Pointer(unsafe.StringData(c))), uintptr(unsafe.Pointer(unsafe.StringData(a)))+5; got != want {
		t.Errorf("the key after an integer starts at %#x, want %#x (right after the previous piece)", got, want)
	}
	d := s.alloc(3)
	copy(d, "abc")
	if v := s.stringValue(d); v.isInt() || string(v.bytes()) != "abc" || v.w&ownedBit != 0 {
		t.Errorf("stringValue(abc) = %q owned=%v, want abc, not owned", v.bytes(), v.w&ownedBit != 0)
	}
	if a != "key-a" || c != "key-c" {
		t.Errorf("keys %q %q, want key-a key-c", a, c)
	}
	long := strings.Repeat("x", slabMax+1)
	off := s.off
	if got := s.str([]byte(long)); got != long || s.off != off {
		t.Errorf("a key above slabMax took %d slab bytes, want its own allocation", s.off-off)
	}
	for range slabChunk / slabMax { // fills the chunk: the next piece starts a new one
		s.alloc(slabMax)
	}
	if s.off > slabMax {
		t.Errorf("offset %d after filling the chunk, want a new chunk", s.off)
	}
}

// Loaded strings share chunks; a write to one never writes into the memory
// of another (the new values, 46 bytes, have the size class of the loaded
// ones, 39: an owned value would be overwritten in place, past its end),
// and the keyspace's memory figures are what they were.
func TestLoadedStringsAreNotOverwrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	var recs []heap.Record
	for i := range 100 {
		recs = append(recs, rec(0, fmt.Sprintf("k%03d", i), fmt.Sprintf("value-%033d", i), uint64(i+1), 0))
	}
	recs = append(recs, rec(0, "int", "12345", 101, 0), rec(0, "big", strings.Repeat("b", 3*slabMax), 102, 0))
	_, files := writeHeap(t, dir, nil, recs...)
	h := newHarness(t)
	bootHeapWith(t, h.ks, dir, files, 1, true)
	h.ks.EndLoad()
	checkDataBytes(t, h.ks)
	h.expect("OBJECT ENCODING int", q("int"))
	h.expect("STRLEN big", fmt.Sprint("(integer) ", 3*slabMax))
	for i := range 100 {
		h.expect(fmt.Sprintf("SET k%03d %s", i, fmt.Sprintf("VALUE+%040d", i)), "OK")
		if i+1 < 100 {
			h.expect(fmt.Sprintf("GET k%03d", i+1), q(fmt.Sprintf("value-%033d", i+1)))
		}
	}
	for i := range 100 {
		h.expect(fmt.Sprintf("GET k%03d", i), q(fmt.Sprintf("VALUE+%040d", i)))
	}
	checkDataBytes(t, h.ks)
}
