package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/moond-db/moond/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Redis Sentinel over moond (docs/DESIGN.md §3, "Sentinel"): real
// redis-sentinel 7.0 processes monitor a moond master with two moond
// replicas, fail over when the master is killed, and repoint the others.

const sentinelMaster = "mymaster"

// withConfigFile starts moond with an empty configuration file of its
// own, so that CONFIG REWRITE (in Sentinel's failover transaction) has a
// file to write, as a redis-server started from redis.conf has.
func withConfigFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "moond.conf")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startSentinels starts n Sentinels that monitor the master at maddr with
// the given quorum, and waits until each one found both replicas and the
// other Sentinels (through moond's INFO and __sentinel__:hello).
func startSentinels(t *testing.T, n, quorum int, maddr string) []*redistest.Sentinel {
	t.Helper()
	host, port := hostPort(t, maddr)
	p, _ := strconv.Atoi(port)
	m := redistest.Monitor{Name: sentinelMaster, Host: host, Port: p, Quorum: quorum,
		DownAfter: 1000 * time.Millisecond, FailoverTimeout: 3000 * time.Millisecond}
	var ss []*redistest.Sentinel
	for range n {
		ss = append(ss, redistest.StartSentinel(t, freePort(t), t.TempDir(), m))
	}
	pollUntil(t, 30*time.Second, "every Sentinel knows both replicas and the other Sentinels", func() bool {
		for _, s := range ss {
			rs, err := s.Client.Replicas(ctx(t), sentinelMaster).Result()
			if err != nil || len(rs) != 2 {
				return false
			}
			others, err := s.Client.Sentinels(ctx(t), sentinelMaster).Result()
			if err != nil || len(others) != n-1 {
				return false
			}
		}
		return true
	})
	return ss
}

// pollUntil polls cond every 20 ms until it holds, and fails the test
// after limit.
func pollUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after %v: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// role is ROLE's reply as strings ("master" offset ... or "slave" host
// port state offset).
func role(t *testing.T, c *redis.Client) []string {
	t.Helper()
	v, err := c.Do(ctx(t), "ROLE").Slice()
	if err != nil {
		t.Fatalf("ROLE: %v", err)
	}
	out := make([]string, 0, len(v))
	for _, x := range v {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// isReplicaOf reports whether c's ROLE says it follows addr with its link
// connected.
func isReplicaOf(t *testing.T, c *redis.Client, addr string) bool {
	r := role(t, c)
	return len(r) == 5 && r[0] == "slave" && r[1]+":"+r[2] == addr && r[3] == "connected"
}

// writeConfirmed writes batches of keys to the master and returns those
// WAIT confirmed on both replicas; a last batch that WAIT does not wait
// for is written too (acknowledged by the master only, not compared).
func writeConfirmed(t *testing.T, m *redis.Client) map[string]string {
	t.Helper()
	confirmed := map[string]string{}
	for b := range 10 {
		batch := map[string]string{}
		p := m.Pipeline()
		for i := range 50 {
			k, v := fmt.Sprintf("k:%d:%d", b, i), fmt.Sprintf("v%d", b*50+i)
			p.Set(ctx(t), k, v, 0)
			batch[k] = v
		}
		if _, err := p.Exec(ctx(t)); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		if n, err := m.Do(ctx(t), "WAIT", 2, 5000).Int(); err != nil || n != 2 {
			t.Fatalf("WAIT 2 after batch %d: %d %v", b, n, err)
		}
		for k, v := range batch {
			confirmed[k] = v
		}
	}
	for i := range 50 {
		if err := m.Set(ctx(t), fmt.Sprintf("unconfirmed:%d", i), "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return confirmed
}

// TestSentinelFailoverMoond: three redis-sentinel processes (quorum 2)
// monitor a moond master and two moond replicas; after the master's kill
// -9 they promote the replica whose replica-priority is not 0, which holds
// every write WAIT confirmed, and repoint the other; a go-redis FailoverClient writes to the new master;
// the old master, restarted, is made a replica of the new one.
func TestSentinelFailoverMoond(t *testing.T) {
	mconf := withConfigFile(t)
	ms := startServer(t, "uring", 2, mconf)
	rs := []*server{startServer(t, "uring", 2, withConfigFile(t)), startServer(t, "uring", 2, withConfigFile(t))}
	host, port := hostPort(t, ms.addr())
	for _, r := range rs {
		c := r.client(2)
		if err := c.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
			t.Fatal(err)
		}
		waitLinkUp(t, c)
	}
	// replica-priority 0: Sentinel never promotes the second replica.
	if err := rs[1].client(2).ConfigSet(ctx(t), "replica-priority", "0").Err(); err != nil {
		t.Fatal(err)
	}
	m := ms.client(2)
	pollUntil(t, 30*time.Second, "both replicas online on the master", func() bool {
		return infoField(t, m, "connected_slaves") == "2" && len(role(t, m)) == 3 &&
			len(m.Do(ctx(t), "ROLE").Val().([]any)[2].([]any)) == 2
	})
	ss := startSentinels(t, 3, 2, ms.addr())
	confirmed := writeConfirmed(t, m)

	ms.kill9()
	oc := rs[1].client(2)
	var otherOff string // where the other replica stopped: its link is down, the stream it read applied
	pollUntil(t, 10*time.Second, "the other replica's link down, its stream applied", func() bool {
		otherOff = infoField(t, oc, "slave_repl_offset")
		return infoField(t, oc, "master_link_status") == "down" && infoField(t, oc, "slave_read_repl_offset") == otherOff
	})
	var newAddr string
	pollUntil(t, 40*time.Second, "the Sentinels name a new master", func() bool {
		for _, s := range ss {
			a, err := s.Client.GetMasterAddrByName(ctx(t), sentinelMaster).Result()
			if err != nil || len(a) != 2 || a[0]+":"+a[1] == ms.addr() {
				return false
			}
			if newAddr != "" && newAddr != a[0]+":"+a[1] {
				return false
			}
			newAddr = a[0] + ":" + a[1]
		}
		return true
	})
	promoted := rs[0]
	if promoted.addr() != newAddr {
		t.Fatalf("the Sentinels' master is %s, not %s (the other replica has replica-priority 0)", newAddr, promoted.addr())
	}
	pc := promoted.client(2)
	if r := role(t, pc); r[0] != "master" || infoField(t, pc, "role") != "master" {
		t.Fatalf("the promoted replica's ROLE: %v", r)
	}
	checkKeys(t, pc, confirmed)
	pollUntil(t, 30*time.Second, "the other replica follows the new master", func() bool {
		return isReplicaOf(t, oc, newAddr) && infoField(t, oc, "master_link_status") == "up"
	})
	checkPsync2(t, pc, otherOff)

	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: sentinelMaster,
		SentinelAddrs: []string{ss[0].Addr, ss[1].Addr, ss[2].Addr}})
	defer fc.Close()
	if err := fc.Set(ctx(t), "after-failover", "yes", 0).Err(); err != nil {
		t.Fatalf("SET through the FailoverClient: %v", err)
	}
	if v, err := pc.Get(ctx(t), "after-failover").Result(); err != nil || v != "yes" {
		t.Fatalf("the FailoverClient's write on the new master: %q %v", v, err)
	}
	if n, err := pc.Do(ctx(t), "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the new master: %d %v", n, err)
	}
	checkKeys(t, oc, confirmed)

	// The old master comes back on its port with its data: Sentinel makes
	// it a replica of the new master.
	old := startServerIn(t, ms.dir, "uring", 2, mconf, "--port", strconv.Itoa(ms.port))
	old.port = ms.port
	olc := old.client(2)
	// Sentinel reads a replica's INFO every 10 s and waits a few periods
	// before it reconfigures one that says it is a master: 20-30 s on a
	// quiet host, more under load (the race job).
	pollUntil(t, 90*time.Second, "Sentinel repoints the restarted old master", func() bool {
		return isReplicaOf(t, olc, newAddr) && infoField(t, olc, "master_link_status") == "up"
	})
	if v, err := olc.Get(ctx(t), "after-failover").Result(); err != nil || v != "yes" {
		t.Fatalf("the old master, now a replica, lacks the new master's write: %q %v", v, err)
	}
}

// checkPsync2 checks how the other replica, stopped at otherOff, synced
// with the promoted one (PSYNC2): it continued when the promotion's offset
// is its own, and did a full sync otherwise (the unconfirmed writes before
// the kill may have reached one replica only; moond's backlog starts at the
// promotion, docs/DESIGN.md).
func checkPsync2(t *testing.T, pc *redis.Client, otherOff string) {
	t.Helper()
	second, _ := strconv.ParseInt(infoField(t, pc, "second_repl_offset"), 10, 64)
	want := map[string]string{"sync_partial_ok": "1", "sync_full": "0"}
	if strconv.FormatInt(second-1, 10) != otherOff {
		t.Logf("the promoted replica stopped at %d, the other at %s: a full sync", second-1, otherOff)
		want = map[string]string{"sync_partial_ok": "0", "sync_full": "1"}
	}
	for f, v := range want {
		if got := infoField(t, pc, f); got != v {
			t.Errorf("the promoted master's %s = %s, want %s (promoted at %d, the other replica at %s)", f, got, v, second-1, otherOff)
		}
	}
}

// checkKeys checks that c holds every key of want with its value.
func checkKeys(t *testing.T, c *redis.Client, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, err := c.Get(ctx(t), k).Result()
		if err != nil || got != v {
			t.Fatalf("%s: %q %v, want %q (of %d writes WAIT confirmed)", k, got, err, v, len(want))
		}
	}
}
