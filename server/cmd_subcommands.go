package server

import (
	"slices"

	"github.com/moond-db/moond/keyspace"
)

// Per-subcommand figures. Redis 7.0 counts and times a container
// command's calls by subcommand ("config|set"): INFO commandstats and
// latencystats, LATENCY HISTOGRAM and the metrics' command label name
// them so. A subcommand has an entry of its own in commandList (stats
// only: it is not in commands, so no client can call "config|set" by that
// name); a container's unknown subcommand counts on the container.

// serverSubcommands are Redis 7.0's subcommands of the containers the
// server runs itself, as its COMMAND reports them; init hangs them under
// their container's spec in serverSpecs. Dispatch checks a call's arity
// against its subcommand's, and LOADING and MASTERDOWN read its flags.
var serverSubcommands = map[string][]*keyspace.CommandSpec{
	"config": {
		{Name: "config|get", Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "config|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow"}},
		{Name: "config|resetstat", Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "config|rewrite", Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "config|set", Arity: -4, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	},
	"client": {
		{Name: "client|caching", Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|getname", Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|getredir", Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|id", Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|info", Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|kill", Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous", "@connection"}},
		{Name: "client|list", Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous", "@connection"}},
		{Name: "client|no-evict", Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous", "@connection"}},
		{Name: "client|pause", Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous", "@connection"}},
		{Name: "client|reply", Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|setname", Arity: 3, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|tracking", Arity: -3, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|trackinginfo", Arity: 2, Flags: []string{"noscript", "loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "client|unblock", Arity: -3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous", "@connection"}},
		{Name: "client|unpause", Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous", "@connection"}},
	},
	"command": {
		{Name: "command|count", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "command|docs", Arity: -2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "command|getkeys", Arity: -4, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "command|getkeysandflags", Arity: -4, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "command|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "command|info", Arity: -2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
		{Name: "command|list", Arity: -2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@connection"}},
	},
	"pubsub": {
		{Name: "pubsub|channels", Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
		{Name: "pubsub|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow"}},
		{Name: "pubsub|numpat", Arity: 2, Flags: []string{"pubsub", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
		{Name: "pubsub|numsub", Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
		{Name: "pubsub|shardchannels", Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
		{Name: "pubsub|shardnumsub", Arity: -2, Flags: []string{"pubsub", "loading", "stale"}, ACLCategories: []string{"@pubsub", "@slow"}},
	},
	"function": {
		{Name: "function|delete", Arity: 3, Flags: []string{"write", "noscript"}, ACLCategories: []string{"@write", "@slow", "@scripting"}},
		{Name: "function|dump", Arity: 2, Flags: []string{"noscript"}, ACLCategories: []string{"@slow", "@scripting"}},
		{Name: "function|flush", Arity: -2, Flags: []string{"write", "noscript"}, ACLCategories: []string{"@write", "@slow", "@scripting"}},
		{Name: "function|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow", "@scripting"}},
		{Name: "function|kill", Arity: 2, Flags: []string{"noscript", "allow_busy"}, ACLCategories: []string{"@slow", "@scripting"}},
		{Name: "function|list", Arity: -2, Flags: []string{"noscript"}, ACLCategories: []string{"@slow", "@scripting"}},
		{Name: "function|load", Arity: -3, Flags: []string{"write", "denyoom", "noscript"}, ACLCategories: []string{"@write", "@slow", "@scripting"}},
		{Name: "function|restore", Arity: -3, Flags: []string{"write", "denyoom", "noscript"}, ACLCategories: []string{"@write", "@slow", "@scripting"}},
		{Name: "function|stats", Arity: 2, Flags: []string{"noscript", "allow_busy"}, ACLCategories: []string{"@slow", "@scripting"}},
	},
	"latency": {
		{Name: "latency|doctor", Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "latency|graph", Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "latency|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow"}},
		{Name: "latency|histogram", Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "latency|history", Arity: 3, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "latency|latest", Arity: 2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "latency|reset", Arity: -2, Flags: []string{"admin", "noscript", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	},
	"slowlog": {
		{Name: "slowlog|get", Arity: -2, Flags: []string{"admin", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "slowlog|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow"}},
		{Name: "slowlog|len", Arity: 2, Flags: []string{"admin", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
		{Name: "slowlog|reset", Arity: 2, Flags: []string{"admin", "loading", "stale"}, ACLCategories: []string{"@admin", "@slow", "@dangerous"}},
	},
}

// subcommandNames indexes the subcommand entries by full name
// ("client|id"), for LATENCY HISTOGRAM.
var subcommandNames = map[string]*command{}

func init() {
	for container, subs := range serverSubcommands {
		serverSpec(container).Subcommands = subs
		addSubcommands(commandEntry(container), subs)
	}
	for _, s := range keyspace.Specs() {
		addSubcommands(commandEntry(s.Name), s.Subcommands)
	}
}

// addSubcommands makes the entries of parent's subcommands.
func addSubcommands(parent *command, subs []*keyspace.CommandSpec) {
	for _, sub := range subs {
		_, name, _ := cutPipe(sub.Name)
		e := addSubcommand(parent, name)
		e.fast = slices.Contains(sub.Flags, "fast")
		e.arity = sub.Arity
		e.info = sub
	}
}

// cutPipe splits "container|sub".
func cutPipe(full string) (string, string, bool) {
	for i := range len(full) {
		if full[i] == '|' {
			return full[:i], full[i+1:], true
		}
	}
	return full, "", false
}

// addSubcommand makes the entry of parent's subcommand sub.
func addSubcommand(parent *command, sub string) *command {
	e := &command{name: parent.name + "|" + sub, id: len(commandList), parent: parent}
	commandList = append(commandList, e)
	if parent.subs == nil {
		parent.subs = map[string]*command{}
	}
	parent.subs[sub] = e
	subcommandNames[e.name] = e
	return e
}

// statEntry is the entry whose figures a call of cmd with args counts in:
// its subcommand's for a container with a known subcommand, else its own.
// Only containers pay for the lookup.
func (cmd *command) statEntry(args [][]byte) *command {
	if cmd.subs == nil || len(args) < 2 || len(args[1]) > maxCommandName {
		return cmd
	}
	var buf [maxCommandName]byte
	if sub := cmd.subs[string(foldLower(buf[:0], args[1]))]; sub != nil {
		return sub
	}
	return cmd
}

// subcommandError is Redis 7.0's refusal of a call of the container cmd
// before it runs, or "" when it may run: an unknown subcommand, or a known
// one (stat, from cmd.statEntry) with the wrong number of arguments,
// named "client|kill". Only containers pay for it.
func subcommandError(cmd, stat *command, args [][]byte) string {
	switch {
	case len(args) < 2:
		return "" // the container's own arity refuses it
	case stat == cmd:
		return keyspace.UnknownSubcommandError(args)
	case !arityOK(stat.arity, len(args)):
		return "ERR wrong number of arguments for '" + stat.name + "' command"
	}
	return ""
}

// foldLower appends name in lower case to dst.
func foldLower(dst, name []byte) []byte {
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	return dst
}
