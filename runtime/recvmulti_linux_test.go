package runtime

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

// uringOf returns l's uring backend, skipping where io_uring is unavailable.
func uringOf(t *testing.T) (*Loop, *uringBackend) {
	t.Helper()
	skipUnavailable(t, KindUring)
	l := startLoop(t, KindUring)
	return l, l.drv.(*uringBackend)
}

// TestRecvMultiRearmsWhenTheBufferRingRunsDry shrinks the provided buffer
// ring to two buffers of 16 bytes, so that every burst empties it: the
// kernel ends the multishot recv with ENOBUFS, and the backend must re-arm
// it without the caller noticing or a byte going missing.
func TestRecvMultiRearmsWhenTheBufferRingRunsDry(t *testing.T) {
	l, u := uringOf(t)
	onLoop(t, l, func() { u.bufCount, u.bufSize = 2, 16 })
	conn, c := acceptOne(t, l)
	rec := newRecvMultiRecorder()
	onLoop(t, l, func() { u.RecvMulti(conn, rec.cb(nil)) })
	want := make([]byte, 64<<10)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if _, err := c.Write(want); err != nil {
		t.Fatal(err)
	}
	waitFor(t, testDeadline, "every byte", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.data) >= len(want)
	})
	var rearms, fallbacks int
	var multishot bool
	onLoop(t, l, func() {
		rearms, fallbacks, multishot = u.multiRearms, u.multiFallback, u.bufs != nil && !u.noMultishot
		u.Close(conn, nil)
	})
	if err := await(t, rec.end, "the done callback"); !errors.Is(err, syscall.ECANCELED) {
		t.Fatalf("RecvMulti after Close: %v, want ECANCELED", err)
	}
	rec.check(t)
	if !multishot || fallbacks != 0 {
		t.Skipf("this kernel has no multishot recv over a buffer ring (%v); one-shot Recvs served it", u.bufsErr)
	}
	if !bytes.Equal(rec.data, want) {
		t.Fatalf("received %d bytes, want %d; first difference at %d", len(rec.data), len(want), firstDiff(rec.data, want))
	}
	if rearms == 0 {
		t.Fatalf("%d bytes through a ring of 2 x 16 bytes without a re-arm", len(want))
	}
	t.Logf("%d bytes in %d chunks, %d re-arms", len(want), rec.chunks, rearms)
}

// TestRecvMultiFallsBackToOneShotRecvs runs RecvMulti as it runs on a kernel
// without multishot recv: one-shot Recvs into a buffer of the connection's.
func TestRecvMultiFallsBackToOneShotRecvs(t *testing.T) {
	l, u := uringOf(t)
	onLoop(t, l, func() { u.noMultishot = true })
	conn, c := acceptOne(t, l)
	rec := newRecvMultiRecorder()
	onLoop(t, l, func() { u.RecvMulti(conn, rec.cb(func() { u.Close(conn, nil) })) })
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := await(t, rec.end, "the done callback"); !errors.Is(err, syscall.ECANCELED) {
		t.Fatalf("RecvMulti closed in its callback: %v, want ECANCELED", err)
	}
	rec.check(t)
	var fallbacks int
	onLoop(t, l, func() { fallbacks = u.multiFallback })
	if string(rec.data) != "hello" || fallbacks != 1 {
		t.Fatalf("received %q through %d fallbacks, want \"hello\" through 1", rec.data, fallbacks)
	}
}
