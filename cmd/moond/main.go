// Command moond is the moond server: a Redis-compatible key-value server
// built as a thread-per-core shard runtime on io_uring.
//
// Usage is redis-server's: an optional config file in redis.conf syntax
// first, then --name value options named like its directives.
//
//	moond [/path/to/moond.conf] [--port 6379] [--bind 127.0.0.1] [--shards N] [--io-backend auto|uring|pool] ...
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	goruntime "runtime"
	"strings"
	"syscall"

	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/server"
	"github.com/moond-db/moond/server/config"
	"github.com/moond-db/moond/uring"
)

// Exit statuses (sysexits.h): a configuration error, and a WAL whose
// acknowledged history is damaged (refused unless --wal-salvage).
const (
	exitConfig   = 78 // EX_CONFIG
	exitSoftware = 70 // EX_SOFTWARE
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 {
		switch args[0] {
		case "-v", "--version":
			printVersion(stdout)
			return 0
		case "-h", "--help":
			printHelp(stdout)
			return 0
		}
	}
	args, tf, err := takeTestFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "moond: configuration error: %v\n", err)
		return exitConfig
	}
	cfg, err := config.Load(args)
	if err != nil {
		fmt.Fprintf(stderr, "moond: configuration error: %v\n", err)
		return exitConfig
	}
	log, level, closeLog, err := newLogger(cfg, stderr, tf.syslogAddr)
	if err != nil {
		fmt.Fprintf(stderr, "moond: %v\n", err)
		return exitConfig
	}
	defer closeLog()
	logBanner(log, cfg)
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		log.Error("cannot create the data directory", "dir", cfg.Dir, "err", err)
		return 1
	}
	// Listen for signals before saying we are ready: a SIGTERM right after
	// the ready line must stop us cleanly, not kill us.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	// Every shard's loop is a goroutine locked to its thread, and needs a P
	// whenever it runs; a booting shard's recovery and the collector need
	// one more. Pinned to one CPU (taskset), Go would make GOMAXPROCS 1,
	// and then the loop, waking for every connection, takes the only P from
	// the recovery: a load polled with PING took twice as long. The OS
	// shares the CPUs among the threads whatever GOMAXPROCS says.
	if n := cfg.Shards + 1; goruntime.GOMAXPROCS(0) < n {
		goruntime.GOMAXPROCS(n)
	}
	srv := server.New(cfg, log)
	srv.LogLevel = level
	srv.CrashAt = tf.crashAt
	if tf.holdPath != "" {
		srv.HoldBoot = holdUntilExists(tf.holdPath)
	}
	srv.WALRecordLimit = tf.walRecordLimit
	if err := srv.Start(); err != nil {
		return startFailed(log, stderr, err)
	}
	// The server listens and answers LOADING until the shards loaded.
	select {
	case <-srv.Loaded():
		if err := srv.LoadErr(); err != nil {
			srv.Stop()
			return startFailed(log, stderr, err)
		}
	case sig := <-sigs:
		log.Info("received signal while loading, shutting down", "signal", sig.String())
		srv.Stop()
		return 0
	case <-srv.ShutdownRequested():
		log.Info("shutdown requested by a client while loading")
		srv.Stop()
		return 0
	}
	log.Info("Ready to accept connections", "addr", srv.Addr(), "port", srv.Port(),
		"backend", srv.Backend().String(), "shards", cfg.Shards, "version", server.Version)

	select {
	case sig := <-sigs:
		log.Info("received signal, shutting down", "signal", sig.String())
	case <-srv.ShutdownRequested():
		log.Info("shutdown requested by a client")
	}
	srv.Stop()
	log.Info("moond is now ready to exit, bye bye...")
	return 0
}

// startFailed logs why the server could not start or load its data and
// returns the exit status: 70 for a WAL whose acknowledged history is
// damaged or missing (wal.DamagedLog), 1 otherwise.
func startFailed(log *slog.Logger, stderr io.Writer, err error) int {
	log.Error("cannot start", "err", err)
	var damaged wal.DamagedLog
	if errors.As(err, &damaged) {
		fmt.Fprintf(stderr, "moond: %v\n", err)
		return exitSoftware
	}
	return 1
}

// newLogger is the process's logger: to stderr or `logfile`, and also to
// the system log with `syslog-enabled yes` (to syslogAddr when a test
// gives one), at `loglevel`, which CONFIG SET changes through the
// returned level.
func newLogger(cfg *config.Config, stderr io.Writer, syslogAddr string) (*slog.Logger, *slog.LevelVar, func(), error) {
	out, closer := stderr, func() {}
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("logfile: %w", err)
		}
		out, closer = f, func() { f.Close() }
	}
	level := new(slog.LevelVar)
	level.Set(config.SlogLevel(cfg.LogLevel))
	var h slog.Handler = slog.NewTextHandler(out, &slog.HandlerOptions{Level: level})
	if cfg.SyslogEnabled {
		sh, err := newSyslogHandler(cfg.SyslogIdent, cfg.SyslogFacility, syslogAddr, level)
		if err != nil {
			closer()
			return nil, nil, nil, err
		}
		h = slog.NewMultiHandler(h, sh)
	}
	return slog.New(h), level, closer, nil
}

// logBanner logs what this process is and how it keeps data, first thing.
func logBanner(log *slog.Logger, cfg *config.Config) {
	log.Info("moond starting", "version", server.Version, "redis_compat", server.RedisVersion,
		"go", goruntime.Version(), "pid", os.Getpid(), "config_file", cfg.File,
		"bind", strings.Join(cfg.Bind, " "), "port", cfg.Port, "dir", cfg.Dir,
		"shards", cfg.Shards, "io_backend", cfg.IOBackend,
		"appendonly", cfg.AppendOnly, "appendfsync", cfg.AppendFsync,
		"checkpoint_timeout", cfg.CheckpointTimeout, "max_wal_size", cfg.MaxWALSize,
		"maxmemory", cfg.MaxMemory, "maxmemory_policy", cfg.MaxMemoryPolicy)
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "moond v=%s redis-compat=%s go=%s %s/%s\n", server.Version, server.RedisVersion,
		goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	info, err := uring.Describe()
	if err != nil {
		fmt.Fprintf(w, "io_uring: unavailable (%v); the pool backend will serve\n", err)
		return
	}
	fmt.Fprintf(w, "io_uring: available\n  setup flags: %s\n  features: %s\n  opcodes: %s\n",
		strings.Join(info.FlagNames(), " "), strings.Join(info.FeatureNames(), " "), strings.Join(info.OpNames(), " "))
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, `Usage: moond [/path/to/moond.conf] [--option value ...]
       moond --version

Options are named like redis.conf directives (--port, --bind, --dir, --requirepass,
--appendonly, --appendfsync, --maxmemory, ...) plus moond's own:
  --shards N              number of shards (default: CPU count); another count than
                          the data directory's moves the keys to the new shards at boot
  --io-backend KIND       auto | uring | pool (default auto; MOOND_IO_BACKEND=pool forces pool)
  --checkpoint-timeout S  seconds between checkpoints
  --max-wal-size BYTES    WAL size that triggers a checkpoint
  --wal-salvage           boot past a damaged WAL segment, reporting what was skipped
  --metrics-addr ADDR     serve Prometheus metrics on http://ADDR/metrics (off by default)`)
}
