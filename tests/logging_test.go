package tests

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

// moond's log (issue 21 point 5): a banner first, one line per event
// with no attribute twice, loglevel that CONFIG SET changes, and the
// system log with syslog-enabled.

// logAttrs splits one slog text line into its keys, in order.
func logAttrs(line string) []string {
	var keys []string
	for i := 0; i < len(line); {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		eq := strings.IndexByte(line[i:], '=')
		if eq < 0 {
			break
		}
		keys = append(keys, line[i:i+eq])
		i += eq + 1
		if i < len(line) && line[i] == '"' { // a quoted value: up to the closing quote
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			i++
			continue
		}
		for i < len(line) && line[i] != ' ' {
			i++
		}
	}
	return keys
}

// TestLogBannerAndOneAttributeOnce: the first line names the version, the
// data directory, the shards and the persistence settings, and no line of
// a run with a restart, a checkpoint and a reshard repeats an attribute.
func TestLogBannerAndOneAttributeOnce(t *testing.T) {
	s := startServer(t, "uring", 2, "--appendfsync", "always")
	s.client(2).Set(ctx(t), "k", "v", 0)
	s.client(2).Do(ctx(t), "SAVE")
	s.kill9()
	s2 := startServerIn(t, s.dir, "pool", 3)
	s2.client(2).Get(ctx(t), "k")
	for _, srv := range []*server{s, s2} {
		log := srv.log.String()
		first, _, _ := strings.Cut(log, "\n")
		for _, want := range []string{`msg="moond starting"`, "version=", "dir=" + srv.dir, "shards=",
			"appendonly=true", "appendfsync=", "io_backend=", "maxmemory=", "pid="} {
			if !strings.Contains(first, want) {
				t.Errorf("the first log line lacks %q: %s", want, first)
			}
		}
		for _, line := range strings.Split(log, "\n") {
			if !strings.HasPrefix(line, "time=") {
				continue // a panic's or the runtime's own lines, if any
			}
			seen := map[string]bool{}
			for _, k := range logAttrs(line) {
				if k == "" || strings.IndexFunc(k, unicode.IsSpace) >= 0 {
					t.Fatalf("cannot parse %q", line)
				}
				if seen[k] {
					t.Errorf("attribute %q twice in: %s", k, line)
				}
				seen[k] = true
			}
		}
	}
}

// TestLoglevelChangesAtRunTime: CONFIG SET loglevel warning silences the
// Info lines that CONFIG SET appendonly writes, and notice brings them
// back.
func TestLoglevelChangesAtRunTime(t *testing.T) {
	s := startServer(t, "uring", 1)
	c := s.client(2)
	if err := c.ConfigSet(ctx(t), "loglevel", "warning").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx(t), "appendonly", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx(t), "loglevel", "notice").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx(t), "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the appendonly yes line", func() bool {
		return strings.Contains(s.log.String(), "appendonly yes: WAL opened again")
	})
	if strings.Contains(s.log.String(), "appendonly no: a last checkpoint") {
		t.Fatal("an Info line was logged under loglevel warning")
	}
}

// TestSyslogGetsTheLog: with syslog-enabled, every line also goes to the
// system log, under syslog-ident and syslog-facility, with the severity of
// its level (here a socket the test listens on stands for the system's).
func TestSyslogGetsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.sock")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Skip("no unixgram sockets here:", err)
	}
	defer l.Close()
	s := startServer(t, "uring", 1, "--syslog-enabled", "yes", "--syslog-ident", "moondtest",
		"--syslog-facility", "local3", "--test-syslog-addr", "unixgram:"+path)
	s.client(2).Do(ctx(t), "CONFIG", "SET", "appendonly", "no") // Info lines
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		l.SetReadDeadline(deadline)
		n, err := l.Read(buf)
		if err != nil {
			break
		}
		msg := string(buf[:n])
		got = append(got, msg)
		// local3 is 19: 19*8 + notice (5) = 157.
		if strings.HasPrefix(msg, "<157>") && strings.Contains(msg, "moondtest") &&
			strings.Contains(msg, "Ready to accept connections") {
			return
		}
	}
	t.Fatalf("no Ready line at local3.notice from moondtest in the syslog messages: %q", got)
}
