package server

import (
	"path"
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/server/config"
)

func init() {
	register(&serverCmd{name: "config", arity: -2, run: cmdConfig})
}

var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
	"RESETSTAT", "    Reset statistics reported by the INFO command.",
	"REWRITE", "    Rewrite the configuration file.",
	"HELP", "    Prints this help.",
}

func cmdConfig(c *conn, args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "get" && len(args) >= 3:
		configGet(c, args[2:])
	case sub == "set" && len(args) >= 4 && len(args)%2 == 0:
		configSet(c, args[2:])
	case sub == "resetstat" && len(args) == 2:
		c.fanoutCollect(func(w *worker, _ int) { w.resetStats() }, func(w *resp.Writer) { w.SimpleString("OK") })
	case sub == "rewrite" && len(args) == 2:
		configRewrite(c)
	case sub == "help" && len(args) == 2:
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, configHelp) })
	default:
		c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try CONFIG HELP.")
	}
}

// configGet answers every parameter matching any of the glob patterns, each
// once, as a map.
func configGet(c *conn, patterns [][]byte) {
	srv := c.w.srv
	srv.cfgMu.RLock()
	var kv []string
	seen := map[string]bool{}
	for _, p := range config.Params() {
		for _, name := range []string{p.Name, p.Alias} {
			if name == "" || seen[p.Name] {
				continue
			}
			for _, pat := range patterns {
				if ok, _ := path.Match(strings.ToLower(string(pat)), name); ok {
					seen[p.Name] = true
					kv = append(kv, name, p.Get(srv.cfg))
					break
				}
			}
		}
	}
	srv.cfgMu.RUnlock()
	c.replyLocal(func(w *resp.Writer) {
		w.MapHeader(len(kv) / 2)
		for _, s := range kv {
			w.BulkString(s)
		}
	})
}

// configSet applies name/value pairs all or nothing, with Redis 7's errors.
func configSet(c *conn, pairs [][]byte) {
	srv := c.w.srv
	srv.cfgMu.Lock()
	backup := *srv.cfg
	backup.Stored = make(map[string]string, len(srv.cfg.Stored))
	for k, v := range srv.cfg.Stored {
		backup.Stored[k] = v
	}
	var failed string
	for i := 0; i < len(pairs); i += 2 {
		name := strings.ToLower(string(pairs[i]))
		if config.Lookup(name) == nil {
			failed = "ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'"
			break
		}
		if err := srv.cfg.SetAtRuntime(name, string(pairs[i+1])); err != nil {
			failed = "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + err.Error()
			break
		}
	}
	if failed != "" {
		*srv.cfg = backup
	}
	srv.cfgMu.Unlock()
	if failed != "" {
		c.errorReply(failed)
		return
	}
	srv.applyRuntimeConfig(c)
}

// applyRuntimeConfig pushes the settings shards cache to every shard, and
// replies OK once every shard took them: a command that follows CONFIG SET
// on any shard sees the new settings (CONFIG SET maxmemory has evicted
// what it had to, or refuses data, before it replies, as in Redis).
func (s *Server) applyRuntimeConfig(c *conn) {
	s.cacheTiming()
	s.cfgMu.RLock()
	if s.LogLevel != nil {
		s.LogLevel.Set(config.SlogLevel(s.cfg.LogLevel))
	}
	policy, appendOnly, limits := s.cfg.AppendFsync, s.cfg.AppendOnly, encodingLimits(s.cfg)
	notify := s.cfg.NotifyKeyspaceEvents
	s.cachePubsubLimit()
	ev := s.evictionSettingsLocked()
	applyGoMemoryLimit(s.cfg.MaxMemory, s.cfg.PageCacheSize)
	setHeapFloor(s, s.cfg.GCHeapFloor)
	s.maxmemory.Store(s.cfg.MaxMemory)
	s.cfgMu.RUnlock()
	s.cacheReplConfig()
	s.applyBacklogSize()
	c.fanoutCollect(func(w *worker, _ int) {
		w.applyEviction(ev)
		if w.sh == nil { // loading: the shard takes the settings when it opens
			return
		}
		w.setNotify(notify)
		w.sh.SetEncodingLimits(limits)
		if err := w.sh.SetFsyncPolicy(policy); err != nil {
			s.log.Error("appendfsync not applied", "shard", w.id, "err", err)
		}
		// Redis's CONFIG SET appendonly replies at once too: turning it on
		// starts a rewrite in the background (shard/aof.go).
		w.sh.SetAppendOnly(appendOnly)
	}, func(w *resp.Writer) { w.SimpleString("OK") })
}

// notifyClasses is notify-keyspace-events.
func (s *Server) notifyClasses() keyspace.EventClass {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.NotifyKeyspaceEvents
}

// databases is the configured number of databases.
func (s *Server) databases() int {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.Databases
}

func (w *worker) resetStats() {
	st := &w.stats
	st.commands, st.netInputBytes, st.netOutputBytes = 0, 0, 0
	st.obufLimitDisconnections = 0
	st.protocolErrors, st.errorReplies, st.rejectedConnections, st.connectionsReceived = 0, 0, 0, 0
	st.errorsByPrefix = map[string]int64{}
	clear(st.cmdCalls)
	clear(st.hists)
	if w.ks != nil { // nil while the shard loads
		w.ks.ResetStats()
	}
}
