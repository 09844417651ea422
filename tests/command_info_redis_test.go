package tests

import (
	"fmt"
	"testing"
)

// TestCommandInfoMatchesRedisServer walks every command moond answers and
// compares what COMMAND INFO says of it and of its subcommands (name,
// arity, flags, first key, last key, step, ACL categories, tips, key
// specs) with redis-server 7.0's, skipping the commands redis-server
// lacks. No command differs on purpose.
func TestCommandInfoMatchesRedisServer(t *testing.T) {
	t.Parallel()
	rs := startRedisServer(t)
	mc := startServer(t, "pool", 1).client(2)
	names, err := mc.Do(ctx(t), "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 100 {
		t.Fatalf("COMMAND LIST names %d commands", len(names))
	}
	compared := 0
	for _, name := range names {
		want := commandInfo(t, rs.Do(ctx(t), "COMMAND", "INFO", name).Val())
		if want == nil {
			continue // redis-server has no such command
		}
		got := commandInfo(t, mc.Do(ctx(t), "COMMAND", "INFO", name).Val())
		compareCommandInfo(t, name, want, got)
		compared++
	}
	if compared == 0 {
		t.Fatal("no command compared")
	}
}

// commandInfo is the one entry of a COMMAND INFO reply, nil for an
// unknown command.
func commandInfo(t *testing.T, reply any) []any {
	t.Helper()
	entries, ok := reply.([]any)
	if !ok || len(entries) != 1 {
		t.Fatalf("COMMAND INFO replied %#v", reply)
	}
	entry, _ := entries[0].([]any)
	return entry
}

// compareCommandInfo compares the first nine fields of two COMMAND INFO
// entries, then their subcommands' by name.
func compareCommandInfo(t *testing.T, name string, want, got []any) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: moond has no COMMAND INFO entry", name)
		return
	}
	for i, field := range []string{"name", "arity", "flags", "first key", "last key", "step", "ACL categories", "tips", "key specs"} {
		if w, g := fmt.Sprint(want[i]), fmt.Sprint(got[i]); w != g {
			t.Errorf("%s %s: redis-server %s, moond %s", name, field, w, g)
		}
	}
	wantSubs, gotSubs := subcommandInfos(want), subcommandInfos(got)
	for sub, g := range gotSubs {
		if w, ok := wantSubs[sub]; ok {
			compareCommandInfo(t, sub, w, g)
		} else {
			t.Errorf("%s: redis-server has no subcommand %s", name, sub)
		}
	}
}

// subcommandInfos indexes the subcommand entries of a COMMAND INFO entry
// by name.
func subcommandInfos(entry []any) map[string][]any {
	out := map[string][]any{}
	if len(entry) < 10 {
		return out
	}
	subs, _ := entry[9].([]any)
	for _, s := range subs {
		if sub, ok := s.([]any); ok && len(sub) > 0 {
			out[fmt.Sprint(sub[0])] = sub
		}
	}
	return out
}
