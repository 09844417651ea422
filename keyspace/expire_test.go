package keyspace

import (
	"testing"
	"time"
)

// Ported from Redis's tests/unit/expire.tcl, with a fake clock.

func TestExpireSetTimeoutsMultipleTimes(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET x foobar", "OK",
		"EXPIRE x 5", n(1),
		"TTL x", n(5),
		"EXPIRE x 10", n(1),
		"TTL x", n(10),
		"EXPIRE x 2", n(1),
		"GET x", q("foobar"),
	)
	h.advance(2100)
	h.script("GET x", "(nil)", "EXISTS x", n(0))
}

func TestExpireAt(t *testing.T) {
	h := newHarness(t)
	h.script("SET x foo", "OK", "EXPIREAT x "+itoa64(h.clock/1000+15), n(1), "TTL x", n(15))
}

func TestSetEx(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SETEX x 12 test", "OK",
		"TTL x", n(12),
		"GET x", q("test"),
		"SETEX y 1 foo", "OK",
		"GET y", q("foo"),
	)
	h.advance(1100)
	h.script("GET y", "(nil)", "SETEX z -10 foo", "(error) ERR invalid expire time in 'setex' command")
}

func TestPersist(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET x foo", "OK",
		"EXPIRE x 50", n(1),
		"TTL x", n(50),
		"PERSIST x", n(1),
		"TTL x", n(-1),
		"GET x", q("foo"),
		"PERSIST x", n(0),
		"PERSIST nokeyatall", n(0),
	)
}

func TestExpirePrecisionIsTheMillisecond(t *testing.T) {
	h := newHarness(t)
	h.expect("SETEX x 1 somevalue", "OK")
	h.advance(900)
	h.expect("GET x", q("somevalue"))
	h.advance(1100)
	h.expect("GET x", "(nil)")
}

func TestSubSecondExpires(t *testing.T) {
	h := newHarness(t)
	h.expect("PSETEX x 100 somevalue", "OK")
	h.advance(80)
	h.expect("GET x", q("somevalue"))
	h.advance(120)
	h.expect("GET x", "(nil)")

	h.script("SET x somevalue", "OK", "PEXPIRE x 100", n(1))
	h.advance(80)
	h.expect("GET x", q("somevalue"))
	h.advance(120)
	h.expect("GET x", "(nil)")

	h.script("SET x somevalue", "OK", "PEXPIREAT x "+itoa64(h.clock+200), n(1))
	h.advance(20)
	h.expect("GET x", q("somevalue"))
	h.advance(220)
	h.expect("GET x", "(nil)")
}

// A key expires when now is past its time, not at it.
func TestKeyLivesUntilItsExpiryMillisecond(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x v PX 100", "OK")
	h.advance(100)
	h.expect("GET x", q("v"))
	h.advance(1)
	h.expect("GET x", "(nil)")
}

func TestTTLAndPTTL(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SETEX x 10 somevalue", "OK",
		"TTL x", n(10),
		"SETEX x 1 somevalue", "OK",
		"PTTL x", n(1000),
		"SET x hello", "OK",
		"TTL x", n(-1),
		"PTTL x", n(-1),
		"EXPIRETIME x", n(-1),
		"PEXPIRETIME x", n(-1),
		"DEL x", n(1),
		"TTL x", n(-2),
		"PTTL x", n(-2),
		"EXPIRETIME x", n(-2),
		"PEXPIRETIME x", n(-2),
	)
	// TTL rounds to the nearest second.
	h.expect("SET x v PX 1499", "OK")
	h.expect("TTL x", n(1))
	h.expect("SET x v PX 1500", "OK")
	h.expect("TTL x", n(2))
}

func TestExpireTime(t *testing.T) {
	h := newHarness(t)
	abs := h.clock/1000 + 100
	h.script(
		"SET foo bar", "OK",
		"EXPIREAT foo "+itoa64(abs), n(1),
		"EXPIRETIME foo", n(abs),
		"PEXPIRETIME foo", n(abs*1000),
		"PEXPIREAT foo "+itoa64(abs*1000+123), n(1),
		"PEXPIRETIME foo", n(abs*1000+123),
	)
}

func TestActiveExpiry(t *testing.T) {
	h := newHarness(t)
	h.script("PSETEX key1 500 a", "OK", "PSETEX key2 500 a", "OK", "PSETEX key3 500 a", "OK", "DBSIZE", n(3))
	h.advance(1000)
	if got := h.ks.ActiveExpire(time.Second); got != 3 {
		t.Errorf("ActiveExpire expired %d keys, want 3", got)
	}
	h.expect("DBSIZE", n(0))
	if got := h.ks.Stats().ExpiredKeys; got != 3 {
		t.Errorf("expired_keys = %d", got)
	}
}

func TestLazyExpiry(t *testing.T) {
	h := newHarness(t)
	h.script("PSETEX key1 500 a", "OK", "PSETEX key2 500 a", "OK", "PSETEX key3 500 a", "OK", "DBSIZE", n(3))
	h.advance(1000)
	h.script("DBSIZE", n(3), "MGET key1 key2 key3", "[(nil) (nil) (nil)]", "DBSIZE", n(0))
}

// Many keys with a TTL, in several databases, of which some expired: the
// cycle reclaims every expired key (it goes on while samples are stale)
// and no live one.
func TestActiveExpiryReclaimsAllExpiredKeys(t *testing.T) {
	h := newHarness(t)
	for db := range 3 {
		h.selectDB(db)
		for i := range 3000 {
			ttl := "100"
			if i%4 == 0 {
				ttl = "100000"
			}
			h.expect("SET k"+itoa(i)+" v PX "+ttl, "OK")
		}
		h.expect("SET nottl v", "OK")
	}
	h.advance(1000)
	total := 0
	for range 100 {
		total += h.ks.ActiveExpire(time.Second)
	}
	for db := range 3 {
		if info := h.ks.DBInfo(db); info.Keys != 751 || info.Expires != 750 {
			t.Errorf("db%d: %+v after active expiry, want 751 keys, 750 expires", db, info)
		}
	}
	if total != 3*2250 {
		t.Errorf("expired %d keys, want %d", total, 3*2250)
	}
	if avg := h.ks.DBInfo(0).AvgTTL; avg <= 0 || avg > 100000 {
		t.Errorf("avg_ttl %d", avg)
	}
}

// A tiny budget stops the cycle early but it still makes progress.
func TestActiveExpiryRespectsItsBudget(t *testing.T) {
	h := newHarness(t)
	for i := range 20000 {
		h.expect("SET k"+itoa(i)+" v PX 10", "OK")
	}
	h.advance(100)
	got := h.ks.ActiveExpire(time.Nanosecond)
	if got == 0 || got >= 20000 {
		t.Errorf("one starved cycle expired %d keys", got)
	}
	if h.ks.Stats().ExpiredTimeCapReached == 0 {
		t.Error("time cap not counted")
	}
}

func TestExpireDoesNotResurrectKeys(t *testing.T) {
	h := newHarness(t)
	h.script("SET foo bar", "OK", "PEXPIRE foo 500", n(1))
	h.advance(1000)
	h.script("EXPIRE foo 10", n(0), "EXISTS foo", n(0))
}

func TestFiveKeysInFiveKeysOut(t *testing.T) {
	h := newHarness(t)
	h.script("SET a c", "OK", "EXPIRE a 5", n(1), "SET t c", "OK", "SET e c", "OK", "SET s c", "OK", "SET foo b", "OK")
	h.expectSorted("KEYS *", "a", "e", "foo", "s", "t")
}

func TestExpireErrors(t *testing.T) {
	h := newHarness(t)
	h.expect("SET foo bar", "OK")
	h.expectArgs("(error) ERR value is not an integer or out of range", "EXPIRE", "foo", "")
	h.script(
		// `when > LLONG_MAX - basetime`
		"EXPIRE foo 9223370399119966", "(error) ERR invalid expire time in 'expire' command",
		// `when > LLONG_MAX / 1000`
		"EXPIRE foo 9223372036854776", "(error) ERR invalid expire time in 'expire' command",
		"EXPIRE foo 10000000000000000", "(error) ERR invalid expire time in 'expire' command",
		"EXPIRE foo 18446744073709561", "(error) ERR invalid expire time in 'expire' command",
		"EXPIRE foo 18446744073709551616", "(error) ERR value is not an integer or out of range",
		"PEXPIRE foo 9223372036854770000", "(error) ERR invalid expire time in 'pexpire' command",
		// `when < LLONG_MIN / 1000`
		"EXPIRE foo -9223372036854776", "(error) ERR invalid expire time in 'expire' command",
		"EXPIRE foo -9999999999999999", "(error) ERR invalid expire time in 'expire' command",
		"EXPIREAT foo 9223372036854776", "(error) ERR invalid expire time in 'expireat' command",
		"TTL foo", n(-1),
		"PEXPIREAT foo 9223372036854770000", n(1),
		"PEXPIREAT foo -9223372036854770000", n(1),
		"TTL foo", n(-2),
	)
}

func TestExpireOptions(t *testing.T) {
	tests := []struct {
		name, set, cmd, reply, ttl string
	}{
		{"NX on a key with ttl", "SET foo bar EX 100", "EXPIRE foo 200 NX", n(0), n(100)},
		{"NX on a key without ttl", "SET foo bar", "EXPIRE foo 200 NX", n(1), n(200)},
		{"XX on a key with ttl", "SET foo bar EX 100", "EXPIRE foo 200 XX", n(1), n(200)},
		{"XX on a key without ttl", "SET foo bar", "EXPIRE foo 200 XX", n(0), n(-1)},
		{"GT on a key with lower ttl", "SET foo bar EX 100", "EXPIRE foo 200 GT", n(1), n(200)},
		{"GT on a key with higher ttl", "SET foo bar EX 200", "EXPIRE foo 100 GT", n(0), n(200)},
		{"GT on a key with equal ttl", "SET foo bar EX 200", "EXPIRE foo 200 GT", n(0), n(200)},
		{"GT on a key without ttl", "SET foo bar", "EXPIRE foo 200 GT", n(0), n(-1)},
		{"LT on a key with higher ttl", "SET foo bar EX 100", "EXPIRE foo 200 LT", n(0), n(100)},
		{"LT on a key with lower ttl", "SET foo bar EX 200", "EXPIRE foo 100 LT", n(1), n(100)},
		{"LT on a key without ttl", "SET foo bar", "EXPIRE foo 100 LT", n(1), n(100)},
		{"LT and XX on a key with ttl", "SET foo bar EX 200", "EXPIRE foo 100 LT XX", n(1), n(100)},
		{"LT and XX on a key without ttl", "SET foo bar", "EXPIRE foo 200 LT XX", n(0), n(-1)},
		{"negative expiry", "SET foo bar EX 100", "EXPIRE foo -10 LT", n(1), n(-2)},
		{"negative expiry on a non-volatile key", "SET foo bar", "EXPIRE foo -10 LT", n(1), n(-2)},
		{"zero expiry deletes", "SET foo bar", "PEXPIRE foo 0", n(1), n(-2)},
		{"lower-case options", "SET foo bar EX 100", "pexpire foo 200000 gt", n(1), n(200)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.expect(tc.set, "OK")
			h.expect(tc.cmd, tc.reply)
			h.expect("TTL foo", tc.ttl)
		})
	}
}

func TestExpireOptionErrors(t *testing.T) {
	h := newHarness(t)
	h.script(
		"EXPIRE foo 200 LT GT", "(error) ERR GT and LT options at the same time are not compatible",
		"EXPIRE foo 200 NX GT", "(error) ERR NX and XX, GT or LT options at the same time are not compatible",
		"EXPIRE foo 200 NX LT", "(error) ERR NX and XX, GT or LT options at the same time are not compatible",
		"EXPIRE foo 200 NX XX", "(error) ERR NX and XX, GT or LT options at the same time are not compatible",
		"EXPIRE foo 200 AB", "(error) ERR Unsupported option AB",
		"EXPIRE foo 200 XX AB", "(error) ERR Unsupported option AB",
		// The options are checked before the time.
		"EXPIRE foo abc NX XX", "(error) ERR NX and XX, GT or LT options at the same time are not compatible",
		"EXPIRE none 100 NX", n(0),
		"EXPIRE none 100 XX", n(0),
		"EXPIRE none 100 GT", n(0),
		"EXPIRE none 100 LT", n(0),
	)
}

func TestSetRemovesAndKeepTTLKeepsTheTTL(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo bar EX 100", "OK",
		"SET foo bar", "OK",
		"TTL foo", n(-1),
		"SET foo bar EX 100", "OK",
		"SET foo bar KEEPTTL", "OK",
		"TTL foo", n(100),
	)
}

func TestLoadingKeepsPastExpiryTimes(t *testing.T) {
	h := newHarness(t)
	h.ks.Loading = true
	h.script(
		"SET foo bar PXAT "+itoa64(h.clock-1000), "OK",
		"PEXPIREAT foo "+itoa64(h.clock-500), n(1),
		"GET foo", q("bar"),
		"SET k v", "OK",
		"EXPIRE k -10", n(1),
		"EXISTS k", n(1),
	)
	h.ks.Loading = false
	h.script("GET foo", "(nil)", "EXISTS k", n(0))
	if n := h.ks.ActiveExpire(time.Second); n != 0 {
		t.Errorf("ActiveExpire found %d more", n)
	}
}
