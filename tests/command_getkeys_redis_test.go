package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCommandGetKeysAndFlagsMatchRedisServer compares COMMAND GETKEYS and
// GETKEYSANDFLAGS with redis-server 7.0's for commands whose keys every
// kind of key spec finds (an index and a range, a keyword, a key count),
// the two whose flags depend on their arguments (SET, BITFIELD), a
// container's subcommand and the refusals.
func TestCommandGetKeysAndFlagsMatchRedisServer(t *testing.T) {
	t.Parallel()
	rs := startRedisServer(t)
	mc := startServer(t, "pool", 1).client(2)
	for _, cmd := range []string{
		"get k", "set k v", "set k v get", "set k v ex 10 get", "mset a 1 b 2 c 3", "del a b c",
		"lmove a b left right", "rpoplpush a b", "smove a b m", "getdel k", "append k v",
		"zunionstore d 2 a b weights 1 2", "zinter 3 a b c", "zdiffstore d 1 a", "zintercard 2 a b limit 3",
		"sintercard 2 a b", "lmpop 2 a b left count 2", "blmpop 0 2 a b right", "bzmpop 1 1 a min",
		"migrate h 1 k 0 5", "migrate h 1 '' 0 5 keys a b", "migrate h 1 '' 0 5 copy replace keys a",
		"bitfield k get u8 0", "bitfield k set u8 0 1", "bitfield k incrby u8 0 1", "bitfield k get set 0", "bitfield k overflow set get u8 0", "bitfield k set u8 0", "bitfield_ro k get u8 0",
		"object encoding k", "memory usage k samples 5", "pfmerge d a b", "rename a b", "copy a b db 1",
		"expire k 10", "hset h f v", "zunionstore d 5 a", "lmpop 3 a b left", "watch a b", "ssubscribe a b", "spublish c m",
		"ping", "get", "nosuchcommand k", "lmpop 0 a left", "zunionstore d x a",
	} {
		args := strings.Fields(cmd)
		for i, a := range args {
			if a == "''" {
				args[i] = ""
			}
		}
		for _, sub := range []string{"GETKEYS", "GETKEYSANDFLAGS"} {
			call := append([]any{"COMMAND", sub}, anySlice(args)...)
			want, got := replyText(rs.Do(ctx(t), call...)), replyText(mc.Do(ctx(t), call...))
			if want != got {
				t.Errorf("COMMAND %s %s: redis-server %s, moond %s", sub, cmd, want, got)
			}
		}
	}
}

// TestCommandListFilterByMatchesRedisServer checks COMMAND LIST FILTERBY
// against redis-server 7.0: for every ACL category and some patterns,
// moond names the commands and subcommands it has out of those
// redis-server names; FILTERBY MODULE names none, and a malformed filter
// is a syntax error.
func TestCommandListFilterByMatchesRedisServer(t *testing.T) {
	t.Parallel()
	rs := startRedisServer(t)
	mc := startServer(t, "pool", 1).client(2)
	all, err := mc.Do(ctx(t), "COMMAND", "LIST", "FILTERBY", "PATTERN", "*").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(all, "config|get") || !slices.Contains(all, "get") {
		t.Fatalf("FILTERBY PATTERN * names %v", all)
	}
	cats, err := rs.Do(ctx(t), "ACL", "CAT").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	var filters [][]any
	for _, cat := range cats {
		filters = append(filters, []any{"ACLCAT", strings.ToUpper(cat)})
	}
	for _, p := range []string{"*", "config*", "CLIENT|*", "?et", "z[a-c]*", "nosuch"} {
		filters = append(filters, []any{"PATTERN", p})
	}
	filters = append(filters, []any{"MODULE", "x"}, []any{"ACLCAT", "nosuch"})
	for _, f := range filters {
		call := append([]any{"COMMAND", "LIST", "FILTERBY"}, f...)
		want, err := rs.Do(ctx(t), call...).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		got, err := mc.Do(ctx(t), call...).StringSlice()
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		want = slices.DeleteFunc(want, func(n string) bool { return !slices.Contains(all, n) })
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("FILTERBY %v: redis-server %v, moond %v", f, want, got)
		}
	}
	for _, bad := range [][]any{{"COMMAND", "LIST", "x", "y", "z"}, {"COMMAND", "LIST", "FILTERBY", "x", "y"}} {
		want, got := replyText(rs.Do(ctx(t), bad...)), replyText(mc.Do(ctx(t), bad...))
		if want != got {
			t.Errorf("%v: redis-server %s, moond %s", bad, want, got)
		}
	}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// replyText is a reply or its error, as text.
func replyText(cmd interface {
	Val() any
	Err() error
}) string {
	if err := cmd.Err(); err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprint(cmd.Val())
}
