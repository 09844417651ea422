package keyspace

import (
	"slices"
	"testing"
)

func TestLookupIgnoresCaseAndDoesNotAllocate(t *testing.T) {
	for _, name := range []string{"get", "GET", "GeT", "pexpiretime", "INCRBYFLOAT", "object"} {
		s := Lookup([]byte(name))
		if s == nil || !equalFold([]byte(name), s.Name) {
			t.Errorf("Lookup(%q) = %v", name, s)
		}
	}
	for _, name := range []string{"", "ge", "gets", "object|encoding", "ping", string(make([]byte, 100))} {
		if s := Lookup([]byte(name)); s != nil {
			t.Errorf("Lookup(%q) = %s", name, s.Name)
		}
	}
	name := []byte("MGET")
	if n := testing.AllocsPerRun(100, func() { Lookup(name) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

// The table must be consistent: a handler for every command, key positions
// that fit the arity, flags and categories from the known sets.
func TestCommandTableIsConsistent(t *testing.T) {
	flags := []string{"write", "readonly", "denyoom", "fast", "loading", "stale", "movablekeys", "admin", "blocking", "noscript"}
	cats := []string{"@keyspace", "@read", "@write", "@string", "@hash", "@list", "@set", "@sortedset", "@bitmap", "@hyperloglog", "@admin", "@fast", "@slow", "@dangerous", "@blocking"}
	var check func(s *CommandSpec)
	check = func(s *CommandSpec) {
		if s.run == nil && s.Subcommands == nil {
			t.Errorf("%s: no handler", s.Name)
		}
		for _, f := range s.Flags {
			if !slices.Contains(flags, f) {
				t.Errorf("%s: flag %q", s.Name, f)
			}
		}
		fast := slices.Contains(s.Flags, "fast")
		if fast != slices.Contains(s.ACLCategories, "@fast") || fast == slices.Contains(s.ACLCategories, "@slow") {
			t.Errorf("%s: fast flag and categories disagree", s.Name)
		}
		if slices.Contains(s.Flags, "write") != slices.Contains(s.ACLCategories, "@write") ||
			slices.Contains(s.Flags, "readonly") != slices.Contains(s.ACLCategories, "@read") {
			t.Errorf("%s: read/write flags and categories disagree", s.Name)
		}
		for _, c := range s.ACLCategories {
			if !slices.Contains(cats, c) {
				t.Errorf("%s: category %q", s.Name, c)
			}
		}
		if s.FirstKey > 0 {
			minArgs := s.Arity
			if minArgs < 0 {
				minArgs = -minArgs
			}
			if s.LastKey > 0 && s.LastKey >= minArgs || s.FirstKey >= minArgs || s.Step < 1 {
				t.Errorf("%s: keys %d..%d/%d do not fit arity %d", s.Name, s.FirstKey, s.LastKey, s.Step, s.Arity)
			}
		}
		for _, sub := range s.Subcommands {
			check(sub)
		}
	}
	for _, s := range Specs() {
		check(s)
	}
}

func TestKeyPositions(t *testing.T) {
	tests := []struct {
		name string
		argc int
		want []int
	}{
		{"get", 2, []int{1}},
		{"mset", 7, []int{1, 3, 5}},
		{"mget", 4, []int{1, 2, 3}},
		{"del", 2, []int{1}},
		{"lcs", 5, []int{1, 2}},
		{"rename", 3, []int{1, 2}},
		{"keys", 2, nil},
		{"set", 6, []int{1}},
	}
	for _, tc := range tests {
		if got := Lookup([]byte(tc.name)).KeyPositions(tc.argc); !slices.Equal(got, tc.want) {
			t.Errorf("%s with %d args: keys %v, want %v", tc.name, tc.argc, got, tc.want)
		}
	}
	if got := Lookup([]byte("object")).Subcommands[0].KeyPositions(3); !slices.Equal(got, []int{2}) {
		t.Errorf("object|encoding keys %v", got)
	}
}
