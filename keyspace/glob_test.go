package keyspace

import (
	"strings"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		nocase     bool
		want       bool
	}{
		{"", "", false, true},
		{"", "a", false, false},
		{"a", "", false, false},
		// As in Redis, a pattern never matches the empty string, not even
		// "*" (KEYS * and SCAN MATCH * skip matching altogether).
		{"*", "", false, false},
		{"**", "", false, false},
		{"*", "anything", false, true},
		{"a*", "a", false, true},
		{"a*", "abc", false, true},
		{"a*", "bac", false, false},
		{"*c", "abc", false, true},
		{"*b*", "abc", false, true},
		{"a*b*c", "aXbYc", false, true},
		{"a*b*c", "aXbY", false, false},
		{"h?llo", "hello", false, true},
		{"h?llo", "hllo", false, false},
		{"?", "", false, false},
		{"h[ae]llo", "hallo", false, true},
		{"h[ae]llo", "hillo", false, false},
		{"h[^e]llo", "hallo", false, true},
		{"h[^e]llo", "hello", false, false},
		{"h[a-b]llo", "hbllo", false, true},
		{"h[a-b]llo", "hcllo", false, false},
		{"h[b-a]llo", "hallo", false, true}, // reversed range
		{"[a-]", "]", false, true},          // '-' ranges up to ']'
		{"[a-]", "-", false, false},
		{"[]a]", "]", false, false}, // "[]" is an empty class, then "a]"
		{"[]a]", "a]", false, false},
		{"[]", "x", false, false},
		{"[abc", "b", false, true}, // unterminated: closes at the end
		{"[abc", "bx", false, false},
		{"[", "", false, false},
		{"[", "x", false, false},
		{"[^", "x", false, true},
		{"[\\]]", "]", false, true},
		{"[\\-]", "-", false, true},
		{"[a\\-z]", "b", false, false},
		{"\\*", "*", false, true},
		{"\\*", "a", false, false},
		{"\\?", "?", false, true},
		{"\\[a]", "[a]", false, true},
		{"a\\", "a\\", false, true}, // a lone trailing backslash is a literal
		{"\\\\", "\\", false, true},
		{"HeLLo", "hello", true, true},
		{"HeLLo", "hello", false, false},
		{"h[A-Z]llo", "hello", true, true},
		{"h[A-Z]llo", "hello", false, false},
		{"[E]", "e", true, true},
		// Ranges compare as signed chars: 0x80-0xff sort below 'a'.
		{"[a-\xff]", "\xff", false, true},
		{"[a-\xff]", "b", false, false},
		{"[a-\xff]", "\x10", false, true},
		{"[a-\xff]", "\x80", false, false},
		{"[\x80-\xfe]", "\x90", false, true},
		{"*\x00*", "a\x00b", false, true},
		{"{a}*", "{a}x", false, true},
		{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false, false},
	}
	for _, tc := range tests {
		if got := Match([]byte(tc.pattern), []byte(tc.s), tc.nocase); got != tc.want {
			t.Errorf("Match(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.nocase, got, tc.want)
		}
	}
}

func TestMatchPathologicalPatternsAreFast(t *testing.T) {
	patterns := []struct{ p, s string }{
		{strings.Repeat("a*", 5000) + "b", strings.Repeat("a", 5000)},
		{strings.Repeat("*?", 50000), strings.Repeat("a", 50000)},
		{"*" + strings.Repeat("a*", 100) + "b", strings.Repeat("ab", 5000) + "a"},
		{strings.Repeat("*", 100000) + "x", strings.Repeat("y", 100000)},
	}
	for _, tc := range patterns {
		start := time.Now()
		if Match([]byte(tc.p), []byte(tc.s), false) {
			t.Errorf("pattern %.20q... matched", tc.p)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("pattern %.20q... took %v", tc.p, d)
		}
	}
}

// escape makes a pattern that matches exactly s.
func escape(s []byte) []byte {
	var p []byte
	for _, c := range s {
		p = append(p, '\\', c)
	}
	return p
}

// FuzzGlob checks that Match never panics, stays fast, and that escaped
// literals, with or without stars around them, match themselves.
func FuzzGlob(f *testing.F) {
	for _, seed := range []struct{ p, s string }{
		{"*", "abc"}, {"h[a-z]llo", "hello"}, {"[^a]", "b"}, {"\\", "\\"},
		{"[", "["}, {"a*a*a*b", "aaaaaa"}, {"[a-\xff]", "\x80"}, {"*?*?", "ab"},
	} {
		f.Add([]byte(seed.p), []byte(seed.s), false)
	}
	f.Fuzz(func(t *testing.T, pattern, s []byte, nocase bool) {
		start := time.Now()
		Match(pattern, s, nocase)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Match(%q, %q) took %v", pattern, s, d)
		}
		if !Match(escape(s), s, nocase) {
			t.Fatalf("escaped %q does not match itself", s)
		}
		star := append(append([]byte("*"), escape(s)...), '*')
		if len(s) > 0 && !Match(star, s, nocase) {
			t.Fatalf("*%q* does not match %q", s, s)
		}
		if len(s) > 0 && Match(escape(s), s[:len(s)-1], false) {
			t.Fatalf("escaped %q matches its prefix", s)
		}
	})
}
