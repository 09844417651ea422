package server

import (
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// cmdCommandList is COMMAND LIST [FILTERBY MODULE name | ACLCAT category |
// PATTERN pattern]. Without a filter it names the commands; with one it
// names the commands and subcommands that pass it, as Redis 7.0 does.
// moond has no modules, so FILTERBY MODULE names none.
func cmdCommandList(c *conn, args [][]byte) {
	var keep func(s *keyspace.CommandSpec) bool
	if len(args) == 5 {
		if keep = commandListFilter(args[2:]); keep == nil {
			c.errorReply("ERR syntax error")
			return
		}
	}
	var names []string
	var walk func(specs []*keyspace.CommandSpec)
	walk = func(specs []*keyspace.CommandSpec) {
		for _, s := range specs {
			if keep == nil || keep(s) {
				names = append(names, s.Name)
			}
			if keep != nil {
				walk(s.Subcommands)
			}
		}
	}
	walk(allSpecs())
	c.replyLocal(func(w *resp.Writer) {
		w.ArrayHeader(len(names))
		for _, n := range names {
			w.BulkString(n)
		}
	})
}

// commandListFilter is the test of FILTERBY kind arg, nil for a syntax
// error.
func commandListFilter(args [][]byte) func(s *keyspace.CommandSpec) bool {
	if !strings.EqualFold(string(args[0]), "filterby") {
		return nil
	}
	arg := string(args[2])
	switch strings.ToLower(string(args[1])) {
	case "module":
		return func(*keyspace.CommandSpec) bool { return false }
	case "aclcat":
		return func(s *keyspace.CommandSpec) bool {
			for _, cat := range s.ACLCategories {
				if strings.EqualFold(cat[1:], arg) {
					return true
				}
			}
			return false
		}
	case "pattern":
		return func(s *keyspace.CommandSpec) bool {
			return keyspace.Match([]byte(arg), []byte(s.Name), true)
		}
	}
	return nil
}
