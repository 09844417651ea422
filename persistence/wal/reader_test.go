package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"
)

func TestScanSealedSegment(t *testing.T) {
	prev := ChainLink{FirstLSN: 1, SealLSN: 9, SealCRC: 77}
	b, offs := segmentBytes(4, 10, prev, payloads(5, "p"), true)
	var seen []uint64
	res, err := ScanSegment(bytes.NewReader(b), int64(len(b)), ScanOptions{Visit: func(r Record, off int64) error {
		if off != offs[len(seen)] {
			t.Fatalf("record %d at offset %d, want %d", r.LSN, off, offs[len(seen)])
		}
		seen = append(seen, r.LSN)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopSealed || res.Offset != int64(len(b)) || res.LastLSN != 15 || res.Records != 6 {
		t.Fatalf("result %+v", res)
	}
	if res.Header.Shard != 4 || res.Header.Prev != prev {
		t.Fatalf("header %+v", res.Header)
	}
	if res.Seal.Reason != SealRotate || res.SealCRC != recordCRC(b) {
		t.Fatalf("seal %+v crc %x", res.Seal, res.SealCRC)
	}
	if link := res.Link(); link != (ChainLink{FirstLSN: 10, SealLSN: 15, SealCRC: recordCRC(b)}) {
		t.Fatalf("link %v", link)
	}
	if len(seen) != 6 {
		t.Fatalf("visited %v", seen)
	}
}

func TestScanCleanEndWithoutSeal(t *testing.T) {
	b, _ := segmentBytes(0, 1, ChainLink{}, payloads(3, "p"), false)
	res := scanBytes(t, b)
	if res.Stop != StopEOF || res.Offset != int64(len(b)) || res.LastLSN != 3 {
		t.Fatalf("result %+v", res)
	}
	empty, _ := segmentBytes(0, 8, ChainLink{}, nil, false)
	res = scanBytes(t, empty)
	if res.Stop != StopEOF || res.LastLSN != 7 || res.Records != 0 {
		t.Fatalf("empty segment: %+v", res)
	}
}

// tornVariants returns what a crash can leave of the bytes [start, end) of
// the last record, cut at cut: the prefix alone, the prefix followed by
// zeros up to the record's end (size extended, data not written), and the
// prefix followed by garbage (stale sectors).
func tornVariants(b []byte, start, end, cut int) map[string][]byte {
	rng := rand.New(rand.NewPCG(uint64(cut), 1))
	garbage := make([]byte, end-cut)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	return map[string][]byte{
		"prefix":  bytes.Clone(b[:cut]),
		"zeroed":  append(bytes.Clone(b[:cut]), make([]byte, end-cut)...),
		"garbage": append(bytes.Clone(b[:cut]), garbage...),
	}
}

func TestTornTailAtEveryOffsetIsTornNeverCorrupt(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		b, offs := segmentBytes(0, 1, ChainLink{}, payloads(4, "value"), sealed)
		start, end := int(offs[len(offs)-1]), len(b)
		lastGood := uint64(len(offs) - 1)
		for cut := start; cut < end; cut++ {
			for name, img := range tornVariants(b, start, end, cut) {
				if cut == start && name == "prefix" {
					continue // that is a clean end, tested elsewhere
				}
				res := scanBytes(t, img)
				if res.Stop != StopTorn {
					t.Fatalf("sealed=%v cut at %d (%s): stop %v (%v), want torn", sealed, cut, name, res.Stop, res.Reason)
				}
				if res.Offset != int64(start) || res.LastLSN != lastGood || res.Reason == nil {
					t.Fatalf("sealed=%v cut at %d (%s): offset %d LSN %d reason %v", sealed, cut, name, res.Offset, res.LastLSN, res.Reason)
				}
			}
		}
	}
}

func TestZeroFilledTailIsTorn(t *testing.T) {
	b, _ := segmentBytes(0, 1, ChainLink{}, payloads(2, "p"), false)
	end := len(b)
	b = append(b, make([]byte, 4096)...)
	res := scanBytes(t, b)
	if res.Stop != StopTorn || res.Offset != int64(end) || !errors.Is(res.Reason, ErrZeroedTail) {
		t.Fatalf("result %+v", res)
	}
}

// corruptField damages one field of the record at off in b.
func corruptField(b []byte, off int64, field string) {
	n := int64(binary.LittleEndian.Uint32(b[off:]))
	switch field {
	case "length":
		b[off] ^= 0x01
	case "lsn":
		b[off+4] ^= 0x01
	case "type":
		b[off+12] ^= 0x01
	case "payload":
		b[off+13+n/2] ^= 0x01
	case "crc":
		b[off+13+n] ^= 0x01
	case "length-huge":
		binary.LittleEndian.PutUint32(b[off:], 0xffffffff)
	case "length-beyond-file":
		binary.LittleEndian.PutUint32(b[off:], uint32(len(b)))
	}
}

var recordFields = []string{"length", "lsn", "type", "payload", "crc", "length-huge", "length-beyond-file"}

func TestCorruptionOfEveryFieldInTheMiddleIsCorrupt(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		for _, field := range recordFields {
			b, offs := segmentBytes(0, 1, ChainLink{}, payloads(5, "some-value"), sealed)
			corruptField(b, offs[2], field)
			res := scanBytes(t, b)
			if res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrValidAfterTear) {
				t.Fatalf("sealed=%v %s: stop %v reason %v, want corrupt", sealed, field, res.Stop, res.Reason)
			}
			if res.Offset != offs[2] || res.LastLSN != 2 || res.NextValidOffset != offs[3] || res.NextValidLSN != 4 {
				t.Fatalf("sealed=%v %s: %+v", sealed, field, res)
			}
			if want := uint64(len(offs)); res.MaxLSNAfter != want {
				t.Fatalf("sealed=%v %s: MaxLSNAfter %d, want %d", sealed, field, res.MaxLSNAfter, want)
			}
		}
	}
}

func TestCorruptionOfEveryFieldInTheLastRecordLooksTorn(t *testing.T) {
	// Nothing follows the last record, so damage there cannot be told from a
	// torn write: the scanner must not call it corruption.
	for _, field := range recordFields {
		b, offs := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), false)
		corruptField(b, offs[2], field)
		if res := scanBytes(t, b); res.Stop != StopTorn || res.Offset != offs[2] {
			t.Fatalf("%s: %+v", field, res)
		}
	}
}

// resealed rebuilds the record at off with a valid checksum after edit.
func resealed(b []byte, off int64, edit func(rec []byte)) {
	n := int64(binary.LittleEndian.Uint32(b[off:]))
	rec := b[off : off+RecordOverhead+n]
	edit(rec)
	binary.LittleEndian.PutUint32(rec[len(rec)-4:], crc32c(rec[:len(rec)-4]))
}

func TestChecksummedRecordWithWrongLSNIsCorrupt(t *testing.T) {
	for name, lsn := range map[string]uint64{"skips ahead": 9, "goes back": 1, "repeats": 2} {
		b, offs := segmentBytes(0, 1, ChainLink{}, payloads(4, "v"), false)
		resealed(b, offs[2], func(rec []byte) { binary.LittleEndian.PutUint64(rec[4:], lsn) })
		res := scanBytes(t, b)
		if res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrLSNOrder) || res.Offset != offs[2] || res.LastLSN != 2 {
			t.Fatalf("%s: %+v", name, res)
		}
	}
	// Even as the very last record: a checksummed record was written whole.
	b, offs := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), false)
	resealed(b, offs[2], func(rec []byte) { binary.LittleEndian.PutUint64(rec[4:], 7) })
	if res := scanBytes(t, b); res.Stop != StopCorrupt || res.MaxLSNAfter != 7 {
		t.Fatalf("last record: %+v", res)
	}
}

func TestChecksummedRecordWithUnknownTypeIsCorrupt(t *testing.T) {
	b, offs := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), false)
	resealed(b, offs[1], func(rec []byte) { rec[12] = 77 })
	if res := scanBytes(t, b); res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrInvalidType) || res.Offset != offs[1] {
		t.Fatalf("%+v", res)
	}
}

func TestMalformedSealIsCorrupt(t *testing.T) {
	b, offs := segmentBytes(0, 1, ChainLink{}, payloads(2, "v"), true)
	resealed(b, offs[2], func(rec []byte) { rec[13] = 99 })
	if res := scanBytes(t, b); res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrBadSeal) {
		t.Fatalf("%+v", res)
	}
}

func TestSealDigestCoversEveryRecordOfTheSegment(t *testing.T) {
	// A record rewritten with a valid checksum (a different write with the
	// same LSN) no longer matches the seal's digest.
	b, offs := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), true)
	resealed(b, offs[1], func(rec []byte) { rec[RecordHeaderSize] = 'X' })
	res := scanBytes(t, b)
	if res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrBadSeal) || res.Offset != offs[3] {
		t.Fatalf("%+v", res)
	}
	if got := DigestUpdate(DigestUpdate(0, 1), 2); got == DigestUpdate(DigestUpdate(0, 2), 1) {
		t.Fatal("digest ignores record order")
	}
}

func TestBytesAfterSealAreCorrupt(t *testing.T) {
	b, _ := segmentBytes(0, 1, ChainLink{}, payloads(2, "v"), true)
	end := int64(len(b))
	for name, extra := range map[string][]byte{
		"record": AppendRecord(nil, 4, RecordData, []byte("late")),
		"zeros":  make([]byte, 10),
		"byte":   {1},
	} {
		res := scanBytes(t, append(bytes.Clone(b), extra...))
		if res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrDataAfterSeal) || res.Offset != end || res.LastLSN != 3 {
			t.Fatalf("%s: %+v", name, res)
		}
	}
}

func TestBadHeaderIsCorrupt(t *testing.T) {
	b, _ := segmentBytes(0, 1, ChainLink{}, payloads(2, "v"), false)
	for _, n := range []int{0, 10, SegmentHeaderSize - 1} {
		if res := scanBytes(t, b[:n]); res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrShortHeader) {
			t.Fatalf("%d bytes: %+v", n, res)
		}
	}
	c := bytes.Clone(b)
	c[20] ^= 1
	if res := scanBytes(t, c); res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrHeaderChecksum) || res.Offset != 0 {
		t.Fatalf("%+v", res)
	}
	// With the first LSN from the file name, the records behind a bad header
	// are still counted.
	res, err := ScanSegment(bytes.NewReader(c), int64(len(c)), ScanOptions{FirstLSN: 1})
	if err != nil || res.Stop != StopCorrupt || res.MaxLSNAfter != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestScanAheadIgnoresStaleRecords(t *testing.T) {
	// A torn record followed by a valid record with an older LSN (left over
	// from an earlier use of the space) is still a torn tail.
	b, offs := segmentBytes(0, 10, ChainLink{}, payloads(3, "v"), false)
	b = b[:offs[2]+5]
	b = AppendRecord(b, 3, RecordData, []byte("stale"))
	if res := scanBytes(t, b); res.Stop != StopTorn || res.Offset != offs[2] {
		t.Fatalf("%+v", res)
	}
}

func TestScanAheadNeedsAPlausibleLSN(t *testing.T) {
	// A checksummed record whose LSN could not follow the damage that
	// closely (too far ahead for the bytes in between) is not evidence.
	b, offs := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), false)
	b = b[:offs[2]+5]
	b = AppendRecord(b, 1000, RecordData, []byte("x"))
	if res := scanBytes(t, b); res.Stop != StopTorn {
		t.Fatalf("%+v", res)
	}
}

func TestVisitErrorStopsTheScan(t *testing.T) {
	b, _ := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), false)
	boom := errors.New("boom")
	_, err := ScanSegment(bytes.NewReader(b), int64(len(b)), ScanOptions{Visit: func(r Record, _ int64) error {
		if r.LSN == 2 {
			return boom
		}
		return nil
	}})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

func TestScanMemoryIsBoundedByTheFile(t *testing.T) {
	// A length field claiming half a gigabyte in a small file must not make
	// the scanner allocate it.
	b, offs := segmentBytes(0, 1, ChainLink{}, payloads(3, "v"), false)
	binary.LittleEndian.PutUint32(b[offs[2]:], MaxPayload)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := scanBytes(t, b)
	runtime.ReadMemStats(&after)
	if res.Stop != StopTorn {
		t.Fatalf("%+v", res)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("scan allocated %d bytes", grew)
	}
}

func TestScanLargeRecordsAcrossWindowBoundaries(t *testing.T) {
	big := string(bytes.Repeat([]byte("z"), scanChunk+123))
	ps := []string{"a", big, "b", big, big, "c"}
	b, _ := segmentBytes(0, 1, ChainLink{}, ps, true)
	var got []string
	res, err := ScanSegment(bytes.NewReader(b), int64(len(b)), ScanOptions{Visit: func(r Record, _ int64) error {
		if r.Type == RecordData {
			got = append(got, string(r.Payload))
		}
		return nil
	}})
	if err != nil || res.Stop != StopSealed || len(got) != len(ps) {
		t.Fatalf("%+v %v %d", res, err, len(got))
	}
	for i := range ps {
		if got[i] != ps[i] {
			t.Fatalf("record %d differs", i)
		}
	}
}
