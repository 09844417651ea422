//go:build linux

package uring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newRing locks the test goroutine to its thread (the ring's owner, as
// SINGLE_ISSUER demands) and creates a ring, skipping where io_uring is unavailable.
func newRing(t testing.TB, entries uint32) *Ring {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := New(entries, DefaultSetupFlags)
	if IsUnavailable(err) {
		t.Skipf("io_uring unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func mustSQE(t testing.TB, r *Ring) *SQE {
	t.Helper()
	s := r.GetSQE()
	if s == nil {
		t.Fatal("submission queue unexpectedly full")
	}
	return s
}

// reap waits for n CQEs and returns them in completion order.
func reap(t testing.TB, r *Ring, n int) []CQE {
	t.Helper()
	out := make([]CQE, 0, n)
	buf := make([]CQE, 64)
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d of %d CQEs before the deadline", len(out), n)
		}
		if _, err := r.SubmitAndWaitTimeout(1, time.Second); err != nil && err != unix.ETIME {
			t.Fatalf("wait: %v", err)
		}
		k := r.PeekCQEs(buf)
		out = append(out, buf[:k]...)
		r.CQAdvance(uint32(k))
	}
	return out
}

func TestNewReportsFlagsInForce(t *testing.T) {
	r := newRing(t, 8)
	if r.Flags()&^DefaultSetupFlags != 0 {
		t.Fatalf("flags in force %#x include flags never asked for", r.Flags())
	}
	if r.Flags()&SetupDeferTaskrun != 0 && r.Flags()&SetupSingleIssuer == 0 {
		t.Fatalf("DEFER_TASKRUN in force without SINGLE_ISSUER: %#x", r.Flags())
	}
	if r.SQEntries() != 8 {
		t.Fatalf("SQEntries = %d, want 8", r.SQEntries())
	}
	t.Logf("flags=%v features=%v", Info{Flags: r.Flags()}.FlagNames(), Info{Features: r.Features()}.FeatureNames())
}

func TestDropOneGivesUpDeferTaskrunBeforeSingleIssuer(t *testing.T) {
	f, ok := dropOne(DefaultSetupFlags)
	if !ok || f&SetupDeferTaskrun != 0 || f&SetupSingleIssuer == 0 {
		t.Fatalf("first drop gave %#x", f)
	}
	steps := 0
	for ok {
		f, ok = dropOne(f)
		steps++
	}
	if f != 0 || steps != 5 {
		t.Fatalf("after dropping everything: flags %#x in %d steps", f, steps)
	}
}

func TestNopRoundTripCarriesUserData(t *testing.T) {
	r := newRing(t, 8)
	s := mustSQE(t, r)
	s.PrepNop()
	s.SetUserData(0xdeadbeef)
	cqe, err := r.WaitCQE(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if cqe.UserData != 0xdeadbeef || cqe.Res != 0 {
		t.Fatalf("cqe = %+v", cqe)
	}
	if r.CQReady() != 0 {
		t.Fatalf("CQ not drained: %d ready", r.CQReady())
	}
}

func tempFile(t testing.TB, flags int) int {
	t.Helper()
	fd, err := unix.Open(filepath.Join(t.TempDir(), "f"), unix.O_CREAT|flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func TestWriteFdatasyncReadBackLinked(t *testing.T) {
	r := newRing(t, 8)
	fd := tempFile(t, unix.O_RDWR)
	data := bytes.Repeat([]byte("moond!"), 700) // 4200 bytes
	got := make([]byte, len(data))

	w := mustSQE(t, r)
	w.PrepWrite(fd, data, 0)
	w.SetFlags(SQEIOLink)
	w.SetUserData(1)
	s := mustSQE(t, r)
	s.PrepFsync(fd, FsyncDatasync)
	s.SetFlags(SQEIOLink)
	s.SetUserData(2)
	rd := mustSQE(t, r)
	rd.PrepRead(fd, got, 0)
	rd.SetUserData(3)

	cqes := reap(t, r, 3)
	for i, c := range cqes {
		if c.UserData != uint64(i+1) {
			t.Fatalf("completion %d has user_data %d: linked SQEs completed out of order", i, c.UserData)
		}
	}
	if cqes[0].Res != int32(len(data)) || cqes[1].Res != 0 || cqes[2].Res != int32(len(data)) {
		t.Fatalf("results %+v", cqes)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read back differs from what was written")
	}
	runtime.KeepAlive(data)
	runtime.KeepAlive(got)
}

func TestLinkedChainCancelsAfterFailedStep(t *testing.T) {
	r := newRing(t, 8)
	ro := tempFile(t, unix.O_RDONLY)
	buf := []byte("never written")

	w := mustSQE(t, r)
	w.PrepWrite(ro, buf, 0) // EBADF: the fd is read-only
	w.SetFlags(SQEIOLink)
	w.SetUserData(1)
	s := mustSQE(t, r)
	s.PrepFsync(ro, FsyncDatasync)
	s.SetFlags(SQEIOLink)
	s.SetUserData(2)
	n := mustSQE(t, r)
	n.PrepNop()
	n.SetUserData(3)

	byID := map[uint64]CQE{}
	for _, c := range reap(t, r, 3) {
		byID[c.UserData] = c
	}
	if !errors.Is(byID[1].Err(), unix.EBADF) {
		t.Fatalf("first step: %v, want EBADF", byID[1].Err())
	}
	for _, id := range []uint64{2, 3} {
		if !errors.Is(byID[id].Err(), unix.ECANCELED) {
			t.Fatalf("step %d: res %d (%v), want ECANCELED", id, byID[id].Res, byID[id].Err())
		}
	}
}

func TestShortWriteInChainCancelsTheRest(t *testing.T) {
	r := newRing(t, 8)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	size, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, 4096)
	if err != nil {
		t.Fatal(err)
	}
	// More than the pipe holds: the non-blocking write is short.
	data := make([]byte, size+4096)

	w := mustSQE(t, r)
	w.PrepWrite(p[1], data, ^uint64(0))
	w.SetFlags(SQEIOLink)
	w.SetUserData(1)
	n := mustSQE(t, r)
	n.PrepNop()
	n.SetUserData(2)

	byID := map[uint64]CQE{}
	for _, c := range reap(t, r, 2) {
		byID[c.UserData] = c
	}
	if res := byID[1].Res; res <= 0 || int(res) >= len(data) {
		t.Fatalf("write result %d, want a short write of 1..%d", res, len(data)-1)
	}
	if !errors.Is(byID[2].Err(), unix.ECANCELED) {
		t.Fatalf("step after the short write: res %d, want ECANCELED", byID[2].Res)
	}
	runtime.KeepAlive(data)
}

func TestTimeoutFiresWithETIME(t *testing.T) {
	r := newRing(t, 8)
	ts := &Timespec{Nsec: int64(5 * time.Millisecond)}
	s := mustSQE(t, r)
	s.PrepTimeout(ts, 0, 0)
	s.SetUserData(7)
	start := time.Now()
	cqe, err := r.WaitCQE(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if cqe.UserData != 7 || !errors.Is(cqe.Err(), unix.ETIME) {
		t.Fatalf("cqe %+v, want user_data 7 with ETIME", cqe)
	}
	if el := time.Since(start); el < 5*time.Millisecond {
		t.Fatalf("timeout fired after %v, before its 5ms", el)
	}
	runtime.KeepAlive(ts)
}

func TestWaitTimeoutReturnsETIMEWithNothingReady(t *testing.T) {
	r := newRing(t, 8)
	start := time.Now()
	_, err := r.SubmitAndWaitTimeout(1, 20*time.Millisecond)
	if !errors.Is(err, unix.ETIME) {
		t.Fatalf("err = %v, want ETIME", err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("returned after %v, before the 20ms timeout", el)
	}
}

func TestLinkTimeoutCancelsAStuckRead(t *testing.T) {
	r := newRing(t, 8)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 16)
	ts := &Timespec{Nsec: int64(10 * time.Millisecond)}
	rd := mustSQE(t, r)
	rd.PrepRead(p[0], buf, ^uint64(0))
	rd.SetFlags(SQEIOLink)
	rd.SetUserData(1)
	lt := mustSQE(t, r)
	lt.PrepLinkTimeout(ts, 0)
	lt.SetUserData(2)
	byID := map[uint64]CQE{}
	for _, c := range reap(t, r, 2) {
		byID[c.UserData] = c
	}
	if !errors.Is(byID[1].Err(), unix.ECANCELED) || !errors.Is(byID[2].Err(), unix.ETIME) {
		t.Fatalf("read %v, link timeout %v; want ECANCELED and ETIME", byID[1].Err(), byID[2].Err())
	}
	runtime.KeepAlive(buf)
	runtime.KeepAlive(ts)
}

func TestCancelByUserData(t *testing.T) {
	r := newRing(t, 8)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 16)
	rd := mustSQE(t, r)
	rd.PrepRead(p[0], buf, ^uint64(0))
	rd.SetUserData(41)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	c := mustSQE(t, r)
	c.PrepCancel(41, 0)
	c.SetUserData(42)
	byID := map[uint64]CQE{}
	for _, c := range reap(t, r, 2) {
		byID[c.UserData] = c
	}
	if !errors.Is(byID[41].Err(), unix.ECANCELED) || byID[42].Res != 0 {
		t.Fatalf("read %+v cancel %+v", byID[41], byID[42])
	}
	runtime.KeepAlive(buf)
}

func TestMsgRingWakesRingOnAnotherThread(t *testing.T) {
	type got struct {
		cqe CQE
		err error
	}
	ready := make(chan int, 1)
	done := make(chan got, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		target, err := New(8, DefaultSetupFlags)
		if err != nil {
			ready <- -1
			done <- got{err: err}
			return
		}
		defer target.Close()
		ready <- target.Fd()
		cqe, err := target.WaitCQE(10 * time.Second) // sleeps until the message
		done <- got{cqe, err}
	}()
	fd := <-ready
	if fd < 0 {
		res := <-done
		if IsUnavailable(res.err) {
			t.Skip(res.err)
		}
		t.Fatal(res.err)
	}
	sender := newRing(t, 8)
	s := mustSQE(t, sender)
	s.PrepMsgRing(fd, 1234, 0xfeed, 0)
	s.SetUserData(9)
	cqe, err := sender.WaitCQE(5 * time.Second)
	if err != nil || cqe.Res != 0 {
		t.Fatalf("sender cqe %+v err %v", cqe, err)
	}
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatal(res.err)
		}
		if res.cqe.UserData != 0xfeed || res.cqe.Res != 1234 {
			t.Fatalf("target got %+v, want user_data 0xfeed res 1234", res.cqe)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("target ring was not woken by MSG_RING")
	}
}

func TestProbeReportsOpcodesMoondNeeds(t *testing.T) {
	r := newRing(t, 8)
	p, err := r.Probe()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []uint8{OpNop, OpReadv, OpWritev, OpFsync, OpTimeout, OpAccept, OpAsyncCancel,
		OpLinkTimeout, OpOpenat, OpClose, OpRead, OpWrite, OpSend, OpRecv, OpRenameat, OpUnlinkat, OpMsgRing} {
		if !p.Supported(op) {
			t.Errorf("kernel (6.x) should support %s", OpName(op))
		}
	}
	if p.Supported(255) {
		t.Error("probe claims opcode 255 is supported")
	}
	if p.LastOp < OpMsgRing {
		t.Errorf("LastOp %d below MSG_RING", p.LastOp)
	}
}

func TestDescribeListsFeaturesAndOps(t *testing.T) {
	info, err := Describe()
	if IsUnavailable(err) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Supported) == 0 || info.Supported[0] != OpNop {
		t.Fatalf("Supported = %v", info.Supported)
	}
	if info.String() == "" {
		t.Fatal("empty description")
	}
}

func TestFullSubmissionQueueReportsNil(t *testing.T) {
	r := newRing(t, 4)
	for i := 0; i < 4; i++ {
		s := mustSQE(t, r)
		s.PrepNop()
		s.SetUserData(uint64(i))
	}
	if r.GetSQE() != nil {
		t.Fatal("GetSQE handed out a fifth SQE on a 4-entry queue (would overwrite)")
	}
	if r.SQSpace() != 0 || r.SQReady() != 4 {
		t.Fatalf("space %d ready %d", r.SQSpace(), r.SQReady())
	}
	if n, err := r.Submit(); err != nil || n != 4 {
		t.Fatalf("Submit = %d, %v", n, err)
	}
	fifth := r.GetSQE()
	if fifth == nil {
		t.Fatal("no SQE after submitting a full queue")
	}
	fifth.PrepNop()
	fifth.SetUserData(4)
	seen := map[uint64]bool{}
	for _, c := range reap(t, r, 5) {
		seen[c.UserData] = true
	}
	if len(seen) != 5 {
		t.Fatalf("distinct user_data %v", seen)
	}
}

func TestRegisterFilesAndBuffers(t *testing.T) {
	r := newRing(t, 8)
	fd := tempFile(t, unix.O_RDWR)
	if err := r.RegisterFiles([]int32{int32(fd), -1}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	copy(buf, "fixed buffer")
	if err := r.RegisterBuffers([][]byte{buf}); err != nil {
		t.Fatal(err)
	}
	w := mustSQE(t, r)
	w.PrepWriteFixed(0, buf[:12], 0, 0)
	w.SetFlags(SQEFixedFile)
	w.SetUserData(1)
	cqe, err := r.WaitCQE(5 * time.Second)
	if err != nil || cqe.Res != 12 {
		t.Fatalf("fixed write: %+v %v", cqe, err)
	}
	got := make([]byte, 12)
	if _, err := unix.Pread(fd, got, 0); err != nil || string(got) != "fixed buffer" {
		t.Fatalf("file holds %q (%v)", got, err)
	}
	if err := r.UnregisterBuffers(); err != nil {
		t.Fatal(err)
	}
	if err := r.UnregisterFiles(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRenameUnlinkThroughTheRing(t *testing.T) {
	r := newRing(t, 8)
	dir := t.TempDir()
	a, _ := unix.BytePtrFromString(filepath.Join(dir, "a"))
	b, _ := unix.BytePtrFromString(filepath.Join(dir, "b"))
	s := mustSQE(t, r)
	s.PrepOpenat(unix.AT_FDCWD, a, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	cqe, err := r.WaitCQE(5 * time.Second)
	if err != nil || cqe.Res < 0 {
		t.Fatalf("openat: %+v %v", cqe, err)
	}
	s = mustSQE(t, r)
	s.PrepClose(int(cqe.Res))
	s.SetFlags(SQEIOLink)
	s = mustSQE(t, r)
	s.PrepRenameat(unix.AT_FDCWD, a, unix.AT_FDCWD, b, 0)
	for _, c := range reap(t, r, 2) {
		if c.Res < 0 {
			t.Fatalf("close/rename: %v", c.Err())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err != nil {
		t.Fatalf("renamed file missing: %v", err)
	}
	s = mustSQE(t, r)
	s.PrepUnlinkat(unix.AT_FDCWD, b, 0)
	if cqe, err := r.WaitCQE(5 * time.Second); err != nil || cqe.Res != 0 {
		t.Fatalf("unlinkat: %+v %v", cqe, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Fatalf("file still there after unlink: %v", err)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}
