package keyspace

import (
	"slices"
	"strings"
	"testing"
)

// moveAll exports every key of from into to, as a reshard does.
func moveAll(t *testing.T, from *harness, to *harness) int {
	t.Helper()
	n := 0
	err := from.ks.ExportKeys(from.clock, func(k MovedKey) error {
		n++
		return to.ks.ImportKey(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMovedKeysKeepValueTTLAndLogicalDatabase moves strings of every
// representation, with and without a TTL, across a SWAPDB, and checks
// that each lands in the database a client saw it in with its value,
// its encoding and its absolute expiry; an expired key is dropped.
func TestMovedKeysKeepValueTTLAndLogicalDatabase(t *testing.T) {
	src := newHarness(t)
	src.script(
		"SET plain hello", "OK",
		"SET n 12345", "OK",
		"SET ttl v PX 5000", "OK",
		"SET gone v PX 10", "OK",
		"APPEND grown abc", "(integer) 3",
		"APPEND grown def", "(integer) 6",
	)
	src.do("SET", "empty", "")
	src.do("SET", "big", strings.Repeat("x", 100_000))
	src.selectDB(1)
	src.expect("SET other 1", "OK")
	src.selectDB(0)
	src.expect("SWAPDB 0 2", "OK") // the keys of 0 are now in 2
	src.advance(100)               // "gone" expired, never accessed

	dst := newHarness(t)
	dst.clock = src.clock
	if n := moveAll(t, src, dst); n != 7 {
		t.Fatalf("moved %d keys, want 7 (the expired one dropped)", n)
	}
	dst.selectDB(2)
	dst.script(
		"GET plain", q("hello"),
		"OBJECT ENCODING n", q("int"),
		"GET n", q("12345"),
		"PEXPIRETIME ttl", n(startClock+5000),
		"PEXPIRETIME plain", n(-1),
		"GET grown", q("abcdef"),
		"EXISTS gone", n(0),
		"STRLEN big", n(100_000),
		"STRLEN empty", n(0),
		"DBSIZE", n(6),
	)
	dst.selectDB(1)
	dst.expect("GET other", q("1"))
	dst.selectDB(0)
	dst.expect("DBSIZE", n(0))
}

// TestImportedKeyIsJournaledAsApplyPut checks that a moved key reaches the
// Log as MOOND.APPLY PUT, and that replaying that record in another
// keyspace builds the same key.
func TestImportedKeyIsJournaledAsApplyPut(t *testing.T) {
	src := newHarness(t)
	src.expect("SET k v PX 7000", "OK")
	dst := newHarness(t)
	dst.recordJournal()
	moveAll(t, src, dst)
	want := []string{"MOOND.APPLY", "PUT", "0", "k", "0", "v", "1700000007000"}
	if len(dst.records) != 1 || !slices.Equal(dst.records[0].args, want) {
		t.Fatalf("journal %v, want one record %v", dst.records, want)
	}
	again := newHarness(t)
	again.ks.Loading = true
	again.do(want...)
	again.ks.Loading = false
	again.expect("PEXPIRETIME k", n(startClock+7000))
	again.expect("GET k", q("v"))
}

// TestImportKeyRefusesBadInput: a database out of range, a negative
// expiry or a kind with no decoder is an error and changes nothing.
func TestImportKeyRefusesBadInput(t *testing.T) {
	h := newHarness(t)
	for _, k := range []MovedKey{
		{DB: 16, Key: []byte("a"), Value: []byte("v")},
		{DB: -1, Key: []byte("a"), Value: []byte("v")},
		{Key: []byte("a"), Value: []byte("v"), Expiry: -5},
		{Key: []byte("a"), Kind: Kind(200), Value: []byte("v")},
	} {
		if err := h.ks.ImportKey(k); err == nil {
			t.Errorf("ImportKey(%+v) accepted", k)
		}
	}
	h.expect("DBSIZE", n(0))
}
