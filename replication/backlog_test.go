package replication

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/moond-db/moond/resp"
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

// TestBacklogShardsFeedConcurrently: four goroutines, one per shard, feed
// records and their parts of txns over every shard while a reader reads
// the stream: each txn arrives as one MULTI/EXEC of its four parts, and
// each shard's records arrive in order (run it with -race).
func TestBacklogShardsFeedConcurrently(t *testing.T) {
	const shards, txns = 4, 300
	b := NewBacklog(64 << 20)
	ep := b.Epoch()
	all := []int{0, 1, 2, 3}
	var wg sync.WaitGroup
	for s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range txns {
				rec := [][]byte{[]byte("SET"), []byte(fmt.Sprintf("r%d.%d", s, i))}
				b.Add(ep, &Unit{Shard: s, DBs: []int{0}, Cmds: [][][]byte{rec}})
				part := [][]byte{[]byte("SET"), []byte(fmt.Sprintf("t%d.%d", i+1, s))}
				b.Add(ep, &Unit{Shard: s, Txid: uint64(i + 1), Shards: all, DBs: []int{0}, Cmds: [][][]byte{part}})
			}
		}()
	}
	var stream []byte
	var quit atomic.Bool
	go func() { wg.Wait(); quit.Store(true); b.Wake() }()
	for {
		var err error
		if stream, err = b.Read(stream, int64(len(stream)), 1<<20, &quit); err != nil {
			break // the feeders are done
		}
	}
	var more atomic.Bool
	if b.Offset() > int64(len(stream)) { // Read waits for bytes past its position
		stream, _ = b.Read(stream, int64(len(stream)), 64<<20, &more)
	}
	br := bufio.NewReader(bytes.NewReader(stream))
	var inTxn []string
	next := make([]int, shards)
	multi, txn := false, 0
	for {
		cmd, err := readRESPArray(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case cmd[0] == "MULTI":
			multi, inTxn = true, nil
		case cmd[0] == "EXEC":
			txn++
			want := []string{fmt.Sprintf("t%d.0", txn), fmt.Sprintf("t%d.1", txn), fmt.Sprintf("t%d.2", txn), fmt.Sprintf("t%d.3", txn)}
			if !slices.Equal(inTxn, want) {
				t.Fatalf("txn %d: %q", txn, inTxn)
			}
			multi = false
		case multi:
			inTxn = append(inTxn, cmd[1])
		case cmd[0] == "SET":
			var s, i int
			fmt.Sscanf(cmd[1], "r%d.%d", &s, &i)
			if i != next[s] {
				t.Fatalf("shard %d's record %d came when %d was due", s, i, next[s])
			}
			next[s]++
		}
	}
	if txn != txns || b.Parked() != 0 {
		t.Fatalf("%d txns out, %d parked", txn, b.Parked())
	}
}

// readRESPArray reads one command of the stream.
func readRESPArray(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	out := make([]string, n)
	for i := range out {
		l, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, err
		}
		out[i] = string(buf[:size])
	}
	return out, nil
}

// TestCursorKeepsWhatTheRingOverwrites: an attached cursor that reads
// nothing while the stream runs far past the ring (and while the ring
// shrinks) still gets the whole stream, byte for byte, in order; a Read
// without a cursor from the same place has fallen behind.
func TestCursorKeepsWhatTheRingOverwrites(t *testing.T) {
	b := NewBacklog(256 << 10)
	var quit atomic.Bool
	c, err := b.Attach(b.Offset())
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 2000 {
		args := [][]byte{[]byte("SET"), []byte(fmt.Sprintf("k%d", i)), bytes.Repeat([]byte{'v'}, i%97)}
		b.Feed(0, args)
		want = resp.AppendCommand(want, args...)
		if i == 1000 {
			b.Resize(MinSize) // the ring shrinks under the cursor, then wraps
		}
	}
	want = append(resp.AppendCommand(nil, []byte("SELECT"), []byte("0")), want...)
	if _, err := b.Read(nil, 0, 100, &quit); !errors.Is(err, ErrBehind) {
		t.Fatalf("a Read from 0 after %d bytes through a %d-byte ring: %v, want ErrBehind", len(want), MinSize, err)
	}
	var got []byte
	for len(got) < len(want) {
		if got, err = b.ReadCursor(c, got, 1000, &quit); err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the cursor read %d bytes that differ from the %d fed", len(got), len(want))
	}
	b.Detach(c)
	if len(b.cursors) != 0 {
		t.Fatal("Detach left the cursor attached")
	}
}

// TestCursorPastMaxSpillIsBehind: a cursor whose spill would pass MaxSpill
// is cut: its Read fails with ErrBehind, as a replica past its output
// buffer limit is dropped.
func TestCursorPastMaxSpillIsBehind(t *testing.T) {
	b := NewBacklog(MinSize)
	var quit atomic.Bool
	c, _ := b.Attach(b.Offset())
	big := bytes.Repeat([]byte{'x'}, 1<<20)
	for range MaxSpill>>20 + 2 {
		b.Feed(0, [][]byte{[]byte("SET"), []byte("k"), big})
	}
	if _, err := b.ReadCursor(c, nil, 100, &quit); !errors.Is(err, ErrBehind) {
		t.Fatalf("ReadCursor past MaxSpill: %v, want ErrBehind", err)
	}
}

// TestBacklogAt checks that a backlog made at an offset counts from it,
// holds exactly that position before any byte, and serves what follows.
func TestBacklogAt(t *testing.T) {
	b := NewBacklogAt(MinSize, 1000)
	if off, first, hist := b.Stats(); off != 1000 || first != 1001 || hist != 0 {
		t.Fatalf("stats %d %d %d, want 1000 1001 0", off, first, hist)
	}
	if !b.Holds(1000) || b.Holds(999) || b.Holds(1001) {
		t.Fatal("a fresh backlog at 1000 must hold exactly 1000")
	}
	b.Feed(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
	var quit atomic.Bool
	got, err := b.Read(nil, 1000, 1<<20, &quit)
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
	if err != nil || string(got) != want {
		t.Fatalf("read %q %v, want %q", got, err, want)
	}
	if b.Offset() != 1000+int64(len(want)) {
		t.Fatalf("offset %d", b.Offset())
	}
}

// TestBacklogAddQuietThenNotify: AddQuiet puts the unit in the stream and
// the offset at once without waking a reader that waits for bytes; the
// Notify that follows (the shard's wakeup once per loop iteration) does.
func TestBacklogAddQuietThenNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBacklog(MinSize)
		ep := b.Epoch()
		c, err := b.Attach(b.Offset())
		if err != nil {
			t.Fatal(err)
		}
		var quit atomic.Bool
		var got []byte
		read := make(chan struct{})
		go func() {
			got, _ = b.ReadCursor(c, nil, 1<<20, &quit)
			close(read)
		}()
		synctest.Wait() // the reader waits for bytes
		del := [][]byte{[]byte("DEL"), []byte("k")}
		if err := b.AddQuiet(ep, &Unit{DBs: []int{0}, Cmds: [][][]byte{del}}); err != nil {
			t.Fatal(err)
		}
		want := resp.AppendCommand(resp.AppendCommand(nil, []byte("SELECT"), []byte("0")), del...)
		if off := b.Offset(); off != int64(len(want)) {
			t.Fatalf("offset after AddQuiet %d, want %d", off, len(want))
		}
		synctest.Wait()
		select {
		case <-read:
			t.Fatal("AddQuiet woke the reader")
		default:
		}
		b.Notify()
		<-read // a reader Notify did not wake deadlocks the bubble: the test fails
		if !bytes.Equal(got, want) {
			t.Fatalf("the reader got %q, want %q", got, want)
		}
		b.Detach(c)
		b.Detach(c) // twice: the replica's stop and detachReplica both detach
		if len(b.cursors) != 0 {
			t.Fatal("Detach left the cursor attached")
		}
	})
}
