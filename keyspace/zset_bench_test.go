package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/moond-db/moond/resp"
)

// zsetBench runs a command against a keyspace, reusing the writer and
// the argument vector (so that the benchmark itself allocates nothing).
type zsetBench struct {
	ks   *Keyspace
	c    Client
	w    resp.Writer
	args [][]byte
}

func newZSetBench() *zsetBench {
	return &zsetBench{ks: NewKeyspace(16, func() int64 { return startClock })}
}

func (z *zsetBench) exec(args ...[]byte) {
	z.args = append(z.args[:0], args...)
	z.ks.Exec(&z.c, z.args, &z.w)
	z.w.Reset()
}

// BenchmarkZAdd adds 65,536 members with scattered scores to one sorted set
// (a skiplist), then updates them with new scores, and adds to 10,000 small
// sets (listpacks of up to 64 members).
func BenchmarkZAdd(b *testing.B) {
	members := make([][]byte, 1<<16)
	scores := make([][]byte, len(members))
	for i := range members {
		members[i] = []byte("element:" + pad12(i))
		scores[i] = []byte(strconv.Itoa(i * 7919 % 100003))
	}
	b.Run("skiplist", func(b *testing.B) {
		z := newZSetBench()
		cmd, key := []byte("ZADD"), []byte("myzset")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			// Past the first round the scores change: updates that move
			// members, not no-ops.
			j := i % len(members)
			z.exec(cmd, key, scores[(j+i/len(members))%len(scores)], members[j])
		}
	})
	b.Run("update100k", func(b *testing.B) {
		// bench-types' ZADD row: random scores for random members of a
		// set of 100,000, so that most updates move a member and every
		// descent misses the cache.
		z := newZSetBench()
		cmd, key := []byte("ZADD"), []byte("myzset")
		const n = 100000
		for i := range n {
			z.exec(cmd, key, []byte(strconv.Itoa(i)), []byte("element:"+pad12(i)))
		}
		rng := rand.New(rand.NewPCG(1, 2))
		args := make([][2][]byte, 1<<16)
		for i := range args {
			args[i] = [2][]byte{[]byte(strconv.Itoa(rng.IntN(n))), []byte("element:" + pad12(rng.IntN(n)))}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			a := &args[i%len(args)]
			z.exec(cmd, key, a[0], a[1])
		}
	})
	b.Run("listpack", func(b *testing.B) {
		z := newZSetBench()
		keys := make([][]byte, 10000)
		for i := range keys {
			keys[i] = []byte("z:" + pad12(i))
		}
		cmd := []byte("ZADD")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			j := (i / len(keys)) % 64
			z.exec(cmd, keys[i%len(keys)], scores[j], members[j])
		}
	})
}

// BenchmarkZRangeByScore reads 10 members by score from a 1,000-member set
// (skiplist) and from a 100-member one (listpack).
func BenchmarkZRangeByScore(b *testing.B) {
	for _, size := range []int{100, 1000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			z := newZSetBench()
			key := []byte("z")
			for i := range size {
				z.exec([]byte("ZADD"), key, []byte(strconv.Itoa(i)), []byte("member:"+pad12(i)))
			}
			mins := make([][]byte, size-10)
			maxs := make([][]byte, size-10)
			for i := range mins {
				mins[i], maxs[i] = []byte(strconv.Itoa(i)), []byte("("+strconv.Itoa(i+10))
			}
			cmd, ws := []byte("ZRANGEBYSCORE"), []byte("WITHSCORES")
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				j := i % len(mins)
				z.exec(cmd, key, mins[j], maxs[j], ws)
			}
		})
	}
}

// BenchmarkZScoreZRank looks members up in a 10,000-member skiplist.
func BenchmarkZScoreZRank(b *testing.B) {
	z := newZSetBench()
	key := []byte("z")
	members := make([][]byte, 10000)
	for i := range members {
		members[i] = []byte("member:" + pad12(i))
		z.exec([]byte("ZADD"), key, []byte(strconv.Itoa(i)), members[i])
	}
	for _, name := range []string{"ZSCORE", "ZRANK"} {
		b.Run(name, func(b *testing.B) {
			cmd := []byte(name)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				z.exec(cmd, key, members[i%len(members)])
			}
		})
	}
}
