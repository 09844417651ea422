package server

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/shard"
	"github.com/redis/go-redis/v9"
)

// TestCrossShardWriteRefusedWholeWhileAShardRefuses: while one shard's WAL
// cannot be written (MISCONF there), an MSET, a DEL or an EXEC that writes
// on it and on another shard is refused as a whole: the other shard's keys
// keep their values, as Redis refuses the whole command. Once the disk is
// back, the same writes go through.
func TestCrossShardWriteRefusedWholeWhileAShardRefuses(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			s, f := startFaulty(t, backend, 2)
			ctx := testCtx(t)
			c := client(t, s)
			k0, k1 := keyOnShard(t, 0, 2), keyOnShard(t, 1, 2)
			if err := c.MSet(ctx, k0, "old", k1, "old").Err(); err != nil {
				t.Fatal(err)
			}
			l0 := k0 + "list"
			for s.shardOf([]byte(l0)) != 0 {
				l0 += "x"
			}
			if err := c.RPush(ctx, l0, "e").Err(); err != nil {
				t.Fatal(err)
			}
			full := f.add(vfs.ENOSPCOnWrite(filepath.Join(s.cfg.Dir, shard.DirName(1), "wal", walFiles)))
			_ = impatient(t, s).Set(ctx, k1, "held", 0).Err() // its record cannot be written
			waitFor(t, "MISCONF on shard 1", func() bool {
				err := c.Set(ctx, k1, "x", 0).Err()
				return err != nil && strings.HasPrefix(err.Error(), "MISCONF")
			})
			misconf := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.HasPrefix(err.Error(), "MISCONF") {
					t.Fatalf("%s while shard 1 refuses writes: %v, want MISCONF", what, err)
				}
				if v, err := c.Get(ctx, k0).Result(); err != nil || v != "old" {
					t.Fatalf("after the refused %s, shard 0's key is %q (%v), want it unchanged", what, v, err)
				}
			}
			misconf("MSET", c.MSet(ctx, k0, "new", k1, "new").Err())
			misconf("DEL", c.Del(ctx, k0, k1).Err())
			cmds, _ := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, k0, "new", 0)
				p.Set(ctx, k1, "new", 0)
				return nil
			})
			misconf("EXEC", cmds[0].Err())
			// Txns whose steps are decided once they hold their shards.
			fresh := func(sh int) string {
				for i := 0; ; i++ {
					if k := fmt.Sprintf("fresh%d", i); s.shardOf([]byte(k)) == sh {
						return k
					}
				}
			}
			k0n, k1n := fresh(0), fresh(1)
			misconf("MSETNX", c.MSetNX(ctx, k0n, "new", k1n, "new").Err())
			if n := c.Exists(ctx, k0n).Val(); n != 0 {
				t.Fatalf("a refused MSETNX set shard 0's key")
			}
			misconf("RENAME", c.Rename(ctx, k0, k1n).Err())
			err := c.Watch(ctx, func(tx *redis.Tx) error {
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, k0, "new", 0)
					p.Set(ctx, k1, "new", 0)
					return nil
				})
				return err
			}, k0)
			misconf("EXEC with WATCH", err)
			misconf("BLMOVE", c.BLMove(ctx, l0, k1n, "LEFT", "RIGHT", time.Second).Err())
			if n := c.LLen(ctx, l0).Val(); n != 1 {
				t.Fatalf("a refused BLMOVE left %d elements in its source, want 1", n)
			}
			misconf("MIGRATE", c.Do(ctx, "MIGRATE", "127.0.0.1", "1", "", "0", "1000", "KEYS", k0, k1).Err())

			full()
			waitFor(t, "writes accepted on shard 1", func() bool { return c.Set(ctx, k1, "x", 0).Err() == nil })
			if err := c.MSet(ctx, k0, "new", k1, "new").Err(); err != nil {
				t.Fatalf("MSET after the disk is back: %v", err)
			}
			if v := c.Get(ctx, k0).Val(); v != "new" {
				t.Fatalf("after the disk is back MSET wrote %q on shard 0", v)
			}
		})
	}
}
