package shard

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

// reshardDir builds a data directory with from old shards and to staged
// ones, each holding a file that names it.
func reshardDir(t *testing.T, from, to int) string {
	t.Helper()
	dir := t.TempDir()
	mk := func(d, mark string) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "mark"), []byte(mark), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < from; i++ {
		mk(filepath.Join(dir, DirName(i)), "old-"+strconv.Itoa(i))
	}
	for i := 0; i < to; i++ {
		mk(filepath.Join(StagingDir(dir), DirName(i)), "new-"+strconv.Itoa(i))
	}
	if err := WriteShardCount(dir, from); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dirState describes the data directory: its entries and each shard's
// mark, for comparisons.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		s := e.Name()
		if strings.HasPrefix(s, "shard-") {
			b, _ := os.ReadFile(filepath.Join(dir, s, "mark"))
			s += "=" + string(b)
		}
		if s == ShardCountFile {
			b, _ := os.ReadFile(filepath.Join(dir, s))
			s += "=" + strings.TrimSpace(string(b))
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// newState is the directory once the switch to the staged shards is done.
func newState(to int) string {
	var out []string
	out = append(out, ShardCountFile+"="+strconv.Itoa(to))
	for i := 0; i < to; i++ {
		out = append(out, DirName(i)+"=new-"+strconv.Itoa(i))
	}
	return strings.Join(out, " ")
}

// TestReshardSwitchRollsForwardFromEveryRename crashes the switch after
// each of its renames (by doing only the first k of them by hand after
// the intent is written) and checks that the next boot's FinishReshard
// ends with exactly the new shards, whatever k was.
func TestReshardSwitchRollsForwardFromEveryRename(t *testing.T) {
	for _, c := range []struct{ from, to int }{{2, 3}, {3, 1}, {2, 2}} {
		renames := c.from + c.to
		for k := 0; k <= renames; k++ {
			dir := reshardDir(t, c.from, c.to)
			intent := strconv.Itoa(c.from) + " " + strconv.Itoa(c.to) + "\n"
			if err := os.WriteFile(filepath.Join(dir, reshardIntent), []byte(intent), 0o644); err != nil {
				t.Fatal(err)
			}
			old := filepath.Join(dir, reshardOld)
			if err := os.MkdirAll(old, 0o755); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < k; r++ {
				src, dst := filepath.Join(dir, DirName(r)), filepath.Join(old, DirName(r))
				if r >= c.from {
					i := r - c.from
					src, dst = filepath.Join(StagingDir(dir), DirName(i)), filepath.Join(dir, DirName(i))
				}
				if err := os.Rename(src, dst); err != nil {
					t.Fatal(err)
				}
			}
			if err := FinishReshard(dir, slog.Default()); err != nil {
				t.Fatalf("%d -> %d after %d renames: %v", c.from, c.to, k, err)
			}
			if got, want := dirState(t, dir), newState(c.to); got != want {
				t.Fatalf("%d -> %d after %d renames:\n got %s\nwant %s", c.from, c.to, k, got, want)
			}
		}
	}
}

// TestReshardWithoutIntentKeepsTheOldShards: a staging area whose switch
// was never decided is discarded, with a half-written intent, and the old
// shards stay as they are.
func TestReshardWithoutIntentKeepsTheOldShards(t *testing.T) {
	dir := reshardDir(t, 2, 3)
	// A crash inside the intent's atomic write leaves its temporary file.
	if err := os.WriteFile(filepath.Join(dir, reshardIntent+vfs.TempSuffix), []byte("2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := FinishReshard(dir, slog.Default()); err != nil {
		t.Fatal(err)
	}
	want := "moond.shards=2 shard-000=old-0 shard-001=old-1"
	if got := dirState(t, dir); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// TestReshardCommitSwitches runs the whole switch, with a stray directory
// beyond the old count where a new shard moves in.
func TestReshardCommitSwitches(t *testing.T) {
	dir := reshardDir(t, 1, 3)
	if err := os.MkdirAll(filepath.Join(dir, DirName(2)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CommitReshard(dir, 1, 3, CrashPoint{}, slog.Default()); err != nil {
		t.Fatal(err)
	}
	if got, want := dirState(t, dir), newState(3); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// TestReshardIntentDamagedIsRefused: an intent file that does not parse
// stops the boot rather than guess.
func TestReshardIntentDamagedIsRefused(t *testing.T) {
	dir := reshardDir(t, 2, 3)
	if err := os.WriteFile(filepath.Join(dir, reshardIntent), []byte("2 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := FinishReshard(dir, slog.Default()); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("FinishReshard: %v", err)
	}
}
