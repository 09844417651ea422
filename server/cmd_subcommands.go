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
// server runs itself.
var serverSubcommands = map[string][]string{
	"config":   {"get", "help", "resetstat", "rewrite", "set"},
	"client":   {"caching", "getname", "getredir", "help", "id", "info", "kill", "list", "no-evict", "pause", "reply", "setname", "tracking", "trackinginfo", "unblock", "unpause"},
	"command":  {"count", "docs", "getkeys", "getkeysandflags", "help", "info", "list"},
	"pubsub":   {"channels", "help", "numpat", "numsub", "shardchannels", "shardnumsub"},
	"function": {"delete", "dump", "flush", "help", "kill", "list", "load", "restore", "stats"},
	"latency":  {"doctor", "graph", "help", "histogram", "history", "latest", "reset"},
	"slowlog":  {"get", "help", "len", "reset"},
}

// subcommandNames indexes the subcommand entries by full name
// ("client|id"), for LATENCY HISTOGRAM.
var subcommandNames = map[string]*command{}

func init() {
	for container, subs := range serverSubcommands {
		parent := commandEntry(container)
		for _, sub := range subs {
			addSubcommand(parent, sub)
		}
	}
	for _, s := range keyspace.Specs() {
		for _, sub := range s.Subcommands {
			_, name, _ := cutPipe(sub.Name)
			addSubcommand(commandEntry(s.Name), name).fast = slices.Contains(sub.Flags, "fast")
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
