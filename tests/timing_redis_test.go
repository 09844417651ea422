package tests

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// timingScript is run against redis-server 7.0 and moond: SLOWLOG and
// LATENCY replies whose shapes (and error texts) must agree.
var timingScript = [][]any{
	{"config", "set", "slowlog-log-slower-than", 0},
	{"slowlog", "reset"},
	{"set", "foo", "bar"},
	{"slowlog", "get", 1},
	{"slowlog", "len"},
	{"slowlog", "get", -2},
	{"slowlog", "get", "x"},
	{"slowlog", "len", "x"},
	{"slowlog", "foo"},
	{"slowlog", "help"},
	{"config", "set", "slowlog-log-slower-than", -2},
	{"config", "set", "slowlog-max-len", -1},
	{"config", "get", "slowlog-max-len"},
	{"config", "set", "slowlog-log-slower-than", 1000000},
	{"config", "set", "latency-monitor-threshold", 100},
	{"latency", "reset"},
	{"debug", "sleep", 0.15},
	{"latency", "latest"},
	{"latency", "history", "command"},
	{"latency", "history", "nosuch"},
	{"latency", "reset", "nosuch"},
	{"latency", "graph", "nosuch"},
	{"latency", "help", "x"},
	{"latency", "history"},
	{"latency", "foo"},
	{"latency", "help"},
	{"config", "resetstat"},
	{"set", "foo", "bar"},
	{"latency", "histogram", "set"},
	{"latency", "histogram", "nosuch"},
	{"client", "id"},
	{"latency", "histogram", "client"},
	{"latency", "histogram", "client|id", "config|resetstat"},
	{"config", "set", "latency-monitor-threshold", -1},
	{"config", "set", "latency-tracking-info-percentiles", "50 101"},
	{"config", "set", "latency-tracking-info-percentiles", "x"},
	{"config", "set", "latency-tracking-info-percentiles", "99.9 50"},
	{"config", "get", "latency-tracking-info-percentiles"},
	{"config", "get", "latency-tracking"},
	{"latency", "reset"},
}

// addrLike matches a client's address in a slow log entry.
var addrLike = regexp.MustCompile(`^127\.0\.0\.1:\d+$`)

// shapeOf writes a reply with what differs between two servers (numbers,
// addresses) abstracted: integers as "int", addresses as "addr", maps
// sorted by key.
func shapeOf(v any) string {
	switch v := v.(type) {
	case int64:
		return "int"
	case string:
		if addrLike.MatchString(v) {
			return "addr"
		}
		return fmt.Sprintf("%q", v)
	case []any:
		s := make([]string, len(v))
		for i, e := range v {
			s[i] = shapeOf(e)
		}
		return "[" + strings.Join(s, " ") + "]"
	case map[any]any:
		s := make([]string, 0, len(v))
		for k, e := range v {
			s = append(s, shapeOf(k)+":"+shapeOf(e))
		}
		sort.Strings(s)
		return "{" + strings.Join(s, " ") + "}"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// runTimingScript runs timingScript on one connection and returns each
// step's reply shape.
func runTimingScript(t *testing.T, addr string, proto int) []string {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: true})
	defer c.Close()
	conn := c.Conn()
	defer conn.Close()
	var out []string
	for _, cmd := range timingScript {
		v, err := conn.Do(ctx(t), cmd...).Result()
		step := fmt.Sprint(cmd) + " -> "
		if err != nil && err != redis.Nil {
			out = append(out, step+"error "+err.Error())
			continue
		}
		out = append(out, step+shapeOf(v))
	}
	return out
}

// TestTimingRepliesMatchRedisServer compares SLOWLOG's and LATENCY's reply
// shapes and error texts with redis-server 7.0's, in RESP2 and RESP3.
func TestTimingRepliesMatchRedisServer(t *testing.T) {
	rs := startRedisServer(t, "--enable-debug-command", "yes")
	s := startServer(t, "pool", 2)
	for _, proto := range []int{2, 3} {
		want := runTimingScript(t, rs.Options().Addr, proto)
		got := runTimingScript(t, s.addr(), proto)
		for i := range max(len(want), len(got)) {
			if at(want, i) != at(got, i) {
				t.Errorf("RESP%d step %d:\n redis: %s\n moond: %s", proto, i, at(want, i), at(got, i))
			}
		}
	}
}
