package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/keyspace"
)

func TestDefaultsFitALaptop(t *testing.T) {
	c := Default()
	if c.Port != 6379 || !reflect.DeepEqual(c.Bind, []string{"127.0.0.1"}) || c.Dir != "./data" ||
		!c.AppendOnly || c.AppendFsync != "everysec" || c.IOBackend != "auto" || c.Shards < 1 || !c.ProtectedMode {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestParseMemoryUnitsLikeRedis(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "1k": 1000, "1kb": 1024, "2mb": 2 << 20, "1GB": 1 << 30, "3g": 3e9, "0": 0} {
		got, err := ParseMemory(in)
		if err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1xb", "abc", "99999999999gb"} {
		if _, err := ParseMemory(bad); err == nil {
			t.Errorf("ParseMemory(%q) accepted", bad)
		}
	}
}

func TestSplitArgsQuotesLikeRedisConf(t *testing.T) {
	cases := map[string][]string{
		`port 6380`:                {"port", "6380"},
		`requirepass "a b\x41\n"`:  {"requirepass", "a bA\n"},
		`requirepass 'it\'s'`:      {"requirepass", "it's"},
		`save ""`:                  {"save", ""},
		"  bind   127.0.0.1  ::1 ": {"bind", "127.0.0.1", "::1"},
	}
	for in, want := range cases {
		got, err := SplitArgs(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`a "b`, `a 'b`, `a "b"c`} {
		if _, err := SplitArgs(bad); err == nil {
			t.Errorf("SplitArgs(%q) accepted unbalanced quotes", bad)
		}
	}
}

func TestLoadFileThenFlagsWin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "moond.conf")
	conf := "# comment\nport 7000\nappendfsync always\nmaxmemory 1mb\nhash-max-ziplist-entries 64\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{path, "--port", "7001", "--wal-salvage", "--bind", "127.0.0.1", "::1", "--checkpoint-timeout=60"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 7001 || c.AppendFsync != "always" || c.MaxMemory != 1<<20 || !c.WALSalvage ||
		len(c.Bind) != 2 || c.CheckpointTimeout != 60*time.Second {
		t.Fatalf("loaded %+v", c)
	}
	if v, _ := c.Get("hash-max-listpack-entries"); v != "64" {
		t.Fatalf("ziplist alias did not set the listpack parameter: %q", v)
	}
}

func TestLoadNamesTheBadDirective(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.conf")
	os.WriteFile(path, []byte("port 1\nappendfsync sometimes\n"), 0o644)
	_, err := Load([]string{path})
	if err == nil || !strings.Contains(err.Error(), "bad.conf:2") || !strings.Contains(err.Error(), "appendfsync") {
		t.Fatalf("err = %v, want it to name bad.conf:2 and appendfsync", err)
	}
	if _, err := Load([]string{"--no-such-thing", "1"}); err == nil {
		t.Fatal("unknown flag accepted")
	}
}

func TestSetAtRuntimeRefusesImmutable(t *testing.T) {
	c := Default()
	if err := c.SetAtRuntime("shards", "4"); err != ErrImmutable {
		t.Fatalf("shards: %v", err)
	}
	if err := c.SetAtRuntime("maxmemory", "10mb"); err != nil || c.MaxMemory != 10<<20 {
		t.Fatalf("maxmemory: %v %d", err, c.MaxMemory)
	}
}

func TestNotifyKeyspaceEventsParam(t *testing.T) {
	path := filepath.Join(t.TempDir(), "moond.conf")
	if err := os.WriteFile(path, []byte("notify-keyspace-events \"KEA\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get("notify-keyspace-events"); got != "AKE" {
		t.Fatalf("from the file: %q, want AKE", got)
	}
	if err := c.SetAtRuntime("notify-keyspace-events", "Elm"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get("notify-keyspace-events"); got != "lEm" {
		t.Fatalf("after CONFIG SET Elm: %q, want lEm", got)
	}
	err = c.SetAtRuntime("notify-keyspace-events", "Kq")
	if err == nil || err.Error() != "Invalid event class character. Use 'Ag$lshzxeKEtmdn'." {
		t.Fatalf("a bad class: %v", err)
	}
	if got, _ := c.Get("notify-keyspace-events"); got != "lEm" {
		t.Fatalf("after a refused SET: %q", got)
	}
	// CONFIG REWRITE writes the normalized form, which reads back.
	c.NotifyKeyspaceEvents, _ = keyspace.ParseEventClasses("KEg$xm")
	text, err := rewriteText(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "notify-keyspace-events g$xKEm\n") {
		t.Fatalf("rewritten:\n%s", text)
	}
	sameParams(t, c, reload(t, text))
	if _, err := Load([]string{"--notify-keyspace-events", "x!"}); err == nil || !strings.Contains(err.Error(), "notify-keyspace-events") {
		t.Fatalf("a bad flag: %v", err)
	}
}

func TestMetricsAddrFromFileAndFlag(t *testing.T) {
	if Default().MetricsAddr != "" {
		t.Fatal("metrics endpoint on by default")
	}
	path := filepath.Join(t.TempDir(), "moond.conf")
	if err := os.WriteFile(path, []byte("metrics-addr 127.0.0.1:9121\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{path})
	if err != nil || c.MetricsAddr != "127.0.0.1:9121" {
		t.Fatalf("from the file: %q, %v", c.MetricsAddr, err)
	}
	c, err = Load([]string{path, "--metrics-addr", ":9122"})
	if err != nil || c.MetricsAddr != ":9122" {
		t.Fatalf("flag after the file: %q, %v", c.MetricsAddr, err)
	}
	if err := c.SetAtRuntime("metrics-addr", ":1"); err != ErrImmutable {
		t.Fatalf("CONFIG SET metrics-addr: %v, want ErrImmutable", err)
	}
}

func TestGCHeapFloorIsAMemoryValueSetAtRuntime(t *testing.T) {
	c := Default()
	if c.GCHeapFloor != 64<<20 {
		t.Errorf("default gc-heap-floor %d, want 64 MiB", c.GCHeapFloor)
	}
	for in, want := range map[string]int64{"128mb": 128 << 20, "1gb": 1 << 30, "1000000": 1e6, "0": 0} {
		if err := c.SetAtRuntime("gc-heap-floor", in); err != nil || c.GCHeapFloor != want {
			t.Errorf("CONFIG SET gc-heap-floor %s: %v, %d; want %d", in, err, c.GCHeapFloor, want)
		}
		if got, _ := c.Get("gc-heap-floor"); got != strconv.FormatInt(want, 10) {
			t.Errorf("CONFIG GET gc-heap-floor after %s = %q, want %d", in, got, want)
		}
	}
	for _, bad := range []string{"-1", "lots", "1xb"} {
		if err := c.SetAtRuntime("gc-heap-floor", bad); err == nil {
			t.Errorf("CONFIG SET gc-heap-floor %s accepted", bad)
		}
	}
}
