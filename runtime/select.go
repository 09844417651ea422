package runtime

import (
	"fmt"
	"os"
	"strings"
)

// Kind is an I/O backend choice.
type Kind uint8

const (
	KindAuto  Kind = iota // io_uring when it works here, else pool
	KindUring             // io_uring, one ring per loop (Linux)
	KindPool              // goroutines plus a bounded pool of file workers (portable)
)

func (k Kind) String() string {
	switch k {
	case KindAuto:
		return "auto"
	case KindUring:
		return "uring"
	case KindPool:
		return "pool"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind parses "auto", "uring" or "pool" (the --io-backend values).
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return KindAuto, nil
	case "uring", "io_uring":
		return KindUring, nil
	case "pool":
		return KindPool, nil
	}
	return KindAuto, fmt.Errorf("runtime: unknown I/O backend %q (want auto, uring or pool)", s)
}

// EnvBackend names the environment variable that, when set, overrides the
// backend preference given to Select (MOOND_IO_BACKEND=pool forces pool).
const EnvBackend = "MOOND_IO_BACKEND"

// Select resolves a backend preference into the backend every loop of the
// process will run, and why. The environment variable MOOND_IO_BACKEND, when
// set, replaces pref.
//
//   - pool: pool.
//   - uring: io_uring, or an error saying why it cannot run here.
//   - auto: io_uring when a ring can be set up and every opcode moond uses is
//     supported; otherwise pool, with the reason it fell back.
func Select(pref Kind) (Kind, string, error) {
	origin := "requested"
	if v, ok := os.LookupEnv(EnvBackend); ok && v != "" {
		k, err := ParseKind(v)
		if err != nil {
			return KindPool, "", fmt.Errorf("runtime: %s: %w", EnvBackend, err)
		}
		pref = k
		origin = EnvBackend + "=" + v
	}
	switch pref {
	case KindPool:
		return KindPool, "pool " + origin, nil
	case KindUring:
		ok, reason, _ := ProbeUring()
		if !ok {
			return KindPool, reason, fmt.Errorf("runtime: io_uring backend %s but unavailable: %s", origin, reason)
		}
		return KindUring, "uring " + origin, nil
	case KindAuto:
		ok, reason, _ := ProbeUring()
		if !ok {
			return KindPool, "io_uring unavailable, using pool: " + reason, nil
		}
		return KindUring, "io_uring available", nil
	}
	return KindPool, "", fmt.Errorf("runtime: unknown backend kind %v", pref)
}
