package tests

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// bigValues fills a hash, a set, a sorted set and a list of n members
// each, large enough to be stored in chunks, and returns the model of each.
func bigValues(t *testing.T, c *redis.Client, n int) (map[string]string, []string, map[string]float64, []string) {
	t.Helper()
	cx := ctx(t)
	hash, set, zset, list := map[string]string{}, []string{}, map[string]float64{}, []string{}
	for lo := 0; lo < n; lo += 1000 {
		pipe := c.Pipeline()
		var hargs, sargs, largs []any
		var zargs []redis.Z
		for i := lo; i < min(n, lo+1000); i++ {
			f := "member:" + strconv.Itoa(i)
			hargs = append(hargs, f, "value-"+strconv.Itoa(i*7))
			hash[f] = "value-" + strconv.Itoa(i*7)
			sargs = append(sargs, f)
			set = append(set, f)
			zargs = append(zargs, redis.Z{Score: float64(i % 977), Member: f})
			zset[f] = float64(i % 977)
			largs = append(largs, "element-"+strconv.Itoa(i))
			list = append(list, "element-"+strconv.Itoa(i))
		}
		pipe.HSet(cx, "big:h", hargs...)
		pipe.SAdd(cx, "big:s", sargs...)
		pipe.ZAdd(cx, "big:z", zargs...)
		pipe.RPush(cx, "big:l", largs...)
		if _, err := pipe.Exec(cx); err != nil {
			t.Fatal(err)
		}
	}
	return hash, set, zset, list
}

// checkBig compares the four values with their models.
func checkBig(t *testing.T, c *redis.Client, when string, hash map[string]string, set []string, zset map[string]float64, list []string) {
	t.Helper()
	cx := ctx(t)
	if got, err := c.LRange(cx, "big:l", 0, -1).Result(); err != nil || !slices.Equal(got, list) {
		t.Fatalf("%s: list of %d elements (%v), want %d", when, len(got), err, len(list))
	}
	if got, err := c.HGetAll(cx, "big:h").Result(); err != nil || !maps.Equal(got, hash) {
		t.Fatalf("%s: hash of %d fields (%v), want %d", when, len(got), err, len(hash))
	}
	got, err := c.SMembers(cx, "big:s").Result()
	slices.Sort(got)
	want := slices.Sorted(slices.Values(set))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s: set of %d members (%v), want %d", when, len(got), err, len(want))
	}
	zs, err := c.ZRangeWithScores(cx, "big:z", 0, -1).Result()
	if err != nil || len(zs) != len(zset) {
		t.Fatalf("%s: sorted set of %d members (%v), want %d", when, len(zs), err, len(zset))
	}
	for i, z := range zs {
		m := z.Member.(string)
		if zset[m] != z.Score || i > 0 && (zs[i-1].Score > z.Score || zs[i-1].Score == z.Score && zs[i-1].Member.(string) > m) {
			t.Fatalf("%s: sorted set member %d is %q %v, want score %v, in order", when, i, m, z.Score, zset[m])
		}
	}
}

// TestLargeValuesCheckpointOnlyWhatChanged: a large hash, set, sorted set
// and list are stored in chunks, so that the checkpoint after a change of one
// member each writes a few pages, not the values again; kill -9 after it
// (and after a restart, whose first checkpoint writes the changed values
// whole once) brings back every member.
func TestLargeValuesCheckpointOnlyWhatChanged(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
			c := s.client(2)
			cx := ctx(t)
			hash, set, zset, list := bigValues(t, c, 60000)
			save := func() (pages, parts int64) {
				t.Helper()
				p0, q0 := infoInt(t, c, "checkpoint_pages_flushed"), infoInt(t, c, "checkpoint_parts_written")
				if err := c.Save(cx).Err(); err != nil {
					t.Fatal(err)
				}
				return infoInt(t, c, "checkpoint_pages_flushed") - p0, infoInt(t, c, "checkpoint_parts_written") - q0
			}
			whole, wholeParts := save()
			if whole < 300 || wholeParts < 4*8 {
				t.Fatalf("the first checkpoint wrote %d pages and %d chunks: the values are not in chunks", whole, wholeParts)
			}
			change := func(tag string) {
				t.Helper()
				if err := c.HSet(cx, "big:h", "member:17", tag).Err(); err != nil {
					t.Fatal(err)
				}
				hash["member:17"] = tag
				if err := c.SAdd(cx, "big:s", tag).Err(); err != nil {
					t.Fatal(err)
				}
				set = append(set, tag)
				if err := c.ZAdd(cx, "big:z", redis.Z{Score: -1, Member: tag}).Err(); err != nil {
					t.Fatal(err)
				}
				zset[tag] = -1
				if err := c.LPush(cx, "big:l", tag).Err(); err != nil {
					t.Fatal(err)
				}
				list = append([]string{tag}, list...)
			}
			change("one")
			pages, parts := save()
			if parts != 4 || pages*20 > whole {
				t.Fatalf("after one change to each value the checkpoint wrote %d pages and %d chunks; the values take %d pages",
					pages, parts, whole)
			}
			t.Logf("%s: the values took %d pages in %d chunks; a change to each, %d pages", backend, whole, wholeParts, pages)
			change("two")
			s.kill9()

			s = startServerIn(t, dir, backend, 2, "--appendfsync", "always")
			c = s.client(2)
			checkBig(t, c, "after kill -9", hash, set, zset, list)
			change("three")
			if _, parts := save(); parts < 4*8 {
				t.Errorf("the first checkpoint after a restart wrote %d chunks: the chunks of the restart's hash seeds are new", parts)
			}
			change("four")
			if _, parts := save(); parts != 4 {
				t.Errorf("the second checkpoint after a restart wrote %d chunks, want 4", parts)
			}
			change("five")
			if err := c.Del(cx, "big:s").Err(); err != nil {
				t.Fatal(err)
			}
			set = nil
			if err := c.Rename(cx, "big:h", "big:h2").Err(); err != nil {
				t.Fatal(err)
			}
			save()
			s.kill9()

			s = startServerIn(t, dir, backend, 2)
			c = s.client(2)
			if n, _ := c.Exists(cx, "big:s", "big:h").Result(); n != 0 {
				t.Fatalf("%d of the deleted or renamed keys exist after the restart", n)
			}
			if err := c.Rename(cx, "big:h2", "big:h").Err(); err != nil {
				t.Fatal(err)
			}
			checkBig(t, c, "after the second kill -9", hash, set, zset, list)
			if got := infoInt(t, c, "heap_vanished_unexpected"); got != 0 {
				t.Errorf("heap_vanished_unexpected %d", got)
			}
		})
	}
}
