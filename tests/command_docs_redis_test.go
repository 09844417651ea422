package tests

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestCommandDocsMatchRedisServer compares, in RESP2 and RESP3, the bytes
// of moond's COMMAND DOCS and COMMAND INFO replies for every command and
// subcommand moond has that has no subcommands of its own with
// redis-server 7.0's. A container's entry (CONFIG, CLIENT, ...) lists only
// the subcommands moond has, so it is compared less its subcommands, which
// are compared on their own.
func TestCommandDocsMatchRedisServer(t *testing.T) {
	t.Parallel()
	rs := startRedisServer(t)
	ms := startServer(t, "pool", 1)
	mc := ms.client(2)
	names, err := mc.Do(ctx(t), "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	for _, name := range names {
		subs := subcommandInfos(commandInfo(t, mc.Do(ctx(t), "COMMAND", "INFO", name).Val()))
		if len(subs) == 0 {
			leaves = append(leaves, name)
			continue
		}
		compareContainerDocs(t, rs.Do(ctx(t), "COMMAND", "DOCS", name).Val(), mc.Do(ctx(t), "COMMAND", "DOCS", name).Val(), name)
		for sub := range subs {
			leaves = append(leaves, sub)
		}
	}
	if len(leaves) < 200 {
		t.Fatalf("only %d commands and subcommands to compare", len(leaves))
	}
	for _, proto := range []int{2, 3} {
		r := dialRaw(t, rs.Options().Addr, "redis-server", proto)
		m := dialRaw(t, ms.addr(), "moond", proto)
		for _, name := range leaves {
			for _, sub := range []string{"DOCS", "INFO"} {
				want, got := rawCall(t, r, "COMMAND", sub, name), rawCall(t, m, "COMMAND", sub, name)
				if want != got {
					t.Errorf("RESP%d COMMAND %s %s:\nredis-server %q\nmoond        %q", proto, sub, name, want, got)
				}
			}
		}
	}
}

// rawCall sends one command and reads its whole raw reply.
func rawCall(t *testing.T, rc *rawClient, args ...string) string {
	t.Helper()
	rc.send(args...)
	reply, err := rc.read(5 * time.Second)
	if err != nil {
		t.Fatalf("%s %v: %v", rc.name, args, err)
	}
	return reply
}

// compareContainerDocs compares two RESP2 COMMAND DOCS replies for the
// container name, less the subcommands, and checks that moond's names the
// subcommands moond has.
func compareContainerDocs(t *testing.T, want, got any, name string) {
	t.Helper()
	wantFields, wantSubs := docsEntry(t, want)
	gotFields, gotSubs := docsEntry(t, got)
	if w, g := fmt.Sprint(wantFields), fmt.Sprint(gotFields); w != g {
		t.Errorf("COMMAND DOCS %s:\nredis-server %s\nmoond        %s", name, w, g)
	}
	for _, sub := range gotSubs {
		if !slices.Contains(wantSubs, sub) {
			t.Errorf("COMMAND DOCS %s: redis-server has no subcommand %s", name, sub)
		}
	}
	if len(gotSubs) == 0 {
		t.Errorf("COMMAND DOCS %s lists no subcommands", name)
	}
}

// docsEntry splits the one entry of a RESP2 COMMAND DOCS reply into its
// fields less "subcommands" and the names of its subcommands.
func docsEntry(t *testing.T, reply any) (fields []any, subs []string) {
	t.Helper()
	top, ok := reply.([]any)
	if !ok || len(top) != 2 {
		t.Fatalf("COMMAND DOCS replied %#v", reply)
	}
	entry, _ := top[1].([]any)
	for i := 0; i+1 < len(entry); i += 2 {
		if entry[i] != "subcommands" {
			fields = append(fields, entry[i], entry[i+1])
			continue
		}
		list, _ := entry[i+1].([]any)
		for j := 0; j < len(list); j += 2 {
			subs = append(subs, fmt.Sprint(list[j]))
		}
	}
	return fields, subs
}
