package keyspace

import "testing"

// TestExpiryPausedKeepsExpiredKeys: while expiry is paused (CLIENT
// PAUSE), a read finds an expired key missing but leaves it, and active
// expiry deletes nothing; a write deletes the expired key it meets, so
// that it creates the key once; once expiry runs again, a read deletes.
func TestExpiryPausedKeepsExpiredKeys(t *testing.T) {
	h := newHarness(t)
	h.do("SET", "a", "1", "PX", "10")
	h.do("SET", "b", "1", "PX", "10")
	h.ks.SetExpiryPaused(true)
	h.advance(20)
	if got := h.do("GET", "a"); got != "(nil)" {
		t.Fatalf("GET of an expired key while paused = %s, want (nil)", got)
	}
	if got := h.do("DBSIZE"); got != "(integer) 2" {
		t.Fatalf("DBSIZE after the read = %s: the read deleted the key", got)
	}
	if n := h.ks.ActiveExpire(1 << 30); n != 0 || h.ks.Stats().ExpiredKeys != 0 {
		t.Fatalf("active expiry while paused deleted %d (expired_keys %d)", n, h.ks.Stats().ExpiredKeys)
	}
	if got := h.do("RANDOMKEY"); got != `"a"` && got != `"b"` {
		t.Fatalf("RANDOMKEY over expired keys while paused = %s", got)
	}
	h.do("SET", "b", "2")
	if got := h.do("DBSIZE"); got != "(integer) 2" {
		t.Fatalf("DBSIZE after SET over an expired key = %s, want 2", got)
	}
	if got := h.do("GET", "b"); got != `"2"` {
		t.Fatalf("GET b = %s", got)
	}
	h.ks.SetExpiryPaused(false)
	if got := h.do("GET", "a"); got != "(nil)" {
		t.Fatalf("GET a after the pause = %s", got)
	}
	if got := h.do("DBSIZE"); got != "(integer) 1" {
		t.Fatalf("DBSIZE after the pause's read = %s, want 1", got)
	}
	if got := h.ks.Stats().ExpiredKeys; got != 2 {
		t.Fatalf("expired_keys = %d, want 2 (b by the write, a by the read)", got)
	}
}
