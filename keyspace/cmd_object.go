package keyspace

// OBJECT subcommands (Redis's object.c). IDLETIME comes from the 24-bit
// LRU clock kept in each slot, FREQ from the LFU counter the same bits
// hold under an LFU maxmemory-policy (lfu.go); each answers Redis's error
// under the other kind of policy.

// objectLookup is Redis's objectCommandLookupOrReply: null for a missing
// key. A miss counts, but is no keymiss event (Redis's LOOKUP_NONOTIFY).
func (ks *Keyspace) objectLookup(c *Client, key []byte, w ReplyWriter) *slot[entry] {
	sl, _ := ks.lookup(c.DB, key)
	if sl == nil {
		ks.stats.KeyspaceMisses++
		w.Null()
	} else {
		ks.stats.KeyspaceHits++
	}
	return sl
}

func cmdObjectEncoding(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if sl := ks.objectLookup(c, args[2], w); sl != nil {
		w.BulkString(sl.v.encoding())
	}
}

func cmdObjectRefcount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if sl := ks.objectLookup(c, args[2], w); sl != nil {
		w.Int(sl.v.refcount())
	}
}

// lruClockMax is LRU_CLOCK_MAX: the 24-bit clock wraps.
const lruClockMax = 1<<24 - 1

func cmdObjectIdletime(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl := ks.objectLookup(c, args[2], w)
	if sl == nil {
		return
	}
	if ks.lfu {
		w.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. " + policySwitchNote)
		return
	}
	w.Int(int64(ks.idleSeconds(sl.kw)))
}

func cmdObjectFreq(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl := ks.objectLookup(c, args[2], w)
	if sl == nil {
		return
	}
	if !ks.lfu {
		w.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. " + policySwitchNote)
		return
	}
	w.Int(int64(ks.lfuCounter(lfuBits(sl.kw))))
}

const policySwitchNote = "Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

func cmdObjectHelp(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	w.ArrayHeader(len(objectHelp))
	for _, line := range objectHelp {
		w.SimpleString(line)
	}
}
