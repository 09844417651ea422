package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reload parses text as a config file over the defaults.
func reload(t *testing.T, text []byte) *Config {
	t.Helper()
	ds, err := ParseFile(bytes.NewReader(text), "rewritten")
	if err != nil {
		t.Fatalf("the rewritten file does not parse: %v\n%s", err, text)
	}
	c := Default()
	if err := c.Apply(ds); err != nil {
		t.Fatalf("the rewritten file does not apply: %v\n%s", err, text)
	}
	return c
}

// sameParams fails the test where two configurations differ.
func sameParams(t *testing.T, want, got *Config) {
	t.Helper()
	for _, p := range Params() {
		if w, g := p.Get(want), p.Get(got); w != g {
			t.Errorf("%s reads back %q, want %q", p.Name, g, w)
		}
	}
}

func TestRewriteKeepsTheFileAndUpdatesItsDirectives(t *testing.T) {
	old := []byte(`# moond test config
port 7000

# memory
maxmemory 1mb
maxmemory 2mb
some-directive-from-elsewhere yes
hz 10
`)
	c := reload(t, old[:0]) // defaults
	c.Port = 7000
	c.MaxMemory = 64 << 20
	c.MaxMemoryPolicy = "allkeys-lru"
	c.Dir = "/data dir/with \"quotes\""
	c.RequirePass = `back\slash`
	text, err := rewriteText(old, c)
	if err != nil {
		t.Fatal(err)
	}
	got := string(text)
	for _, want := range []string{
		"# moond test config\nport 7000\n\n# memory\nmaxmemory 67108864\nsome-directive-from-elsewhere yes\nhz 10\n",
		"\n" + rewriteMarker + "\n",
		"\nmaxmemory-policy allkeys-lru\n",
		"\ndir \"/data dir/with \\\"quotes\\\"\"\n",
		"\nrequirepass back\\slash\n", // outside quotes a backslash is itself
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the rewritten file lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "maxmemory "); n != 1 {
		t.Errorf("maxmemory appears %d times:\n%s", n, got)
	}
	// Every parameter reads back as it runs, but for the line no
	// parameter reads (moond refuses it at boot, as before the rewrite).
	without := strings.Replace(got, "some-directive-from-elsewhere yes\n", "", 1)
	sameParams(t, c, reload(t, []byte(without)))
	// A second rewrite changes nothing.
	again, err := rewriteText(text, c)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != got {
		t.Errorf("a second rewrite changed the file:\n%s\nthen:\n%s", got, again)
	}
}

func TestRewriteQuotesWhatNeedsIt(t *testing.T) {
	c := Default()
	c.NotifyKeyspaceEvents = 0 // the default: not written
	c.RequirePass = "a b\t\"c\"\n\x01#"
	c.Dir = "#not-a-comment"
	text, err := rewriteText(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	sameParams(t, c, reload(t, text))
}

func TestRewriteReplacesTheFileAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "moond.conf")
	if err := os.WriteFile(path, []byte("port 7001\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Port = 7002
	if err := Rewrite(path, c); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "port 7002\n" {
		t.Fatalf("file %q (%v), want \"port 7002\\n\"", b, err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want the old file's 0640", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d files in the directory; the temporary file stayed", len(entries))
	}
	// A missing file is created.
	os.Remove(path)
	if err := Rewrite(path, c); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "port 7002\n") {
		t.Fatalf("recreated file %q", b)
	}
}
