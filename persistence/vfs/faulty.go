package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Op names the operations a Rule can match. Ops combine as a bit set.
type Op uint32

const (
	OpOpen     Op = 1 << iota // FS.Open, FS.OpenReadWrite
	OpCreate                  // FS.Create
	OpOpenDir                 // FS.OpenDir
	OpRename                  // FS.Rename (matches the old or the new path)
	OpRemove                  // FS.Remove
	OpList                    // FS.List
	OpStat                    // FS.Stat, File.Stat
	OpMkdirAll                // FS.MkdirAll
	OpTruncate                // FS.Truncate
	OpRead                    // File.ReadAt
	OpWrite                   // File.Write, File.WriteAt
	OpSync                    // File.Sync (on a directory too)
	OpDatasync                // File.Datasync
	OpClose                   // File.Close

	opEnd
	// OpAll matches every operation.
	OpAll = opEnd - 1
)

var opNames = []string{"open", "create", "opendir", "rename", "remove", "list", "stat",
	"mkdirall", "truncate", "read", "write", "sync", "datasync", "close"}

func (o Op) String() string {
	if o == 0 {
		return "none"
	}
	var parts []string
	for i, name := range opNames {
		if o&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if rest := o &^ OpAll; rest != 0 {
		parts = append(parts, fmt.Sprintf("Op(%#x)", uint32(rest)))
	}
	return strings.Join(parts, "|")
}

// mutating is the set of operations a crashed Faulty refuses.
const mutating = OpCreate | OpRename | OpRemove | OpMkdirAll | OpTruncate | OpWrite | OpSync | OpDatasync

// Fault is what a matching Rule does to the call.
type Fault uint8

const (
	// FaultError fails the call with Rule.Err; nothing reaches the file.
	FaultError Fault = iota + 1
	// FaultShortWrite writes the first Rule.N bytes (fewer than asked) and
	// returns io.ErrShortWrite. The file system keeps working.
	FaultShortWrite
	// FaultTornWrite writes the first Rule.N bytes and then "crashes": the
	// call returns ErrCrashed, and so does every later mutating call
	// (create, rename, remove, mkdir, truncate, write, sync) on this Faulty,
	// until Reset. What reached the file is what a process killed in the
	// middle of the write leaves behind.
	FaultTornWrite
	// FaultHang blocks the calling goroutine until Rule.Gate is closed (the
	// call reports itself on Rule.Entered first, when that is set), then
	// performs the call, failing it with Rule.Err when that is set.
	FaultHang
)

func (k Fault) String() string {
	switch k {
	case FaultError:
		return "error"
	case FaultShortWrite:
		return "short-write"
	case FaultTornWrite:
		return "torn-write"
	case FaultHang:
		return "hang"
	}
	return fmt.Sprintf("Fault(%d)", uint8(k))
}

// ErrCrashed is returned by the torn write that crashed a Faulty and by every
// mutating call after it.
var ErrCrashed = errors.New("vfs: injected crash")

// Rule chooses calls to break and says how.
type Rule struct {
	// Op is the set of operations the rule matches.
	Op Op
	// Path is a filepath.Match pattern tried against the full path and
	// against its base name; "" matches every path.
	Path string
	// Fault is what happens to a matched call.
	Fault Fault
	// Err is the error of FaultError (required), and of FaultHang after the
	// gate opens (optional). A syscall.Errno is wrapped in an *os.PathError
	// naming the operation and the path, as package os does.
	Err error
	// N is how many bytes of the buffer reach the file, for FaultShortWrite
	// (capped at len-1) and FaultTornWrite (capped at len).
	N int
	// Skip lets the first Skip matching calls through untouched.
	Skip int
	// Count is how many calls the rule breaks before it retires; 0 means
	// every matching call.
	Count int
	// Gate is what a FaultHang waits on: the call proceeds once it is closed.
	Gate <-chan struct{}
	// Entered, when set, receives the path of each call a FaultHang blocks,
	// before it blocks (the send itself blocks until the test receives).
	Entered chan<- string
}

func (r Rule) validate() error {
	switch {
	case r.Op == 0 || r.Op&^OpAll != 0:
		return fmt.Errorf("vfs: rule has no valid operations (%v)", r.Op)
	case r.Fault == FaultError && r.Err == nil:
		return errors.New("vfs: error rule without an error")
	case (r.Fault == FaultShortWrite || r.Fault == FaultTornWrite) && r.Op&^OpWrite != 0:
		return fmt.Errorf("vfs: %v rule matches non-write operations (%v)", r.Fault, r.Op)
	case (r.Fault == FaultShortWrite || r.Fault == FaultTornWrite) && r.N < 0:
		return fmt.Errorf("vfs: %v rule with negative N", r.Fault)
	case r.Fault == FaultHang && r.Gate == nil:
		return errors.New("vfs: hang rule without a gate")
	case r.Fault < FaultError || r.Fault > FaultHang:
		return fmt.Errorf("vfs: unknown fault %v", r.Fault)
	case r.Skip < 0 || r.Count < 0:
		return errors.New("vfs: negative Skip or Count")
	}
	if r.Path != "" {
		if _, err := filepath.Match(r.Path, ""); err != nil {
			return fmt.Errorf("vfs: bad path pattern %q: %w", r.Path, err)
		}
	}
	return nil
}

func (r *Rule) matches(op Op, paths []string) bool {
	if r.Op&op == 0 {
		return false
	}
	if r.Path == "" {
		return true
	}
	for _, p := range paths {
		if ok, _ := filepath.Match(r.Path, p); ok {
			return true
		}
		if ok, _ := filepath.Match(r.Path, filepath.Base(p)); ok {
			return true
		}
	}
	return false
}

// EIOOnSync fails fsync and fdatasync of matching files with EIO.
func EIOOnSync(path string) Rule {
	return Rule{Op: OpSync | OpDatasync, Path: path, Fault: FaultError, Err: syscall.EIO}
}

// ENOSPCOnWrite fails writes to matching files with ENOSPC.
func ENOSPCOnWrite(path string) Rule {
	return Rule{Op: OpWrite, Path: path, Fault: FaultError, Err: syscall.ENOSPC}
}

// ShortWrite lets n bytes of a write reach matching files and reports
// io.ErrShortWrite.
func ShortWrite(path string, n int) Rule {
	return Rule{Op: OpWrite, Path: path, Fault: FaultShortWrite, N: n}
}

// TornWrite lets n bytes of one write to a matching file through and then
// crashes the Faulty (see FaultTornWrite).
func TornWrite(path string, n int) Rule {
	return Rule{Op: OpWrite, Path: path, Fault: FaultTornWrite, N: n, Count: 1}
}

// HangSync blocks fsync and fdatasync of matching files until gate is closed.
func HangSync(path string, gate <-chan struct{}) Rule {
	return Rule{Op: OpSync | OpDatasync, Path: path, Fault: FaultHang, Gate: gate}
}

// Vanished makes matching files look deleted: open and stat fail with ENOENT
// (errors.Is(err, fs.ErrNotExist) holds).
func Vanished(path string) Rule {
	return Rule{Op: OpOpen | OpOpenDir | OpStat, Path: path, Fault: FaultError, Err: syscall.ENOENT}
}

// IsDirOnOpen fails opening or creating matching paths with EISDIR.
func IsDirOnOpen(path string) Rule {
	return Rule{Op: OpOpen | OpCreate, Path: path, Fault: FaultError, Err: syscall.EISDIR}
}

// RuleID names a rule added to a Faulty.
type RuleID int

// Counts is how many faults a Faulty injected, by kind. Crashed counts the
// mutating calls refused after a torn write.
type Counts struct {
	Errors, ShortWrites, TornWrites, Hangs, Crashed int
}

// Total is the number of injected faults of every kind.
func (c Counts) Total() int {
	return c.Errors + c.ShortWrites + c.TornWrites + c.Hangs + c.Crashed
}

type ruleState struct {
	id   RuleID
	rule Rule
	seen int // matching calls so far
	hits int // calls broken so far
}

// Faulty is an FS that injects faults into another. It is safe for
// concurrent use.
type Faulty struct {
	base FS

	mu      sync.Mutex
	rules   []*ruleState
	nextID  RuleID
	crashed bool
	counts  Counts
}

var _ FS = (*Faulty)(nil)

// NewFaulty returns an FS that passes every call to base until rules say
// otherwise.
func NewFaulty(base FS) *Faulty { return &Faulty{base: base} }

// Add installs a rule; rules are tried in the order they were added and the
// first that fires decides. It panics on a malformed rule: that is a bug in
// the test.
func (f *Faulty) Add(r Rule) RuleID {
	if err := r.validate(); err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.rules = append(f.rules, &ruleState{id: f.nextID, rule: r})
	return f.nextID
}

// Delete removes a rule. Calls already blocked by it stay blocked until its
// gate opens.
func (f *Faulty) Delete(id RuleID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, rs := range f.rules {
		if rs.id == id {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
			return
		}
	}
}

// Hits returns how many calls the rule has broken.
func (f *Faulty) Hits(id RuleID) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rs := range f.rules {
		if rs.id == id {
			return rs.hits
		}
	}
	return 0
}

// Counts returns the faults injected so far.
func (f *Faulty) Counts() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

// Crashed reports whether a torn write has crashed the file system.
func (f *Faulty) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// Reset removes every rule and lifts the crash: the "restart" after a
// simulated crash. The counts are kept.
func (f *Faulty) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
	f.crashed = false
}

// fire decides what happens to a call of op on paths: nil to let it through,
// or the rule that broke it. A crashed file system reports a synthetic
// FaultError rule with ErrCrashed.
func (f *Faulty) fire(op Op, paths ...string) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashed && op&mutating != 0 {
		f.counts.Crashed++
		return &Rule{Fault: FaultError, Err: ErrCrashed}
	}
	for _, rs := range f.rules {
		if !rs.rule.matches(op, paths) {
			continue
		}
		rs.seen++
		if rs.seen <= rs.rule.Skip || (rs.rule.Count > 0 && rs.hits >= rs.rule.Count) {
			continue
		}
		rs.hits++
		switch rs.rule.Fault {
		case FaultError:
			f.counts.Errors++
		case FaultShortWrite:
			f.counts.ShortWrites++
		case FaultTornWrite:
			f.counts.TornWrites++
			f.crashed = true
		case FaultHang:
			f.counts.Hangs++
		}
		r := rs.rule
		return &r
	}
	return nil
}

// interrupt applies a non-write fault: it returns the error the call fails
// with, or nil when the call should go ahead (a hang that was released
// without an error).
func interrupt(r *Rule, opName, path string) error {
	if r.Fault == FaultHang {
		if r.Entered != nil {
			r.Entered <- path
		}
		<-r.Gate
		if r.Err == nil {
			return nil
		}
	}
	return pathErr(opName, path, r.Err)
}

func pathErr(op, path string, err error) error {
	return &os.PathError{Op: op, Path: path, Err: err}
}

func (f *Faulty) open(op Op, opName, name string, do func(string) (File, error)) (File, error) {
	if r := f.fire(op, name); r != nil {
		if err := interrupt(r, opName, name); err != nil {
			return nil, err
		}
	}
	file, err := do(name)
	if err != nil {
		return nil, err
	}
	return &faultyFile{fs: f, f: file, path: name}, nil
}

func (f *Faulty) Open(name string) (File, error) {
	return f.open(OpOpen, "open", name, f.base.Open)
}

func (f *Faulty) OpenReadWrite(name string) (File, error) {
	return f.open(OpOpen, "open", name, f.base.OpenReadWrite)
}

func (f *Faulty) Create(name string) (File, error) {
	return f.open(OpCreate, "open", name, f.base.Create)
}

func (f *Faulty) OpenDir(name string) (File, error) {
	return f.open(OpOpenDir, "open", name, f.base.OpenDir)
}

func (f *Faulty) Rename(oldname, newname string) error {
	if r := f.fire(OpRename, oldname, newname); r != nil {
		if err := interrupt(r, "rename", oldname); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: pe.Err}
			}
			return err
		}
	}
	return f.base.Rename(oldname, newname)
}

func (f *Faulty) Remove(name string) error {
	if r := f.fire(OpRemove, name); r != nil {
		if err := interrupt(r, "remove", name); err != nil {
			return err
		}
	}
	return f.base.Remove(name)
}

func (f *Faulty) List(dir string) ([]string, error) {
	if r := f.fire(OpList, dir); r != nil {
		if err := interrupt(r, "readdir", dir); err != nil {
			return nil, err
		}
	}
	return f.base.List(dir)
}

func (f *Faulty) Stat(name string) (os.FileInfo, error) {
	if r := f.fire(OpStat, name); r != nil {
		if err := interrupt(r, "stat", name); err != nil {
			return nil, err
		}
	}
	return f.base.Stat(name)
}

func (f *Faulty) MkdirAll(dir string, perm os.FileMode) error {
	if r := f.fire(OpMkdirAll, dir); r != nil {
		if err := interrupt(r, "mkdir", dir); err != nil {
			return err
		}
	}
	return f.base.MkdirAll(dir, perm)
}

func (f *Faulty) Truncate(name string, size int64) error {
	if r := f.fire(OpTruncate, name); r != nil {
		if err := interrupt(r, "truncate", name); err != nil {
			return err
		}
	}
	return f.base.Truncate(name, size)
}

// faultyFile is a File whose calls go through its Faulty's rules.
type faultyFile struct {
	fs   *Faulty
	f    File
	path string
}

func (ff *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if r := ff.fs.fire(OpRead, ff.path); r != nil {
		if err := interrupt(r, "read", ff.path); err != nil {
			return 0, err
		}
	}
	return ff.f.ReadAt(p, off)
}

func (ff *faultyFile) Write(p []byte) (int, error) {
	return ff.write(p, ff.f.Write)
}

func (ff *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	return ff.write(p, func(b []byte) (int, error) { return ff.f.WriteAt(b, off) })
}

// write applies the write faults: a prefix of p reaches the file through do
// for short and torn writes.
func (ff *faultyFile) write(p []byte, do func([]byte) (int, error)) (int, error) {
	r := ff.fs.fire(OpWrite, ff.path)
	if r == nil {
		return do(p)
	}
	switch r.Fault {
	case FaultShortWrite:
		n := min(r.N, max(len(p)-1, 0))
		m, err := do(p[:n])
		if err != nil {
			return m, err
		}
		return m, pathErr("write", ff.path, io.ErrShortWrite)
	case FaultTornWrite:
		n := min(r.N, len(p))
		m, err := do(p[:n])
		if err != nil {
			return m, err
		}
		return m, pathErr("write", ff.path, ErrCrashed)
	}
	if err := interrupt(r, "write", ff.path); err != nil {
		return 0, err
	}
	return do(p)
}

func (ff *faultyFile) Sync() error {
	if r := ff.fs.fire(OpSync, ff.path); r != nil {
		if err := interrupt(r, "sync", ff.path); err != nil {
			return err
		}
	}
	return ff.f.Sync()
}

func (ff *faultyFile) Datasync() error {
	if r := ff.fs.fire(OpDatasync, ff.path); r != nil {
		if err := interrupt(r, "fdatasync", ff.path); err != nil {
			return err
		}
	}
	return ff.f.Datasync()
}

func (ff *faultyFile) Stat() (os.FileInfo, error) {
	if r := ff.fs.fire(OpStat, ff.path); r != nil {
		if err := interrupt(r, "stat", ff.path); err != nil {
			return nil, err
		}
	}
	return ff.f.Stat()
}

// Close always releases the underlying file, even when a fault is injected,
// so that tests do not leak descriptors.
func (ff *faultyFile) Close() error {
	if r := ff.fs.fire(OpClose, ff.path); r != nil {
		err := interrupt(r, "close", ff.path)
		cerr := ff.f.Close()
		if err != nil {
			return err
		}
		return cerr
	}
	return ff.f.Close()
}
