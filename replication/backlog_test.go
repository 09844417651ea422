package replication

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBacklogFeedSelectsAndReads: the stream selects a database when it
// changes, counts every byte in the offset, and Read returns what follows
// a position.
func TestBacklogFeedSelectsAndReads(t *testing.T) {
	b := NewBacklog(1 << 20)
	start := b.Start()
	b.Feed(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
	b.Feed(0, [][]byte{[]byte("DEL"), []byte("k")})
	b.Feed(3, [][]byte{[]byte("DEL"), []byte("x")})
	var quit atomic.Bool
	got, err := b.Read(nil, start, 1<<20, &quit)
	if err != nil {
		t.Fatal(err)
	}
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n" +
		"*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*2\r\n$3\r\nDEL\r\n$1\r\nx\r\n"
	if string(got) != want {
		t.Fatalf("stream = %q, want %q", got, want)
	}
	if off, first, hist := b.Stats(); off != int64(len(want)) || first != 1 || hist != off {
		t.Fatalf("Stats = %d %d %d", off, first, hist)
	}
}

// TestBacklogFallsBehind: a position the ring no longer holds is
// ErrBehind; a quit reader returns ErrClosed instead of waiting.
func TestBacklogFallsBehind(t *testing.T) {
	b := NewBacklog(16 << 10)
	big := []byte(strings.Repeat("x", 10<<10))
	b.Feed(0, [][]byte{[]byte("SET"), []byte("a"), big})
	b.Feed(0, [][]byte{[]byte("SET"), []byte("b"), big})
	var quit atomic.Bool
	if _, err := b.Read(nil, 0, 100, &quit); !errors.Is(err, ErrBehind) {
		t.Fatalf("Read of a lost position: %v", err)
	}
	quit.Store(true)
	if _, err := b.Read(nil, b.Offset(), 100, &quit); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after quit: %v", err)
	}
}

// TestBacklogAddAtomic: a unit's several commands go inside MULTI/EXEC,
// one alone; a unit of an older epoch (before a Reset) is dropped.
func TestBacklogAddAtomic(t *testing.T) {
	b := NewBacklog(1 << 20)
	old := b.Epoch()
	b.Reset()
	b.Add(old, &Unit{DBs: []int{0}, Cmds: [][][]byte{{[]byte("DEL"), []byte("stale")}}})
	ep := b.Epoch()
	b.Add(ep, &Unit{DBs: []int{0, 0}, Cmds: [][][]byte{{[]byte("DEL"), []byte("a")}, {[]byte("DEL"), []byte("b")}}})
	b.Add(ep, &Unit{DBs: []int{0}, Cmds: [][][]byte{{[]byte("DEL"), []byte("c")}}})
	var quit atomic.Bool
	got, _ := b.Read(nil, 0, 1<<20, &quit)
	s := strings.ReplaceAll(string(got), "\r\n", " ")
	want := "*2 $6 SELECT $1 0 *1 $5 MULTI *2 $3 DEL $1 a *2 $3 DEL $1 b *1 $4 EXEC *2 $3 DEL $1 c "
	if s != want {
		t.Fatalf("stream = %q, want %q", s, want)
	}
}

// TestBacklogTxnOneMultiExec: a txn's parts from two shards reach the
// stream as one MULTI/EXEC once the second came; Start emits a part
// still parked before it takes the offset.
func TestBacklogTxnOneMultiExec(t *testing.T) {
	b := NewBacklog(1 << 20)
	ep := b.Epoch()
	set := func(k string) [][]byte { return [][]byte{[]byte("SET"), []byte(k), []byte("1")} }
	b.Add(ep, &Unit{Shard: 1, Txid: 4, Shards: []int{0, 1}, DBs: []int{0}, Cmds: [][][]byte{set("b")}})
	if b.Offset() != 0 || b.Parked() != 1 {
		t.Fatalf("a lone part: offset %d, %d parked", b.Offset(), b.Parked())
	}
	b.Add(ep, &Unit{Shard: 0, Txid: 4, Shards: []int{0, 1}, DBs: []int{0}, Cmds: [][][]byte{set("a")}})
	b.Add(ep, &Unit{Shard: 0, Txid: 5, Shards: []int{0, 1}, DBs: []int{0}, Cmds: [][][]byte{set("c")}})
	var quit atomic.Bool
	got, _ := b.Read(nil, 0, 1<<20, &quit)
	s := strings.ReplaceAll(string(got), "\r\n", " ")
	want := "*2 $6 SELECT $1 0 *1 $5 MULTI *3 $3 SET $1 a $1 1 *3 $3 SET $1 b $1 1 *1 $4 EXEC "
	if s != want {
		t.Fatalf("stream = %q, want %q", s, want)
	}
	off := b.Start()
	if b.Parked() != 0 || off == int64(len(got)) {
		t.Fatalf("Start left %d parked at offset %d", b.Parked(), off)
	}
}

// TestBacklogResize keeps the last bytes that fit, at their offsets.
func TestBacklogResize(t *testing.T) {
	b := NewBacklog(64 << 10)
	for i := range 100 {
		b.Feed(0, [][]byte{[]byte("SET"), []byte("k"), []byte(strings.Repeat("x", i*10))})
	}
	off, _, _ := b.Stats()
	var quit atomic.Bool
	tail, err := b.Read(nil, off-MinSize, MinSize, &quit)
	if err != nil {
		t.Fatal(err)
	}
	b.Resize(1)
	if b.Size() != MinSize {
		t.Fatalf("Size %d after Resize(1), want %d", b.Size(), MinSize)
	}
	if o, first, hist := b.Stats(); o != off || hist != MinSize || first != off-MinSize+1 {
		t.Fatalf("Stats after shrinking: %d %d %d", o, first, hist)
	}
	got, err := b.Read(nil, off-MinSize, MinSize, &quit)
	if err != nil || string(got) != string(tail) {
		t.Fatalf("the tail changed in the resize: %v", err)
	}
	b.Resize(1 << 20)
	b.Feed(0, [][]byte{[]byte("DEL"), []byte("k")})
	if _, _, hist := b.Stats(); hist <= MinSize || !b.Holds(off-MinSize) || b.Holds(off-MinSize-1) {
		t.Fatalf("after growing: hist %d", hist)
	}
}

// TestBacklogGrowsToItsSize: the ring starts small and grows with the
// stream up to its size, then keeps the last size bytes.
func TestBacklogGrowsToItsSize(t *testing.T) {
	b := NewBacklog(256 << 10)
	val := []byte(strings.Repeat("v", 1000))
	for b.Offset() < 200<<10 {
		b.Feed(0, [][]byte{[]byte("SET"), []byte("k"), val})
	}
	if _, first, hist := b.Stats(); first != 1 || hist != b.Offset() {
		t.Fatalf("200 KB into a 256 KB backlog: first %d, hist %d", first, hist)
	}
	for b.Offset() < 600<<10 {
		b.Feed(0, [][]byte{[]byte("SET"), []byte("k"), val})
	}
	if _, _, hist := b.Stats(); hist != 256<<10 {
		t.Fatalf("600 KB into a 256 KB backlog: hist %d", hist)
	}
}
