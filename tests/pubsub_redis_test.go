package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Pub/Sub compared with redis-server 7.0, reply for reply (the harness of
// blocking_redis_test.go): the cases of Redis's tests/unit/pubsub.tcl and
// pubsubshard.tcl (keyspace notifications aside), in RESP2 and RESP3, on
// moond with one and two shards. A deferred client reads its confirmation
// before another client publishes, so the counts are exact.
var pubsubRedisScenarios = []blockingScenario{
	{"PUBLISH/SUBSCRIBE basics", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "chan1", "chan2")
		e.read(rd)
		e.read(rd)
		e.do("PUBLISH", "chan1", "hello")
		e.do("PUBLISH", "chan2", "world")
		e.read(rd)
		e.read(rd)
		e.send(rd, "UNSUBSCRIBE", "chan1")
		e.read(rd)
		e.do("PUBLISH", "chan1", "hello")
		e.do("PUBLISH", "chan2", "world")
		e.read(rd)
		e.send(rd, "UNSUBSCRIBE", "chan2")
		e.read(rd)
		e.do("PUBLISH", "chan1", "hello")
		e.do("PUBLISH", "chan2", "world")
	}},
	{"PUBLISH/SUBSCRIBE with two clients", func(e *benv) {
		rd1, rd2 := e.client(), e.client()
		e.send(rd1, "SUBSCRIBE", "chan1")
		e.read(rd1)
		e.send(rd2, "SUBSCRIBE", "chan1")
		e.read(rd2)
		e.do("PUBLISH", "chan1", "hello")
		e.read(rd1)
		e.read(rd2)
	}},
	{"PUBLISH/SUBSCRIBE after UNSUBSCRIBE without arguments", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "chan1", "chan2", "chan3")
		e.read(rd)
		e.read(rd)
		e.read(rd)
		e.send(rd, "UNSUBSCRIBE")
		readUnordered(e, rd, 3)
		e.do("PUBLISH", "chan1", "hello")
		e.do("PUBLISH", "chan2", "hello")
		e.do("PUBLISH", "chan3", "hello")
	}},
	{"SUBSCRIBE to one channel more than once", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "chan1", "chan1", "chan1")
		e.read(rd)
		e.read(rd)
		e.read(rd)
		e.do("PUBLISH", "chan1", "hello")
		e.read(rd)
	}},
	{"UNSUBSCRIBE from non-subscribed channels", func(e *benv) {
		rd := e.client()
		e.send(rd, "UNSUBSCRIBE", "foo", "bar", "quux")
		e.read(rd)
		e.read(rd)
		e.read(rd)
	}},
	{"PUBLISH/PSUBSCRIBE basics", func(e *benv) {
		rd := e.client()
		e.send(rd, "PSUBSCRIBE", "foo.*", "bar.*")
		e.read(rd)
		e.read(rd)
		e.do("PUBLISH", "foo.1", "hello")
		e.do("PUBLISH", "bar.1", "hello")
		e.do("PUBLISH", "foo1", "hello")
		e.do("PUBLISH", "barfoo.1", "hello")
		e.do("PUBLISH", "qux.1", "hello")
		e.read(rd)
		e.read(rd)
		e.send(rd, "PUNSUBSCRIBE", "foo.*")
		e.read(rd)
		e.do("PUBLISH", "foo.1", "hello")
		e.do("PUBLISH", "bar.1", "hello")
		e.read(rd)
		e.send(rd, "PUNSUBSCRIBE", "bar.*")
		e.read(rd)
		e.do("PUBLISH", "foo.1", "hello")
		e.do("PUBLISH", "bar.1", "hello")
	}},
	{"PUBLISH/PSUBSCRIBE with two clients", func(e *benv) {
		rd1, rd2 := e.client(), e.client()
		e.send(rd1, "PSUBSCRIBE", "chan.*")
		e.read(rd1)
		e.send(rd2, "PSUBSCRIBE", "chan.*")
		e.read(rd2)
		e.do("PUBLISH", "chan.foo", "hello")
		e.read(rd1)
		e.read(rd2)
	}},
	{"PUBLISH/PSUBSCRIBE after PUNSUBSCRIBE without arguments", func(e *benv) {
		rd := e.client()
		e.send(rd, "PSUBSCRIBE", "chan1.*", "chan2.*", "chan3.*")
		e.read(rd)
		e.read(rd)
		e.read(rd)
		e.send(rd, "PUNSUBSCRIBE")
		e.read(rd)
		e.read(rd)
		e.read(rd)
		e.do("PUBLISH", "chan1.hi", "hello")
		e.do("PUBLISH", "chan2.hi", "hello")
		e.do("PUBLISH", "chan3.hi", "hello")
	}},
	{"PUNSUBSCRIBE from non-subscribed channels", func(e *benv) {
		rd := e.client()
		e.send(rd, "PUNSUBSCRIBE", "foo.*", "bar.*", "quux.*")
		e.read(rd)
		e.read(rd)
		e.read(rd)
	}},
	{"Mix SUBSCRIBE and PSUBSCRIBE", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "foo.bar")
		e.read(rd)
		e.send(rd, "PSUBSCRIBE", "foo.*")
		e.read(rd)
		e.do("PUBLISH", "foo.bar", "hello")
		e.read(rd)
		e.read(rd)
	}},
	{"PUNSUBSCRIBE and UNSUBSCRIBE should always reply", func(e *benv) {
		e.do("PUNSUBSCRIBE")
		e.do("UNSUBSCRIBE")
		e.do("PUNSUBSCRIBE")
		e.do("UNSUBSCRIBE")
		e.do("SUNSUBSCRIBE")
	}},
	{"glob patterns", func(e *benv) {
		rd := e.client()
		e.send(rd, "PSUBSCRIBE", "h?llo", "h[^e]llo", "h[a-b]llo", `h\*llo`, "*")
		for range 5 {
			e.read(rd)
		}
		for _, ch := range []string{"hello", "hallo", "hxllo", "h*llo", "hllo", "heeello"} {
			e.do("PUBLISH", ch, "m")
			readUnordered(e, rd, int(e.lastInt()))
		}
	}},
	{"subscribed mode in RESP2, any command in RESP3", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "ch")
		e.read(rd)
		for _, cmd := range [][]string{{"GET", "k"}, {"CLIENT", "GETNAME"}, {"CONFIG", "GET", "x"}, {"PING"},
			{"PING", "hi"}, {"PSUBSCRIBE", "p*"}, {"SSUBSCRIBE", "s"}, {"SUNSUBSCRIBE"}, {"PUNSUBSCRIBE"}, {"SET", "k", "v"},
			{"MULTI"}, {"PUBLISH", "other", "x"}, {"UNSUBSCRIBE"}, {"GET", "k"}, {"PING"}, {"EXEC"},
			{"GET", "k"}} {
			e.send(rd, cmd...)
			e.read(rd)
		}
		e.send(rd, "SSUBSCRIBE", "s")
		e.read(rd)
		e.send(rd, "ECHO", "x")
		e.read(rd)
		e.send(rd, "RESET")
		e.read(rd)
		e.send(rd, "ECHO", "x")
		e.read(rd)
		e.do("PUBSUB", "SHARDNUMSUB", "s")
	}},
	{"QUIT while subscribed", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "ch")
		e.read(rd)
		e.send(rd, "QUIT")
		e.read(rd)
		e.until("the subscriber gone", func() bool { return strings.Contains(e.quiet("PUBSUB", "NUMSUB", "ch"), ":0\r\n") })
		e.do("PUBLISH", "ch", "x")
	}},
	{"PUBSUB introspection", func(e *benv) {
		rd1, rd2 := e.client(), e.client()
		e.send(rd1, "SUBSCRIBE", "chan1", "chan2")
		e.read(rd1)
		e.read(rd1)
		e.send(rd2, "SUBSCRIBE", "chan1")
		e.read(rd2)
		e.send(rd2, "PSUBSCRIBE", "chan*", "x*")
		e.read(rd2)
		e.read(rd2)
		e.send(rd1, "PSUBSCRIBE", "chan*")
		e.read(rd1)
		e.send(rd1, "SSUBSCRIBE", "s1")
		e.read(rd1)
		e.do("PUBSUB", "NUMSUB", "chan1", "chan2", "chan3")
		e.do("PUBSUB", "NUMSUB")
		e.do("PUBSUB", "NUMPAT")
		e.do("PUBSUB", "CHANNELS", "*2")
		e.do("PUBSUB", "CHANNELS", "nomatch*")
		e.do("PUBSUB", "SHARDCHANNELS")
		e.do("PUBSUB", "SHARDNUMSUB", "s1", "chan1")
		e.do("PUBSUB", "SHARDNUMSUB")
		e.do("PUBSUB", "CHANNELS", "a", "b")
		e.do("PUBSUB", "NUMPAT", "x")
		e.do("PUBSUB", "HELP")
		e.do("PUBSUB", "nosuch")
		e.do("PUBSUB")
		e.do("PUBLISH", "chan1")
		e.do("SPUBLISH", "chan1", "a", "b")
		e.do("SUBSCRIBE")
		e.do("PUBLISH", "chan1", "m")
		e.read(rd1)
		e.read(rd1)
		e.read(rd2)
		e.read(rd2)
		info := e.quiet("INFO", "stats")
		e.note("pubsub_channels:%d pubsub_patterns:%d pubsubshard_channels:%d", rawInfoInt(info, "pubsub_channels"),
			rawInfoInt(info, "pubsub_patterns"), rawInfoInt(info, "pubsubshard_channels"))
	}},
	{"SPUBLISH/SSUBSCRIBE basics", func(e *benv) {
		rd := e.client()
		e.send(rd, "SSUBSCRIBE", "chan1")
		e.read(rd)
		e.send(rd, "SSUBSCRIBE", "chan2")
		e.read(rd)
		e.do("SPUBLISH", "chan1", "hello")
		e.do("SPUBLISH", "chan2", "world")
		e.read(rd)
		e.read(rd)
		e.send(rd, "SUNSUBSCRIBE", "chan1")
		e.read(rd)
		e.do("SPUBLISH", "chan1", "hello")
		e.do("SPUBLISH", "chan2", "world")
		e.read(rd)
		e.send(rd, "SUNSUBSCRIBE", "chan2")
		e.read(rd)
		e.do("SPUBLISH", "chan1", "hello")
		e.do("SPUBLISH", "chan2", "world")
	}},
	{"SPUBLISH/SSUBSCRIBE with PUBLISH/SUBSCRIBE", func(e *benv) {
		rd1, rd2 := e.client(), e.client()
		e.send(rd1, "SSUBSCRIBE", "chan1", "chan1")
		e.read(rd1)
		e.read(rd1)
		e.send(rd2, "SUBSCRIBE", "chan1")
		e.read(rd2)
		e.send(rd2, "PSUBSCRIBE", "*")
		e.read(rd2)
		e.do("SPUBLISH", "chan1", "hello")
		e.do("PUBLISH", "chan1", "hello")
		e.read(rd1)
		e.read(rd2)
		e.read(rd2)
		e.do("PUBSUB", "SHARDNUMSUB", "chan1")
		e.do("PUBSUB", "NUMSUB", "chan1")
		e.do("PUBSUB", "SHARDCHANNELS")
		e.do("PUBSUB", "CHANNELS")
		e.send(rd1, "SUNSUBSCRIBE")
		e.read(rd1)
		e.send(rd1, "SUNSUBSCRIBE", "foo")
		e.read(rd1)
	}},
	{"PUBLISH inside MULTI, SUBSCRIBE refused", func(e *benv) {
		rd := e.client()
		e.send(rd, "SUBSCRIBE", "ch")
		e.read(rd)
		e.do("MULTI")
		e.do("PUBLISH", "ch", "in-multi")
		e.do("PUBLISH", "nobody", "x")
		e.do("EXEC")
		e.read(rd)
	}},
	{"RESP3 publisher subscribed to its own channel", func(e *benv) {
		if e.proto != 3 {
			return
		}
		e.do("SUBSCRIBE", "me")
		e.ctl.send("PUBLISH", "me", "hi")
		for range 2 {
			r, _ := e.ctl.read(5 * time.Second)
			e.note("ctl< %q", r)
		}
		e.do("SET", "k", "v")
		e.do("UNSUBSCRIBE")
	}},
}

// lastInt is the integer of the control client's last reply (0 if none).
func (e *benv) lastInt() int64 {
	if len(e.log) == 0 {
		return 0
	}
	var n int64
	last := e.log[len(e.log)-1]
	if i := strings.Index(last, `:`); i >= 0 {
		fmt.Sscanf(strings.TrimPrefix(last[i:], `:`), "%d", &n)
	}
	return n
}

// readUnordered records n replies of a deferred client sorted: the order
// of UNSUBSCRIBE's replies without arguments, and of a message's pattern
// deliveries, is unspecified in Redis (a dict's iteration order).
func readUnordered(e *benv, rc *rawClient, n int) {
	var got []string
	for range n {
		r, err := rc.read(5 * time.Second)
		if err != nil {
			got = append(got, fmt.Sprintf("%q (%v)", r, err))
			continue
		}
		got = append(got, fmt.Sprintf("%q", unsubCountless(r)))
	}
	slices.Sort(got)
	e.note("%s< unordered %s", rc.name, strings.Join(got, " "))
}

// unsubCountless drops the trailing count of an unsubscribe reply: it
// depends on the order of the replies.
func unsubCountless(r string) string {
	if strings.Contains(r, "unsubscribe\r\n") {
		if i := strings.LastIndex(strings.TrimSuffix(r, "\r\n"), "\r\n"); i >= 0 {
			return r[:i+2]
		}
	}
	return r
}

// TestPubSubMatchesRedisServer compares the Pub/Sub scenarios with
// redis-server 7.0 (skipped when none is installed).
func TestPubSubMatchesRedisServer(t *testing.T) {
	t.Parallel()
	matchRedisServer(t, pubsubRedisScenarios)
}
