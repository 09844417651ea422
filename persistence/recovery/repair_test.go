package recovery

import (
	"fmt"
	"slices"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
)

// TestTornPagesRepairedAcrossRuns tears pages at the ends and in the
// middle of the runs of consecutive imaged pages that repair reads
// together (repairRun), with a page that has no image breaking a run:
// exactly the torn pages are restored, and every key loads.
func TestTornPagesRepairedAcrossRuns(t *testing.T) {
	const pages = 2*repairRun + 20
	const noImage = repairRun + 6 // a page without an image, mid-file
	s := newShard(t)
	m := manifest.New(testShard)
	var recs []keyRecord
	var want []string
	for i := range pages {
		k := fmt.Sprintf("k%03d", i)
		recs = append(recs, big(k, uint64(i+1)))
		want = append(want, k)
	}
	ids := s.insert(m, 0, recs...)
	for i, r := range recs {
		if id := ids[r.key]; id.File != 1 || id.Page != uint32(i) {
			t.Fatalf("%q at %v: the test needs one key a page in file 1", r.key, id)
		}
	}
	s.writeManifest(m)
	s.writeControl(pages+1, 0, uint32(m.NextID()))
	w := s.openWAL(1, 0)
	w.data(pages)
	for no := range uint32(pages) {
		if no != noImage {
			w.fpi(1, no, s.image(1, no))
		}
	}
	w.data(1)
	torn := []heap.PageID{}
	for _, no := range []uint32{0, repairRun - 1, repairRun, noImage - 1, noImage + 1, noImage + 30, pages - 1} {
		s.tear(1, no)
		torn = append(torn, heap.PageID{File: 1, Page: no})
	}

	st, ix := s.mustOpen()
	if !slices.Equal(st.Repaired, torn) {
		t.Fatalf("Repaired %v, want %v", st.Repaired, torn)
	}
	if got := keys(ix); !slices.Equal(got, want) {
		t.Fatalf("loaded %d keys %v, want %d", len(got), got, len(want))
	}
}
