package server

import (
	"strings"

	"github.com/moond-db/moond/resp"
)

// PUBSUB CHANNELS / NUMSUB / NUMPAT / SHARDCHANNELS / SHARDNUMSUB / HELP,
// with Redis 7.0's replies. The names come from the directory
// (pubsub_dir.go), which every shard updates before it confirms a
// subscription; the counts of NUMSUB and SHARDNUMSUB are summed over the
// shards, each counting its own connections.

func init() {
	register(&serverCmd{name: "pubsub", arity: -2, run: cmdPubsub})
}

var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

// pubsubSubArity is the arity of Redis 7.0's PUBSUB subcommands.
var pubsubSubArity = map[string]int{
	"channels": -2, "help": 2, "numpat": 2, "numsub": -2, "shardchannels": -2, "shardnumsub": -2,
}

func cmdPubsub(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	a, ok := pubsubSubArity[sub]
	if !ok {
		c.errorReply("ERR unknown subcommand '" + string(args[1]) + "'. Try PUBSUB HELP.")
		return
	}
	if !arityOK(a, len(args)) {
		c.errorReply("ERR wrong number of arguments for 'pubsub|" + sub + "' command")
		return
	}
	switch sub {
	case "help":
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, pubsubHelp) })
	case "numpat":
		n := c.w.srv.pubsub.nPatterns.Load()
		c.replyLocal(func(w *resp.Writer) { w.Int(n) })
	case "channels", "shardchannels":
		if len(args) > 3 {
			c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try PUBSUB HELP.")
			return
		}
		var pattern []byte
		if len(args) == 3 {
			pattern = args[2]
		}
		names := c.w.srv.pubsub.names(sub == "shardchannels", pattern)
		c.replyLocal(func(w *resp.Writer) {
			w.ArrayHeader(len(names))
			for _, n := range names {
				w.BulkString(n)
			}
		})
	case "numsub", "shardnumsub":
		c.numsub(sub == "shardnumsub", copyArgs(args[2:]))
	}
}

// numsub is PUBSUB NUMSUB (SHARDNUMSUB with shardKind): each channel and
// its subscribers, summed over every shard.
func (c *conn) numsub(shardKind bool, channels [][]byte) {
	counts := make([][]int64, c.w.srv.nshards)
	c.fanoutCollect(func(w *worker, i int) {
		t := *w.pubsub.table(shardKind)
		counts[i] = make([]int64, len(channels))
		for j, ch := range channels {
			counts[i][j] = int64(t[string(ch)].len())
		}
	}, func(w *resp.Writer) {
		w.ArrayHeader(2 * len(channels))
		for j, ch := range channels {
			var n int64
			for _, cs := range counts {
				if cs != nil {
					n += cs[j]
				}
			}
			w.Bulk(ch)
			w.Int(n)
		}
	})
}
