package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestSyncDirFailuresAreSyncErrors(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(Default, dir); err != nil {
		t.Fatal(err)
	}
	ff := NewFaulty(Default)
	open := ff.Add(Rule{Op: OpOpenDir, Fault: FaultError, Err: syscall.EACCES})
	if err := SyncDir(ff, dir); !IsSyncFailure(err) || !errors.Is(err, syscall.EACCES) {
		t.Fatalf("SyncDir with the directory unopenable: %v, want a SyncError", err)
	}
	ff.Delete(open)
	ff.Add(EIOOnSync(filepath.Base(dir)))
	if err := SyncDir(ff, dir); !IsSyncFailure(err) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("SyncDir with a failing fsync: %v, want a SyncError", err)
	}
}

// checkAtomicResult checks the files an atomic replacement of old by new
// left: Final holds want and Temp is gone.
func checkAtomicResult(t *testing.T, w AtomicWrite, want string) {
	t.Helper()
	if b, err := os.ReadFile(w.Final); err != nil || string(b) != want {
		t.Fatalf("final holds %q (%v), want %q", b, err, want)
	}
	if _, err := os.Stat(w.Temp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

func newAtomicWrite(t *testing.T, data string) AtomicWrite {
	t.Helper()
	w := NewAtomicWrite(t.TempDir(), "file", []byte(data))
	if err := os.WriteFile(w.Final, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestAtomicWriteRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  func(w AtomicWrite) Rule
		final string // what Final holds after
		sync  bool   // whether the error is a SyncError
	}{
		{"ok", nil, "new", false},
		{"write", func(w AtomicWrite) Rule { return ENOSPCOnWrite("*" + TempSuffix) }, "old", false},
		{"fsync temp", func(w AtomicWrite) Rule { return EIOOnSync("*" + TempSuffix) }, "old", true},
		{"rename", func(w AtomicWrite) Rule { return Rule{Op: OpRename, Fault: FaultError, Err: syscall.EXDEV} }, "old", false},
		{"fsync dir", func(w AtomicWrite) Rule { return EIOOnSync(filepath.Base(w.Dir)) }, "new", true},
		{"open dir", func(w AtomicWrite) Rule { return Rule{Op: OpOpenDir, Fault: FaultError, Err: syscall.EMFILE} }, "new", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newAtomicWrite(t, "new")
			ff := NewFaulty(Default)
			if tc.rule != nil {
				ff.Add(tc.rule(w))
			}
			err := w.Run(ff)
			if (err == nil) != (tc.rule == nil) || IsSyncFailure(err) != tc.sync {
				t.Fatalf("Run: %v (sync failure %v, want %v)", err, IsSyncFailure(err), tc.sync)
			}
			checkAtomicResult(t, w, tc.final)
		})
	}
}

func TestAtomicWriteStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  func(w AtomicWrite) Rule
		final string
		sync  bool
	}{
		{"ok", nil, "new", false},
		{"write", func(w AtomicWrite) Rule { return ENOSPCOnWrite("*" + TempSuffix) }, "old", false},
		{"short write", func(w AtomicWrite) Rule { return ShortWrite("*"+TempSuffix, 1) }, "old", false},
		{"fsync temp", func(w AtomicWrite) Rule { return EIOOnSync("*" + TempSuffix) }, "old", true},
		{"rename", func(w AtomicWrite) Rule { return Rule{Op: OpRename, Fault: FaultError, Err: syscall.EXDEV} }, "old", false},
		{"fsync dir", func(w AtomicWrite) Rule { return EIOOnSync(w.Dir) }, "new", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, e *backendEnv) {
				w := newAtomicWrite(t, "new")
				if tc.rule != nil {
					e.be.Add(tc.rule(w))
				}
				err := await(e, func(done func(error)) { w.Start(e.be, done) })
				if (err == nil) != (tc.rule == nil) || IsSyncFailure(err) != tc.sync {
					t.Fatalf("Start: %v (sync failure %v, want %v)", err, IsSyncFailure(err), tc.sync)
				}
				checkAtomicResult(t, w, tc.final)
			})
		})
	}
}
