package tests

import (
	"slices"
	"strings"
	"testing"
)

// TestClientInfoFieldsMatchRedisServer: CLIENT INFO and CLIENT LIST name
// the fields redis-server 7.0 names, in its order (their values, buffer
// sizes and ids, are each server's own).
func TestClientInfoFieldsMatchRedisServer(t *testing.T) {
	t.Parallel()
	rs := startRedisServer(t)
	mc := startServer(t, "pool", 2).client(2)
	for _, cmd := range [][]any{{"CLIENT", "INFO"}, {"CLIENT", "LIST", "TYPE", "normal"}} {
		want, err := rs.Do(ctx(t), cmd...).Text()
		if err != nil {
			t.Fatal(err)
		}
		got, err := mc.Do(ctx(t), cmd...).Text()
		if err != nil {
			t.Fatal(err)
		}
		if w, g := clientFields(want), clientFields(got); !slices.Equal(w, g) {
			t.Errorf("%v fields:\nredis-server %v\nmoond        %v", cmd, w, g)
		}
	}
}

// clientFields are the field names of the first line of a CLIENT INFO or
// CLIENT LIST reply.
func clientFields(reply string) []string {
	line, _, _ := strings.Cut(reply, "\n")
	var names []string
	for _, f := range strings.Fields(line) {
		name, _, _ := strings.Cut(f, "=")
		names = append(names, name)
	}
	return names
}
