package server

import (
	"testing"

	"github.com/moond-db/moond/keyspace"
)

// TestCommandGroupOfEachFamily: COMMAND DOCS names a command's group
// from its ACL categories, as Redis's command JSON files do.
func TestCommandGroupOfEachFamily(t *testing.T) {
	for name, want := range map[string]string{"get": "string", "hset": "hash", "lpush": "list", "sadd": "set",
		"zadd": "sorted_set", "setbit": "bitmap", "del": "generic"} {
		spec := keyspace.Lookup([]byte(name))
		if spec == nil {
			t.Fatalf("%s is not in the command table", name)
		}
		if got := commandGroup(spec); got != want {
			t.Errorf("group of %s = %q, want %q", name, got, want)
		}
	}
}
