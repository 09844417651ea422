package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/server/config"
	"github.com/moond-db/moond/shard"
	"github.com/moond-db/moond/uring"
)

// Version is moond's version; RedisVersion is the Redis release whose
// behaviour moond follows, as INFO and HELLO report it to clients.
var (
	Version      = "0.1.0-dev"
	RedisVersion = "7.0.15"
)

// Server is a running moond: its shards and what they share.
type Server struct {
	cfgMu sync.RWMutex
	cfg   *config.Config // read under cfgMu by other shards; CONFIG SET writes it

	log *slog.Logger
	// LogLevel, when set (by cmd/moond), is the logger's level, which
	// CONFIG SET loglevel changes.
	LogLevel *slog.LevelVar
	nshards  int
	workers  []*worker

	backend       runtime.Kind
	backendReason string
	started       time.Time
	port          int
	runID         string

	clients      atomic.Int64
	nextClientID atomic.Int64
	stopping     atomic.Bool
	txnsLive     atomic.Int64                // txns begun and not yet released on every shard (txn.go)
	txnSeq       atomic.Uint64               // the last txid handed out (txn.go), above every txid the logs name
	txnDecision  atomic.Pointer[txnDecision] // the boot's first pass (txn_boot.go)
	activeExpire atomic.Bool
	aofRewrites  atomic.Int64
	peakMem      atomic.Int64                             // used_memory_peak
	startupMem   int64                                    // the heap in use when the server was made (MEMORY STATS)
	pubsub       pubsubDir                                // which shards subscribe to what (pubsub_dir.go)
	tracking     serverTracking                           // CLIENT TRACKING's server-wide state (tracking_send.go)
	obufPubsub   atomic.Pointer[config.OutputBufferLimit] // pubsub_limit.go
	oomShards    atomic.Int32                             // shards over their maxmemory share that cannot evict (evict.go)
	maxmemory    atomic.Int64                             // the configured maxmemory, for the shards' reads (evict.go)
	timing       atomic.Pointer[timingSettings]           // what command timing reads (cmd_timing.go)
	slowlogID    atomic.Int64                             // the next slow log entry's id (slowlog.go)
	master       masterState                              // this server's replicas (master.go)
	latency      latencyMonitor                           // LATENCY's events (latency_monitor.go)
	pause        serverPause                              // CLIENT PAUSE as decided (pause.go)

	shutdownOnce sync.Once
	shutdownReq  chan struct{} // closed by SHUTDOWN

	unlock func() // releases the data directory's lock

	metrics *metricsServer // the /metrics endpoint (metrics_http.go); nil when off

	repl replState // moond as a replica (repl.go)

	// reshardFrom is the number of shards the data directory holds when
	// it differs from --shards (the boot reshards first, reshard.go); 0
	// otherwise.
	reshardFrom int

	// walBackpressure is the unwritten WAL bytes past which a shard stops
	// reading from its clients (tests lower it; 0 is the shard's default).
	walBackpressure int

	// wrapBackend, set by tests, wraps the backend each shard's storage
	// uses, to inject I/O faults.
	wrapBackend func(loop *runtime.Loop, be runtime.Backend) runtime.Backend

	// CrashAt is the test-only crash hook (moond --test-crash-at): the
	// process kills itself at that checkpoint step.
	CrashAt shard.CrashPoint

	// HoldBoot is the test-only boot hold (moond --test-hold-boot): when
	// set, every shard's boot waits after its heap load, before its WAL
	// replay, until HoldBoot is closed or the server stops, so that a test
	// sees the LOADING state for as long as it needs.
	HoldBoot <-chan struct{}

	// WALRecordLimit is the test-only record limit (moond
	// --test-wal-record-limit): writes whose WAL record is larger are
	// split into continuation records; 0 for the format's limit.
	WALRecordLimit int

	// The LOADING state (loading.go): true from Start until every shard
	// loaded; the shards' progress; closed once the boot ended.
	loading   atomic.Bool
	loadStart time.Time
	progress  []*shard.LoadProgress
	loaded    chan struct{}
	loadErr   error         // written before loaded is closed
	booting   bool          // bootShards ran (Start's goroutine)
	stopped   chan struct{} // closed when Stop begins
	stopOnce  sync.Once
}

// New prepares a server for cfg; Start starts it.
func New(cfg *config.Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, log: log, nshards: cfg.Shards, shutdownReq: make(chan struct{}), runID: newRunID(),
		loaded: make(chan struct{}), stopped: make(chan struct{})}
	if s.nshards < 1 {
		s.nshards = 1
	}
	s.activeExpire.Store(true)
	s.startupMem, _, _ = memoryFigures()
	s.cachePubsubLimit()
	s.cacheTiming()
	s.repl.secret = newSecret()
	s.cacheReplConfig()
	return s
}

// Start locks the data directory, selects the I/O backend (once, for all
// shards), starts every shard's loop, makes each shard listen on the
// configured addresses, and then starts every shard's recovery, all in
// parallel, on the shards' loops. It returns once the server listens:
// until the data is loaded (Loaded, LoadErr) commands that need it answer
// LOADING.
func (s *Server) Start() error {
	if err := s.lockDir(); err != nil {
		return err
	}
	pref, err := runtime.ParseKind(s.cfg.IOBackend)
	if err != nil {
		return err
	}
	kind, reason, err := runtime.Select(pref)
	if err != nil {
		return fmt.Errorf("io backend: %w", err)
	}
	s.backend, s.backendReason = kind, reason
	s.log.Info("io backend selected", "backend", kind.String(), "reason", reason, "shards", s.nshards)
	s.started = time.Now()
	s.port = s.cfg.Port
	s.loading.Store(true)
	s.loadStart = s.started
	// A reshard's old shards report their recovery after the new ones'.
	s.progress = newLoadProgress(s.nshards + s.reshardFrom)
	s.workers = make([]*worker, s.nshards)
	for i := range s.workers {
		cpu := -1
		if s.cfg.CPUAffinity {
			cpu = i % numCPU()
		}
		loop := runtime.NewLoop(runtime.Config{ID: i, Backend: kind, CPU: cpu, RingFlags: s.ringFlags()})
		if err := loop.Start(); err != nil {
			s.Stop()
			return fmt.Errorf("shard %d: %w", i, err)
		}
		s.workers[i] = newWorker(s, i, loop)
	}
	s.cfgMu.RLock()
	ev := s.evictionSettingsLocked()
	applyGoMemoryLimit(s.cfg.MaxMemory, s.cfg.PageCacheSize)
	setHeapFloor(s, s.cfg.GCHeapFloor)
	s.maxmemory.Store(s.cfg.MaxMemory)
	s.cfgMu.RUnlock()
	for _, w := range s.workers {
		w.mem.limit, w.mem.timeLimit = ev.limit, ev.timeLimit // before the loop runs any of its code
	}
	for _, w := range s.workers {
		if err := s.listenWorker(w); err != nil {
			s.Stop()
			return err
		}
	}
	if s.cfg.MetricsAddr != "" {
		// Before the boot, so that the load's progress can be watched.
		if err := s.startMetrics(s.cfg.MetricsAddr); err != nil {
			s.Stop()
			return err
		}
	}
	s.log.Info("listening; loading the dataset", "addr", s.Addr(), "port", s.port, "shards", s.nshards)
	s.bootShards()
	return nil
}

// ringFlags are the io_uring setup flags the shards' loops ask for.
func (s *Server) ringFlags() uint32 {
	f := uring.DefaultSetupFlags
	if !s.cfg.UringDeferTaskrun {
		f &^= uring.SetupDeferTaskrun
	}
	return f
}

// listenWorker makes the shard listen, on its own loop. Port 0 asks the
// first shard for an ephemeral port, which the other shards then share.
func (s *Server) listenWorker(w *worker) error {
	var err error
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cerr := w.loop.Call(ctx, func() { err = w.listen(s.listenAddrs()) }); cerr != nil {
		return fmt.Errorf("shard %d: listen: %w", w.id, cerr)
	}
	if err != nil {
		return err
	}
	if s.port == 0 && len(w.listenAddrs) > 0 {
		if ta, ok := w.listenAddrs[0].(*net.TCPAddr); ok {
			s.port = ta.Port
		}
	}
	return nil
}

func (s *Server) listenAddrs() []string {
	var out []string
	for _, b := range s.cfg.Bind {
		if b == "*" {
			b = "0.0.0.0"
		}
		if len(b) > 0 && b[0] == '-' {
			b = b[1:] // Redis's "optional address" marker
		}
		out = append(out, net.JoinHostPort(b, strconv.Itoa(s.port)))
	}
	return out
}

// Port is the TCP port the server listens on (useful with --port 0).
func (s *Server) Port() int { return s.port }

// Addr is host:port of the first bind address.
func (s *Server) Addr() string { return s.listenAddrs()[0] }

// Backend is the I/O backend the shards run on.
func (s *Server) Backend() runtime.Kind { return s.backend }

// ShutdownRequested is closed when a client asked for SHUTDOWN.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdownReq }

func (s *Server) requestShutdown() {
	s.shutdownOnce.Do(func() { close(s.shutdownReq) })
}

// Stop closes every listener and connection, lets the replicas
// acknowledge the stream to its end (at most replStopWait) before it
// disconnects them, runs every shard's shutdown checkpoint (at most 5 s of
// waiting for a heap fsync), seals its WAL (waiting for its writes and
// fsyncs) and stops the loops, within 10 s.
func (s *Server) Stop() {
	pos, atPoint := s.stopReplication() // before stopping: the commands it read are applied
	s.stopping.Store(true)
	s.stopOnce.Do(func() { close(s.stopped) })
	s.stopMetrics()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.booting {
		// A shard still recovering writes its files: the directory's lock
		// is released only after the boot ended (or the deadline passed).
		select {
		case <-s.loaded:
		case <-ctx.Done():
			s.log.Error("shutdown while the shards load: the boot did not end in time")
		}
	}
	// First every shard stops serving; then the txns in flight finish on
	// every shard they hold (a clean shutdown leaves no transaction half
	// done); then the shards close.
	for _, w := range s.workers {
		if w != nil {
			if err := w.loop.Call(ctx, w.stop); err != nil {
				s.log.Error("shard did not stop serving", "shard", w.id, "err", err)
			}
		}
	}
	for s.txnsLive.Load() > 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond) // txns end on the loops; nothing to wait on here
	}
	if n := s.txnsLive.Load(); n > 0 {
		s.log.Error("shutdown: transactions still running when the shards close", "txns", n)
	}
	// The stream is whole: the replicas get it to its end, so that they
	// may continue after a restart (master_restart.go).
	s.awaitReplicasAtStop(ctx)
	s.stopReplicas()
	s.syncForStop(ctx)
	errs, done := s.onEveryShard(ctx, func(w *worker, sealed func(error)) {
		w.closing = true
		if w.sh == nil { // the shard did not open
			sealed(nil)
			return
		}
		w.sh.Close(func(err error) {
			if err != nil {
				err = fmt.Errorf("shard %d: %w", w.id, err)
			}
			sealed(err)
		})
	})
	for _, err := range errs {
		s.log.Error("WAL not sealed cleanly at shutdown", "err", err)
	}
	if !done {
		s.log.Error("WAL close timed out at shutdown; the next start repairs the tail")
	}
	if done && len(errs) == 0 && s.checkpointsOn() {
		// Every WAL is sealed: the data is a stream up to the position,
		// its master's or its own. (With appendonly no nothing on disk
		// holds it.)
		if p, ok := s.positionAtStop(ctx, pos, atPoint); ok {
			if err := s.saveReplPosition(p); err != nil {
				s.log.Error("a restart will need a full sync", "err", err)
			}
		}
	}
	for _, w := range s.workers {
		if w != nil {
			w.loop.Stop()
		}
	}
	if s.unlock != nil {
		s.unlock()
	}
	dropHeapFloor(s)
	// The memory limit maxmemory set is the process's: a server started
	// after this one in the same process (tests, embedders) starts from
	// the limit the process had, not from this one's.
	applyGoMemoryLimit(0, 0)
}

// shardOptions are shard id's options, from the configuration.
func (s *Server) shardOptions(id int) shard.Options {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	o := shard.Options{
		ID:              id,
		Dir:             filepath.Join(s.cfg.Dir, shard.DirName(id)),
		Log:             s.log,
		Databases:       s.cfg.Databases,
		ProtoMaxBulkLen: s.cfg.ProtoMaxBulkLen,
		EncodingLimits:  encodingLimits(s.cfg),
		Eviction:        s.evictionSettingsLocked().eviction,
		AppendOnly:      s.cfg.AppendOnly,
		AppendFsync:     s.cfg.AppendFsync,
		WALSegmentSize:  s.cfg.WALSegmentSize,
		WALSalvage:      s.cfg.WALSalvage,
		PageCacheSize:   s.cfg.PageCacheSize / int64(s.nshards),
		WALBackpressure: s.walBackpressure,
		Tunables:        s.shardTunables,
		Started:         s.started,
		CrashAt:         s.CrashAt,
		WALRecordLimit:  s.WALRecordLimit,
		OnLatency:       s.latencyEvent,
	}
	if ev := s.evictionSettingsLocked(); ev.eviction.Tiered && ev.eviction.Policy != keyspace.NoEviction {
		o.ColdLoadAbove = ev.limit // a data set over maxmemory boots cold (keyspace/cold_load.go)
	}
	if d := s.txnDecision.Load(); d != nil {
		o.Txns = d.wait
	}
	if id < len(s.workers) {
		w := s.workers[id]
		o.Held = func() bool { return w.holder != nil && !w.reloading } // DEBUG RELOAD's hold keeps no part
		o.SyncPeers = s.syncPeersFrom(w)
	}
	if s.HoldBoot != nil {
		o.BootHold = func() {
			select {
			case <-s.HoldBoot:
			case <-s.stopped:
			}
		}
	}
	if s.wrapBackend != nil && id < len(s.workers) { // a reshard's old shard beyond the count has no worker
		loop := s.workers[id].loop
		o.WrapBackend = func(be runtime.Backend) runtime.Backend { return s.wrapBackend(loop, be) }
	}
	return o
}

// onEveryShard runs f on every started shard's loop and waits, until ctx
// is done, for each to call back. It returns the errors they gave (or the
// loop's, when f could not run) and whether every shard called back.
func (s *Server) onEveryShard(ctx context.Context, f func(w *worker, done func(error))) ([]error, bool) {
	results := make(chan error, len(s.workers))
	n := 0
	for _, w := range s.workers {
		if w == nil {
			continue
		}
		n++
		if err := w.loop.Call(ctx, func() { f(w, func(err error) { results <- err }) }); err != nil {
			results <- fmt.Errorf("shard %d: stop: %w", w.id, err)
		}
	}
	var errs []error
	for range n {
		select {
		case err := <-results:
			if err != nil {
				errs = append(errs, err)
			}
		case <-ctx.Done():
			return errs, false
		}
	}
	return errs, true
}

// maxClients and hz are read by the shards on every accept and tick;
// CONFIG SET may change them.
func (s *Server) maxClients() int64 {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return int64(s.cfg.MaxClients)
}

// encodingLimits are the data types' thresholds in cfg.
func encodingLimits(cfg *config.Config) keyspace.EncodingLimits {
	return keyspace.EncodingLimits{
		HashMaxListpackEntries: int64(cfg.HashMaxListpackEntries),
		HashMaxListpackValue:   cfg.HashMaxListpackValue,
		SetMaxIntsetEntries:    int64(cfg.SetMaxIntsetEntries),
		SetMaxListpackEntries:  int64(cfg.SetMaxListpackEntries),
		SetMaxListpackValue:    cfg.SetMaxListpackValue,
		HLLSparseMaxBytes:      cfg.HLLSparseMaxBytes,
		ZSetMaxListpackEntries: int64(cfg.ZSetMaxListpackEntries),
		ZSetMaxListpackValue:   cfg.ZSetMaxListpackValue,
		ListMaxListpackSize:    int64(cfg.ListMaxListpackSize),
	}
}

// shardTunables are the shards' settings CONFIG SET may change.
func (s *Server) shardTunables() shard.Tunables {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return shard.Tunables{MaxWALSize: s.cfg.MaxWALSize, CheckpointTimeout: s.cfg.CheckpointTimeout}
}

// appendFsync is the configured appendfsync policy.
func (s *Server) appendFsync() string {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.AppendFsync
}

func (s *Server) hz() int {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	if s.cfg.Hz <= 0 {
		return 10
	}
	return s.cfg.Hz
}

// limits are the parser limits from the configuration.
func (s *Server) limits() resp.Limits {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	l := resp.DefaultLimits()
	l.MaxBulkLen = s.cfg.ProtoMaxBulkLen
	l.QueryBufferLimit = s.cfg.ClientQueryBufferLimit
	return l
}

// requirePass is the configured password ("" for none).
func (s *Server) requirePass() string {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.RequirePass
}

const protectedModeMsg = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. " +
	"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. " +
	"4) Set up an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// protectedModeRefuses applies Redis's protected mode: with no password set,
// only loopback (and unix socket) clients may connect.
func (s *Server) protectedModeRefuses(addr string) bool {
	s.cfgMu.RLock()
	on := s.cfg.ProtectedMode && s.cfg.RequirePass == ""
	s.cfgMu.RUnlock()
	if !on || addr == "" {
		return false
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && !ip.IsLoopback()
}
