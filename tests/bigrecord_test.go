package tests

import (
	"strings"
	"testing"
)

// TestWritesAboveTheRecordLimitSurviveKill9: a write whose WAL record is
// larger than the record limit (lowered here to 4 KiB with the test-only
// --test-wal-record-limit, so that the test moves kilobytes rather than the
// gigabyte `MSET {t}a <300 MB> {t}b <300 MB>` takes at the real limit) is
// logged as continuation records, acknowledged only once they are written,
// and back after kill -9 and a restart (without the flag: the format does
// not depend on it). APPENDs to the large value log the appended bytes, not
// the value.
func TestWritesAboveTheRecordLimitSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			limit := []string{"--appendfsync", "always", "--test-wal-record-limit", "4096"}
			s := startServerIn(t, dir, backend, 2, limit...)
			c := s.client(2)
			ctx := ctx(t)
			a, b := strings.Repeat("a", 300<<10), strings.Repeat("b", 300<<10)
			if err := c.MSet(ctx, "{t}a", a, "{t}b", b).Err(); err != nil {
				t.Fatalf("MSET: %v", err)
			}
			s.kill9()
			check := func(s *server, when string) {
				t.Helper()
				c := s.client(2)
				for k, want := range map[string]string{"{t}a": a, "{t}b": b} {
					got, err := c.Get(ctx, k).Result()
					if err != nil || got != want {
						t.Fatalf("%s: %s holds %d bytes (%v), want %d", when, k, len(got), err, len(want))
					}
				}
			}

			s2 := startServerIn(t, dir, backend, 2, limit...)
			check(s2, "after MSET and kill -9")
			c2 := s2.client(2)
			before := infoInt(t, c2, "wal_bytes")
			more := strings.Repeat("+", 1000)
			for range 20 {
				if err := c2.Append(ctx, "{t}a", more).Err(); err != nil {
					t.Fatalf("APPEND: %v", err)
				}
				a += more
			}
			// 20 APPENDs of 1000 bytes: the records hold 20 kB and their
			// framing, not 20 copies of a value of 300 kB.
			if grew := infoInt(t, c2, "wal_bytes") - before; grew > 40_000 {
				t.Fatalf("20 APPENDs of 1000 bytes grew the WAL by %d bytes", grew)
			}
			if got := infoField(t, c2, "aof_last_write_status"); got != "ok" {
				t.Fatalf("aof_last_write_status:%s", got)
			}
			s2.kill9()

			check(startServerIn(t, dir, backend, 2), "after APPENDs, kill -9 and a restart without the limit")
		})
	}
}
