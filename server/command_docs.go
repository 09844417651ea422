package server

import (
	"sort"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// CommandNames are the full names of every command and subcommand moond
// answers ("get", "config|get"), sorted: the commands whose Redis
// documentation internal/cmddocgen records in command_docs.resp3.
func CommandNames() []string {
	var names []string
	var walk func(specs []*keyspace.CommandSpec)
	walk = func(specs []*keyspace.CommandSpec) {
		for _, s := range specs {
			names = append(names, s.Name)
			walk(s.Subcommands)
		}
	}
	walk(allSpecs())
	sort.Strings(names)
	return names
}

// writeCommandDocs writes the COMMAND DOCS entry of s: Redis's
// documentation of it, then that of the subcommands moond has.
func writeCommandDocs(w *resp.Writer, s *keyspace.CommandSpec) {
	doc := commandDocs[s.Name]
	n := len(doc.elems) / 2
	if len(s.Subcommands) > 0 {
		n++
	}
	w.MapHeader(n)
	doc.writeElems(w)
	if len(s.Subcommands) == 0 {
		return
	}
	w.BulkString("subcommands")
	w.MapHeader(len(s.Subcommands))
	for _, sub := range s.Subcommands {
		w.BulkString(sub.Name)
		writeCommandDocs(w, sub)
	}
}

// writeCommandTips writes COMMAND INFO's tips of s, an empty set where
// Redis has none.
func writeCommandTips(w *resp.Writer, s *keyspace.CommandSpec) {
	if v, ok := commandTips[s.Name]; ok {
		v.write(w)
		return
	}
	w.SetHeader(0)
}

// writeCommandKeySpecs writes COMMAND INFO's key specs of s, an empty
// set (Redis 7.0 answers key specs as a set) where Redis has none.
func writeCommandKeySpecs(w *resp.Writer, s *keyspace.CommandSpec) {
	if v, ok := commandKeySpecs[s.Name]; ok {
		v.write(w)
		return
	}
	w.SetHeader(0)
}
