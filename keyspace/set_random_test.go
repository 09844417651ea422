package keyspace

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Ported from set.tcl: SPOP, SRANDMEMBER and SSCAN.

var spopContents = map[string][]string{
	"listpack": strings.Fields("a b c d e f g h i j k l m n o p q r s t u v w x y z"),
	"intset":   setSeq(1, 27),
	"hashtable": append([]string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
		strings.Fields("b c d e f g h i j k l m n o p q r s t u v w x y z")...),
}

func TestSPop(t *testing.T) {
	h := newSetHarness(t)
	for typ, contents := range map[string][]string{"listpack": {"a", "b", "c"}, "intset": {"1", "2", "3"}} {
		h.createSet("myset", contents...)
		h.expectSetEncoding("myset", typ)
		var got []string
		for range 3 {
			s, _ := strconv.Unquote(h.run("SPOP myset"))
			got = append(got, s)
		}
		expectMembers(t, "SPOP "+typ, setSorted(got), contents...)
		h.expect("SCARD myset", n(0))
		h.expect("SPOP myset", "(nil)")

		h.createSet("myset", contents...)
		got = nil
		for range 3 {
			got = append(got, h.sList("SPOP", "myset", "1")...)
		}
		expectMembers(t, "SPOP 1 "+typ, setSorted(got), contents...)
	}
	for typ, contents := range spopContents {
		h.createSet("myset", contents...)
		h.expectSetEncoding("myset", typ)
		var got []string
		for _, c := range []string{"11", "9", "0", "4", "1", "0", "1", "0"} {
			got = append(got, h.sList("SPOP", "myset", c)...)
		}
		expectMembers(t, "SPOP count "+typ, setSorted(got), contents...)
		h.expect("SCARD myset", n(0))
	}
	h.createSet("myset", setSeq(1, 21)...)
	for _, step := range [][2]string{{"1", "19"}, {"2", "17"}, {"3", "14"}, {"10", "4"}, {"10", "0"}, {"1", "0"}} {
		h.do("SPOP", "myset", step[0])
		h.expect("SCARD myset", "(integer) "+step[1])
	}
	h.script(
		"SPOP nonexisting_key 100", "[]",
		"SPOP myset -1", "(error) "+errSPopCount,
		"SPOP myset x", "(error) "+errSPopCount,
		"SPOP myset 1 2", "(error) "+errSyntax,
	)
	// The three code paths, on each encoding.
	for typ, contents := range map[string][]string{"intset": setSeq(1, 21), "listpack": append([]string{"a"}, setSeq(2, 21)...),
		"hashtable": append([]string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}, setSeq(2, 21)...)} {
		h.createSet("myset", contents...)
		expectMembers(t, "path 1", h.sList("SPOP", "myset", "30"), contents...)
		h.expect("EXISTS myset", n(0))
		for _, c := range []int{2, 18} {
			h.createSet("myset", contents...)
			res := h.sList("SPOP", "myset", strconv.Itoa(c))
			if len(res) != c {
				t.Errorf("%s: SPOP %d gave %d", typ, c, len(res))
			}
			expectMembers(t, "union", setSorted(append(res, h.smembers("myset")...)), contents...)
		}
	}
	// A hashtable popped down to a few members is rebuilt small, as Redis does.
	h.createSet("big", setSeq(0, 200)...)
	h.do("SADD", "big", "x")
	h.expectSetEncoding("big", "hashtable")
	h.do("SPOP", "big", "195")
	h.expect("SCARD big", n(6))
	h.expectSetEncoding("big", "listpack")
}

func setSorted(s []string) []string { slices.Sort(s); return s }

func TestSRandMember(t *testing.T) {
	h := newSetHarness(t)
	for typ, contents := range map[string][]string{"listpack": {"a", "b", "c"}, "intset": {"1", "2", "3"}} {
		h.createSet("myset", contents...)
		seen := map[string]bool{}
		for range 100 {
			s, _ := strconv.Unquote(h.run("SRANDMEMBER myset"))
			seen[s] = true
		}
		expectMembers(t, "SRANDMEMBER "+typ, setSorted(setKeysOf(seen)), contents...)
	}
	h.script(
		"SRANDMEMBER myset 0", "[]",
		"SRANDMEMBER nonexisting_key 100", "[]",
		"SRANDMEMBER nonexisting_key", "(nil)",
		"SRANDMEMBER myset -9223372036854775808", "(error) "+errSRandRange,
		"SRANDMEMBER myset x", "(error) "+errNotInteger,
		"SRANDMEMBER myset 1 2", "(error) "+errSyntax,
	)
	const setNums = "1 5 10 50 125 50000 33959417 4775547 65434162 12098459 427716 483706 2726473884 72615637475"
	fifty := map[string][]string{
		"listpack":  append(strings.Fields(setNums), strings.Fields("MARY PATRICIA LINDA BARBARA ELIZABETH JENNIFER MARIA SUSAN MARGARET DOROTHY LISA NANCY KAREN BETTY HELEN SANDRA DONNA CAROL RUTH SHARON MICHELLE LAURA SARAH KIMBERLY DEBORAH JESSICA SHIRLEY CYNTHIA ANGELA MELISSA BRENDA AMY ANNA REBECCA VIRGINIA KATHLEEN")...),
		"intset":    setSeq(0, 50),
		"hashtable": append(append([]string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}, strings.Fields(setNums)...), strings.Fields("MARY PATRICIA LINDA BARBARA ELIZABETH JENNIFER MARIA SUSAN MARGARET DOROTHY LISA NANCY KAREN BETTY HELEN SANDRA DONNA CAROL RUTH SHARON MICHELLE LAURA SARAH KIMBERLY DEBORAH JESSICA SHIRLEY CYNTHIA ANGELA MELISSA BRENDA AMY ANNA REBECCA VIRGINIA")...),
	}
	for typ, contents := range fifty {
		if len(contents) != 50 {
			t.Fatalf("%s: %d contents", typ, len(contents))
		}
		h.createSet("myset", contents...)
		h.expectSetEncoding("myset", typ)
		in := map[string]bool{}
		for _, m := range contents {
			in[m] = true
		}
		res := h.sList("SRANDMEMBER", "myset", "-100")
		if len(res) != 100 {
			t.Errorf("%s: SRANDMEMBER -100 gave %d", typ, len(res))
		}
		for _, m := range res {
			if !in[m] {
				t.Errorf("%s: %q is not a member", typ, m)
			}
		}
		srandEventuallyAll(t, h, typ, "-10", len(contents))
		for _, size := range []string{"50", "100"} {
			expectMembers(t, typ+" "+size, h.sList("SRANDMEMBER", "myset", size), contents...)
		}
		for _, size := range []int{45, 5} {
			res := h.sList("SRANDMEMBER", "myset", strconv.Itoa(size))
			if len(slices.Compact(res)) != size {
				t.Errorf("%s: SRANDMEMBER %d gave %d distinct", typ, size, len(slices.Compact(res)))
			}
			srandEventuallyAll(t, h, typ, strconv.Itoa(size), len(contents))
		}
	}
}

// srandEventuallyAll checks that SRANDMEMBER myset count returns every member
// within 1000 calls.
func srandEventuallyAll(t *testing.T, h *harness, typ, count string, size int) {
	t.Helper()
	seen := map[string]bool{}
	for range 1000 {
		for _, m := range h.sList("SRANDMEMBER", "myset", count) {
			seen[m] = true
		}
		if len(seen) == size {
			return
		}
	}
	t.Errorf("%s: SRANDMEMBER %s saw %d of %d members", typ, count, len(seen), size)
}

func setKeysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSScan(t *testing.T) {
	h := newSetHarness(t)
	for typ, contents := range map[string][]string{"intset": setSeq(0, 100), "listpack": append([]string{"a"}, setSeq(0, 50)...),
		"hashtable": append([]string{"a"}, setSeq(0, 1000)...)} {
		h.createSet("s", contents...)
		h.expectSetEncoding("s", typ)
		seen := map[string]bool{}
		cursor := "0"
		for calls := 0; ; calls++ {
			if calls > 10000 {
				t.Fatalf("%s: SSCAN does not end", typ)
			}
			r := h.do("SSCAN", "s", cursor, "COUNT", "20")
			open := strings.Index(r, " [")
			c, _ := strconv.Unquote(r[1:open])
			for _, f := range strings.Fields(strings.Trim(r[open+2:], "[]")) {
				m, _ := strconv.Unquote(f)
				seen[m] = true
			}
			if cursor = c; cursor == "0" {
				break
			}
		}
		expectMembers(t, "SSCAN "+typ, setSorted(setKeysOf(seen)), contents...)
	}
	h.createSet("s", "foo1", "foo2", "bar", "1")
	h.expect("SSCAN s 0 MATCH foo*", `["0" ["foo1" "foo2"]]`)
	h.expect("SSCAN s 0 MATCH foo* COUNT 1", `["0" ["foo1" "foo2"]]`)
	h.script(
		"SSCAN s 0 COUNT 0", "(error) "+errSyntax,
		"SSCAN s 0 COUNT x", "(error) "+errNotInteger,
		"SSCAN s 0 TYPE set", "(error) "+errSyntax,
		"SSCAN s 0 MATCH", "(error) "+errSyntax,
		"SSCAN s -1", `["0" ["foo1" "foo2" "bar" "1"]]`,
	)
}
