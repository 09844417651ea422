package keyspace

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Ported from set.tcl: SPOP, SRANDMEMBER and SSCAN.

var randomContents = map[string][]string{
	"listpack": strings.Fields("a b c d e f g h i j k l m n o p q r s t u v w x y z"),
	"intset":   seq(1, 27),
	"hashtable": append([]string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
		strings.Fields("b c d e f g h i j k l m n o p q r s t u v w x y z")...),
}

func TestSPop(t *testing.T) {
	h := newSetHarness(t)
	for typ, contents := range map[string][]string{"listpack": {"a", "b", "c"}, "intset": {"1", "2", "3"}} {
		h.createSet("myset", contents...)
		h.expectEncoding("myset", typ)
		var got []string
		for range 3 {
			s, _ := strconv.Unquote(h.run("SPOP myset"))
			got = append(got, s)
		}
		expectList(t, "SPOP "+typ, sorted(got), contents...)
		h.expect("SCARD myset", n(0))
		h.expect("SPOP myset", "(nil)")

		h.createSet("myset", contents...)
		got = nil
		for range 3 {
			got = append(got, h.list("SPOP", "myset", "1")...)
		}
		expectList(t, "SPOP 1 "+typ, sorted(got), contents...)
	}
	for typ, contents := range randomContents {
		h.createSet("myset", contents...)
		h.expectEncoding("myset", typ)
		var got []string
		for _, c := range []string{"11", "9", "0", "4", "1", "0", "1", "0"} {
			got = append(got, h.list("SPOP", "myset", c)...)
		}
		expectList(t, "SPOP count "+typ, sorted(got), contents...)
		h.expect("SCARD myset", n(0))
	}
	h.createSet("myset", seq(1, 21)...)
	for _, step := range [][2]string{{"1", "19"}, {"2", "17"}, {"3", "14"}, {"10", "4"}, {"10", "0"}, {"1", "0"}} {
		h.do("SPOP", "myset", step[0])
		h.expect("SCARD myset", "(integer) "+step[1])
	}
	h.script(
		"SPOP nonexisting_key 100", "[]",
		"SPOP myset -1", "(error) "+errPositive,
		"SPOP myset x", "(error) "+errPositive,
		"SPOP myset 1 2", "(error) "+errSyntax,
	)
	// The three code paths, on each encoding.
	for typ, contents := range map[string][]string{"intset": seq(1, 21), "listpack": append([]string{"a"}, seq(2, 21)...),
		"hashtable": append([]string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}, seq(2, 21)...)} {
		h.createSet("myset", contents...)
		expectList(t, "path 1", h.list("SPOP", "myset", "30"), contents...)
		h.expect("EXISTS myset", n(0))
		for _, c := range []int{2, 18} {
			h.createSet("myset", contents...)
			res := h.list("SPOP", "myset", strconv.Itoa(c))
			if len(res) != c {
				t.Errorf("%s: SPOP %d gave %d", typ, c, len(res))
			}
			expectList(t, "union", sorted(append(res, h.members("myset")...)), contents...)
		}
	}
	// A hashtable popped down to a few members is rebuilt small, as Redis does.
	h.createSet("big", seq(0, 200)...)
	h.do("SADD", "big", "x")
	h.expectEncoding("big", "hashtable")
	h.do("SPOP", "big", "195")
	h.expect("SCARD big", n(6))
	h.expectEncoding("big", "listpack")
}

func sorted(s []string) []string { slices.Sort(s); return s }

func TestSRandMember(t *testing.T) {
	h := newSetHarness(t)
	for typ, contents := range map[string][]string{"listpack": {"a", "b", "c"}, "intset": {"1", "2", "3"}} {
		h.createSet("myset", contents...)
		seen := map[string]bool{}
		for range 100 {
			s, _ := strconv.Unquote(h.run("SRANDMEMBER myset"))
			seen[s] = true
		}
		expectList(t, "SRANDMEMBER "+typ, sorted(mapKeys(seen)), contents...)
	}
	h.script(
		"SRANDMEMBER myset 0", "[]",
		"SRANDMEMBER nonexisting_key 100", "[]",
		"SRANDMEMBER nonexisting_key", "(nil)",
		"SRANDMEMBER myset -9223372036854775808", "(error) "+errSRandRange,
		"SRANDMEMBER myset x", "(error) "+errNotInteger,
		"SRANDMEMBER myset 1 2", "(error) "+errSyntax,
	)
	const nums = "1 5 10 50 125 50000 33959417 4775547 65434162 12098459 427716 483706 2726473884 72615637475"
	fifty := map[string][]string{
		"listpack":  append(strings.Fields(nums), strings.Fields("MARY PATRICIA LINDA BARBARA ELIZABETH JENNIFER MARIA SUSAN MARGARET DOROTHY LISA NANCY KAREN BETTY HELEN SANDRA DONNA CAROL RUTH SHARON MICHELLE LAURA SARAH KIMBERLY DEBORAH JESSICA SHIRLEY CYNTHIA ANGELA MELISSA BRENDA AMY ANNA REBECCA VIRGINIA KATHLEEN")...),
		"intset":    seq(0, 50),
		"hashtable": append(append([]string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}, strings.Fields(nums)...), strings.Fields("MARY PATRICIA LINDA BARBARA ELIZABETH JENNIFER MARIA SUSAN MARGARET DOROTHY LISA NANCY KAREN BETTY HELEN SANDRA DONNA CAROL RUTH SHARON MICHELLE LAURA SARAH KIMBERLY DEBORAH JESSICA SHIRLEY CYNTHIA ANGELA MELISSA BRENDA AMY ANNA REBECCA VIRGINIA")...),
	}
	for typ, contents := range fifty {
		if len(contents) != 50 {
			t.Fatalf("%s: %d contents", typ, len(contents))
		}
		h.createSet("myset", contents...)
		h.expectEncoding("myset", typ)
		in := map[string]bool{}
		for _, m := range contents {
			in[m] = true
		}
		res := h.list("SRANDMEMBER", "myset", "-100")
		if len(res) != 100 {
			t.Errorf("%s: SRANDMEMBER -100 gave %d", typ, len(res))
		}
		for _, m := range res {
			if !in[m] {
				t.Errorf("%s: %q is not a member", typ, m)
			}
		}
		eventuallyAll(t, h, typ, "-10", len(contents))
		for _, size := range []string{"50", "100"} {
			expectList(t, typ+" "+size, h.list("SRANDMEMBER", "myset", size), contents...)
		}
		for _, size := range []int{45, 5} {
			res := h.list("SRANDMEMBER", "myset", strconv.Itoa(size))
			if len(slices.Compact(res)) != size {
				t.Errorf("%s: SRANDMEMBER %d gave %d distinct", typ, size, len(slices.Compact(res)))
			}
			eventuallyAll(t, h, typ, strconv.Itoa(size), len(contents))
		}
	}
}

// eventuallyAll checks that SRANDMEMBER myset count returns every member
// within 1000 calls.
func eventuallyAll(t *testing.T, h *harness, typ, count string, size int) {
	t.Helper()
	seen := map[string]bool{}
	for range 1000 {
		for _, m := range h.list("SRANDMEMBER", "myset", count) {
			seen[m] = true
		}
		if len(seen) == size {
			return
		}
	}
	t.Errorf("%s: SRANDMEMBER %s saw %d of %d members", typ, count, len(seen), size)
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSScan(t *testing.T) {
	h := newSetHarness(t)
	for typ, contents := range map[string][]string{"intset": seq(0, 100), "listpack": append([]string{"a"}, seq(0, 50)...),
		"hashtable": append([]string{"a"}, seq(0, 1000)...)} {
		h.createSet("s", contents...)
		h.expectEncoding("s", typ)
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
		expectList(t, "SSCAN "+typ, sorted(mapKeys(seen)), contents...)
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
