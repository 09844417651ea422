package server

import (
	"reflect"
	"strings"
	"testing"
)

func argsOf(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

// TestSlowlogArgvTrims checks Redis's limits: 32 arguments at most, the
// last saying how many more, and 128 bytes per argument.
func TestSlowlogArgvTrims(t *testing.T) {
	args := [][]byte{[]byte("sadd"), []byte("set")}
	for i := 3; i <= 33; i++ {
		args = append(args, []byte(strings.Repeat("x", i%3+1)))
	}
	argv := slowlogArgv(args)
	if len(argv) != 32 || argv[31] != "... (2 more arguments)" {
		t.Errorf("%d args kept, last %q; want 32, %q", len(argv), argv[len(argv)-1], "... (2 more arguments)")
	}
	long := slowlogArgv(argsOf("sadd", "set", strings.Repeat("A", 129)))
	if want := strings.Repeat("A", 128) + "... (1 more bytes)"; long[2] != want {
		t.Errorf("long argument kept as %q, want %q", long[2], want)
	}
	exact := slowlogArgv(argsOf("get", strings.Repeat("A", 128)))
	if exact[1] != strings.Repeat("A", 128) {
		t.Errorf("a 128-byte argument was cut: %q", exact[1])
	}
}

// TestSlowlogRedacts checks that passwords never reach the log.
func TestSlowlogRedacts(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"AUTH", "pw"}, []string{"AUTH", "(redacted)"}},
		{[]string{"auth", "user", "pw"}, []string{"auth", "(redacted)", "(redacted)"}},
		{[]string{"hello", "3", "AUTH", "u", "p", "SETNAME", "n"}, []string{"hello", "3", "AUTH", "(redacted)", "(redacted)", "SETNAME", "n"}},
		{[]string{"config", "set", "requirepass", "pw", "maxclients", "10"}, []string{"config", "set", "requirepass", "(redacted)", "maxclients", "10"}},
		{[]string{"CONFIG", "SET", "masterauth", "pw"}, []string{"CONFIG", "SET", "masterauth", "(redacted)"}},
		{[]string{"config", "get", "requirepass"}, []string{"config", "get", "requirepass"}},
		{[]string{"migrate", "h", "1", "key", "9", "5000"}, []string{"migrate", "h", "1", "key", "9", "5000"}},
		{[]string{"migrate", "h", "1", "key", "9", "5000", "AUTH", "pw"}, []string{"migrate", "h", "1", "key", "9", "5000", "AUTH", "(redacted)"}},
		{[]string{"migrate", "h", "1", "", "9", "5000", "REPLACE", "AUTH2", "u", "pw", "KEYS", "auth", "k"},
			[]string{"migrate", "h", "1", "", "9", "5000", "REPLACE", "AUTH2", "(redacted)", "(redacted)", "KEYS", "auth", "k"}},
	} {
		var args [][]byte
		for _, a := range tc.in {
			args = append(args, []byte(a))
		}
		if got := slowlogArgv(args); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q logged as %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSlowRingKeepsNewest checks the ring's bound, its order and the merge
// of several shards' rings by id.
func TestSlowRingKeepsNewest(t *testing.T) {
	var a, b slowRing
	for id := int64(0); id < 10; id++ {
		r := &a
		if id%3 == 0 {
			r = &b
		}
		r.add(&slowEntry{id: id}, 4)
	}
	if got := ids(a.newest(4)); a.len(4) != 4 || !reflect.DeepEqual(got, []int64{8, 7, 5, 4}) {
		t.Fatalf("ring a shows %d: %v, want 8 7 5 4, the newest 4", a.len(4), got)
	}
	if len(a.entries) > 8 {
		t.Errorf("ring a keeps %d entries at max 4, want at most 8", len(a.entries))
	}
	merged := mergeSlow([][]*slowEntry{a.newest(5), b.newest(5)}, 5)
	if got, want := ids(merged), []int64{9, 8, 7, 6, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	a.trim(0)
	if len(a.entries) != 0 {
		t.Errorf("trim(0) left %d entries", len(a.entries))
	}
}

func ids(es []*slowEntry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.id
	}
	return out
}
