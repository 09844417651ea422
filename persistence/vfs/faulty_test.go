package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// newFile creates dir/name through fsys and returns it open.
func newFile(t *testing.T, fsys FS, dir, name string) (File, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

func fileContent(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFaultyWithoutRulesPassesThrough(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	f, path := newFile(t, ff, dir, "x")
	if _, err := f.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if got := fileContent(t, path); got != "abc" {
		t.Fatalf("content %q", got)
	}
	if c := ff.Counts(); c.Total() != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestEIOOnSyncFailsOnlyMatchingFiles(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	id := ff.Add(EIOOnSync("*.log"))
	wal, _ := newFile(t, ff, dir, "a.log")
	other, _ := newFile(t, ff, dir, "a.dat")

	if err := wal.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync: got %v, want EIO", err)
	}
	err := wal.Datasync()
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Datasync: got %v, want EIO", err)
	}
	if !strings.Contains(err.Error(), "a.log") {
		t.Fatalf("error does not name the file: %v", err)
	}
	if err := other.Datasync(); err != nil {
		t.Fatalf("non-matching file: %v", err)
	}
	if got := ff.Hits(id); got != 2 {
		t.Fatalf("hits %d, want 2", got)
	}
	if c := ff.Counts(); c.Errors != 2 || c.Total() != 2 {
		t.Fatalf("counts %+v", c)
	}
}

func TestENOSPCOnWriteWritesNothing(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	ff.Add(ENOSPCOnWrite(""))
	f, path := newFile(t, ff, dir, "x")
	n, err := f.Write([]byte("abc"))
	if !errors.Is(err, syscall.ENOSPC) || n != 0 {
		t.Fatalf("Write: n=%d err=%v, want 0, ENOSPC", n, err)
	}
	if _, err := f.WriteAt([]byte("abc"), 10); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("WriteAt: %v", err)
	}
	if got := fileContent(t, path); got != "" {
		t.Fatalf("content %q, want empty", got)
	}
}

func TestShortWriteWritesPrefixAndReportsIt(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	ff.Add(Rule{Op: OpWrite, Fault: FaultShortWrite, N: 2, Count: 1})
	f, path := newFile(t, ff, dir, "x")
	n, err := f.WriteAt([]byte("abcdef"), 0)
	if n != 2 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("WriteAt: n=%d err=%v, want 2, ErrShortWrite", n, err)
	}
	// A short write is not a crash: the next write goes through.
	if _, err := f.WriteAt([]byte("cdef"), 2); err != nil {
		t.Fatalf("write after short write: %v", err)
	}
	if got := fileContent(t, path); got != "abcdef" {
		t.Fatalf("content %q", got)
	}
	if c := ff.Counts(); c.ShortWrites != 1 || ff.Crashed() {
		t.Fatalf("counts %+v crashed %v", c, ff.Crashed())
	}
}

func TestShortWriteIsNeverComplete(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	ff.Add(ShortWrite("", 100))
	f, _ := newFile(t, ff, dir, "x")
	n, err := f.Write([]byte("abc"))
	if n != 2 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("n=%d err=%v, want 2 (capped at len-1), ErrShortWrite", n, err)
	}
}

func TestTornWriteCrashesTheFileSystem(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	ff.Add(TornWrite("x", 3))
	f, path := newFile(t, ff, dir, "x")
	n, err := f.Write([]byte("abcdef"))
	if n != 3 || !errors.Is(err, ErrCrashed) {
		t.Fatalf("torn write: n=%d err=%v", n, err)
	}
	if !ff.Crashed() {
		t.Fatal("not crashed after a torn write")
	}
	if got := fileContent(t, path); got != "abc" {
		t.Fatalf("content %q, want the prefix", got)
	}
	// Every mutation fails from now on, on any file.
	if _, err := f.Write([]byte("z")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write after crash: %v", err)
	}
	if err := f.Datasync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("datasync after crash: %v", err)
	}
	if _, err := ff.Create(filepath.Join(dir, "y")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("create after crash: %v", err)
	}
	if err := ff.Rename(path, path+".2"); !errors.Is(err, ErrCrashed) {
		t.Fatalf("rename after crash: %v", err)
	}
	// Reads still work: the "restarted" process inspects what is there.
	buf := make([]byte, 3)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "abc" {
		t.Fatalf("read after crash: %q %v", buf, err)
	}
	if c := ff.Counts(); c.TornWrites != 1 || c.Crashed != 4 {
		t.Fatalf("counts %+v", c)
	}
	ff.Reset()
	if _, err := f.WriteAt([]byte("d"), 3); err != nil {
		t.Fatalf("write after Reset: %v", err)
	}
}

func TestHangSyncBlocksUntilGateOpens(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	gate := make(chan struct{})
	entered := make(chan string, 1)
	r := HangSync("", gate)
	r.Entered = entered
	ff.Add(r)
	f, path := newFile(t, ff, dir, "x")

	done := make(chan error, 1)
	go func() { done <- f.Datasync() }()
	if got := <-entered; got != path {
		t.Fatalf("entered with %q", got)
	}
	select {
	case err := <-done:
		t.Fatalf("Datasync returned (%v) before the gate opened", err)
	default:
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatalf("Datasync after release: %v", err)
	}
	if c := ff.Counts(); c.Hangs != 1 {
		t.Fatalf("counts %+v", c)
	}
}

func TestHangThenFail(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	gate := make(chan struct{})
	close(gate)
	ff.Add(Rule{Op: OpDatasync, Fault: FaultHang, Gate: gate, Err: syscall.EIO})
	f, _ := newFile(t, ff, dir, "x")
	if err := f.Datasync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("got %v, want EIO after the hang", err)
	}
}

func TestVanishedFileIsNotFound(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	f, path := newFile(t, ff, dir, "gone")
	f.Close()
	newFile(t, ff, dir, "kept")
	ff.Add(Vanished("gone"))
	if _, err := ff.Open(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open: %v", err)
	}
	if _, err := ff.OpenReadWrite(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReadWrite: %v", err)
	}
	if _, err := ff.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat: %v", err)
	}
	if _, err := ff.Stat(filepath.Join(dir, "kept")); err != nil {
		t.Fatalf("other file: %v", err)
	}
}

func TestIsDirOnOpen(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	ff.Add(IsDirOnOpen(filepath.Join(dir, "*")))
	_, err := ff.Create(filepath.Join(dir, "x"))
	if !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("Create: %v", err)
	}
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "x") {
		t.Fatalf("not a PathError naming the file: %#v", err)
	}
}

func TestRuleSkipAndCount(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	id := ff.Add(Rule{Op: OpWrite, Fault: FaultError, Err: syscall.EIO, Skip: 2, Count: 1})
	f, _ := newFile(t, ff, dir, "x")
	var errs []bool
	for range 5 {
		_, err := f.Write([]byte("a"))
		errs = append(errs, err != nil)
	}
	want := []bool{false, false, true, false, false}
	for i := range want {
		if errs[i] != want[i] {
			t.Fatalf("write failures %v, want %v", errs, want)
		}
	}
	if ff.Hits(id) != 1 {
		t.Fatalf("hits %d", ff.Hits(id))
	}
	ff.Delete(id)
	if ff.Hits(id) != 0 {
		t.Fatal("deleted rule still reports hits")
	}
}

func TestRenameFaultIsLinkError(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	f, path := newFile(t, ff, dir, "a.tmp")
	f.Close()
	ff.Add(Rule{Op: OpRename, Path: "b", Fault: FaultError, Err: syscall.EIO})
	err := ff.Rename(path, filepath.Join(dir, "b"))
	var le *os.LinkError
	if !errors.As(err, &le) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("got %#v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("source gone after failed rename: %v", err)
	}
}

func TestDirectorySyncCanFail(t *testing.T) {
	dir := t.TempDir()
	ff := NewFaulty(Default)
	ff.Add(Rule{Op: OpSync, Path: dir, Fault: FaultError, Err: syscall.EIO})
	d, err := ff.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("dir sync: %v", err)
	}
}

func TestAddRejectsMalformedRules(t *testing.T) {
	bad := []Rule{
		{Fault: FaultError, Err: syscall.EIO},                          // no ops
		{Op: OpWrite, Fault: FaultError},                               // no error
		{Op: OpSync, Fault: FaultTornWrite},                            // torn sync
		{Op: OpSync, Fault: FaultHang},                                 // no gate
		{Op: OpWrite, Fault: FaultError, Err: syscall.EIO, Path: "[x"}, // bad glob
		{Op: OpWrite, Fault: 99},
	}
	for i, r := range bad {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("rule %d (%+v) accepted", i, r)
				}
			}()
			NewFaulty(Default).Add(r)
		}()
	}
}

func TestOpString(t *testing.T) {
	if got := (OpSync | OpDatasync).String(); got != "sync|datasync" {
		t.Fatalf("got %q", got)
	}
	if got := OpAll.String(); strings.Count(got, "|") != len(opNames)-1 {
		t.Fatalf("OpAll = %q", got)
	}
}
