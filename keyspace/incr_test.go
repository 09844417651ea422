package keyspace

import (
	"strconv"
	"testing"
)

// Ported from Redis's tests/unit/type/incr.tcl.

func TestIncr(t *testing.T) {
	h := newHarness(t)
	h.script(
		// against a missing key
		"INCR novar", n(1),
		"GET novar", q("1"),
		// against a key created by INCR itself
		"INCR novar", n(2),
		// against a key set with SET
		"SET novar 100", "OK",
		"INCR novar", n(101),
		// over 32 bits
		"SET novar 17179869184", "OK",
		"INCR novar", n(17179869185),
		"SET novar 17179869184", "OK",
		"INCRBY novar 17179869184", n(34359738368),
		"SET novar 17179869184", "OK",
		"DECRBY novar 17179869185", n(-1),
		"DECR novar", n(-2),
	)
}

func TestIncrFailsAgainstKeyWithSpaces(t *testing.T) {
	h := newHarness(t)
	for _, v := range []string{"    11", "11    ", "    11    "} {
		h.expectArgs("OK", "SET", "novar", v)
		h.expect("INCR novar", "(error) ERR value is not an integer or out of range")
	}
}

func TestIncrErrors(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("mylist")
	h.script(
		"SET x 0", "OK",
		"DECRBY x -9223372036854775808", "(error) ERR decrement would overflow",
		"INCR mylist", "(error) "+errWrongType,
		"SET x 9223372036854775807", "OK",
		"INCR x", "(error) ERR increment or decrement would overflow",
		"SET x -9223372036854775808", "OK",
		"DECR x", "(error) ERR increment or decrement would overflow",
		"INCRBY x abc", "(error) ERR value is not an integer or out of range",
		"INCRBY x 1.5", "(error) ERR value is not an integer or out of range",
		"SET x 1.5", "OK",
		"INCR x", "(error) ERR value is not an integer or out of range",
		"SET x 01", "OK",
		"INCR x", "(error) ERR value is not an integer or out of range",
		"GET x", q("01"),
	)
}

func TestIncrUsesSharedObjectsInTheSmallRange(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo -1", "OK",
		"INCR foo", n(0),
		"OBJECT REFCOUNT foo", n(2147483647),
		"SET foo 9998", "OK",
		"INCR foo", n(9999),
		"OBJECT REFCOUNT foo", n(2147483647),
		"INCR foo", n(10000),
		"OBJECT REFCOUNT foo", n(1),
	)
}

func TestIncrKeepsTTL(t *testing.T) {
	h := newHarness(t)
	h.script("SET foo 1 EX 100", "OK", "INCR foo", n(2), "TTL foo", n(100))
}

func TestIncrByFloat(t *testing.T) {
	h := newHarness(t)
	h.script(
		// against a missing key
		"DEL novar", n(0),
		"INCRBYFLOAT novar 1", q("1"),
		"GET novar", q("1"),
		"INCRBYFLOAT novar 0.25", q("1.25"),
		"GET novar", q("1.25"),
		// against a key set with SET
		"SET novar 1.5", "OK",
		"INCRBYFLOAT novar 1.5", q("3"),
		// over 32 bits
		"SET novar 17179869184", "OK",
		"INCRBYFLOAT novar 1.5", q("17179869185.5"),
		"SET novar 17179869184", "OK",
		"INCRBYFLOAT novar 17179869184", q("34359738368"),
		// decrement
		"SET foo 1", "OK",
		"INCRBYFLOAT foo -1.1", q("-0.1"),
		// the examples of the INCRBYFLOAT documentation
		"SET mykey 10.50", "OK",
		"INCRBYFLOAT mykey 0.1", q("10.6"),
		"INCRBYFLOAT mykey -5", q("5.6"),
		"SET mykey 5.0e3", "OK",
		"INCRBYFLOAT mykey 2.0e2", q("5200"),
		// other notations strtold takes
		"SET f 0x10", "OK",
		"INCRBYFLOAT f 0x1p-1", q("16.5"),
		"INCRBYFLOAT f .5", q("17"),
		"INCRBYFLOAT f 3.", q("20"),
		"INCRBYFLOAT f +1e1", q("30"),
		// the result is a string, not an integer
		"OBJECT ENCODING f", q("embstr"),
	)
}

func TestIncrByFloatFailsAgainstKeyWithSpaces(t *testing.T) {
	h := newHarness(t)
	for _, v := range []string{"    11", "11    ", " 11 "} {
		h.expectArgs("OK", "SET", "novar", v)
		h.expect("INCRBYFLOAT novar 1.0", "(error) ERR value is not a valid float")
	}
}

func TestIncrByFloatErrors(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("mylist")
	h.script(
		"INCRBYFLOAT mylist 1.0", "(error) "+errWrongType,
		"SET foo 0", "OK",
		"INCRBYFLOAT foo +inf", "(error) ERR increment would produce NaN or Infinity",
		"INCRBYFLOAT foo -Infinity", "(error) ERR increment would produce NaN or Infinity",
		"INCRBYFLOAT foo nan", "(error) ERR value is not a valid float",
		"INCRBYFLOAT foo 1e", "(error) ERR value is not a valid float",
		"INCRBYFLOAT foo 1_000", "(error) ERR value is not a valid float",
		"INCRBYFLOAT foo 0x", "(error) ERR value is not a valid float",
		"INCRBYFLOAT foo abc", "(error) ERR value is not a valid float",
		"INCRBYFLOAT foo 1e5000", "(error) ERR value is not a valid float",
		"SET foo 1e4932", "OK",
		"INCRBYFLOAT foo 1e4932", "(error) ERR increment would produce NaN or Infinity",
		"GET foo", q("1e4932"),
	)
}

// Long doubles reach far beyond float64: 1e4000 is a number, printed in
// full with %.17Lf: some 4000 digits, the zeros after the point trimmed.
func TestIncrByFloatBeyondFloat64Range(t *testing.T) {
	h := newHarness(t)
	got := h.run("INCRBYFLOAT foo 1e4000")
	s, err := strconv.Unquote(got)
	if err != nil || !(len(s) == 4001 && s[:3] == "100" || len(s) == 4000 && s[:3] == "999") {
		t.Fatalf("INCRBYFLOAT foo 1e4000 = %.40s... (%d bytes)", got, len(s))
	}
}

// A string holding a NUL byte is not a float, even if what precedes the
// NUL is one.
func TestIncrByFloatStringWithNullTerminator(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo 1", "OK",
		"SETRANGE foo 2 2", n(3),
		"INCRBYFLOAT foo 1", "(error) ERR value is not a valid float",
	)
}

func TestIncrByFloatNoNegativeZero(t *testing.T) {
	h := newHarness(t)
	// Tcl's [expr double(1)/41], as the Redis test sends it.
	third := strconv.FormatFloat(1.0/41, 'g', -1, 64)
	h.do("INCRBYFLOAT", "foo", third)
	h.expectArgs(q("0"), "INCRBYFLOAT", "foo", "-"+third)
	h.expect("GET foo", q("0"))
}
