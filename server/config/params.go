package config

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/keyspace"
)

// Param is one configuration parameter: its redis.conf name, how to read it
// as CONFIG GET shows it, and how to set it from text.
type Param struct {
	Name    string
	Alias   string // an older Redis name for the same parameter ("" for none)
	Mutable bool   // CONFIG SET may change it at run time
	// OmitEmpty: CONFIG REWRITE leaves the directive out while its value
	// is empty (replicaof once REPLICAOF NO ONE ran).
	OmitEmpty bool
	Get       func(c *Config) string
	Set       func(c *Config, v string) error
}

// ErrImmutable is returned by Set for parameters only a restart can change.
var ErrImmutable = errors.New("can't set immutable config")

var params = buildParams()

// Lookup finds a parameter by name or alias, case-insensitively.
func Lookup(name string) *Param {
	name = strings.ToLower(name)
	for _, p := range params {
		if p.Name == name || (p.Alias != "" && p.Alias == name) {
			return p
		}
	}
	return nil
}

// Params lists every parameter, sorted by name.
func Params() []*Param { return params }

// SetAtRuntime applies CONFIG SET name value: like Set, but refuses
// parameters that are not Mutable.
func (c *Config) SetAtRuntime(name, value string) error {
	p := Lookup(name)
	if p == nil {
		return fmt.Errorf("unknown parameter %q", name)
	}
	if !p.Mutable {
		return ErrImmutable
	}
	return p.Set(c, value)
}

// Set applies one directive as the config file or a flag gives it.
func (c *Config) Set(name, value string) error {
	p := Lookup(name)
	if p == nil {
		return fmt.Errorf("unknown parameter %q", name)
	}
	return p.Set(c, value)
}

// Get returns the parameter's value as CONFIG GET shows it.
func (c *Config) Get(name string) (string, bool) {
	p := Lookup(name)
	if p == nil {
		return "", false
	}
	return p.Get(c), true
}

func buildParams() []*Param {
	ps := []*Param{
		{Name: "bind", Get: func(c *Config) string { return strings.Join(c.Bind, " ") },
			Set: func(c *Config, v string) error {
				f := strings.Fields(v)
				if len(f) == 0 {
					return errors.New("bind needs at least one address")
				}
				c.Bind = f
				return nil
			}},
		intParam("port", false, 0, 65535, func(c *Config) *int { return &c.Port }),
		{Name: "dir", Get: func(c *Config) string { return c.Dir },
			Set: func(c *Config, v string) error {
				if v == "" {
					return errors.New("dir must not be empty")
				}
				c.Dir = v
				return nil
			}},
		boolParam("protected-mode", true, func(c *Config) *bool { return &c.ProtectedMode }),
		{Name: "requirepass", Mutable: true, Get: func(c *Config) string { return c.RequirePass },
			Set: func(c *Config, v string) error { c.RequirePass = v; return nil }},
		{Name: "replicaof", Alias: "slaveof", OmitEmpty: true, Get: func(c *Config) string { return c.ReplicaOf },
			Set: setReplicaOf},
		{Name: "masterauth", Mutable: true, Get: func(c *Config) string { return c.MasterAuth },
			Set: func(c *Config, v string) error { c.MasterAuth = v; return nil }},
		{Name: "masteruser", Mutable: true, Get: func(c *Config) string { return c.MasterUser },
			Set: func(c *Config, v string) error { c.MasterUser = v; return nil }},
		slaveAlias(boolParam("replica-read-only", true, func(c *Config) *bool { return &c.ReplicaReadOnly })),
		slaveAlias(boolParam("replica-serve-stale-data", true, func(c *Config) *bool { return &c.ReplicaServeStaleData })),
		positiveSecondsParam("repl-timeout", func(c *Config) *time.Duration { return &c.ReplTimeout }),
		pingPeriodParam(),
		minReplicasParam("min-replicas-to-write", func(c *Config) *int { return &c.MinReplicasToWrite }),
		minReplicasParam("min-replicas-max-lag", func(c *Config) *int { return &c.MinReplicasMaxLag }),
		slaveAlias(intParam("replica-priority", true, 0, math.MaxInt32, func(c *Config) *int { return &c.ReplicaPriority })),
		boolParam("replica-announced", true, func(c *Config) *bool { return &c.ReplicaAnnounced }),
		slaveAlias(&Param{Name: "replica-announce-ip", Mutable: true, Get: func(c *Config) string { return c.ReplicaAnnounceIP },
			Set: func(c *Config, v string) error { c.ReplicaAnnounceIP = v; return nil }}),
		slaveAlias(intParam("replica-announce-port", true, 0, 65535, func(c *Config) *int { return &c.ReplicaAnnouncePort })),
		replBacklogSizeParam(),
		intParam("databases", false, 1, 1<<20, func(c *Config) *int { return &c.Databases }),
		intParam("maxclients", true, 1, 1<<24, func(c *Config) *int { return &c.MaxClients }),
		secondsParam("timeout", true, func(c *Config) *time.Duration { return &c.Timeout }),
		secondsParam("tcp-keepalive", true, func(c *Config) *time.Duration { return &c.TCPKeepAlive }),
		intParam("hz", true, 1, 500, func(c *Config) *int { return &c.Hz }),
		boolParam("syslog-enabled", false, func(c *Config) *bool { return &c.SyslogEnabled }),
		{Name: "syslog-ident", Get: func(c *Config) string { return c.SyslogIdent },
			Set: func(c *Config, v string) error { c.SyslogIdent = v; return nil }},
		enumParam("syslog-facility", false, []string{"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"},
			func(c *Config) *string { return &c.SyslogFacility }),
		enumParam("loglevel", true, []string{"debug", "verbose", "notice", "warning", "nothing"}, func(c *Config) *string { return &c.LogLevel }),
		{Name: "logfile", Get: func(c *Config) string { return c.LogFile },
			Set: func(c *Config, v string) error { c.LogFile = v; return nil }},
		memParam("proto-max-bulk-len", true, 1<<20, func(c *Config) *int64 { return &c.ProtoMaxBulkLen }),
		memParam("client-query-buffer-limit", true, 1<<20, func(c *Config) *int64 { return &c.ClientQueryBufferLimit }),
		boolParam("appendonly", true, func(c *Config) *bool { return &c.AppendOnly }),
		enumParam("appendfsync", true, []string{"always", "everysec", "no"}, func(c *Config) *string { return &c.AppendFsync }),
		secondsParam("checkpoint-timeout", true, func(c *Config) *time.Duration { return &c.CheckpointTimeout }),
		memParam("max-wal-size", true, 1<<20, func(c *Config) *int64 { return &c.MaxWALSize }),
		memParam("wal-segment-size", false, 64<<10, func(c *Config) *int64 { return &c.WALSegmentSize }),
		boolParam("wal-salvage", false, func(c *Config) *bool { return &c.WALSalvage }),
		memParam("pagecache-size", false, 1<<20, func(c *Config) *int64 { return &c.PageCacheSize }),
		aliased(intParam("hash-max-listpack-entries", true, 0, math.MaxInt32, func(c *Config) *int { return &c.HashMaxListpackEntries })),
		aliased(memParam("hash-max-listpack-value", true, 0, func(c *Config) *int64 { return &c.HashMaxListpackValue })),
		intParam("set-max-intset-entries", true, 0, math.MaxInt32, func(c *Config) *int { return &c.SetMaxIntsetEntries }),
		intParam("set-max-listpack-entries", true, 0, math.MaxInt32, func(c *Config) *int { return &c.SetMaxListpackEntries }),
		memParam("set-max-listpack-value", true, 0, func(c *Config) *int64 { return &c.SetMaxListpackValue }),
		memParam("hll-sparse-max-bytes", true, 0, func(c *Config) *int64 { return &c.HLLSparseMaxBytes }),
		aliased(intParam("zset-max-listpack-entries", true, 0, math.MaxInt32, func(c *Config) *int { return &c.ZSetMaxListpackEntries })),
		aliased(memParam("zset-max-listpack-value", true, 0, func(c *Config) *int64 { return &c.ZSetMaxListpackValue })),
		aliased(intParam("list-max-listpack-size", true, math.MinInt32, math.MaxInt32, func(c *Config) *int { return &c.ListMaxListpackSize })),
		memParam("maxmemory", true, 0, func(c *Config) *int64 { return &c.MaxMemory }),
		enumParam("maxmemory-policy", true, []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
			"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}, func(c *Config) *string { return &c.MaxMemoryPolicy }),
		intParam("maxmemory-samples", true, 1, math.MaxInt32, func(c *Config) *int { return &c.MaxMemorySamples }),
		intParam("lfu-log-factor", true, 0, math.MaxInt32, func(c *Config) *int { return &c.LFULogFactor }),
		intParam("lfu-decay-time", true, 0, math.MaxInt32, func(c *Config) *int { return &c.LFUDecayTime }),
		intParam("maxmemory-eviction-tenacity", true, 0, 100, func(c *Config) *int { return &c.MaxMemoryEvictionTenacity }),
		memParam("gc-heap-floor", true, 0, func(c *Config) *int64 { return &c.GCHeapFloor }),
		boolParam("tiered-storage", true, func(c *Config) *bool { return &c.TieredStorage }),
		intParam("shards", false, 1, 1024, func(c *Config) *int { return &c.Shards }),
		enumParam("io-backend", false, []string{"auto", "uring", "pool"}, func(c *Config) *string { return &c.IOBackend }),
		boolParam("cpu-affinity", false, func(c *Config) *bool { return &c.CPUAffinity }),
		boolParam("uring-defer-taskrun", false, func(c *Config) *bool { return &c.UringDeferTaskrun }),
		{Name: "metrics-addr", Get: func(c *Config) string { return c.MetricsAddr },
			Set: func(c *Config, v string) error { c.MetricsAddr = v; return nil }},
		outputBufferLimitParam(),
		intParam("tracking-table-max-keys", true, 0, math.MaxInt, func(c *Config) *int { return &c.TrackingTableMaxKeys }),
		int64Param("slowlog-log-slower-than", -1, func(c *Config) *int64 { return &c.SlowlogLogSlowerThan }),
		int64Param("slowlog-max-len", 0, func(c *Config) *int64 { return &c.SlowlogMaxLen }),
		int64Param("latency-monitor-threshold", 0, func(c *Config) *int64 { return &c.LatencyMonitorThreshold }),
		boolParam("latency-tracking", true, func(c *Config) *bool { return &c.LatencyTracking }),
		percentilesParam(),
		{Name: "notify-keyspace-events", Mutable: true,
			Get: func(c *Config) string { return c.NotifyKeyspaceEvents.String() },
			Set: func(c *Config, v string) error {
				classes, ok := keyspace.ParseEventClasses(v)
				if !ok {
					return redisError(keyspace.ErrEventClass)
				}
				c.NotifyKeyspaceEvents = classes
				return nil
			}},
	}
	for name := range defaultStored() {
		ps = append(ps, storedParam(name))
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

func storedParam(name string) *Param {
	return aliased(&Param{Name: name, Mutable: true,
		Get: func(c *Config) string { return c.Stored[name] },
		Set: func(c *Config, v string) error { c.Stored[name] = v; return nil }})
}

// aliased gives a *-listpack-* parameter its Redis 6 name: Redis 7 renamed
// *-ziplist-* to *-listpack-*, and both names answer.
// slaveAlias gives a replica-* parameter its older slave-* name.
func slaveAlias(p *Param) *Param {
	p.Alias = strings.Replace(p.Name, "replica", "slave", 1)
	return p
}

// positiveSecondsParam is a mutable parameter of whole seconds above 0.
func positiveSecondsParam(name string, field func(*Config) *time.Duration) *Param {
	p := secondsParam(name, true, field)
	set := p.Set
	p.Set = func(c *Config, v string) error {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n <= 0 {
			return errors.New("argument must be between 1 and 2147483647 inclusive")
		}
		return set(c, v)
	}
	return p
}

// pingPeriodParam is repl-ping-replica-period (repl-ping-slave-period):
// whole seconds, at least 1.
func pingPeriodParam() *Param {
	p := positiveSecondsParam("repl-ping-replica-period", func(c *Config) *time.Duration { return &c.ReplPingPeriod })
	p.Alias = "repl-ping-slave-period"
	return p
}

// minReplicasParam is min-replicas-to-write or min-replicas-max-lag, and
// its min-slaves-* alias.
func minReplicasParam(name string, field func(*Config) *int) *Param {
	p := intParam(name, true, 0, math.MaxInt32, field)
	p.Alias = strings.Replace(name, "replicas", "slaves", 1)
	return p
}

// setReplicaOf reads "host port" (or "no one", or nothing: no master).
func setReplicaOf(c *Config, v string) error {
	f := strings.Fields(v)
	switch {
	case len(f) == 0, len(f) == 2 && strings.EqualFold(f[0], "no") && strings.EqualFold(f[1], "one"):
		c.ReplicaOf = ""
		return nil
	case len(f) != 2:
		return errors.New("wrong number of arguments")
	}
	if p, err := strconv.Atoi(f[1]); err != nil || p < 0 || p > 65535 {
		return errors.New("invalid master port")
	}
	c.ReplicaOf = f[0] + " " + f[1]
	return nil
}

func aliased(p *Param) *Param {
	if strings.Contains(p.Name, "listpack") {
		p.Alias = strings.Replace(p.Name, "listpack", "ziplist", 1)
	}
	return p
}

func boolParam(name string, mutable bool, field func(*Config) *bool) *Param {
	return &Param{Name: name, Mutable: mutable,
		Get: func(c *Config) string { return yesNo(*field(c)) },
		Set: func(c *Config, v string) error {
			b, err := ParseBool(v)
			if err != nil {
				return err
			}
			*field(c) = b
			return nil
		}}
}

func intParam(name string, mutable bool, lo, hi int, field func(*Config) *int) *Param {
	return &Param{Name: name, Mutable: mutable,
		Get: func(c *Config) string { return strconv.Itoa(*field(c)) },
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errors.New("argument couldn't be parsed into an integer")
			}
			if n < lo || n > hi {
				return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
			}
			*field(c) = n
			return nil
		}}
}

func memParam(name string, mutable bool, lo int64, field func(*Config) *int64) *Param {
	return &Param{Name: name, Mutable: mutable,
		Get: func(c *Config) string { return strconv.FormatInt(*field(c), 10) },
		Set: func(c *Config, v string) error {
			n, err := ParseMemory(v)
			if err != nil {
				return err
			}
			if n < lo && !(lo > 0 && n == 0 && name == "maxmemory") {
				return fmt.Errorf("argument must be a memory value of at least %d", lo)
			}
			*field(c) = n
			return nil
		}}
}

func secondsParam(name string, mutable bool, field func(*Config) *time.Duration) *Param {
	return &Param{Name: name, Mutable: mutable,
		Get: func(c *Config) string { return strconv.FormatInt(int64(*field(c)/time.Second), 10) },
		Set: func(c *Config, v string) error {
			d, err := ParseSeconds(v)
			if err != nil {
				return err
			}
			*field(c) = d
			return nil
		}}
}

func enumParam(name string, mutable bool, values []string, field func(*Config) *string) *Param {
	return &Param{Name: name, Mutable: mutable,
		Get: func(c *Config) string { return *field(c) },
		Set: func(c *Config, v string) error {
			v = strings.ToLower(v)
			for _, ok := range values {
				if v == ok {
					*field(c) = v
					return nil
				}
			}
			return errors.New("argument(s) must be one of the following: " + strings.Join(values, ", "))
		}}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ParseBool reads yes/no (and true/false, 1/0) like redis.conf.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "true", "1", "on":
		return true, nil
	case "no", "false", "0", "off":
		return false, nil
	}
	return false, errors.New("argument must be 'yes' or 'no'")
}

// ParseMemory reads a memory amount as redis.conf does: a plain byte count,
// or a number with k/m/g (powers of 1000) or kb/mb/gb (powers of 1024), any case.
func ParseMemory(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || (mult > 1 && n > (1<<62)/mult) {
		return 0, errors.New("argument must be a memory value")
	}
	return n * mult, nil
}

// ParseSeconds reads a duration as whole seconds ("300"), or as a Go
// duration ("1500ms", "5m") for moond's own parameters.
func ParseSeconds(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n < 1<<33 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, errors.New("argument couldn't be parsed into a duration in seconds")
	}
	return d, nil
}
