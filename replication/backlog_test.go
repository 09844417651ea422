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

// TestBacklogFeedAtomic: several commands go inside MULTI/EXEC, one alone.
func TestBacklogFeedAtomic(t *testing.T) {
	b := NewBacklog(1 << 20)
	b.FeedAtomic(0, []int{0, 0}, [][][]byte{{[]byte("DEL"), []byte("a")}, {[]byte("DEL"), []byte("b")}})
	b.FeedAtomic(0, []int{0}, [][][]byte{{[]byte("DEL"), []byte("c")}})
	var quit atomic.Bool
	got, _ := b.Read(nil, 0, 1<<20, &quit)
	s := strings.ReplaceAll(string(got), "\r\n", " ")
	want := "*2 $6 SELECT $1 0 *1 $5 MULTI *2 $3 DEL $1 a *2 $3 DEL $1 b *1 $4 EXEC *2 $3 DEL $1 c "
	if s != want {
		t.Fatalf("stream = %q, want %q", s, want)
	}
}
