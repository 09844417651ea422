package tests

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/internal/redistest"
)

// dialPlain opens a plain connection to addr for hand-written protocol.
func dialPlain(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
}

// failoverTxn sends Sentinel's failover transaction (sentinel.c,
// sentinelSendSlaveOf) with target "NO ONE" or "host port" and returns
// every reply line: MULTI's, the four QUEUED and EXEC's array.
func failoverTxn(r *rawConn, target string) []string {
	r.t.Helper()
	f := strings.Fields(target)
	r.send("MULTI\r\n" +
		"*3\r\n$7\r\nSLAVEOF\r\n$" + strconv.Itoa(len(f[0])) + "\r\n" + f[0] + "\r\n$" + strconv.Itoa(len(f[1])) + "\r\n" + f[1] + "\r\n" +
		"CONFIG REWRITE\r\nCLIENT KILL TYPE normal\r\nCLIENT KILL TYPE pubsub\r\nEXEC\r\n")
	var lines []string
	for range 6 + 4 { // +OK, 4 +QUEUED, *4, then the 4 replies
		lines = append(lines, r.line())
	}
	return lines
}

// failoverTxnOutcome runs the transaction on addr, whose configuration
// file is conf, with an idle client and a subscriber connected; it
// returns the replies, whether the three connections were closed, and
// the replicaof lines CONFIG REWRITE left in the file.
func failoverTxnOutcome(t *testing.T, addr, conf, target string) (lines []string, closed []bool, replicaof []string) {
	t.Helper()
	idle, sub, r := dialPlain(t, addr), dialPlain(t, addr), dialPlain(t, addr)
	idle.send("PING\r\n")
	idle.line()
	sub.send("SUBSCRIBE __sentinel__:hello\r\n")
	for range 6 { // *3, subscribe, the channel, :1
		sub.line()
	}
	lines = failoverTxn(r, target)
	r.send("PING\r\n") // the caller stays (SKIPME yes): its PONG, not a 5 s wait for EOF
	closed = []bool{r.line() != "+PONG", idle.closed(), sub.closed()}
	text, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "replicaof ") || strings.HasPrefix(l, "slaveof ") {
			replicaof = append(replicaof, l)
		}
	}
	return lines, closed, replicaof
}

// TestSentinelFailoverTxnAsRedis: Sentinel's failover transaction (MULTI,
// SLAVEOF host port or NO ONE, CONFIG REWRITE, CLIENT KILL TYPE normal,
// CLIENT KILL TYPE pubsub, EXEC) answers on moond as on redis-server
// 7.0: the same replies, the same connections closed (the other clients,
// not the caller: SKIPME defaults to yes), and the configuration file
// rewritten with the new master, then without one.
func TestSentinelFailoverTxnAsRedis(t *testing.T) {
	dead := strconv.Itoa(freePort(t)) // a master that never answers: the link keeps trying
	rconf := withConfigFile(t)
	rport := freePort(t)
	rc := redistest.Start(t, rport, t.TempDir(), rconf)
	raddr := "127.0.0.1:" + strconv.Itoa(rport)
	mconf := withConfigFile(t)
	ms := startServer(t, "uring", 2, mconf)
	// Each has one go-redis client connected too (Start's): a normal
	// client the first CLIENT KILL counts.
	if err := ms.client(2).Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"127.0.0.1 " + dead, "NO ONE"} {
		wl, wc, wr := failoverTxnOutcome(t, raddr, rconf, target)
		gl, gc, gr := failoverTxnOutcome(t, ms.addr(), mconf, target)
		if strings.Join(gl, "|") != strings.Join(wl, "|") {
			t.Errorf("SLAVEOF %s: replies\n moond %q\n redis %q", target, gl, wl)
		}
		if strings.Join(boolsText(gc), ",") != strings.Join(boolsText(wc), ",") {
			t.Errorf("SLAVEOF %s: closed (caller, idle, subscriber)\n moond %v\n redis %v", target, gc, wc)
		}
		if g, w := role(t, ms.client(2)), role(t, rc); g[0] != w[0] || len(g) != len(w) || len(g) == 5 && g[1]+g[2] != w[1]+w[2] {
			t.Errorf("SLAVEOF %s: ROLE\n moond %q\n redis %q", target, g, w)
		}
		if strings.Join(gr, "|") != strings.Join(wr, "|") {
			t.Errorf("SLAVEOF %s: the rewritten file's replicaof\n moond %q\n redis %q", target, gr, wr)
		}
	}
}

func boolsText(bs []bool) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = strconv.FormatBool(b)
	}
	return out
}
