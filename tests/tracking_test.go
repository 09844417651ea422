package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CLIENT TRACKING end to end, over raw connections so that the push
// messages and their order with the replies are seen as sent: on both
// backends, with one and two shards, where the keys a client reads live
// on either shard.

// invalidateMsg is the RESP3 push of an invalidation of keys.
func invalidateMsg(keys ...string) string {
	var b strings.Builder
	b.WriteString(">2\r\n$10\r\ninvalidate\r\n")
	fmt.Fprintf(&b, "*%d\r\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(k), k)
	}
	return b.String()
}

// redirectMsg is the RESP2 message a redirect target subscribed to
// __redis__:invalidate receives.
func redirectMsg(keys ...string) string {
	var b strings.Builder
	b.WriteString("*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n")
	fmt.Fprintf(&b, "*%d\r\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(k), k)
	}
	return b.String()
}

// mustRead reads one reply and fails unless it is want.
func mustRead(t *testing.T, rc *rawClient, want string) {
	t.Helper()
	got, err := rc.read(10 * time.Second)
	if err != nil || got != want {
		t.Fatalf("%s: got %q (%v), want %q", rc.name, got, err, want)
	}
}

// do sends a command and checks its reply.
func do(t *testing.T, rc *rawClient, want string, args ...string) {
	t.Helper()
	rc.send(args...)
	mustRead(t, rc, want)
}

// readAll reads n replies within the deadline, in the order they came.
func readN(t *testing.T, rc *rawClient, n int) []string {
	t.Helper()
	var got []string
	for range n {
		r, err := rc.read(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: after %q: %v", rc.name, got, err)
		}
		got = append(got, r)
	}
	return got
}

// quiet checks that nothing more arrives on rc: a PING's reply is next.
func quiet(t *testing.T, rc *rawClient, pong string) {
	t.Helper()
	rc.send("PING")
	mustRead(t, rc, pong)
}

func clientID(t *testing.T, rc *rawClient) string {
	t.Helper()
	rc.send("CLIENT", "ID")
	r, err := rc.read(5 * time.Second)
	if err != nil || !strings.HasPrefix(r, ":") {
		t.Fatalf("CLIENT ID: %q %v", r, err)
	}
	return strings.TrimSpace(r[1:])
}

// trackingPair opens a RESP3 connection to track keys with and a RESP2
// one to write them, both closed when the test ends.
func trackingPair(t *testing.T, s *server) (tr, wr *rawClient) {
	tr = dialRaw(t, s.addr(), "tracker", 3)
	wr = dialRaw(t, s.addr(), "writer", 2)
	t.Cleanup(func() {
		tr.c.Close()
		wr.c.Close()
	})
	return tr, wr
}

func TestTrackingInvalidatesReadKeysOnWrite(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr, wr := trackingPair(t, s)
		k0, k1, other := keyOnShard("k", 0), keyOnShard("k", 1), keyOnShard("o", 1)
		do(t, wr, "+OK\r\n", "MSET", k0, "a", k1, "b", other, "c")
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on")
		do(t, tr, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "MGET", k0, k1)
		// A key not read is not invalidated; each read key is, once.
		do(t, wr, "+OK\r\n", "SET", other, "x")
		do(t, wr, "+OK\r\n", "SET", k1, "y")
		mustRead(t, tr, invalidateMsg(k1))
		do(t, wr, ":1\r\n", "DEL", k0)
		mustRead(t, tr, invalidateMsg(k0))
		do(t, wr, "+OK\r\n", "SET", k1, "z") // no longer tracked: not read since
		quiet(t, tr, "+PONG\r\n")
		// The client's own write: the invalidation comes after the reply.
		do(t, tr, "$1\r\nz\r\n", "GET", k1)
		do(t, tr, ":1\r\n", "DEL", k1)
		mustRead(t, tr, invalidateMsg(k1))
		// Inside a transaction too: after EXEC's reply.
		do(t, tr, "_\r\n", "GET", k0) // a missing key is tracked as well
		do(t, tr, "+OK\r\n", "MULTI")
		do(t, tr, "+QUEUED\r\n", "INCR", k0)
		do(t, tr, "+QUEUED\r\n", "GET", k1)
		do(t, tr, "*2\r\n:1\r\n_\r\n", "EXEC")
		mustRead(t, tr, invalidateMsg(k0))
		quiet(t, tr, "+PONG\r\n")
	})
}

func TestTrackingRedirectToARESP2Subscriber(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr := dialRaw(t, s.addr(), "tracker", 2)
		defer tr.c.Close()
		rd := dialRaw(t, s.addr(), "redirect", 2)
		defer rd.c.Close()
		wr := dialRaw(t, s.addr(), "writer", 2)
		defer wr.c.Close()
		id := clientID(t, rd)
		do(t, rd, "*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n", "SUBSCRIBE", "__redis__:invalidate")
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on", "REDIRECT", id)
		do(t, tr, ":"+id+"\r\n", "CLIENT", "GETREDIR")
		k0, k1 := keyOnShard("r", 0), keyOnShard("r", 1)
		do(t, tr, "*2\r\n$-1\r\n$-1\r\n", "MGET", k0, k1)
		do(t, wr, "+OK\r\n", "SET", k0, "1")
		mustRead(t, rd, redirectMsg(k0))
		do(t, tr, ":1\r\n", "INCR", k1)
		mustRead(t, rd, redirectMsg(k1))
		// The tracking client itself gets nothing in RESP2.
		quiet(t, tr, "+PONG\r\n")
		// A flush: one null for the client, whatever the shards.
		do(t, wr, "+OK\r\n", "FLUSHALL")
		mustRead(t, rd, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n")
		quiet(t, rd, "*2\r\n$4\r\npong\r\n$0\r\n\r\n")
	})
}

func TestTrackingRedirectBroken(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr := dialRaw(t, s.addr(), "tracker", 3)
		defer tr.c.Close()
		rd := dialRaw(t, s.addr(), "redirect", 2)
		wr := s.client(2)
		id := clientID(t, rd)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on", "REDIRECT", id)
		k := keyOnShard("b", 1)
		do(t, tr, "_\r\n", "GET", k)
		rd.send("QUIT")
		mustRead(t, rd, "+OK\r\n")
		rd.c.Close()
		waitFor(t, "the redirect client to leave", func() bool {
			l, _ := wr.ClientList(ctx(t)).Result()
			return !strings.Contains(l, "id="+id+" ")
		})
		if err := wr.Set(ctx(t), k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		mustRead(t, tr, ">2\r\n$21\r\ntracking-redir-broken\r\n:"+id+"\r\n")
		tr.send("CLIENT", "TRACKINGINFO")
		got, _ := tr.read(5 * time.Second)
		if !strings.Contains(got, "broken_redirect") || !strings.Contains(got, ":"+id+"\r\n") {
			t.Fatalf("TRACKINGINFO: %q", got)
		}
		tr.send("CLIENT", "INFO")
		got, _ = tr.read(5 * time.Second)
		if !strings.Contains(got, "flags=tR ") || !strings.Contains(got, "redir="+id+" ") {
			t.Fatalf("CLIENT INFO: %q", got)
		}
	})
}

func TestTrackingBroadcastPrefixesAndNoloop(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr, wr := trackingPair(t, s)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "b:", "NOLOOP")
		do(t, tr, "+OK\r\n", "SET", "a:mine", "1") // NOLOOP: not broadcast to itself
		keys := []string{keyOnShard("a:", 0), keyOnShard("a:", 1), keyOnShard("b:", 0), keyOnShard("b:", 1)}
		for _, k := range keys {
			do(t, wr, "+OK\r\n", "SET", k, "1")
		}
		do(t, wr, "+OK\r\n", "SET", "c:1", "1") // no prefix of the client's
		var seen []string
		for len(seen) < len(keys) {
			seen = append(seen, pushKeys(t, readN(t, tr, 1)[0])...)
		}
		slices.Sort(seen)
		want := slices.Clone(keys)
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Fatalf("broadcast keys %q, want %q", seen, want)
		}
		quiet(t, tr, "+PONG\r\n")
		// Prefixes of one client must not overlap; a switch of mode needs OFF first.
		do(t, tr, "-ERR Prefix 'a:x' overlaps with an existing prefix 'a:'. Prefixes for a single client must not overlap.\r\n",
			"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:x")
		do(t, tr, "-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.\r\n",
			"CLIENT", "TRACKING", "on")
		tr.send("INFO", "stats")
		got, _ := tr.read(5 * time.Second)
		if !strings.Contains(got, "tracking_total_prefixes:2\r\n") {
			t.Fatalf("INFO stats: %q", got)
		}
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "off")
		tr.send("INFO", "stats")
		got, _ = tr.read(5 * time.Second)
		if !strings.Contains(got, "tracking_total_prefixes:0\r\n") {
			t.Fatalf("INFO stats after OFF: %q", got)
		}
		do(t, wr, "+OK\r\n", "SET", keys[0], "2")
		quiet(t, tr, "+PONG\r\n")
	})
}

// pushKeys returns the keys of an invalidate push.
func pushKeys(t *testing.T, m string) []string {
	t.Helper()
	if !strings.HasPrefix(m, ">2\r\n$10\r\ninvalidate\r\n*") {
		t.Fatalf("not an invalidation: %q", m)
	}
	lines := strings.Split(strings.TrimSuffix(m, "\r\n"), "\r\n")
	var keys []string
	for i := 4; i+1 < len(lines); i += 2 {
		keys = append(keys, lines[i+1])
	}
	return keys
}

func TestTrackingOptinOptout(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr, wr := trackingPair(t, s)
		k1, k2 := keyOnShard("p", 1), keyOnShard("q", 0)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on", "OPTIN")
		do(t, tr, "_\r\n", "GET", k1) // not cached: no CACHING yes
		do(t, tr, "+OK\r\n", "CLIENT", "CACHING", "yes")
		do(t, tr, "_\r\n", "GET", k2)
		do(t, tr, "_\r\n", "GET", k1) // CACHING covered one command only
		do(t, wr, "+OK\r\n", "MSET", k1, "1", k2, "2")
		mustRead(t, tr, invalidateMsg(k2))
		quiet(t, tr, "+PONG\r\n")
		do(t, tr, "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n", "CLIENT", "CACHING", "no")
		do(t, tr, "-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n",
			"CLIENT", "TRACKING", "on", "OPTOUT")
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "off")
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on", "OPTOUT")
		do(t, tr, "+OK\r\n", "CLIENT", "CACHING", "no")
		do(t, tr, "$1\r\n1\r\n", "GET", k1) // not cached
		do(t, tr, "$1\r\n2\r\n", "GET", k2)
		do(t, wr, "+OK\r\n", "MSET", k1, "3", k2, "4")
		mustRead(t, tr, invalidateMsg(k2))
		quiet(t, tr, "+PONG\r\n")
		tr.send("CLIENT", "TRACKINGINFO")
		if got, _ := tr.read(5 * time.Second); got != "%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$6\r\noptout\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n" {
			t.Fatalf("TRACKINGINFO: %q", got)
		}
	})
}

func TestTrackingExpiryInvalidates(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr, wr := trackingPair(t, s)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on")
		// Active expiry: nobody touches the key.
		// The TTLs are long enough that the tracker's GET comes before
		// them on a slow host (a -race build under load).
		k := keyOnShard("e", 1)
		do(t, wr, "+OK\r\n", "SET", k, "v", "PX", "1000")
		do(t, tr, "$1\r\nv\r\n", "GET", k)
		mustRead(t, tr, invalidateMsg(k))
		// Lazy expiry: the active cycle is off, a read deletes the key.
		do(t, wr, "+OK\r\n", "DEBUG", "SET-ACTIVE-EXPIRE", "0")
		k = keyOnShard("f", 0)
		do(t, wr, "+OK\r\n", "SET", k, "v", "PX", "1000")
		do(t, tr, "$1\r\nv\r\n", "GET", k)
		deadline := time.Now().Add(10 * time.Second)
		for {
			wr.send("EXISTS", k) // the lazy expiry happens here, once the TTL passed
			r, _ := wr.read(5 * time.Second)
			if r == ":0\r\n" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("key never expired")
			}
			time.Sleep(10 * time.Millisecond)
		}
		mustRead(t, tr, invalidateMsg(k))
		do(t, wr, "+OK\r\n", "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	})
}

func TestTrackingFlushAndSwapdbSendOneNull(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr, wr := trackingPair(t, s)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on")
		k := keyOnShard("g", 1)
		do(t, tr, "_\r\n", "GET", k)
		for _, cmd := range [][]string{{"FLUSHDB"}, {"FLUSHALL"}, {"SWAPDB", "0", "1"}} {
			do(t, wr, "+OK\r\n", cmd...)
			mustRead(t, tr, ">2\r\n$10\r\ninvalidate\r\n_\r\n")
			quiet(t, tr, "+PONG\r\n")
		}
		// The flushing client's own null comes after its reply.
		do(t, tr, "+OK\r\n", "FLUSHALL")
		mustRead(t, tr, ">2\r\n$10\r\ninvalidate\r\n_\r\n")
		tr.send("INFO", "stats")
		if got, _ := tr.read(5 * time.Second); !strings.Contains(got, "tracking_total_keys:0\r\n") {
			t.Fatalf("INFO after FLUSHALL: %q", got)
		}
	})
}

func TestTrackingTableMaxKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr := dialRaw(t, s.addr(), "tracker", 3)
		defer tr.c.Close()
		ctl := s.client(2)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on")
		const n = 250
		for i := range n {
			do(t, tr, "_\r\n", "GET", "key"+strconv.Itoa(i))
		}
		info, _ := ctl.Info(ctx(t), "stats").Result()
		if !strings.Contains(info, "tracking_total_keys:250\r\n") || !strings.Contains(info, "tracking_total_items:250\r\n") {
			t.Fatalf("INFO: %s", info)
		}
		if err := ctl.ConfigSet(ctx(t), "tracking-table-max-keys", "1").Err(); err != nil {
			t.Fatal(err)
		}
		// Every key but the one the limit allows is invalidated, once.
		seen := map[string]bool{}
		for range n - 1 {
			for _, k := range pushKeys(t, readN(t, tr, 1)[0]) {
				if seen[k] {
					t.Fatalf("%s invalidated twice", k)
				}
				seen[k] = true
			}
		}
		waitFor(t, "one key left", func() bool {
			info, _ := ctl.Info(ctx(t), "stats").Result()
			return strings.Contains(info, "tracking_total_keys:1\r\n")
		})
		quiet(t, tr, "+PONG\r\n")
	})
}

func TestTrackingCommandErrorsAndInfo(t *testing.T) {
	s := startServer(t, "uring", 2)
	tr := dialRaw(t, s.addr(), "tracker", 2)
	defer tr.c.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "TRACKING", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "PREFIX", "a"}, "-ERR PREFIX option requires BCAST mode to be enabled\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "OPTIN"}, "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"}, "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "REDIRECT", "999999"}, "-ERR The client ID you want redirect to does not exist\r\n"},
		{[]string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO"},
			"-ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for a single client must not overlap.\r\n"},
		{[]string{"CLIENT", "CACHING", "yes"}, "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n"},
		{[]string{"CLIENT", "GETREDIR"}, ":-1\r\n"},
		{[]string{"CLIENT", "TRACKINGINFO"}, "*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n"},
		{[]string{"CLIENT", "TRACKING", "on"}, "+OK\r\n"},
		{[]string{"CLIENT", "GETREDIR"}, ":0\r\n"},
		{[]string{"CLIENT", "CACHING", "yes"}, "-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n"},
	} {
		do(t, tr, c.want, c.args...)
	}
	ctl := s.client(2)
	info, _ := ctl.Info(ctx(t), "clients").Result()
	if !strings.Contains(info, "tracking_clients:1\r\n") {
		t.Fatalf("INFO clients: %s", info)
	}
	tr.send("CLIENT", "INFO")
	if got, _ := tr.read(5 * time.Second); !strings.Contains(got, "flags=t ") || !strings.Contains(got, "redir=0 ") {
		t.Fatalf("CLIENT INFO: %q", got)
	}
	do(t, tr, "+RESET\r\n", "RESET")
	waitFor(t, "no tracking client", func() bool {
		info, _ := ctl.Info(ctx(t), "clients").Result()
		return strings.Contains(info, "tracking_clients:0\r\n")
	})
}
