package tests

import (
	"fmt"
	"strings"
	"testing"
)

// TestHelpMatchesRedisServer compares the HELP reply of every container
// moond has that has a HELP subcommand (CLIENT, CONFIG, OBJECT, ...) with
// redis-server 7.0's, but DEBUG's, whose subcommands are moond's own.
func TestHelpMatchesRedisServer(t *testing.T) {
	t.Parallel()
	rs := startRedisServer(t)
	mc := startServer(t, "pool", 1).client(2)
	helps, err := mc.Do(ctx(t), "COMMAND", "LIST", "FILTERBY", "PATTERN", "*|help").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(helps) < 8 {
		t.Fatalf("only %v have a HELP subcommand", helps)
	}
	for _, h := range helps {
		container := strings.TrimSuffix(h, "|help")
		if container == "debug" {
			continue
		}
		want, got := fmt.Sprint(rs.Do(ctx(t), container, "HELP").Val()), replyText(mc.Do(ctx(t), container, "HELP"))
		if want != got {
			t.Errorf("%s HELP:\nredis-server %s\nmoond        %s", container, want, got)
		}
	}
}
