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

// serverSub is a subcommand of a container the server runs itself, with
// its Redis 7.0 arity (counting the container's name), which dispatch
// checks before the container runs.
type serverSub struct {
	name  string
	arity int
}

// serverSubcommands are Redis 7.0's subcommands of the containers the
// server runs itself.
var serverSubcommands = map[string][]serverSub{
	"config":   {{"get", -3}, {"help", 2}, {"resetstat", 2}, {"rewrite", 2}, {"set", -4}},
	"client":   {{"caching", 3}, {"getname", 2}, {"getredir", 2}, {"help", 2}, {"id", 2}, {"info", 2}, {"kill", -3}, {"list", -2}, {"no-evict", 3}, {"pause", -3}, {"reply", 3}, {"setname", 3}, {"tracking", -3}, {"trackinginfo", 2}, {"unblock", -3}, {"unpause", 2}},
	"command":  {{"count", 2}, {"docs", -2}, {"getkeys", -4}, {"getkeysandflags", -4}, {"help", 2}, {"info", -2}, {"list", -2}},
	"pubsub":   {{"channels", -2}, {"help", 2}, {"numpat", 2}, {"numsub", -2}, {"shardchannels", -2}, {"shardnumsub", -2}},
	"function": {{"delete", 3}, {"dump", 2}, {"flush", -2}, {"help", 2}, {"kill", 2}, {"list", -2}, {"load", -3}, {"restore", -3}, {"stats", 2}},
	"latency":  {{"doctor", 2}, {"graph", 3}, {"help", 2}, {"histogram", -2}, {"history", 3}, {"latest", 2}, {"reset", -2}},
	"slowlog":  {{"get", -2}, {"help", 2}, {"len", 2}, {"reset", 2}},
}

// subcommandNames indexes the subcommand entries by full name
// ("client|id"), for LATENCY HISTOGRAM.
var subcommandNames = map[string]*command{}

func init() {
	for container, subs := range serverSubcommands {
		parent := commandEntry(container)
		for _, sub := range subs {
			addSubcommand(parent, sub.name).arity = sub.arity
		}
	}
	for _, s := range keyspace.Specs() {
		for _, sub := range s.Subcommands {
			_, name, _ := cutPipe(sub.Name)
			e := addSubcommand(commandEntry(s.Name), name)
			e.fast = slices.Contains(sub.Flags, "fast")
			e.arity = sub.Arity
		}
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
