package config

import (
	"errors"
	"strconv"
)

// ReplBacklogMinSize is the smallest backlog a master keeps (Redis's
// CONFIG_REPL_BACKLOG_MIN_SIZE): a smaller repl-backlog-size is raised to
// it when CONFIG SET applies it, as Redis does.
const ReplBacklogMinSize = 16 << 10

// replBacklogSizeParam is repl-backlog-size: a memory value of at least 1
// byte, Redis's units, settable at run time (the server resizes the
// backlog, keeping what fits).
func replBacklogSizeParam() *Param {
	return &Param{Name: "repl-backlog-size", Mutable: true,
		Get: func(c *Config) string { return strconv.FormatInt(c.ReplBacklogSize, 10) },
		Set: func(c *Config, v string) error {
			n, err := ParseMemory(v)
			if err != nil {
				return err
			}
			if n < 1 {
				return errors.New("argument must be between 1 and 9223372036854775807 inclusive")
			}
			c.ReplBacklogSize = n
			return nil
		}}
}
