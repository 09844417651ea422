package server

import (
	"sort"
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

func init() {
	register(&serverCmd{name: "command", arity: -1, run: cmdCommand})
}

// serverSpecs describe the commands the server runs itself, as Redis 7.0's
// COMMAND reports them; data commands come from keyspace.Specs.
var serverSpecs = []*keyspace.CommandSpec{
	{Name: "ping", Arity: -1, Flags: []string{"fast"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "echo", Arity: 2, Flags: []string{"loading", "stale", "fast"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "select", Arity: 2, Flags: []string{"loading", "stale", "fast"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "quit", Arity: -1, Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "reset", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "auth", Arity: -2, Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "hello", Arity: -1, Flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, ACLCategories: []string{"@fast", "@connection"}},
	{Name: "client", Arity: -2, ACLCategories: []string{"@slow"}},
	{Name: "config", Arity: -2, ACLCategories: []string{"@slow"}},
	{Name: "command", Arity: -1, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
	{Name: "info", Arity: -1, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@dangerous"}},
	{Name: "time", Arity: 1, Flags: []string{"loading", "stale", "fast"}, ACLCategories: []string{"@fast"}},
	{Name: "lastsave", Arity: 1, Flags: []string{"loading", "stale", "fast"}, ACLCategories: []string{"@admin", "@fast", "@dangerous"}},
	{Name: "debug", Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "function", Arity: -2, ACLCategories: []string{"@slow"}},
	{Name: "shutdown", Arity: -1, Flags: []string{"admin", "noscript", "loading", "stale", "no_multi", "allow_busy"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "sync", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "psync", Arity: -3, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "replconf", Arity: -1, Flags: []string{"admin", "noscript", "loading", "stale", "allow_busy"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "bgrewriteaof", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "wait", Arity: 3, Flags: []string{"noscript"}, ACLCategories: []string{"@slow", "@connection"}},
	{Name: "subscribe", Arity: -2, Flags: []string{"pubsub", "noscript", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
	{Name: "unsubscribe", Arity: -1, Flags: []string{"pubsub", "noscript", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
	{Name: "psubscribe", Arity: -2, Flags: []string{"pubsub", "noscript", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
	{Name: "punsubscribe", Arity: -1, Flags: []string{"pubsub", "noscript", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
	{Name: "ssubscribe", Arity: -2, Flags: []string{"pubsub", "noscript", "loading", "stale"}, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: []string{"@pubsub", "@slow"}},
	{Name: "sunsubscribe", Arity: -1, Flags: []string{"pubsub", "noscript", "loading", "stale"}, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: []string{"@pubsub", "@slow"}},
	{Name: "publish", Arity: 3, Flags: []string{"pubsub", "loading", "stale", "fast"}, ACLCategories: []string{"@pubsub", "@fast"}},
	{Name: "spublish", Arity: 3, Flags: []string{"pubsub", "loading", "stale", "fast"}, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: []string{"@pubsub", "@fast"}},
	{Name: "pubsub", Arity: -2, ACLCategories: []string{"@slow"}},
	{Name: "migrate", Arity: -6, Flags: []string{"write", "movablekeys"}, FirstKey: 3, LastKey: 3, Step: 1, ACLCategories: []string{"@keyspace", "@write", "@slow", "@dangerous"}, MovableKeys: migrateKeys},
	{Name: "replicaof", Arity: 3, Flags: []string{"admin", "noscript", "stale", "no_async_loading"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "slaveof", Arity: 3, Flags: []string{"admin", "noscript", "stale", "no_async_loading"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "role", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast"}, ACLCategories: []string{"@admin", "@fast", "@dangerous"}},
	{Name: "save", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "bgsave", Arity: -1, Flags: []string{"admin", "noscript", "no_async_loading"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	{Name: "slowlog", Arity: -2, ACLCategories: []string{"@slow"}},
	{Name: "latency", Arity: -2, ACLCategories: []string{"@slow"}},
	{Name: "multi", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, ACLCategories: []string{"@fast", "@transaction"}},
	{Name: "exec", Arity: 1, Flags: []string{"noscript", "loading", "stale", "skip_slowlog"}, ACLCategories: []string{"@slow", "@transaction"}},
	{Name: "discard", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, ACLCategories: []string{"@fast", "@transaction"}},
	{Name: "watch", Arity: -2, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: []string{"@fast", "@transaction"}},
	{Name: "unwatch", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"}, ACLCategories: []string{"@fast", "@transaction"}},
}

// findServerSpec returns the spec of a server command moond answers, nil
// for none.
func findServerSpec(name string) *keyspace.CommandSpec {
	name = strings.ToLower(name)
	for _, s := range serverSpecs {
		if s.Name == name && commands[s.Name] != nil {
			return s
		}
	}
	return nil
}

// migrateKeys are MIGRATE's key positions: the key argument, or, when it
// is empty, the keys after KEYS (Redis's migrateGetKeys).
func migrateKeys(args [][]byte, dst []int) []int {
	if len(args) > 3 && len(args[3]) > 0 {
		return append(dst, 3)
	}
	for j := 6; j < len(args); j++ {
		switch strings.ToLower(string(args[j])) {
		case "auth":
			j++
		case "auth2":
			j += 2
		case "keys":
			for k := j + 1; k < len(args); k++ {
				dst = append(dst, k)
			}
			return dst
		}
	}
	return dst
}

// allSpecs is every command moond answers, sorted by name.
func allSpecs() []*keyspace.CommandSpec {
	byName := map[string]*keyspace.CommandSpec{}
	for _, s := range serverSpecs {
		byName[s.Name] = s
	}
	for _, s := range keyspace.Specs() {
		byName[s.Name] = s
	}
	out := make([]*keyspace.CommandSpec, 0, len(byName))
	for _, s := range byName {
		if commands[s.Name] != nil {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// findSpec is the spec of the command named name, or of a container's
// subcommand named "config|get"; nil for none.
func findSpec(name string) *keyspace.CommandSpec {
	name = strings.ToLower(name)
	if container, sub, ok := cutPipe(name); ok {
		if s := findSpec(container); s != nil && sub != "" {
			return s.Subcommand([]byte(sub))
		}
		return nil
	}
	for _, s := range allSpecs() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// commandHelp is COMMAND HELP, Redis 7.0's text.
var commandHelp = []string{"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)", "    Return details about all Redis commands.",
	"COUNT", "    Return the total number of commands in this Redis server.",
	"LIST", "    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>", "    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full Redis command.",
	"HELP", "    Prints this help."}

func cmdCommand(c *conn, args [][]byte) {
	if len(args) == 1 {
		specs := allSpecs()
		c.replyLocal(func(w *resp.Writer) {
			w.ArrayHeader(len(specs))
			for _, s := range specs {
				writeCommandInfo(w, s)
			}
		})
		return
	}
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "count" && len(args) == 2:
		n := len(allSpecs())
		c.replyLocal(func(w *resp.Writer) { w.Int(int64(n)) })
	case sub == "list" && (len(args) == 2 || len(args) == 5):
		cmdCommandList(c, args)
	case sub == "info":
		var specs []*keyspace.CommandSpec
		if len(args) == 2 {
			specs = allSpecs()
		} else {
			for _, a := range args[2:] {
				specs = append(specs, findSpec(string(a)))
			}
		}
		c.replyLocal(func(w *resp.Writer) {
			w.ArrayHeader(len(specs))
			for _, s := range specs {
				if s == nil {
					w.NullArray()
					continue
				}
				writeCommandInfo(w, s)
			}
		})
	case sub == "docs":
		var specs []*keyspace.CommandSpec
		if len(args) == 2 {
			specs = allSpecs()
		} else {
			for _, a := range args[2:] {
				if s := findSpec(string(a)); s != nil {
					specs = append(specs, s)
				}
			}
		}
		c.replyLocal(func(w *resp.Writer) {
			w.MapHeader(len(specs))
			for _, s := range specs {
				w.BulkString(s.Name)
				writeCommandDocs(w, s)
			}
		})
	case sub == "getkeys" && len(args) >= 3:
		commandGetKeys(c, args[2:], false)
	case sub == "getkeysandflags" && len(args) >= 3:
		commandGetKeys(c, args[2:], true)
	case sub == "help" && len(args) == 2:
		c.replyLocal(func(w *resp.Writer) {
			writeHelp(w, commandHelp)
		})
	default:
		c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try COMMAND HELP.")
	}
}

// writeCommandInfo writes one entry of COMMAND / COMMAND INFO in Redis 7's
// shape: name, arity, flags, first key, last key, step, ACL categories,
// tips, key specs, subcommands.
func writeCommandInfo(w *resp.Writer, s *keyspace.CommandSpec) {
	w.ArrayHeader(10)
	w.BulkString(s.Name)
	w.Int(int64(s.Arity))
	w.SetHeader(len(s.Flags))
	for _, f := range s.Flags {
		w.SimpleString(f)
	}
	w.Int(int64(s.FirstKey))
	w.Int(int64(s.LastKey))
	w.Int(int64(s.Step))
	w.SetHeader(len(s.ACLCategories))
	for _, a := range s.ACLCategories {
		w.SimpleString(a)
	}
	writeCommandTips(w, s)
	writeCommandKeySpecs(w, s)
	if len(s.Subcommands) == 0 {
		w.SetHeader(0) // as Redis 7.0 answers for a command without subcommands
		return
	}
	w.ArrayHeader(len(s.Subcommands))
	for _, sub := range s.Subcommands {
		writeCommandInfo(w, sub)
	}
}
