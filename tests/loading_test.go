package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoadingStateWhileShardsRecover restarts moond on a data set with a
// heap and a WAL above its redo point, holds every shard's boot after its
// heap load (--test-hold-boot), and checks what Redis clients see while it
// loads: moond listens, data commands answer LOADING (on every shard, so a
// key on another shard is refused too, not queued), PING, INFO, CONFIG GET,
// CLIENT, HELLO and AUTH work, INFO shows loading:1 with Redis's loading_*
// fields. Once the hold is released the data is served and loading is 0.
func TestLoadingStateWhileShardsRecover(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const shards, keys = 2, 200
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, shards)
			c := s.raw()
			for i := 0; i < keys; i++ { // into the heap by SAVE
				c.send(cmd("SET", fmt.Sprintf("heap:%d", i), strconv.Itoa(i)))
			}
			for i := 0; i < keys; i++ {
				if got := c.line(); got != "+OK" {
					t.Fatalf("SET: %q", got)
				}
			}
			c.send(cmd("SAVE"))
			if got := c.line(); got != "+OK" {
				t.Fatalf("SAVE: %q", got)
			}
			for i := 0; i < keys; i++ { // above the redo point: the WAL replays them
				c.send(cmd("SET", fmt.Sprintf("wal:%d", i), strconv.Itoa(i)))
			}
			for i := 0; i < keys; i++ {
				if got := c.line(); got != "+OK" {
					t.Fatalf("SET: %q", got)
				}
			}
			s.kill9()

			hold := filepath.Join(t.TempDir(), "release")
			s = launch(t, dir, backend, shards, "--test-hold-boot", hold)
			if !s.logShows("listening; loading the dataset") {
				t.Fatalf("moond did not log that it listens\n%s", s.log.String())
			}
			loading := "-LOADING Redis is loading the dataset in memory"
			var conns []*rawConn
			for i := 0; i < 8; i++ { // on both shards, with nearly certainty
				conns = append(conns, s.raw())
			}
			for _, r := range conns {
				for i := 0; i < 4; i++ { // keys of both shards from each connection
					r.send(cmd("GET", fmt.Sprintf("heap:%d", i)))
					if got := r.line(); got != loading {
						t.Fatalf("GET while loading: %q, want %q", got, loading)
					}
				}
				r.send(cmd("SET", "k", "v"))
				if got := r.line(); got != loading {
					t.Fatalf("SET while loading: %q, want %q", got, loading)
				}
				r.send(cmd("MGET", "heap:1", "heap:2", "heap:3", "wal:1"))
				if got := r.line(); got != loading {
					t.Fatalf("MGET while loading: %q, want %q", got, loading)
				}
				r.send(cmd("PING"))
				if got := r.line(); got != "+PONG" {
					t.Fatalf("PING while loading: %q", got)
				}
			}
			r := conns[0]
			// The shards reach the hold once their heaps are loaded; INFO
			// may be asked before they all did.
			info := r.info("persistence")
			for deadline := time.Now().Add(20 * time.Second); infoTextInt(t, info, "loading_loaded_bytes") <= 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
				info = r.info("persistence")
			}
			for _, want := range []string{"loading:1", "async_loading:0", "loading_start_time:", "loading_total_bytes:",
				"loading_rdb_used_mem:0", "loading_loaded_bytes:", "loading_loaded_perc:", "loading_eta_seconds:"} {
				if !strings.Contains(info, "\r\n"+want) {
					t.Fatalf("INFO persistence while loading lacks %q:\n%s", want, info)
				}
			}
			total, loaded := infoTextInt(t, info, "loading_total_bytes"), infoTextInt(t, info, "loading_loaded_bytes")
			if total <= 0 || loaded <= 0 || loaded >= total {
				t.Fatalf("held after the heap load: loaded %d of %d bytes, want 0 < loaded < total\n%s", loaded, total, info)
			}
			r.send(cmd("CONFIG", "GET", "port"))
			if got := r.line(); got != "*2" {
				t.Fatalf("CONFIG GET while loading: %q", got)
			}
			r.line()
			r.line()
			if got := r.bulk(); got != strconv.Itoa(s.port) {
				t.Fatalf("CONFIG GET port while loading: %q", got)
			}
			r.send(cmd("CLIENT", "SETNAME", "loader"))
			if got := r.line(); got != "+OK" {
				t.Fatalf("CLIENT SETNAME while loading: %q", got)
			}
			r.send(cmd("CLIENT", "GETNAME"))
			if got := r.bulk(); got != "loader" {
				t.Fatalf("CLIENT GETNAME while loading: %q", got)
			}
			r.send(cmd("AUTH", "pw"))
			if got := r.line(); !strings.HasPrefix(got, "-ERR AUTH <password> called without any password configured") {
				t.Fatalf("AUTH while loading: %q", got)
			}
			r.send(cmd("HELLO", "2"))
			if got := r.line(); !strings.HasPrefix(got, "*") {
				t.Fatalf("HELLO while loading: %q", got)
			}
			if strings.Contains(s.log.String(), "Ready to accept connections") {
				t.Fatalf("moond said it was ready while it loads\n%s", s.log.String())
			}

			if err := os.WriteFile(hold, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			s.waitReady()
			c = s.raw()
			for i := 0; i < keys; i += 37 {
				for _, k := range []string{"heap", "wal"} {
					c.send(cmd("GET", fmt.Sprintf("%s:%d", k, i)))
					if got := c.bulk(); got != strconv.Itoa(i) {
						t.Fatalf("GET %s:%d after loading: %q", k, i, got)
					}
				}
			}
			c.send(cmd("SET", "k", "v"))
			if got := c.line(); got != "+OK" {
				t.Fatalf("SET after loading: %q", got)
			}
			info = c.info("persistence")
			if !strings.Contains(info, "\r\nloading:0\r\n") || strings.Contains(info, "loading_total_bytes") {
				t.Fatalf("INFO persistence after loading:\n%s", info)
			}
			if !s.logShows("DB loaded from disk") {
				t.Fatalf("moond did not log the end of the load\n%s", s.log.String())
			}
		})
	}
}

// cmd is a command in RESP.
func cmd(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// bulk reads one bulk string reply (RESP2), or returns the line of any
// other reply.
func (r *rawConn) bulk() string {
	r.t.Helper()
	l := r.line()
	if !strings.HasPrefix(l, "$") || l == "$-1" {
		return l
	}
	return r.line()
}

// info reads INFO section's text.
func (r *rawConn) info(section string) string {
	r.t.Helper()
	r.send(cmd("INFO", section))
	l := r.line()
	n, err := strconv.Atoi(strings.TrimPrefix(l, "$"))
	if !strings.HasPrefix(l, "$") || err != nil {
		r.t.Fatalf("INFO: %q", l)
	}
	buf := make([]byte, n+2)
	for got := 0; got < len(buf); {
		m, err := r.r.Read(buf[got:])
		if err != nil {
			r.t.Fatalf("INFO: %v", err)
		}
		got += m
	}
	return string(buf[:n])
}

// infoTextInt is the integer field name of INFO text.
func infoTextInt(t *testing.T, info, name string) int64 {
	t.Helper()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", name, v)
			}
			return n
		}
	}
	t.Fatalf("INFO lacks %s:\n%s", name, info)
	return 0
}
