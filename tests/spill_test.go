package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/checkpoint"
)

// TestKillDuringACheckpointSpillLosesNothing: a checkpoint after a restart
// whose deletes dirty more heap pages than --pagecache-size holds writes
// pages while it is still Writing (a spill, issue 14). The process is
// killed inside the first such batch, at each crash point a batch passes,
// under appendfsync always; the next boot has exactly the acknowledged
// data, and so does the one after a checkpoint that completes.
func TestKillDuringACheckpointSpillLosesNothing(t *testing.T) {
	for _, step := range []checkpoint.Step{checkpoint.StepFPIAppended, checkpoint.StepBarrier, checkpoint.StepMidPwrite} {
		for _, backend := range []string{"uring", "pool"} {
			t.Run(string(step)+"/"+backend, func(t *testing.T) {
				t.Parallel()
				killDuringSpill(t, backend, step)
			})
		}
	}
}

func killDuringSpill(t *testing.T, backend string, step checkpoint.Step) {
	dir := t.TempDir()
	common := []string{"--appendfsync", "always", "--checkpoint-timeout", "3600", "--pagecache-size", "1mb"}
	const keys = 1600 // two 1,800-byte values a page: 800 pages, the cache holds 256
	old := strings.Repeat("x", 1800)
	s := startServerIn(t, dir, backend, 1, common...)
	c := s.client(2)
	pipe := c.Pipeline()
	for i := range keys {
		pipe.Set(ctx(t), fmt.Sprint("k", i), old, 0)
	}
	if _, err := pipe.Exec(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx(t)).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	s.kill9()

	// Cold pages: the first checkpoint of this boot frees the deleted
	// keys' records, and dies in its first batch of page writes, which
	// comes while it is Writing.
	s = startServerIn(t, dir, backend, 1, append(common, "--test-crash-at", string(step)+"@1")...)
	c = s.client(2)
	want := make(map[string]string)
	pipe = c.Pipeline()
	for i := range keys {
		k := fmt.Sprint("k", i)
		switch i % 10 {
		case 0:
			want[k] = old
		case 1:
			want[k] = "new " + k
			pipe.Set(ctx(t), k, want[k], 0)
		default:
			pipe.Del(ctx(t), k)
		}
	}
	if _, err := pipe.Exec(ctx(t)); err != nil {
		t.Fatal(err)
	}
	c.BgSave(ctx(t))
	if code := s.exitCode(); code != -1 || !strings.Contains(s.log.String(), "test hook: killing the process") {
		t.Fatalf("the server did not kill itself at %s (exit %d)\n%s", step, code, s.log.String())
	}

	s = startServerIn(t, dir, backend, 1, common...)
	checkExactly(t, s, keys, want)
	if err := s.client(2).Save(ctx(t)).Err(); err != nil {
		t.Fatalf("SAVE after the crash: %v", err)
	}
	s.kill9()
	s = startServerIn(t, dir, backend, 1, common...)
	checkExactly(t, s, keys, want)
}

// checkExactly checks that s holds exactly want among keys k0..k<keys-1>.
func checkExactly(t *testing.T, s *server, keys int, want map[string]string) {
	t.Helper()
	c := s.client(2)
	if n, err := c.DBSize(ctx(t)).Result(); err != nil || n != int64(len(want)) {
		t.Fatalf("DBSIZE %d (%v), want %d", n, err, len(want))
	}
	for i := range keys {
		k := fmt.Sprint("k", i)
		v, err := c.Get(ctx(t), k).Result()
		w, ok := want[k]
		if (err == nil) != ok || v != w {
			t.Fatalf("GET %s = %.20q (%v), want %.20q (present %v)", k, v, err, w, ok)
		}
	}
}
