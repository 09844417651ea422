package keyspace

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Ported from Redis's tests/unit/scan.tcl (the SCAN parts), plus the
// guarantee under growth and shrinkage.

// scanAll runs a full SCAN with extra options and returns every key it
// returned, with repetitions, and the number of calls. Between calls it
// runs between(callIndex).
func (h *harness) scanAll(opts string, between func(int)) ([]string, int) {
	h.t.Helper()
	cursor := "0"
	var keys []string
	calls := 0
	for {
		reply := h.run(strings.TrimSpace("SCAN " + cursor + " " + opts))
		calls++
		next, batch := parseScanReply(h.t, reply)
		keys = append(keys, batch...)
		if next == "0" {
			return keys, calls
		}
		cursor = next
		if between != nil {
			between(calls)
		}
	}
}

func parseScanReply(t testing.TB, reply string) (string, []string) {
	t.Helper()
	// [ "cursor" [ "k1" "k2" ] ]
	if !strings.HasPrefix(reply, `["`) || !strings.HasSuffix(reply, "]]") {
		t.Fatalf("bad SCAN reply %s", reply)
	}
	body := reply[2 : len(reply)-2]
	i := strings.Index(body, `" [`)
	cursor, list := body[:i], body[i+3:]
	var keys []string
	for _, f := range strings.Fields(list) {
		k, err := strconv.Unquote(f)
		if err != nil {
			t.Fatalf("bad key %s in %s", f, reply)
		}
		keys = append(keys, k)
	}
	return cursor, keys
}

func (h *harness) populate(count int, prefix string) {
	for i := range count {
		h.expect("SET "+prefix+itoa(i)+" "+itoa(i), "OK")
	}
}

func distinct(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func TestScanBasic(t *testing.T) {
	h := newHarness(t)
	h.populate(1000, "key:")
	keys, calls := h.scanAll("", nil)
	if got := len(distinct(keys)); got != 1000 {
		t.Errorf("SCAN returned %d distinct keys, want 1000", got)
	}
	if calls < 10 {
		t.Errorf("SCAN took %d calls for 1000 keys with COUNT 10", calls)
	}
}

func TestScanCount(t *testing.T) {
	for _, count := range []int{5, 10, 20, 50, 100} {
		h := newHarness(t)
		h.populate(1000, "key:")
		keys, _ := h.scanAll("COUNT "+itoa(count), nil)
		if got := len(distinct(keys)); got != 1000 {
			t.Errorf("COUNT %d: %d distinct keys, want 1000", count, got)
		}
	}
}

func TestScanMatch(t *testing.T) {
	h := newHarness(t)
	h.populate(1000, "key:")
	keys, _ := h.scanAll("MATCH key:1??", nil)
	if got := len(distinct(keys)); got != 100 {
		t.Errorf("MATCH key:1?? gave %d keys, want 100", got)
	}
	for k := range distinct(keys) {
		if !strings.HasPrefix(k, "key:1") || len(k) != 7 {
			t.Errorf("MATCH returned %q", k)
		}
	}
}

func TestScanType(t *testing.T) {
	h := newHarness(t)
	h.populate(1000, "key:")
	h.addFakeObject("alist")
	keys, _ := h.scanAll("TYPE stream", nil)
	if len(keys) != 1 || keys[0] != "alist" {
		t.Errorf("TYPE stream returned %q", keys)
	}
	keys, _ = h.scanAll("TYPE STRING", nil)
	if got := len(distinct(keys)); got != 1000 {
		t.Errorf("TYPE string returned %d keys", got)
	}
}

func TestScanUnknownTypeReturnsNothingAndStillExpires(t *testing.T) {
	h := newHarness(t)
	h.populate(1000, "key:")
	h.addFakeObject("hash")
	h.expect("PEXPIRE hash 1", n(1))
	h.advance(2)
	keys, _ := h.scanAll("TYPE string1", nil)
	if len(keys) != 0 {
		t.Errorf("unknown type returned %d keys", len(keys))
	}
	if got := h.ks.DBInfo(0).Keys; got != 1000 {
		t.Errorf("keys=%d after the scan, want 1000: the expired key must be gone", got)
	}
}

func TestScanWithExpiredKeys(t *testing.T) {
	for _, opts := range []string{"COUNT 100", "COUNT 100 TYPE string"} {
		h := newHarness(t)
		h.populate(1000, "key:")
		for i := range 1000 {
			h.expect("SET foo"+itoa(i)+" bar PX 1", "OK")
		}
		h.advance(2)
		keys, _ := h.scanAll(opts, nil)
		if got := len(distinct(keys)); got != 1000 {
			t.Errorf("%s: %d keys, want 1000", opts, got)
		}
		for _, k := range keys {
			if strings.HasPrefix(k, "foo") {
				t.Fatalf("%s: expired key %s returned", opts, k)
			}
		}
		if got := h.ks.DBSize(0); got != 1000 {
			t.Errorf("%s: dbsize %d after the scan deleted the expired keys", opts, got)
		}
	}
}

func TestScanErrors(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SCAN abc", "(error) ERR invalid cursor",
		"SCAN 18446744073709551616", "(error) ERR invalid cursor",
		"SCAN 0 COUNT 0", "(error) ERR syntax error",
		"SCAN 0 COUNT -1", "(error) ERR syntax error",
		"SCAN 0 COUNT x", "(error) ERR value is not an integer or out of range",
		"SCAN 0 MATCH", "(error) ERR syntax error",
		"SCAN 0 FOO bar", "(error) ERR syntax error",
		"SCAN 0", `["0" []]`,
		"SCAN 18446744073709551615", `["0" []]`,
	)
	h.expectArgs(`["0" []]`, "SCAN", "")
	h.expectArgs("(error) ERR invalid cursor", "SCAN", " 0")
}

// The guarantee: every key present from the first call to the last is
// returned, while other keys come and go and the table grows tenfold.
func TestScanGuaranteeWhileInsertingKeys(t *testing.T) {
	for _, count := range []int{1, 10, 100} {
		h := newHarness(t)
		h.populate(500, "orig:")
		next := 0
		keys, _ := h.scanAll("COUNT "+itoa(count), func(int) {
			for range 50 {
				h.expect("SET new:"+itoa(next)+" x", "OK")
				next++
			}
		})
		seen := distinct(keys)
		for i := range 500 {
			if !seen["orig:"+itoa(i)] {
				t.Fatalf("COUNT %d: orig:%d never returned (table grew to %d keys)", count, i, h.ks.DBSize(0))
			}
		}
	}
}

// The same under write load with deletions, which shrink the table.
func TestScanGuaranteeUnderWriteLoad(t *testing.T) {
	h := newHarness(t)
	h.populate(5000, "k:")
	rng := rand.New(rand.NewPCG(7, 8))
	deleted := map[string]bool{}
	keys, _ := h.scanAll("COUNT 10", func(int) {
		for range 20 {
			k := "k:" + itoa(rng.IntN(5000))
			h.expect("DEL "+k, h.run("EXISTS "+k))
			deleted[k] = true
			h.expect("SET tmp:"+itoa(rng.IntN(100000))+" x", "OK")
		}
	})
	seen := distinct(keys)
	for i := range 5000 {
		k := "k:" + itoa(i)
		if !deleted[k] && !seen[k] {
			t.Fatalf("%s was present throughout but never returned", k)
		}
	}
}

func TestScanGuaranteeWhileShrinking(t *testing.T) {
	h := newHarness(t)
	h.populate(4000, "k:")
	i := 0
	keys, _ := h.scanAll("COUNT 5", func(int) {
		for range 40 {
			if i < 3900 {
				h.expect("DEL k:"+itoa(i), n(1))
				i++
			}
		}
	})
	seen := distinct(keys)
	for j := 3900; j < 4000; j++ {
		if !seen["k:"+itoa(j)] {
			t.Fatalf("k:%d never returned while the table shrank", j)
		}
	}
}
