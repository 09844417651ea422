package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// announcedAs waits until master m shows a replica as ip and port, in
// INFO's slave0 and in ROLE.
func announcedAs(t *testing.T, m *redis.Client, ip string, port int) {
	t.Helper()
	want := "ip=" + ip + ",port=" + strconv.Itoa(port) + ",state=online"
	pollUntil(t, 30*time.Second, "the master shows the replica as "+want, func() bool {
		info, err := m.Info(ctx(t), "replication").Result()
		return err == nil && strings.Contains(info, "slave0:"+want)
	})
	r := m.Do(ctx(t), "ROLE").Val().([]any)
	if rs := r[2].([]any); len(rs) != 1 || rs[0].([]any)[0] != ip || rs[0].([]any)[1] != strconv.Itoa(port) {
		t.Fatalf("ROLE on the master: %v", r)
	}
}

// TestReplicaAnnounceAsRedis: replica-announce-ip and -port (Sentinel
// learns the replicas from the master's INFO) are what a redis-server
// master shows of a moond replica, and a moond master of a moond and of a
// redis-server replica, as a redis-server master shows of a redis-server
// replica.
func TestReplicaAnnounceAsRedis(t *testing.T) {
	const ip, port = "10.9.8.7", 7777
	rport := freePort(t)
	rm := redistest.Start(t, rport, t.TempDir())
	ms := startServer(t, "uring", 2)
	mhost, mport := hostPort(t, ms.addr())

	rs := startServer(t, "uring", 2)
	r := rs.client(2)
	for _, kv := range [][2]string{{"slave-announce-ip", ip}, {"replica-announce-port", strconv.Itoa(port)}} {
		if err := r.ConfigSet(ctx(t), kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if v := r.ConfigGet(ctx(t), "replica-announce-*").Val(); v["replica-announce-ip"] != ip || v["replica-announce-port"] != strconv.Itoa(port) {
		t.Fatalf("CONFIG GET replica-announce-*: %v", v)
	}
	if err := r.Do(ctx(t), "REPLICAOF", "127.0.0.1", rport).Err(); err != nil {
		t.Fatal(err)
	}
	announcedAs(t, rm, ip, port) // a redis-server master of a moond replica
	if err := r.Do(ctx(t), "REPLICAOF", mhost, mport).Err(); err != nil {
		t.Fatal(err)
	}
	m := ms.client(2)
	announcedAs(t, m, ip, port) // a moond master of a moond replica
	if err := r.Do(ctx(t), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 30*time.Second, "the moond replica gone from the master", func() bool {
		return infoField(t, m, "connected_slaves") == "0"
	})
	redistest.Start(t, freePort(t), t.TempDir(), "--replicaof", mhost, mport,
		"--replica-announce-ip", ip, "--replica-announce-port", strconv.Itoa(port))
	announcedAs(t, m, ip, port) // a moond master of a redis-server replica
}
