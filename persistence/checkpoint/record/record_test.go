package record

import (
	"errors"
	"slices"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
)

func TestFPIAndEndPayloadsRoundTrip(t *testing.T) {
	var p heap.Page
	p.Init(heap.PageKV, 7, 3)
	p.RaiseLSN(42)
	b := AppendFPI(nil, &p)
	id, img, err := DecodeFPI(b)
	if err != nil || id != (heap.PageID{File: 7, Page: 3}) {
		t.Fatal(id, err)
	}
	if _, err := heap.CheckPage(img, 7, 3); err != nil {
		t.Fatal(err)
	}
	if r, err := DecodeEnd(AppendEnd(nil, 99)); err != nil || r != 99 {
		t.Fatal(r, err)
	}
	if _, err := DecodeEnd(b); err == nil {
		t.Fatal("FPI decoded as end record")
	}
}

func TestDBMapPayloadRoundTrip(t *testing.T) {
	for _, m := range [][]int{{0}, {3, 1, 0, 2}, make([]int, 300)} {
		got, err := DecodeDBMap(AppendDBMap(nil, m))
		if err != nil || !slices.Equal(got, m) {
			t.Fatalf("%v -> %v, %v", m, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {KindEnd}, {KindDBMap}, {KindDBMap, 2, 0}, {KindDBMap, 1, 0, 7}} {
		if _, err := DecodeDBMap(bad); !errors.Is(err, ErrPayload) {
			t.Fatalf("DecodeDBMap(%v) = %v, want ErrPayload", bad, err)
		}
	}
}
