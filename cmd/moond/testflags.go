package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/shard"
)

// The test-only flags. The end-to-end tests drive the real binary into
// states that production reaches only by chance; these flags are how. None
// is a configuration parameter (CONFIG GET does not know them, a config
// file cannot set them), and --help does not list them.
//
//	--test-crash-at STEP[@N]     the process kills itself with SIGKILL at
//	                             checkpoint step STEP of the N-th checkpoint
//	                             a shard begins (default 1), or at a
//	                             reshard's step reshard-copied,
//	                             reshard-intent or reshard-renamed
//	--test-hold-boot PATH        every shard's boot waits after its heap
//	                             load, before its WAL replay, until the file
//	                             PATH exists: the LOADING state lasts as
//	                             long as a test needs
//	--test-wal-record-limit N    the largest payload of one WAL record,
//	                             above which a write's record is split into
//	                             continuation records (wal.MaxPayload when
//	                             absent): splits of kilobytes, not of half a
//	                             gigabyte
//	--test-syslog-addr NET:ADDR  with syslog-enabled, the syslog messages go
//	                             to this socket (unixgram:/path) instead of
//	                             the system's
type testFlags struct {
	crashAt        shard.CrashPoint
	holdPath       string
	walRecordLimit int
	syslogAddr     string
}

// takeTestFlags removes the test-only flags from args and returns them.
func takeTestFlags(args []string) ([]string, testFlags, error) {
	var tf testFlags
	args, crash, ok, err := takeFlag(args, "--test-crash-at")
	if err != nil {
		return nil, tf, err
	}
	if ok {
		if tf.crashAt, err = shard.ParseCrashPoint(crash); err != nil {
			return nil, tf, fmt.Errorf("--test-crash-at: %w", err)
		}
	}
	if args, tf.syslogAddr, _, err = takeFlag(args, "--test-syslog-addr"); err != nil {
		return nil, tf, err
	}
	if args, tf.holdPath, ok, err = takeFlag(args, "--test-hold-boot"); err != nil {
		return nil, tf, err
	}
	if ok && tf.holdPath == "" {
		return nil, tf, errors.New("--test-hold-boot needs a path")
	}
	args, limit, ok, err := takeFlag(args, "--test-wal-record-limit")
	if err != nil {
		return nil, tf, err
	}
	if ok {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > wal.MaxPayload {
			return nil, tf, fmt.Errorf("--test-wal-record-limit: %q is not a size in [1, %d]", limit, wal.MaxPayload)
		}
		tf.walRecordLimit = n
	}
	return args, tf, nil
}

// takeFlag removes "--name value" or "--name=value" from args (the last one
// wins when it is given twice) and returns its value and whether it was
// there.
func takeFlag(args []string, name string) (rest []string, value string, found bool, err error) {
	rest = args[:0:0]
	for i := 0; i < len(args); i++ {
		v, ok := strings.CutPrefix(args[i], name+"=")
		if !ok && args[i] == name {
			if i+1 == len(args) {
				return nil, "", false, fmt.Errorf("%s needs a value", name)
			}
			i++
			v, ok = args[i], true
		}
		if !ok {
			rest = append(rest, args[i])
			continue
		}
		value, found = v, true
	}
	return rest, value, found, nil
}

// holdUntilExists returns a channel closed once the file path exists.
func holdUntilExists(path string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			if _, err := os.Stat(path); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return ch
}
