package vfs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Op names the operations a Rule can match. Ops combine as a bit set. The
// same bits name the calls of FS and File (Faulty) and of runtime.Backend
// (FaultyBackend), as each line says.
type Op uint32

const (
	OpOpen     Op = 1 << iota // FS.Open, FS.OpenReadWrite; Backend.Open without O_CREATE
	OpCreate                  // FS.Create; Backend.Open with O_CREATE
	OpOpenDir                 // FS.OpenDir
	OpRename                  // FS.Rename, Backend.Rename (matches the old or the new path)
	OpRemove                  // FS.Remove, Backend.Unlink
	OpList                    // FS.List
	OpStat                    // FS.Stat, File.Stat
	OpMkdirAll                // FS.MkdirAll
	OpTruncate                // FS.Truncate
	OpRead                    // File.ReadAt; Backend.Pread
	OpWrite                   // File.Write, File.WriteAt; Backend.Pwrite, Backend.Pwritev
	OpSync                    // File.Sync (on a directory too); Backend.Fsync, Backend.SyncDir
	OpDatasync                // File.Datasync; Backend.Fdatasync
	OpClose                   // File.Close; Backend.Close of a file

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
	// FaultHang holds the call until Rule.Gate is closed (the call reports
	// itself on Rule.Entered first, when that is set), then performs it,
	// failing it with Rule.Err instead when that is set. Faulty blocks the
	// calling goroutine; FaultyBackend parks the operation and never blocks
	// the loop.
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
	// before it blocks. On Faulty the send blocks the caller until the test
	// receives; on FaultyBackend it is made from a goroutine of its own and
	// given up when the gate opens first, so that the loop never blocks.
	Entered chan<- string
	// Filter, when set, must accept the call too: a finer choice than Op
	// and Path (a write at a given offset, say). It runs under the rule
	// set's lock, so it must not call the Faulty or FaultyBackend back.
	Filter func(Call) bool
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

// Call describes one file operation as the rules see it.
type Call struct {
	Op Op
	// Path is the file's path (the old path of a rename).
	Path string
	// NewPath is the new path of a rename, "" otherwise.
	NewPath string
	// Off is the offset of a positioned read or write, -1 for every other
	// call.
	Off int64
}

func (r *Rule) matches(c Call) bool {
	if r.Op&c.Op == 0 {
		return false
	}
	if r.Path != "" && !matchPath(r.Path, c.Path) && (c.NewPath == "" || !matchPath(r.Path, c.NewPath)) {
		return false
	}
	return r.Filter == nil || r.Filter(c)
}

// matchPath tries pattern against the full path and against its base name.
func matchPath(pattern, path string) bool {
	if ok, _ := filepath.Match(pattern, path); ok {
		return true
	}
	ok, _ := filepath.Match(pattern, filepath.Base(path))
	return ok
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

// ruleSet is the rules, counts and crash state that Faulty and
// FaultyBackend share: one vocabulary for the synchronous and the
// asynchronous file stack. It is safe for concurrent use; its exported
// methods are promoted to both.
type ruleSet struct {
	mu      sync.Mutex
	rules   []*ruleState
	nextID  RuleID
	crashed bool
	counts  Counts
}

// Add installs a rule; rules are tried in the order they were added and the
// first that fires decides. It panics on a malformed rule: that is a bug in
// the test. Any goroutine may call it, at any time.
func (s *ruleSet) Add(r Rule) RuleID {
	if err := r.validate(); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.rules = append(s.rules, &ruleState{id: s.nextID, rule: r})
	return s.nextID
}

// Delete removes a rule. Calls already held by it stay held until its gate
// opens. Any goroutine may call it, at any time.
func (s *ruleSet) Delete(id RuleID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, rs := range s.rules {
		if rs.id == id {
			s.rules = append(s.rules[:i], s.rules[i+1:]...)
			return
		}
	}
}

// Hits returns how many calls the rule has broken (0 once it is deleted).
func (s *ruleSet) Hits(id RuleID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range s.rules {
		if rs.id == id {
			return rs.hits
		}
	}
	return 0
}

// Counts returns the faults injected so far.
func (s *ruleSet) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Crashed reports whether a torn write has crashed the file system.
func (s *ruleSet) Crashed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.crashed
}

// Reset removes every rule and lifts the crash: the "restart" after a
// simulated crash. The counts are kept.
func (s *ruleSet) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
	s.crashed = false
}

// fire decides what happens to call c: nil to let it through, or the rule
// that broke it. A crashed file system reports a synthetic FaultError rule
// with ErrCrashed for every mutating call.
func (s *ruleSet) fire(c Call) *Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashed && c.Op&mutating != 0 {
		s.counts.Crashed++
		return &Rule{Fault: FaultError, Err: ErrCrashed}
	}
	for _, rs := range s.rules {
		if !rs.rule.matches(c) {
			continue
		}
		rs.seen++
		if rs.seen <= rs.rule.Skip || (rs.rule.Count > 0 && rs.hits >= rs.rule.Count) {
			continue
		}
		rs.hits++
		switch rs.rule.Fault {
		case FaultError:
			s.counts.Errors++
		case FaultShortWrite:
			s.counts.ShortWrites++
		case FaultTornWrite:
			s.counts.TornWrites++
			s.crashed = true
		case FaultHang:
			s.counts.Hangs++
		}
		r := rs.rule
		return &r
	}
	return nil
}
