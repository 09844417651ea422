package keyspace

import (
	"runtime/debug"
	"unsafe"
)

// MEMORY USAGE (Redis's memoryCommand): the bytes a key and its value hold.
// Redis samples the elements of a large aggregate (SAMPLES, default 5);
// moond's values keep an exact running count of their memory (heapBytes),
// so the answer is exact and SAMPLES is accepted and checked but changes
// nothing. MEMORY PURGE collects garbage and returns free memory to the
// operating system (Redis asks jemalloc to purge), so that used_memory,
// the Go heap in use, then counts live data only. The other MEMORY
// subcommands (DOCTOR, STATS, MALLOC-STATS) are the server's
// (server/cmd_memory.go).

func cmdMemoryUsage(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	for j := 3; j < len(args); j++ {
		if !equalFold(args[j], "samples") || j+1 >= len(args) {
			w.Error(errSyntax)
			return
		}
		n, ok := parseInt(args[j+1])
		if !ok {
			w.Error(errNotInteger)
			return
		}
		if n < 0 {
			w.Error(errSyntax)
			return
		}
		j++
	}
	sl, _ := ks.lookup(c.DB, args[2])
	if sl == nil {
		w.Null()
		return
	}
	w.Int(memoryUsage(sl))
}

// memoryUsage is a key's share of memory: its slot in the table, its name
// and its value.
func memoryUsage(sl *slot[entry]) int64 {
	return int64(unsafe.Sizeof(*sl)) + allocSize(int64(len(sl.key()))) + sl.v.heapBytes()
}

func cmdMemoryPurge(_ *Keyspace, _ *Client, _ [][]byte, w ReplyWriter) {
	debug.FreeOSMemory()
	replyOK(w)
}

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

func cmdMemoryHelp(_ *Keyspace, _ *Client, _ [][]byte, w ReplyWriter) {
	w.ArrayHeader(len(memoryHelp))
	for _, l := range memoryHelp {
		w.SimpleString(l)
	}
}

// cmdServerOnly runs for a subcommand the server answers itself when it
// reaches a keyspace anyway (a test calling Exec): the keyspace has no
// figures of the server's.
func cmdServerOnly(_ *Keyspace, _ *Client, args [][]byte, w ReplyWriter) {
	w.Error(errUnknownSubcommand(args))
}
