package tests

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redis-cli's modes against the real moond binary: --stat, --bigkeys,
// --memkeys, --latency, and INFO everything, each as an operator runs it.

// cliModesData is the data the modes look at: one key of each type.
var cliModesData = [][]string{
	{"RPUSH", "biglist", "a", "b", "c", "d"},
	{"HSET", "h", "a", "1", "b", "2"},
	{"SADD", "s", "x", "y"},
	{"ZADD", "z", "1", "a"},
	{"SET", "str", "hello"},
	{"SET", "k", "v"},
}

// needCLI skips the test when redis-cli is not installed.
func needCLI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed (make test installs redis-tools)")
	}
}

// runCLI runs redis-cli against port to its end, within 30 s.
func runCLI(t *testing.T, port int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-p", strconv.Itoa(port)}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// loadCLIModesData writes cliModesData through redis-cli.
func loadCLIModesData(t *testing.T, port int) {
	t.Helper()
	for _, cmd := range cliModesData {
		runCLI(t, port, cmd...)
	}
}

// TestRedisCLIStatShowsTheServer runs redis-cli --stat until it printed
// three rows (then stops it): the columns are there and the keys column
// counts the keys of every shard.
func TestRedisCLIStatShowsTheServer(t *testing.T) {
	needCLI(t)
	s := startServer(t, "pool", 2)
	loadCLIModesData(t, s.port)
	// redis-cli does not flush its rows into a pipe; stdbuf makes it,
	// else the rows come when its buffer fills (every row is 80 bytes).
	args := []string{"redis-cli", "-p", strconv.Itoa(s.port), "--stat", "-i", "0.01"}
	if path, err := exec.LookPath("stdbuf"); err == nil {
		args = append([]string{path, "-o0"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var header string
	var rows [][]string
	deadline := time.After(20 * time.Second)
	for len(rows) < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("redis-cli --stat ended after %d rows", len(rows))
			}
			switch f := strings.Fields(l); {
			case len(f) > 0 && f[0] == "keys":
				header = l
			case header != "" && len(f) >= 5:
				rows = append(rows, f)
			}
		case <-deadline:
			t.Fatalf("redis-cli --stat printed %d rows in 20 s (header %q)", len(rows), header)
		}
	}
	for _, col := range []string{"keys", "mem", "clients", "blocked", "requests", "connections"} {
		if !strings.Contains(header, col) {
			t.Errorf("header %q lacks %s", header, col)
		}
	}
	if rows[0][0] != strconv.Itoa(len(cliModesData)) {
		t.Errorf("keys column %q, want %d: %v", rows[0][0], len(cliModesData), rows)
	}
	if rows[0][3] != "0" {
		t.Errorf("blocked column %q, want 0", rows[0][3])
	}
}

// bigkeysSummary is what follows redis-cli --bigkeys's summary line: the
// scan's progress lines before it come in SCAN order, which differs
// between servers.
func bigkeysSummary(out string) string {
	_, after, ok := strings.Cut(out, "-------- summary -------")
	if !ok {
		return "no summary in:\n" + out
	}
	return strings.TrimSpace(after)
}

// TestRedisCLIBigkeysMatchesRedisServer: redis-cli --bigkeys's summary
// over the same data is the same for moond (two shards) as for
// redis-server 7.0.
func TestRedisCLIBigkeysMatchesRedisServer(t *testing.T) {
	needCLI(t)
	rs := startRedisServer(t)
	_, p, _ := strings.Cut(rs.Options().Addr, ":")
	redisPort, _ := strconv.Atoi(p)
	s := startServer(t, "pool", 2)
	loadCLIModesData(t, redisPort)
	loadCLIModesData(t, s.port)
	want := bigkeysSummary(runCLI(t, redisPort, "--bigkeys"))
	got := bigkeysSummary(runCLI(t, s.port, "--bigkeys"))
	if got != want {
		t.Fatalf("--bigkeys summary:\nmoond:\n%s\nredis-server:\n%s", got, want)
	}
}

// TestRedisCLIMemkeysReportsMemoryUsage: redis-cli --memkeys finds every
// key and reports for each type's biggest the bytes MEMORY USAGE gives.
func TestRedisCLIMemkeysReportsMemoryUsage(t *testing.T) {
	needCLI(t)
	s := startServer(t, "pool", 2)
	loadCLIModesData(t, s.port)
	out := bigkeysSummary(runCLI(t, s.port, "--memkeys"))
	if !strings.Contains(out, fmt.Sprintf("Sampled %d keys", len(cliModesData))) {
		t.Fatalf("--memkeys did not sample every key:\n%s", out)
	}
	for typ, key := range map[string]string{"list": "biglist", "hash": "h", "set": "s", "zset": "z"} {
		usage := strings.TrimSpace(runCLI(t, s.port, "MEMORY", "USAGE", key))
		line := fmt.Sprintf("Biggest %6s found '\"%s\"' has %s bytes", typ, key, usage)
		if !strings.Contains(out, line) {
			t.Errorf("--memkeys lacks %q:\n%s", line, out)
		}
	}
}

// cliLatency is redis-cli --latency's one line when its output is not a
// terminal: min, max, avg (ms) and the number of samples.
var cliLatency = regexp.MustCompile(`^(\d+) (\d+) (\d+\.\d+) (\d+)$`)

// TestRedisCLILatencySamples: redis-cli --latency, writing to a pipe,
// samples PING for a second and prints its figures once.
func TestRedisCLILatencySamples(t *testing.T) {
	needCLI(t)
	s := startServer(t, "pool", 2)
	out := strings.TrimSpace(runCLI(t, s.port, "--latency"))
	m := cliLatency.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("--latency printed %q", out)
	}
	if n, _ := strconv.Atoi(m[4]); n == 0 {
		t.Fatalf("--latency took no sample: %q", out)
	}
}

// TestInfoEverythingListsRedisSections: INFO everything through
// redis-cli has Redis 7.0's sections in its order (those moond has), and
// every line is a header, a field or a blank.
func TestInfoEverythingListsRedisSections(t *testing.T) {
	needCLI(t)
	s := startServer(t, "pool", 2)
	loadCLIModesData(t, s.port)
	out := runCLI(t, s.port, "INFO", "everything")
	redisOrder := []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
		"Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		switch {
		case strings.HasPrefix(l, "# "):
			got = append(got, strings.TrimPrefix(l, "# "))
		case l == "" || strings.Contains(l, ":"):
		default:
			t.Errorf("INFO everything line %q is neither a header nor a field", l)
		}
	}
	next := 0
	for _, sec := range got {
		i := next
		for i < len(redisOrder) && redisOrder[i] != sec {
			i++
		}
		if i == len(redisOrder) {
			t.Fatalf("INFO everything sections %v: %s is unknown to Redis or out of its order %v", got, sec, redisOrder)
		}
		next = i + 1
	}
	for _, must := range []string{"Server", "Clients", "Memory", "Stats", "Commandstats", "Keyspace"} {
		if !strings.Contains(strings.Join(got, " "), must) {
			t.Errorf("INFO everything lacks %s: %v", must, got)
		}
	}
}
