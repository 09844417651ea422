//go:build linux

package uring

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketPair returns the two ends of a connected stream socket pair, closed
// when the test ends (closing one early is fine: Close errors are ignored).
func socketPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// newBufRing registers a buffer ring on r, skipping on kernels without one,
// and closes it before the ring when the test ends.
func newBufRing(t *testing.T, r *Ring, bgid uint16, entries, size int) *BufRing {
	t.Helper()
	br, err := r.RegisterBufRing(bgid, entries, size)
	if errors.Is(err, unix.EINVAL) {
		t.Skipf("no provided buffer rings here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := br.Close(); err != nil {
			t.Errorf("BufRing.Close: %v", err)
		}
	})
	return br
}

func armMultishot(t *testing.T, r *Ring, fd int, bgid uint16, ud uint64) {
	t.Helper()
	s := mustSQE(t, r)
	s.PrepRecvMultishot(fd, bgid, 0)
	s.SetUserData(ud)
	if _, err := r.Submit(); err != nil {
		t.Fatalf("submit: %v", err)
	}
}

// reapOne waits for the next CQE and consumes only that one (reap may take
// more than it was asked for).
func reapOne(t *testing.T, r *Ring) CQE {
	t.Helper()
	c, err := r.WaitCQE(10 * time.Second)
	if err != nil {
		t.Fatalf("waiting for a CQE: %v", err)
	}
	return c
}

func write(t *testing.T, fd int, p []byte) {
	t.Helper()
	if n, err := unix.Write(fd, p); err != nil || n != len(p) {
		t.Fatalf("write: %d, %v", n, err)
	}
}

func TestBufRingABISizes(t *testing.T) {
	if got := unsafe.Sizeof(bufRingEntry{}); got != 16 {
		t.Errorf("io_uring_buf: %d bytes, kernel ABI says 16", got)
	}
	if got := unsafe.Sizeof(bufReg{}); got != 40 {
		t.Errorf("io_uring_buf_reg: %d bytes, kernel ABI says 40", got)
	}
	if got := unsafe.Offsetof(tailPair{}.tail); got != 2 {
		t.Errorf("tail at offset %d of its word, want 2 (ring offset 14)", got)
	}
}

func TestRecvMultishotPostsOneCQEPerSendAndRecyclesBuffers(t *testing.T) {
	r := newRing(t, 8)
	const entries = 4
	br := newBufRing(t, r, 3, entries, 64)
	a, b := socketPair(t)
	armMultishot(t, r, a, br.Group(), 7)

	seen := map[uint16]int{}
	const sends = 5 * entries // every buffer goes round several times
	for i := range sends {
		msg := []byte(fmt.Sprintf("message %d", i))
		write(t, b, msg)
		c := reapOne(t, r)
		bid, ok := c.Buffer()
		if c.UserData != 7 || int(c.Res) != len(msg) || !ok || !c.More() {
			t.Fatalf("send %d: CQE %+v (buffer %d/%v, more %v), want %d bytes in a buffer, more to come",
				i, c, bid, ok, c.More(), len(msg))
		}
		if got := br.Buf(bid)[:c.Res]; !bytes.Equal(got, msg) {
			t.Fatalf("send %d: buffer %d holds %q, want %q", i, bid, got, msg)
		}
		seen[bid]++
		br.Recycle(bid)
	}
	if len(seen) != entries {
		t.Fatalf("buffer ids used %v, want all %d of them", seen, entries)
	}
	for bid, n := range seen {
		if int(bid) >= entries || n != sends/entries {
			t.Fatalf("buffer ids used %v, want each of 0..%d %d times", seen, entries-1, sends/entries)
		}
	}

	// The peer's close ends the multishot: Res 0 and no CQEFMore.
	unix.Close(b)
	c := reapOne(t, r)
	if c.UserData != 7 || c.Res != 0 || c.More() {
		t.Fatalf("after the peer closed: %+v, want Res 0 without CQEFMore", c)
	}
}

func TestRecvMultishotEndsWithENOBUFSWhenTheRingIsEmptyAndRearms(t *testing.T) {
	r := newRing(t, 8)
	const entries, size = 2, 16
	br := newBufRing(t, r, 1, entries, size)
	a, b := socketPair(t)
	want := make([]byte, 10*size+5)
	for i := range want {
		want[i] = byte(i)
	}
	write(t, b, want) // all of it waits in the socket before the recv starts

	var got []byte
	arms, enobufs := 0, 0
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d bytes before the deadline", len(got), len(want))
		}
		armMultishot(t, r, a, br.Group(), 9)
		arms++
		var held []uint16
		for done := false; !done && len(got) < len(want); {
			c := reapOne(t, r)
			if bid, ok := c.Buffer(); ok {
				if c.Res <= 0 || int(c.Res) > size {
					t.Fatalf("CQE %+v consumed buffer %d with Res %d", c, bid, c.Res)
				}
				got = append(got, br.Buf(bid)[:c.Res]...)
				held = append(held, bid) // kept until the multishot ends, so the ring runs dry
			}
			if !c.More() {
				done = true
				switch {
				case errors.Is(c.Err(), unix.ENOBUFS):
					enobufs++
				case c.Res > 0: // ended with data: re-arm all the same
				default:
					t.Fatalf("multishot ended with %+v (%v), want ENOBUFS", c, c.Err())
				}
			}
		}
		if len(held) > entries {
			t.Fatalf("one arm consumed %d buffers of a ring of %d", len(held), entries)
		}
		for _, bid := range held {
			br.Add(bid)
		}
		br.Publish()
	}
	// The last arm is still armed: the peer's close ends it.
	unix.Close(b)
	if c := reapOne(t, r); c.Res != 0 || c.More() {
		t.Fatalf("after the peer closed: %+v, want Res 0 without CQEFMore", c)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("received bytes differ from those sent (first diff at %d)", firstDifference(got, want))
	}
	if enobufs == 0 {
		t.Fatalf("the ring of %d buffers never ran dry over %d bytes", entries, len(want))
	}
	t.Logf("%d bytes in %d arms, %d ended with ENOBUFS", len(want), arms, enobufs)
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestRecvMultishotCancelEndsItWithECANCELED(t *testing.T) {
	r := newRing(t, 8)
	br := newBufRing(t, r, 2, 4, 64)
	a, b := socketPair(t)
	armMultishot(t, r, a, br.Group(), 11)
	write(t, b, []byte("one"))
	c := reapOne(t, r)
	bid, ok := c.Buffer()
	if c.Res != 3 || !ok || !c.More() {
		t.Fatalf("first CQE %+v, want 3 bytes with more to come", c)
	}
	br.Recycle(bid)

	s := mustSQE(t, r)
	s.PrepCancel(11, 0)
	s.SetUserData(12)
	byID := map[uint64]CQE{}
	for _, c := range reap(t, r, 2) {
		byID[c.UserData] = c
	}
	if c := byID[11]; !errors.Is(c.Err(), unix.ECANCELED) || c.More() {
		t.Fatalf("cancelled multishot: %+v, want ECANCELED without CQEFMore", c)
	}
	if c := byID[12]; c.Res != 0 {
		t.Fatalf("cancel: %+v (%v), want Res 0", c, c.Err())
	}
}

func TestRecvMultishotErrorsEndItAtOnce(t *testing.T) {
	r := newRing(t, 8)
	br := newBufRing(t, r, 5, 4, 64)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	a, _ := socketPair(t)

	armMultishot(t, r, p[0], br.Group(), 21) // not a socket
	armMultishot(t, r, a, 99, 22)            // a group nobody registered
	byID := map[uint64]CQE{}
	for _, c := range reap(t, r, 2) {
		byID[c.UserData] = c
	}
	if c := byID[21]; !errors.Is(c.Err(), unix.ENOTSOCK) || c.More() {
		t.Errorf("multishot recv on a pipe: %+v (%v), want ENOTSOCK without CQEFMore", c, c.Err())
	}
	if c := byID[22]; c.Err() == nil || c.More() {
		t.Errorf("multishot recv from an unknown group: %+v, want an error without CQEFMore", c)
	}
}

func TestRegisterBufRingValidatesAndCloseUnregisters(t *testing.T) {
	r := newRing(t, 8)
	for _, n := range []int{0, 3, MaxBufRingEntries * 2} {
		if _, err := r.RegisterBufRing(1, n, 64); !errors.Is(err, unix.EINVAL) {
			t.Errorf("%d entries: %v, want EINVAL", n, err)
		}
	}
	if _, err := r.RegisterBufRing(1, 4, 0); !errors.Is(err, unix.EINVAL) {
		t.Errorf("empty buffers: %v, want EINVAL", err)
	}
	br, err := r.RegisterBufRing(4, 8, 128)
	if errors.Is(err, unix.EINVAL) {
		t.Skipf("no provided buffer rings here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if br.Entries() != 8 || br.BufSize() != 128 || len(br.Buf(7)) != 128 || br.Group() != 4 {
		t.Fatalf("ring of %d x %d bytes, group %d", br.Entries(), br.BufSize(), br.Group())
	}
	if _, err := r.RegisterBufRing(4, 8, 128); !errors.Is(err, unix.EEXIST) {
		t.Errorf("second ring for group 4: %v, want EEXIST", err)
	}
	if err := br.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := br.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	again, err := r.RegisterBufRing(4, 8, 128) // the group is free again
	if err != nil {
		t.Fatalf("register after Close: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
