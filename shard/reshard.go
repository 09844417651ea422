package shard

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moond-db/moond/persistence/vfs"
)

// The switch of a reshard (docs/DESIGN.md §7): the data directory goes from
// the old shard directories to the ones staged for the new count, and a
// crash at any point leaves a directory that boots to exactly the old data
// or exactly the new.
//
//	<dir>/reshard.staging/shard-NNN   the new shards, built and checkpointed
//	<dir>/reshard.intent              "FROM TO": the switch is decided
//	<dir>/reshard.old/shard-NNN       the old shards, moved out of the way
//
// Before the intent file exists the old shards are untouched and a boot
// discards the staging area. Once it exists (written atomically, after
// the staged shards and their directory entries are durable), every boot
// rolls the switch forward: the old shards move out, the staged ones move
// in (each rename done once, skipped when already done), moond.shards
// gets the new count, the intent goes, then the leftovers.

// Names in the data directory.
const (
	// ShardCountFile records the number of shards the directory holds.
	ShardCountFile = "moond.shards"
	reshardIntent  = "reshard.intent"
	reshardStaging = "reshard.staging"
	reshardOld     = "reshard.old"
)

// DirName is the name of shard id's directory in the data directory.
func DirName(id int) string { return fmt.Sprintf("shard-%03d", id) }

// StagingDir is where a reshard of the data directory dir builds the new
// shards.
func StagingDir(dir string) string { return filepath.Join(dir, reshardStaging) }

// WriteShardCount replaces dir's moond.shards with n, durably.
func WriteShardCount(dir string, n int) error {
	return vfs.NewAtomicWrite(dir, ShardCountFile, []byte(strconv.Itoa(n)+"\n")).Run(vfs.Default)
}

// FinishReshard runs at boot, under the directory's lock and before the
// shard count is read: a switch whose intent file exists is rolled
// forward; otherwise what an unfinished reshard left (a staging area
// never decided on, old shards of a switch already done) is removed.
func FinishReshard(dir string, log *slog.Logger) error {
	b, err := os.ReadFile(filepath.Join(dir, reshardIntent))
	switch {
	case err == nil:
		from, to, perr := parseIntent(b)
		if perr != nil {
			return perr
		}
		log.Warn("finishing a reshard interrupted after its switch was decided", "from", from, "to", to)
		return rollForward(dir, from, to, CrashPoint{}, log)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("reshard intent: %w", err)
	}
	removed := false
	for _, name := range []string{reshardStaging, reshardOld, reshardIntent + vfs.TempSuffix} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if name == reshardStaging {
			log.Warn("discarding the staging area of a reshard that did not finish; the shards in place are untouched", "dir", p)
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("reshard: %w", err)
		}
		removed = true
	}
	if removed {
		return vfs.SyncDir(vfs.Default, dir)
	}
	return nil
}

// CommitReshard switches dir from its from shards to the to shards staged
// in StagingDir(dir), which hold every key and are closed. The crash point
// cp (test-only) may kill the process between the steps.
func CommitReshard(dir string, from, to int, cp CrashPoint, log *slog.Logger) error {
	cp.reshardStep(StepReshardCopied, log)
	staging := StagingDir(dir)
	// A directory of a shard beyond the old count holds nothing live; it
	// must not stand where a new shard moves in.
	for i := from; i < to; i++ {
		if err := os.RemoveAll(filepath.Join(dir, DirName(i))); err != nil {
			return fmt.Errorf("reshard: %w", err)
		}
	}
	for i := 0; i < to; i++ {
		if _, err := os.Stat(filepath.Join(staging, DirName(i))); err != nil {
			return fmt.Errorf("reshard: staged shard %d: %w", i, err)
		}
	}
	if err := vfs.SyncDir(vfs.Default, staging); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	if err := vfs.SyncDir(vfs.Default, dir); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	intent := fmt.Appendf(nil, "%d %d\n", from, to)
	if err := vfs.NewAtomicWrite(dir, reshardIntent, intent).Run(vfs.Default); err != nil {
		return fmt.Errorf("reshard: intent: %w", err)
	}
	cp.reshardStep(StepReshardIntent, log)
	return rollForward(dir, from, to, cp, log)
}

// parseIntent reads the intent file's "FROM TO".
func parseIntent(b []byte) (from, to int, err error) {
	f := strings.Fields(string(b))
	if len(f) == 2 {
		from, err = strconv.Atoi(f[0])
		if err == nil {
			to, err = strconv.Atoi(f[1])
		}
		if err == nil && from > 0 && to > 0 {
			return from, to, nil
		}
	}
	return 0, 0, fmt.Errorf("reshard intent file %s is damaged: %q", reshardIntent, b)
}

// rollForward performs the decided switch; each step is skipped when an
// earlier run did it, so a crash anywhere leaves work a later boot
// finishes the same way.
func rollForward(dir string, from, to int, cp CrashPoint, log *slog.Logger) error {
	old, staging := filepath.Join(dir, reshardOld), StagingDir(dir)
	if err := os.MkdirAll(old, 0o755); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	// The old shards out: one whose place in old is taken was moved.
	for i := 0; i < from; i++ {
		if err := moveOnce(filepath.Join(dir, DirName(i)), filepath.Join(old, DirName(i))); err != nil {
			return err
		}
	}
	if err := syncDirs(old, dir); err != nil {
		return err
	}
	// The new ones in: one missing from staging was moved.
	for i := 0; i < to; i++ {
		if err := moveOnce(filepath.Join(staging, DirName(i)), filepath.Join(dir, DirName(i))); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, DirName(i))); err != nil {
			return fmt.Errorf("reshard: new shard %d is neither staged nor in place: %w", i, err)
		}
	}
	if err := syncDirs(staging, dir); err != nil {
		return err
	}
	cp.reshardStep(StepReshardRenamed, log)
	if err := WriteShardCount(dir, to); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, reshardIntent)); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	if err := vfs.SyncDir(vfs.Default, dir); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	for _, p := range []string{old, staging} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("reshard: %w", err)
		}
	}
	if err := vfs.SyncDir(vfs.Default, dir); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	log.Info("reshard switched", "from", from, "to", to)
	return nil
}

// moveOnce renames src to dst unless dst exists (done before) or src does
// not (nothing to move).
func moveOnce(src, dst string) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("reshard: %w", err)
	}
	return nil
}

// syncDirs fsyncs each directory that exists.
func syncDirs(dirs ...string) error {
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		if err := vfs.SyncDir(vfs.Default, d); err != nil {
			return fmt.Errorf("reshard: %w", err)
		}
	}
	return nil
}
