package replication

import (
	"slices"
	"strings"
	"testing"
)

// unitOf is shard s's part of a txn, from commands written "CMD arg ..."
// of database 0.
func unitOf(s int, cmds ...string) *Unit {
	u := &Unit{Shard: s}
	for _, c := range cmds {
		var args [][]byte
		for _, f := range strings.Fields(c) {
			args = append(args, []byte(f))
		}
		u.DBs, u.Cmds = append(u.DBs, 0), append(u.Cmds, args)
	}
	return u
}

// mergedText is mergeParts's output as "CMD arg ..." strings.
func mergedText(parts ...*Unit) []string {
	_, cmds := mergeParts(parts)
	var out []string
	for _, c := range cmds {
		out = append(out, string(slices.Concat(joinArgs(c)...)))
	}
	return out
}

func joinArgs(c [][]byte) [][]byte {
	var out [][]byte
	for i, a := range c {
		if i > 0 {
			out = append(out, []byte(" "))
		}
		out = append(out, a)
	}
	return out
}

// TestMergeBarriers: a command over every shard's keys that each shard
// logged (SWAPDB, a flush of shards that all had keys) is sent once, with
// every part's commands before it ahead of it and those after it behind;
// a part without a flush (its shard had no keys) goes after it; parts
// whose barriers do not align are concatenated, SWAPDB once.
func TestMergeBarriers(t *testing.T) {
	for _, c := range []struct {
		name  string
		parts []*Unit
		want  []string
	}{
		{"flushall", []*Unit{unitOf(0, "FLUSHALL"), unitOf(1), unitOf(2, "FLUSHALL")}, []string{"FLUSHALL"}},
		{"swapdb", []*Unit{unitOf(0, "SWAPDB 1 5"), unitOf(1, "SWAPDB 1 5"), unitOf(3, "SWAPDB 1 5")}, []string{"SWAPDB 1 5"}},
		{"exec with a flush", []*Unit{unitOf(0, "SET a 1", "FLUSHDB", "SET a 2"), unitOf(1, "SET b 1", "FLUSHDB", "SET b 2")},
			[]string{"SET a 1", "SET b 1", "FLUSHDB", "SET a 2", "SET b 2"}},
		{"plain", []*Unit{unitOf(0, "SET a 1", "DEL c"), unitOf(1, "SET b 1")}, []string{"SET a 1", "DEL c", "SET b 1"}},
		{"a shard empty at the flush", []*Unit{unitOf(0, "SET a 1"), unitOf(1, "SET b 1", "FLUSHALL"), unitOf(2, "SET c 1", "FLUSHALL", "SET c 2")},
			[]string{"SET b 1", "SET c 1", "FLUSHALL", "SET a 1", "SET c 2"}},
		{"not a suffix", []*Unit{unitOf(0, "SET a 1", "SWAPDB 0 1", "FLUSHALL"), unitOf(1, "SWAPDB 0 1", "SET b 1")},
			[]string{"SET a 1", "SWAPDB 0 1", "FLUSHALL", "SET b 1"}},
	} {
		if got := mergedText(c.parts...); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
