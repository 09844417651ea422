package config

import (
	"runtime"
	"time"

	"github.com/moond-db/moond/keyspace"
)

// Config is the server's configuration. Fields that CONFIG SET may change at
// run time are read by the shards through the Server's accessors, never cached.
type Config struct {
	// File is the config file the server started from, absolute ("" for
	// none): CONFIG REWRITE rewrites it.
	File string

	Bind          []string
	Port          int
	Dir           string
	ProtectedMode bool
	RequirePass   string
	Databases     int
	MaxClients    int
	Timeout       time.Duration // idle client timeout; 0 = never
	TCPKeepAlive  time.Duration
	Hz            int
	LogLevel      string
	LogFile       string
	// syslog-enabled, syslog-ident, syslog-facility: records also go to
	// the system log (fixed at start, as in Redis).
	SyslogEnabled  bool
	SyslogIdent    string
	SyslogFacility string

	// Limits of the protocol parser (Redis's names and defaults).
	ProtoMaxBulkLen        int64
	ClientQueryBufferLimit int64

	// Persistence (WAL and checkpoint).
	AppendOnly        bool
	AppendFsync       string // always | everysec | no
	CheckpointTimeout time.Duration
	MaxWALSize        int64
	WALSegmentSize    int64
	WALSalvage        bool
	PageCacheSize     int64

	// Encoding thresholds of the data types (Redis's names and defaults).
	HashMaxListpackEntries int
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int
	SetMaxListpackEntries  int
	SetMaxListpackValue    int64
	HLLSparseMaxBytes      int64
	ZSetMaxListpackEntries int
	ZSetMaxListpackValue   int64
	ListMaxListpackSize    int

	// Memory.
	MaxMemory       int64
	MaxMemoryPolicy string
	// MaxMemorySamples, LFULogFactor, LFUDecayTime (minutes) and
	// MaxMemoryEvictionTenacity tune the eviction, as in Redis.
	MaxMemorySamples          int
	LFULogFactor              int
	LFUDecayTime              int
	MaxMemoryEvictionTenacity int
	// GCHeapFloor is gc-heap-floor: after each collection the Go
	// collector's next heap goal is kept at least this many bytes above
	// the live heap, so that a small heap is not collected every few MB
	// allocated (server/gcfloor.go); 0 turns it off.
	GCHeapFloor int64
	// TieredStorage is tiered-storage: under maxmemory, values durable in
	// the heap are made cold instead of their keys evicted (DESIGN §4).
	TieredStorage bool
	// OutputBufferLimits is client-output-buffer-limit, by class
	// (ClassNormal, ClassReplica, ClassPubSub).
	OutputBufferLimits [numClasses]OutputBufferLimit
	// TrackingTableMaxKeys is tracking-table-max-keys: the most keys
	// CLIENT TRACKING remembers (0: no limit).
	TrackingTableMaxKeys int
	// NotifyKeyspaceEvents is notify-keyspace-events: the classes of
	// keyspace events published (none by default).
	NotifyKeyspaceEvents keyspace.EventClass

	// Command timing, with Redis's names and defaults:
	// slowlog-log-slower-than (µs; -1 logs nothing, 0 every command),
	// slowlog-max-len, latency-monitor-threshold (ms; 0 is off),
	// latency-tracking (per-command histograms) and
	// latency-tracking-info-percentiles (INFO latencystats).
	SlowlogLogSlowerThan           int64
	SlowlogMaxLen                  int64
	LatencyMonitorThreshold        int64
	LatencyTracking                bool
	LatencyTrackingInfoPercentiles []float64

	// Replication (moond as a replica). ReplicaOf is "host port" of the
	// master, "" when moond is a master; REPLICAOF changes it at run time.
	ReplicaOf             string
	MasterAuth            string
	MasterUser            string
	ReplicaReadOnly       bool
	ReplicaServeStaleData bool
	ReplTimeout           time.Duration
	// ReplicaPriority and ReplicaAnnounced are what INFO tells Sentinel
	// (slave_priority, replica_announced).
	ReplicaPriority  int
	ReplicaAnnounced bool
	// ReplicaAnnounceIP and ReplicaAnnouncePort are what a replica tells
	// its master to show for it (REPLCONF ip-address, listening-port),
	// behind NAT or a container's port mapping; ""/0 for its own.
	ReplicaAnnounceIP   string
	ReplicaAnnouncePort int

	// Replication (moond as a master): the PING period of the stream and
	// min-replicas-to-write / min-replicas-max-lag (seconds; writes are
	// refused with fewer replicas that ACKed within it, 0 for off).
	ReplPingPeriod     time.Duration
	MinReplicasToWrite int
	MinReplicasMaxLag  int
	// ReplBacklogSize is the master's backlog, in bytes (repl-backlog-size).
	ReplBacklogSize int64

	// moond's runtime.
	Shards      int
	IOBackend   string // auto | uring | pool
	CPUAffinity bool
	// UringDeferTaskrun asks io_uring for IORING_SETUP_DEFER_TASKRUN
	// (completions run only when the shard enters the kernel). On by
	// default; off for measuring its effect.
	UringDeferTaskrun bool
	// MetricsAddr is metrics-addr: the host:port the Prometheus /metrics
	// endpoint listens on; "" for none. Only a restart changes it.
	MetricsAddr string

	// Parameters moond accepts and stores for compatibility (encoding
	// thresholds, save points, ...) without acting on them.
	Stored map[string]string
}

// Default returns the configuration of a server started with no flags: bound
// to 127.0.0.1:6379, data in ./data, one shard per CPU, durable by default.
func Default() *Config {
	return &Config{
		Bind:                      []string{"127.0.0.1"},
		Port:                      6379,
		Dir:                       "./data",
		ProtectedMode:             true,
		Databases:                 16,
		MaxClients:                10000,
		TCPKeepAlive:              300 * time.Second,
		Hz:                        10,
		TrackingTableMaxKeys:      1000000,
		LogLevel:                  "notice",
		SyslogIdent:               "moond",
		SyslogFacility:            "local0",
		ProtoMaxBulkLen:           512 << 20,
		ClientQueryBufferLimit:    1 << 30,
		AppendOnly:                true,
		AppendFsync:               "everysec",
		CheckpointTimeout:         300 * time.Second,
		MaxWALSize:                1 << 30,
		WALSegmentSize:            64 << 20,
		PageCacheSize:             128 << 20,
		HashMaxListpackEntries:    128,
		HashMaxListpackValue:      64,
		SetMaxIntsetEntries:       512,
		SetMaxListpackEntries:     128,
		SetMaxListpackValue:       64,
		HLLSparseMaxBytes:         3000,
		ZSetMaxListpackEntries:    128,
		ZSetMaxListpackValue:      64,
		ListMaxListpackSize:       -2,
		MaxMemoryPolicy:           "noeviction",
		MaxMemorySamples:          5,
		LFULogFactor:              10,
		LFUDecayTime:              1,
		MaxMemoryEvictionTenacity: 10,
		GCHeapFloor:               64 << 20,
		OutputBufferLimits:        defaultOutputBufferLimits,
		ReplicaReadOnly:           true,
		ReplicaServeStaleData:     true,
		ReplTimeout:               60 * time.Second,
		ReplicaPriority:           100,
		ReplicaAnnounced:          true,
		ReplPingPeriod:            10 * time.Second,
		MinReplicasMaxLag:         10,
		ReplBacklogSize:           1 << 20,
		Shards:                    runtime.NumCPU(),
		IOBackend:                 "auto",
		UringDeferTaskrun:         true,
		Stored:                    defaultStored(),

		SlowlogLogSlowerThan:           10000,
		SlowlogMaxLen:                  128,
		LatencyTracking:                true,
		LatencyTrackingInfoPercentiles: []float64{50, 99, 99.9},
	}
}

// defaultStored are Redis 7.0's defaults for the parameters moond keeps only
// so that CONFIG GET answers what clients and tools expect.
func defaultStored() map[string]string {
	return map[string]string{
		"save":                        "3600 1 300 100 60 10000",
		"list-compress-depth":         "0",
		"stream-node-max-bytes":       "4096",
		"stream-node-max-entries":     "100",
		"activerehashing":             "yes",
		"lazyfree-lazy-eviction":      "no",
		"lazyfree-lazy-expire":        "no",
		"lazyfree-lazy-server-del":    "no",
		"lazyfree-lazy-user-del":      "no",
		"lazyfree-lazy-user-flush":    "no",
		"appendfilename":              "appendonly.aof",
		"dbfilename":                  "dump.rdb",
		"no-appendfsync-on-rewrite":   "no",
		"auto-aof-rewrite-percentage": "100",
		"auto-aof-rewrite-min-size":   "67108864",
		"stop-writes-on-bgsave-error": "yes",
		"rdbcompression":              "yes",
		"rdbchecksum":                 "yes",
		"daemonize":                   "no",
		"supervised":                  "no",
		"tcp-backlog":                 "511",
		"lua-time-limit":              "5000",
		"busy-reply-threshold":        "5000",
		"cluster-enabled":             "no",
		"active-expire-effort":        "1",
		"io-threads":                  "1",
		"io-threads-do-reads":         "no",
		"enable-debug-command":        "no",
		"aof-use-rdb-preamble":        "yes",
	}
}

// Clone returns a copy of c that shares nothing with it.
func (c *Config) Clone() *Config {
	d := *c
	d.Bind = append([]string(nil), c.Bind...)
	d.LatencyTrackingInfoPercentiles = append([]float64(nil), c.LatencyTrackingInfoPercentiles...)
	d.Stored = make(map[string]string, len(c.Stored))
	for k, v := range c.Stored {
		d.Stored[k] = v
	}
	return &d
}
