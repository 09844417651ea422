package tests

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/wal"
)

// TestPowerLossInTheLastGroupBootsAndCutsIt is issue 14's defect 4: after
// a power loss, the last segment's group that was never fdatasynced may
// hold any mix of written and unwritten pages. Here the acknowledged
// writes of a kill -9 under appendfsync always are followed by such a
// group (written as the writer writes one: a sync mark claiming the
// durable point, then records, more than a page of them) with one 4 KiB
// page inside it zeroed. Boot must cut it with a log line, not refuse with
// exit 70, and keep every acknowledged write.
func TestPowerLossInTheLastGroupBootsAndCutsIt(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "pool", 1, "--appendfsync", "always")
	c := s.client(2)
	for i := range 20 {
		if err := c.Set(ctx(t), fmt.Sprintf("acked%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.kill9()

	segs := segments(t, dir, 0)
	last := segs[len(segs)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	res, err := wal.ScanSegment(bytes.NewReader(b), int64(len(b)), wal.ScanOptions{})
	if err != nil || res.Stop != wal.StopEOF {
		t.Fatalf("last segment: %+v %v", res, err)
	}
	// The unsynced group: everything before it is durable.
	start := int64(len(b))
	var q [wal.MarkPayloadSize]byte
	binary.LittleEndian.PutUint64(q[:], uint64(start))
	b = wal.AppendRecord(b, res.LastLSN+1, wal.RecordMark, q[:])
	val := strings.Repeat("u", 1000)
	var ends []int64
	for i := range 12 {
		cmd := wal.EncodeCommand(0, [][]byte{[]byte("SET"), fmt.Appendf(nil, "unsynced%d", i), []byte(val)})
		b = wal.AppendRecord(b, res.LastLSN+1+uint64(i), wal.RecordData, cmd)
		ends = append(ends, int64(len(b)))
	}
	page := (start/4096 + 1) * 4096 // a whole page inside the group, records after it
	if page+2*4096 > int64(len(b)) {
		t.Fatalf("group too short: %d..%d", start, len(b))
	}
	copy(b[page:page+4096], make([]byte, 4096))
	if err := os.WriteFile(last, b, 0o644); err != nil {
		t.Fatal(err)
	}

	s2 := startServerIn(t, dir, "pool", 1)
	log := s2.log.String()
	if !strings.Contains(log, "torn tail truncated") || !strings.Contains(log, fmt.Sprintf("durable through offset %d", start)) {
		t.Fatalf("no cut reported:\n%s", log)
	}
	c2 := s2.client(2)
	for i := range 20 {
		if v, _ := c2.Get(ctx(t), fmt.Sprintf("acked%d", i)).Result(); v != "v" {
			t.Fatalf("acknowledged acked%d lost", i)
		}
	}
	for i := range 12 {
		// Records from the zeroed page on are cut; the whole ones before
		// it are a valid prefix and replay (never acknowledged, harmless).
		n, _ := c2.Exists(ctx(t), fmt.Sprintf("unsynced%d", i)).Result()
		if cut := ends[i] > page; cut != (n == 0) {
			t.Fatalf("unsynced%d ending at offset %d (zeroed page at %d): exists %d", i, ends[i], page, n)
		}
	}
}
