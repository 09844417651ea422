package shard

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 14: a checkpoint whose dirty pages did not fit the page cache never
// finished. After a restart the heap is cold; the frees of the deleted keys
// dirty more pages than --pagecache-size holds, and the checkpoint must
// write some while it goes (it read and evicted the same pages forever).
// The data after the next restart is exactly what was acknowledged.
func TestSaveOverMoreDirtyPagesThanThePageCacheHoldsFinishes(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := startLoop(t, kind)
			o := testOptions(dir, "everysec")
			o.PageCacheSize = 1 << 20 // 256 pages, the least a shard takes
			const keys = 1600         // two 1,800-byte values a page: 800 pages
			old := strings.Repeat("x", 1800)
			s := open(t, l, o)
			for i := range keys {
				exec(t, l, s, "SET", fmt.Sprint("k", i), old)
			}
			save(t, l, s)
			closeShard(t, l, s)

			s = open(t, l, o) // boot caches no page
			want := make(map[string]string)
			for i := range keys {
				k := fmt.Sprint("k", i)
				switch i % 10 {
				case 0:
					want[k] = old
				case 1:
					want[k] = "new " + k
					exec(t, l, s, "SET", k, want[k])
				default:
					exec(t, l, s, "DEL", k)
				}
			}
			save(t, l, s) // fails after looptest.Deadline if it never finishes
			st := ckptStats(t, l, s)
			if st.PageLoads == 0 || st.PagesSpilled == 0 {
				t.Fatalf("%d rounds of page reads, %d pages spilled: the test missed its case", st.PageLoads, st.PagesSpilled)
			}
			closeShard(t, l, s)

			s = open(t, l, o)
			defer closeShard(t, l, s)
			if got, _ := exec(t, l, s, "DBSIZE"); got != fmt.Sprintf(":%d\r\n", len(want)) {
				t.Fatalf("DBSIZE %q, want %d", got, len(want))
			}
			for i := range keys {
				k := fmt.Sprint("k", i)
				wantReply := "$-1\r\n"
				if v, ok := want[k]; ok {
					wantReply = fmt.Sprintf("$%d\r\n%s\r\n", len(v), v)
				}
				if got, _ := exec(t, l, s, "GET", k); got != wantReply {
					t.Fatalf("GET %s after the restart: %.40q, want %.40q", k, got, wantReply)
				}
			}
		})
	}
}
