// Package vfs is the file interface moond's persistence code uses, and the
// place where tests break it on purpose.
//
// Everything under persistence/ that touches a file goes through FS and File,
// never through package os directly, so that every failure a disk can produce
// can be produced in a test: see Faulty.
//
// The interface is deliberately small and synchronous. It is what boot-time
// code (recovery, which runs before a shard serves) and reference
// implementations (wal.SyncWriter) need. The serving path does its file I/O
// through runtime.Backend on the shard's own thread; it shares the on-disk
// formats with this package's users, not this interface.
//
// # Implementations
//
//   - Default: the operating system. File.Datasync is fdatasync(2) on Linux
//     and fsync (File.Sync, which is F_FULLFSYNC on Darwin) elsewhere.
//     OpenDir returns a handle whose Sync makes renames, creations and
//     removals in that directory durable; on Windows, where no such call
//     exists, that Sync is a no-op.
//   - NewFaulty(base): wraps any FS and injects faults chosen by Rules that
//     match an operation (Op) and a path glob: an error (EIO on fsync,
//     ENOSPC on write, ENOENT for a file that vanished, EISDIR on open), a
//     short write, a torn write that models a crash in the middle of a write,
//     and a hung call that blocks its caller until the test opens a gate.
//   - NewFaultyBackend(loop, inner): the same Rules for the asynchronous
//     stack, a runtime.Backend wrapper; a hold parks the operation without
//     blocking the loop.
//
// The package also owns, once, what every persistence package needs of a
// file system: SyncDir (a directory fsync; every failure is a SyncError)
// and AtomicWrite (temp file, fsync, rename, directory fsync), run over an
// FS or started on a runtime.Backend.
//
// # Conventions
//
//   - Paths are operating-system paths; List returns base names, sorted.
//   - Errors are *os.PathError (or *os.LinkError for Rename) wrapping the
//     syscall.Errno, as package os returns them, so errors.Is(err,
//     syscall.ENOSPC) and errors.Is(err, fs.ErrNotExist) work for real and
//     injected faults alike.
//   - A File is not safe for concurrent use unless its implementation says so;
//     the OS implementation's ReadAt and WriteAt are.
package vfs
