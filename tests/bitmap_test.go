package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestBitmapCommands runs every bitmap command through go-redis, over RESP2
// and RESP3, on both backends with 1 and 2 shards: replies, errors, and
// BITOP on keys that share a hash tag (one shard) and on keys of two
// shards.
func TestBitmapCommands(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		for _, proto := range []int{2, 3} {
			c := s.client(proto)
			ctx := ctx(t)
			p := fmt.Sprintf("{bm%d}", proto) // one hash tag: one shard
			k, k2, dst := p+"k", p+"k2", p+"dst"
			wantInt := func(what string, cmd *redis.IntCmd, want int64) {
				t.Helper()
				if got, err := cmd.Result(); err != nil || got != want {
					t.Fatalf("RESP%d %s = %d, %v; want %d", proto, what, got, err, want)
				}
			}
			wantErr := func(what string, err error, prefix string) {
				t.Helper()
				if err == nil || !strings.HasPrefix(err.Error(), prefix) {
					t.Fatalf("RESP%d %s: error %v, want %q", proto, what, err, prefix)
				}
			}

			wantInt("SETBIT", c.SetBit(ctx, k, 7, 1), 0)
			wantInt("SETBIT again", c.SetBit(ctx, k, 7, 1), 1)
			wantInt("SETBIT grow", c.SetBit(ctx, k, 23, 1), 0)
			wantInt("GETBIT", c.GetBit(ctx, k, 7), 1)
			wantInt("GETBIT past the end", c.GetBit(ctx, k, 1000), 0)
			if v, _ := c.Get(ctx, k).Result(); v != "\x01\x00\x01" {
				t.Fatalf("RESP%d GET after SETBIT = %q", proto, v)
			}
			wantErr("SETBIT bad bit", c.SetBit(ctx, k, 1, 2).Err(), "ERR bit is not an integer or out of range")
			wantErr("SETBIT bad offset", c.SetBit(ctx, k, -1, 1).Err(), "ERR bit offset is not an integer or out of range")

			c.Set(ctx, k2, "foobar", 0)
			wantInt("BITCOUNT", c.BitCount(ctx, k2, nil), 26)
			wantInt("BITCOUNT bytes", c.BitCount(ctx, k2, &redis.BitCount{Start: 1, End: 1}), 6)
			wantInt("BITCOUNT bits", c.BitCount(ctx, k2, &redis.BitCount{Start: 5, End: 30, Unit: "BIT"}), 17)
			wantInt("BITCOUNT missing", c.BitCount(ctx, p+"none", nil), 0)
			wantErr("BITCOUNT syntax", c.Do(ctx, "BITCOUNT", k2, "0").Err(), "ERR syntax error")

			wantInt("BITPOS 1", c.BitPos(ctx, k, 1), 7)
			wantInt("BITPOS 0 from 2", c.BitPos(ctx, k, 0, 2), 16)
			wantInt("BITPOS 1 range", c.BitPos(ctx, k, 1, 1, -1), 23)
			wantInt("BITPOS bits", c.BitPosSpan(ctx, k, 1, 8, 22, "bit"), -1)
			wantInt("BITPOS 0 on ones", c.BitPos(ctx, p+"none", 0), 0)
			c.Set(ctx, p+"ones", "\xff\xff", 0)
			wantInt("BITPOS 0 past the end", c.BitPos(ctx, p+"ones", 0), 16)
			wantInt("BITPOS 0 with an end", c.BitPos(ctx, p+"ones", 0, 0, -1), -1)
			wantErr("BITPOS bad bit", c.BitPos(ctx, k, 2).Err(), "ERR The bit argument must be 1 or 0.")

			c.Set(ctx, p+"a", "\xf0\x0f", 0)
			c.Set(ctx, p+"b", "\xff", 0)
			wantInt("BITOP AND", c.BitOpAnd(ctx, dst, p+"a", p+"b"), 2)
			if v, _ := c.Get(ctx, dst).Result(); v != "\xf0\x00" {
				t.Fatalf("RESP%d BITOP AND -> %q", proto, v)
			}
			wantInt("BITOP OR", c.BitOpOr(ctx, dst, p+"a", p+"b"), 2)
			if v, _ := c.Get(ctx, dst).Result(); v != "\xff\x0f" {
				t.Fatalf("RESP%d BITOP OR -> %q", proto, v)
			}
			wantInt("BITOP XOR", c.BitOpXor(ctx, dst, p+"a", p+"b"), 2)
			if v, _ := c.Get(ctx, dst).Result(); v != "\x0f\x0f" {
				t.Fatalf("RESP%d BITOP XOR -> %q", proto, v)
			}
			wantInt("BITOP NOT", c.BitOpNot(ctx, dst, p+"a"), 2)
			if v, _ := c.Get(ctx, dst).Result(); v != "\x0f\xf0" {
				t.Fatalf("RESP%d BITOP NOT -> %q", proto, v)
			}
			wantInt("BITOP of nothing", c.BitOpOr(ctx, dst, p+"none"), 0)
			wantInt("EXISTS after an empty BITOP", c.Exists(ctx, dst), 0)
			wantErr("BITOP NOT of two", c.Do(ctx, "BITOP", "NOT", dst, p+"a", p+"b").Err(), "ERR BITOP NOT must be called with a single source key.")
			c.HSet(ctx, p+"h", "f", "v") // another kind, where the server has one
			if typ, _ := c.Type(ctx, p+"h").Result(); typ == "hash" {
				wantErr("BITOP of a hash", c.BitOpAnd(ctx, dst, p+"a", p+"h").Err(), "WRONGTYPE")
				wantErr("SETBIT of a hash", c.SetBit(ctx, p+"h", 1, 1).Err(), "WRONGTYPE")
				wantErr("BITFIELD of a hash", c.BitField(ctx, p+"h", "GET", "u8", 0).Err(), "WRONGTYPE")
			}

			bf := p + "bf"
			if got, err := c.BitField(ctx, bf, "SET", "i8", 0, -100, "INCRBY", "u4", "#3", 20, "GET", "u16", 0).Result(); err != nil ||
				!slices.Equal(got, []int64{0, 4, 0x9c04}) {
				t.Fatalf("RESP%d BITFIELD = %v, %v", proto, got, err)
			}
			res, err := c.Do(ctx, "BITFIELD", bf, "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -100, "OVERFLOW", "SAT", "INCRBY", "i8", 0, -100).Slice()
			if err != nil || len(res) != 2 || res[0] != nil || res[1] != int64(-128) {
				t.Fatalf("RESP%d BITFIELD OVERFLOW = %v, %v", proto, res, err)
			}
			// go-redis adds the GETs.
			if got, err := c.BitFieldRO(ctx, bf, "i8", 0, "u4", "#3").Result(); err != nil || !slices.Equal(got, []int64{-128, 4}) {
				t.Fatalf("RESP%d BITFIELD_RO = %v, %v", proto, got, err)
			}
			wantErr("BITFIELD_RO SET", c.Do(ctx, "BITFIELD_RO", bf, "SET", "u8", 0, 1).Err(), "ERR BITFIELD_RO only supports the GET subcommand")
			wantErr("BITFIELD u64", c.BitField(ctx, bf, "GET", "u64", 0).Err(), "ERR Invalid bitfield type.")
			wantErr("BITFIELD OVERFLOW", c.BitField(ctx, bf, "OVERFLOW", "X", "GET", "u8", 0).Err(), "ERR Invalid OVERFLOW type specified")
			if enc, err := c.ObjectEncoding(ctx, bf).Result(); enc != "raw" {
				t.Fatalf("RESP%d OBJECT ENCODING after BITFIELD = %q, %v", proto, enc, err)
			}
		}
		if info, _ := s.client(2).Info(ctx(t), "server").Result(); strings.Contains(info, "\r\nshards:2\r\n") {
			// Across shards BITOP runs gathered (txn_gather.go).
			a, b := keysOnDifferentShards()
			c2 := s.client(2)
			c2.Set(ctx(t), a, "\xff\x0f", 0)
			c2.Set(ctx(t), b, "\x0f", 0)
			if n, err := c2.BitOpAnd(ctx(t), a, a, b).Result(); err != nil || n != 2 {
				t.Fatalf("BITOP across shards: %d, %v", n, err)
			}
			if v := c2.Get(ctx(t), a).Val(); v != "\x0f\x00" {
				t.Fatalf("BITOP AND across shards gave %q", v)
			}
		}
	})
}

// TestBitmapWritesSurviveKill9: bitmap writes acknowledged under appendfsync
// always come back exactly after kill -9, from the WAL alone and, after a
// SAVE, from the heap plus the WAL's deltas over it (a bitmap larger than
// a heap page included), on both backends.
func TestBitmapWritesSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/save=%v", backend, save), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c := s.client(2)
				ctx := ctx(t)
				keys := bitmapWrites(t, c, "w1:", 0)
				if save {
					if err := c.Save(ctx).Err(); err != nil {
						t.Fatal(err)
					}
					keys = append(keys, bitmapWrites(t, c, "w1:", 1)...) // deltas over the heap's versions
				}
				keys = append(keys, bitmapWrites(t, c, "w2:", 0)...)
				want := map[string]string{}
				for _, k := range keys {
					v, err := c.Get(ctx, k).Result()
					if err != nil && err != redis.Nil {
						t.Fatal(err)
					}
					want[k] = v
				}
				s.kill9()

				s2 := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c2 := s2.client(2)
				for k, v := range want {
					got, err := c2.Get(ctx, k).Result()
					if err != nil && err != redis.Nil {
						t.Fatal(err)
					}
					if got != v {
						t.Fatalf("%s after kill -9: %d bytes %.40q, want %d bytes %.40q", k, len(got), got, len(v), v)
					}
				}
				if ttl, _ := c2.TTL(ctx, "{w2:}dst").Result(); ttl != -1 && ttl != -2 {
					t.Fatalf("BITOP's destination has a TTL after restart: %v", ttl)
				}
			})
		}
	}
}

// bitmapWrites makes bitmap writes of every journaled form under keys with
// the given prefix, each acknowledged, and returns the keys it wrote. A
// later round flips the bits an earlier one set and sets others.
func bitmapWrites(t *testing.T, c *redis.Client, prefix string, round int64) []string {
	t.Helper()
	ctx := ctx(t)
	tag := "{" + prefix + "}"
	big, small, bf, dst := tag+"big", tag+"small", tag+"bf", tag+"dst"
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// A bitmap of 40 KB, past a heap page, set sparsely and then flipped
	// here and there.
	for i := int64(0); i < 200; i++ {
		check(c.SetBit(ctx, big, i*1601, int((i+round)%2)).Err())
	}
	for i := int64(0); i < 100; i++ {
		check(c.SetBit(ctx, big, i*3203+5+round, 1).Err())
	}
	check(c.SetBit(ctx, small, 3+round*20, 1).Err()) // grows in round 1
	check(c.Set(ctx, tag+"int", "12345", 0).Err())
	check(c.SetBit(ctx, tag+"int", 6, 1).Err()) // an integer turned bitmap
	for i := 0; i < 50; i++ {
		check(c.BitField(ctx, bf, "OVERFLOW", "SAT", "INCRBY", "i12", "#"+strconv.Itoa(i%7), 900,
			"OVERFLOW", "WRAP", "INCRBY", "u5", strconv.Itoa(100+i), 13, "SET", "i64", 3, -i).Err())
	}
	check(c.Do(ctx, "BITFIELD", bf, "OVERFLOW", "FAIL", "INCRBY", "u8", 4000, 300).Err()) // refused, but grows
	check(c.Set(ctx, dst, "old", 0).Err())
	check(c.Expire(ctx, dst, 3600e9).Err())
	check(c.BitOpXor(ctx, dst, big, small, bf).Err())
	check(c.BitOpNot(ctx, tag+"not", small).Err())
	check(c.Set(ctx, tag+"gone", "x", 0).Err())
	check(c.BitOpAnd(ctx, tag+"gone", tag+"missing").Err()) // deletes it
	return []string{big, small, tag + "int", bf, dst, tag + "not", tag + "gone"}
}

// TestBitmapRepliesMatchRedisServer runs the same random bitmap commands
// (bad arguments included) against moond and against redis-server 7.0,
// when one is installed, and compares every reply and, after each
// command, every key's value and encoding.
func TestBitmapRepliesMatchRedisServer(t *testing.T) {
	rs := startRedisServer(t)
	s := startServer(t, "pool", 1)
	ctx := ctx(t)
	mc := s.client(2)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c"}
	reply := func(c *redis.Client, args []any) string {
		v, err := c.Do(ctx, args...).Result()
		return fmt.Sprintf("%#v %v", v, err)
	}
	// The corners first, then random commands.
	corners := [][]any{
		{"SET", "a", "foobar"}, {"BITCOUNT", "a", "-23", "-81"}, {"BITCOUNT", "a", "-15", "-65", "bits"},
		{"BITCOUNT", "a", "-5", "-9", "BIT"}, {"BITCOUNT", "none", "x"}, {"BITPOS", "none", "0", "x"},
		{"BITPOS", "a", "0", "-1", "-9"}, {"BITFIELD", "b", "OVERFLOW", "SAT", "SET", "i23", "70", "-9223372036854775808"},
		{"BITFIELD", "b", "OVERFLOW", "SAT", "SET", "u8", "0", "-1"}, {"BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", "4000", "300"},
		{"SET", "c", "12"}, {"SETBIT", "c", "2", "1"}, {"BITOP", "NOT", "c", "c"},
	}
	for i := range 3000 + len(corners) {
		var args []any
		if i < len(corners) {
			args = corners[i]
		} else {
			args = randomBitmapCommand(rng, keys)
		}
		if m, r := reply(mc, args), reply(rs, args); m != r {
			t.Errorf("%q:\n moond: %s\n redis: %s", args, m, r)
		}
		for _, k := range keys {
			for _, check := range [][]any{{"GET", k}, {"OBJECT", "ENCODING", k}} {
				if m, r := reply(mc, check), reply(rs, check); m != r {
					t.Fatalf("command %d %q: %q then differs:\n moond: %s\n redis: %s", i, args, check, m, r)
				}
			}
		}
	}
}

// startRedisServer starts redis-server 7.0 without persistence, in a
// directory of its own (DEBUG RELOAD writes an RDB there, and one found in
// the working directory would load), with extra options, or skips the test
// when there is none.
func startRedisServer(t *testing.T, extra ...string) *redis.Client {
	t.Helper()
	return redistest.Start(t, freePort(t), t.TempDir(), extra...)
}

// randomBitmapCommand draws a bitmap command over keys, with arguments
// good and bad: offsets, bits, ranges, units, field types and overflow
// modes, each sometimes malformed or out of range (but never so large
// that a string of hundreds of megabytes is made).
func randomBitmapCommand(rng *rand.Rand, keys []string) []any {
	key := func() any { return keys[rng.IntN(len(keys))] }
	num := func() any {
		switch rng.IntN(12) {
		case 0, 3:
			return "-" + strconv.Itoa(rng.IntN(100))
		case 1:
			return []string{"x", "", "1.5", "+1", "01", "9223372036854775807", "-9223372036854775808",
				"9223372036854775808", "4294967296", "65535", "#3", "#-1"}[rng.IntN(12)]
		case 2:
			return strconv.Itoa(rng.IntN(2000))
		}
		return strconv.Itoa(rng.IntN(200))
	}
	val := func() any {
		if rng.IntN(3) == 0 {
			return strconv.Itoa(rng.IntN(100000))
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	unit := func() []any {
		if u := []string{"BIT", "byte", "bits", ""}[rng.IntN(4)]; u != "" {
			return []any{u}
		}
		return nil
	}
	typ := func() any {
		if rng.IntN(10) == 0 {
			return []string{"u64", "i65", "i0", "x8", "i", "I8", "u08", "u-1"}[rng.IntN(8)]
		}
		return []string{"i", "u"}[rng.IntN(2)] + strconv.Itoa(1+rng.IntN(64))
	}
	bfOps := func(ro bool) []any {
		var out []any
		for range rng.IntN(4) {
			switch rng.IntN(6) {
			case 0:
				out = append(out, "OVERFLOW", []string{"WRAP", "sat", "FAIL", "bogus"}[rng.IntN(4)])
			case 1, 2:
				out = append(out, "GET", typ(), num())
			case 3, 4:
				if !ro || rng.IntN(4) == 0 {
					out = append(out, []string{"SET", "INCRBY"}[rng.IntN(2)], typ(), num(), num())
				}
			case 5:
				out = append(out, []string{"GET", "foo", "SET", "OVERFLOW"}[rng.IntN(4)])
			}
		}
		return out
	}
	switch rng.IntN(11) {
	case 0:
		return []any{"SET", key(), val()}
	case 1, 2:
		return []any{"SETBIT", key(), num(), []string{"0", "1", "1", "0", "2", "-1", "x"}[rng.IntN(7)]}
	case 3:
		return []any{"GETBIT", key(), num()}
	case 4:
		args := []any{"BITCOUNT", key()}
		switch rng.IntN(4) {
		case 0:
			return append(args, num())
		case 1, 2:
			return append(append(args, num(), num()), unit()...)
		}
		return args
	case 5:
		args := []any{"BITPOS", key(), []string{"0", "1", "1", "0", "2", "x"}[rng.IntN(6)]}
		switch rng.IntN(5) {
		case 0:
			return append(args, num())
		case 1:
			return append(args, num(), num())
		case 2, 3:
			return append(append(args, num(), num()), unit()...)
		}
		return args
	case 6:
		args := []any{"BITOP", []string{"AND", "or", "XOR", "NOT", "nand"}[rng.IntN(5)], key(), key()}
		for range rng.IntN(3) {
			args = append(args, key())
		}
		return args
	case 7, 8:
		return append([]any{"BITFIELD", key()}, bfOps(false)...)
	case 9:
		return append([]any{"BITFIELD_RO", key()}, bfOps(true)...)
	}
	return []any{"DEL", key()}
}
