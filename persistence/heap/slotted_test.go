package heap

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// usedBytes is what a slotted page should report as free given its live
// records: the body less the slot array and the live record bytes.
func expectedFree(p *Page) int {
	live := 0
	for i := range p.SlotCount() {
		_, n := p.slot(i)
		live += n
	}
	return PageSize - HeaderSize - SlotSize*p.SlotCount() - live
}

func TestSlottedPageInsertDeleteCompactKeepsEveryLiveRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := new(Page)
	p.Init(PageKV, testFile, testPage)
	model := map[int]string{}
	lsn := uint64(0)
	for step := range 20000 {
		if len(model) > 0 && r.IntN(3) == 0 {
			slots := make([]int, 0, len(model))
			for s := range model {
				slots = append(slots, s)
			}
			s := slots[r.IntN(len(slots))]
			if err := p.DeleteRecord(s); err != nil {
				t.Fatalf("step %d: delete slot %d: %v", step, s, err)
			}
			delete(model, s)
		} else {
			lsn++
			key := fmt.Sprintf("k%d", step)
			value := bytes.Repeat([]byte{byte(step)}, r.IntN(300))
			slot, err := p.InsertRecord(head([]byte(key), value, lsn), []byte(key), value)
			if errors.Is(err, ErrNoSpace) {
				if size := RecordHeaderSize + len(key) + len(value); p.Room() >= size {
					t.Fatalf("step %d: refused %d bytes with room %d", step, size, p.Room())
				}
				continue
			}
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if _, taken := model[int(slot)]; taken {
				t.Fatalf("step %d: slot %d handed out twice", step, slot)
			}
			model[int(slot)] = fmt.Sprintf("%s=%s@%d", key, value, lsn)
		}
		if r.IntN(50) == 0 {
			p.Compact()
		}
		if _, err := CheckPage(image(p), testFile, testPage); err != nil {
			t.Fatalf("step %d: page no longer decodes: %v", step, err)
		}
		if got := records(t, p); !maps.Equal(got, model) {
			t.Fatalf("step %d: records %d, model %d", step, len(got), len(model))
		}
		if p.FreeSpace() != expectedFree(p) {
			t.Fatalf("step %d: free space %d, expected %d", step, p.FreeSpace(), expectedFree(p))
		}
		if p.LiveRecords() != len(model) {
			t.Fatalf("step %d: %d live records, model %d", step, p.LiveRecords(), len(model))
		}
	}
}

func TestInsertReusesTheLowestDeadSlot(t *testing.T) {
	p := kvPage(t, "a", "b", "c", "d")
	for _, s := range []int{2, 1} {
		if err := p.DeleteRecord(s); err != nil {
			t.Fatal(err)
		}
	}
	slot, err := p.InsertRecord(head([]byte("e"), nil, 9), []byte("e"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if slot != 1 || p.SlotCount() != 4 {
		t.Fatalf("slot %d of %d, want 1 of 4", slot, p.SlotCount())
	}
}

func TestDeleteDropsTrailingDeadSlotsAndEmptiesThePage(t *testing.T) {
	p := kvPage(t, "a", "b", "c")
	if err := p.DeleteRecord(1); err != nil {
		t.Fatal(err)
	}
	if p.SlotCount() != 3 {
		t.Fatalf("slot count %d after deleting a middle slot", p.SlotCount())
	}
	if err := p.DeleteRecord(2); err != nil {
		t.Fatal(err)
	}
	if p.SlotCount() != 1 {
		t.Fatalf("slot count %d, want 1: trailing dead slots stay", p.SlotCount())
	}
	if err := p.DeleteRecord(0); err != nil {
		t.Fatal(err)
	}
	if p.SlotCount() != 0 || p.upper() != PageSize || p.dead() != 0 || p.FreeSpace() != PageSize-HeaderSize {
		t.Fatalf("empty page: slots %d upper %d dead %d", p.SlotCount(), p.upper(), p.dead())
	}
	if err := p.DeleteRecord(0); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("double delete: %v", err)
	}
}

func TestInsertCompactsAFragmentedPageAndKeepsSlotNumbers(t *testing.T) {
	p := new(Page)
	p.Init(PageKV, testFile, testPage)
	value := bytes.Repeat([]byte("x"), 200)
	var slots []uint16
	for i := 0; ; i++ {
		k := []byte(fmt.Sprintf("k%02d", i))
		s, err := p.InsertRecord(head(k, value, uint64(i+1)), k, value)
		if errors.Is(err, ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	for i := 0; i < len(slots)-1; i += 2 {
		if err := p.DeleteRecord(int(slots[i])); err != nil {
			t.Fatal(err)
		}
	}
	before := records(t, p)
	big := bytes.Repeat([]byte("y"), 600)
	if p.upper()-p.lower() >= RecordHeaderSize+1+len(big) {
		t.Fatal("test setup: the gap alone fits the record")
	}
	s, err := p.InsertRecord(head([]byte("B"), big, 99), []byte("B"), big)
	if err != nil {
		t.Fatalf("insert into fragmented page: %v", err)
	}
	after := records(t, p)
	delete(after, int(s))
	if !maps.Equal(before, after) {
		t.Fatal("compaction moved or lost records")
	}
	if p.dead() != 0 {
		t.Fatalf("%d dead bytes after compaction", p.dead())
	}
}

func TestInsertRefusesARecordThatDoesNotFitAndChangesNothing(t *testing.T) {
	p := kvPage(t, "a")
	big := bytes.Repeat([]byte("z"), p.Room()-RecordHeaderSize)
	before := p.b
	if _, err := p.InsertRecord(head([]byte("k"), big, 5), []byte("k"), big); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("got %v, want ErrNoSpace", err)
	}
	if p.b != before {
		t.Fatal("refused insert changed the page")
	}
	fit := big[1:]
	if _, err := p.InsertRecord(head([]byte("k"), fit, 5), []byte("k"), fit); err != nil {
		t.Fatalf("a record of exactly Room bytes: %v", err)
	}
}

func TestInsertRejectsAHeadThatDisagreesWithItsBytes(t *testing.T) {
	p := kvPage(t)
	h := head([]byte("key"), []byte("value"), 1)
	h.ValueLen++
	if _, err := p.InsertRecord(h, []byte("key"), []byte("value")); err == nil {
		t.Fatal("accepted a value length that is not the inline length")
	}
	h = head([]byte("key"), []byte("value"), 0)
	if _, err := p.InsertRecord(h, []byte("key"), []byte("value")); err == nil {
		t.Fatal("accepted key LSN 0")
	}
}

func TestInsertRaisesThePageLSNToTheKeyLSN(t *testing.T) {
	p := kvPage(t)
	if _, err := p.InsertRecord(head([]byte("a"), nil, 77), []byte("a"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.InsertRecord(head([]byte("b"), nil, 12), []byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	if p.LSN() != 77 {
		t.Fatalf("page LSN %d, want 77", p.LSN())
	}
}

func TestMarkRangeFindsOverlapsAcrossWords(t *testing.T) {
	var bm [PageSize / 64]uint64
	if markRange(&bm, 60, 200) {
		t.Fatal("overlap in an empty map")
	}
	if markRange(&bm, 200, 300) {
		t.Fatal("adjacent ranges overlap")
	}
	if !markRange(&bm, 10, 61) {
		t.Fatal("missed an overlap of one byte")
	}
	if !markRange(&bm, 128, 192) {
		t.Fatal("missed a whole-word overlap")
	}
}

func TestInsertDeleteAndCompactDoNotAllocate(t *testing.T) {
	p := new(Page)
	p.Init(PageKV, testFile, testPage)
	k, v := []byte("key"), bytes.Repeat([]byte("v"), 100)
	h := head(k, v, 1)
	allocs := testing.AllocsPerRun(100, func() {
		for {
			if _, err := p.InsertRecord(h, k, v); err != nil {
				break
			}
		}
		for s := 0; s < p.SlotCount(); s += 2 {
			_ = p.DeleteRecord(s)
		}
		p.Compact()
	})
	if allocs != 0 {
		t.Fatalf("%.0f allocations", allocs)
	}
}
