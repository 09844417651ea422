package server

import (
	"fmt"
	"strings"

	"github.com/moond-db/moond/resp"
)

// MEMORY STATS, DOCTOR and MALLOC-STATS: the server's subcommands of
// MEMORY, over every shard; USAGE, PURGE and HELP run in the keyspace
// (keyspace/cmd_memory.go) and are routed from here as data commands.
// The figures are those of INFO memory: total.allocated is used_memory
// (the Go heap in use), the dataset is what the shards' keyspaces count
// (used_memory_dataset), the allocator's figures are the Go runtime's
// (allocated: heap in use; active and resident: the process's RSS), and
// the figures of what moond does not have (replication backlog, Lua,
// cluster links) are 0.

func init() {
	register(&serverCmd{name: "memory", arity: -2, run: cmdMemory})
}

// memoryDoctorEmpty is the bytes below which MEMORY DOCTOR declines, as
// Redis does under 5 MB.
const memoryDoctorEmpty = 5 << 20

func cmdMemory(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch sub {
	case "stats", "doctor", "malloc-stats":
		if len(args) != 2 {
			c.errorReply("ERR wrong number of arguments for 'memory|" + sub + "' command")
			return
		}
	default:
		spec := commands["memory"].spec
		if c.track != nil {
			c.rememberReads(spec, args)
		}
		c.routeData(spec, args)
		return
	}
	switch sub {
	case "malloc-stats":
		c.replyLocal(func(w *resp.Writer) { w.BulkString("Stats not supported for the current allocator") })
	case "stats":
		c.gatherMemory(writeMemoryStats)
	case "doctor":
		c.gatherMemory(func(m *memoryStats, w *resp.Writer) { w.Verbatim("txt", []byte(m.doctor())) })
	}
}

// memoryStats are MEMORY STATS's figures.
type memoryStats struct {
	peak, total, startup, rss int64
	clients                   int64 // connections' buffers
	dataset                   int64
	keys                      int64
	dbs                       []memoryDB // the databases with keys
}

// memoryDB is one database's line of MEMORY STATS.
type memoryDB struct {
	index                  int
	keys, main, expiresMem int64
}

// gatherMemory collects MEMORY's figures from every shard and writes
// them with write.
func (c *conn) gatherMemory(write func(m *memoryStats, w *resp.Writer)) {
	infos := make([]shardInfo, c.w.srv.nshards)
	clients := make([]int64, c.w.srv.nshards)
	srv := c.w.srv
	c.fanoutCollect(func(w *worker, i int) {
		infos[i] = w.collectInfo()
		for _, cc := range w.conns {
			clients[i] += int64(len(cc.rbuf) + cap(cc.out.Buf) + cap(cc.sending))
		}
	}, func(w *resp.Writer) {
		m := &memoryStats{startup: srv.startupMem}
		m.total, m.rss, _ = memoryFigures()
		m.peak = srv.notePeak(m.total)
		for i, si := range infos {
			m.dataset += si.dataMem
			m.clients += clients[i]
			for d, db := range si.keyspace {
				if d >= len(m.dbs) {
					m.dbs = append(m.dbs, memoryDB{index: d})
				}
				m.dbs[d].keys += db.keys
				m.dbs[d].main += db.mainBytes
				m.dbs[d].expiresMem += db.expiresBytes
				m.keys += db.keys
			}
		}
		write(m, w)
	})
}

// overhead is what the server holds besides the data: the startup
// allocation, the connections and the tables.
func (m *memoryStats) overhead() int64 {
	n := m.startup + m.clients
	for _, d := range m.dbs {
		n += d.main + d.expiresMem
	}
	return n
}

func writeMemoryStats(m *memoryStats, w *resp.Writer) {
	var dbs []memoryDB
	for _, d := range m.dbs {
		if d.keys > 0 {
			dbs = append(dbs, d)
		}
	}
	w.MapHeader(27 + len(dbs))
	kv := func(k string, v int64) { w.BulkString(k); w.Int(v) }
	kd := func(k string, v float64) { w.BulkString(k); w.Double(v) }
	kv("peak.allocated", m.peak)
	kv("total.allocated", m.total)
	kv("startup.allocated", m.startup)
	kv("replication.backlog", 0)
	kv("clients.slaves", 0)
	kv("clients.normal", m.clients)
	kv("cluster.links", 0)
	kv("aof.buffer", 0)
	kv("lua.caches", 0)
	kv("functions.caches", 0)
	for _, d := range dbs {
		w.BulkString(fmt.Sprintf("db.%d", d.index))
		w.MapHeader(3)
		kv("overhead.hashtable.main", d.main)
		kv("overhead.hashtable.expires", d.expiresMem)
		kv("overhead.hashtable.slot-to-keys", 0)
	}
	kv("overhead.total", m.overhead())
	kv("keys.count", m.keys)
	net := max(m.total-m.startup, 0)
	perKey := int64(0)
	if m.keys > 0 {
		perKey = net / m.keys
	}
	kv("keys.bytes-per-key", perKey)
	kv("dataset.bytes", m.dataset)
	kd("dataset.percentage", ratio(m.dataset*100, net))
	kd("peak.percentage", ratio(m.total*100, m.peak))
	kv("allocator.allocated", m.total)
	kv("allocator.active", m.rss)
	kv("allocator.resident", m.rss)
	kd("allocator-fragmentation.ratio", ratio(m.rss, m.total))
	kv("allocator-fragmentation.bytes", m.rss-m.total)
	kd("allocator-rss.ratio", 1)
	kv("allocator-rss.bytes", 0)
	kd("rss-overhead.ratio", 1)
	kv("rss-overhead.bytes", 0)
	kd("fragmentation", ratio(m.rss, m.total))
	kv("fragmentation.bytes", m.rss-m.total)
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// doctor is MEMORY DOCTOR's report: Redis's words when the instance is
// nearly empty or nothing is wrong, and a line per issue it finds (a past
// peak far above the current use, a high fragmentation).
func (m *memoryStats) doctor() string {
	if m.total < memoryDoctorEmpty {
		return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. " +
			"Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	}
	var issues []string
	if float64(m.peak) > 1.5*float64(m.total) {
		issues = append(issues, " * Peak memory: in the past this instance used more than 150% of the memory it uses now. "+
			"The Go runtime returns freed memory to the system over time; MEMORY PURGE returns it at once.")
	}
	if f := ratio(m.rss, m.total); f > 1.4 && m.rss-m.total > 10<<20 {
		issues = append(issues, fmt.Sprintf(" * High fragmentation: the resident set is %.2f times the memory in use. "+
			"MEMORY PURGE returns the free part to the system.", f))
	}
	if len(issues) == 0 {
		return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	}
	return "Sam, I detected a few issues in this instance memory implants:\n\n" + strings.Join(issues, "\n\n") +
		"\n\nI'm here to keep you safe, Sam. I want to help you.\n"
}
