package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func FuzzDecodeRecord(f *testing.F) {
	f.Add(AppendRecord(nil, 1, RecordData, EncodeCommand(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})))
	f.Add(AppendRecord(nil, 9, RecordCheckpoint, []byte("x")))
	f.Add(AppendRecord(nil, 3, RecordSeal, AppendSeal(nil, Seal{Reason: SealRotate})))
	f.Add(AppendRecord(nil, 1<<40, RecordData, nil)[:10])
	f.Add(make([]byte, 40))
	huge := AppendRecord(nil, 1, RecordData, []byte("abc"))
	binary.LittleEndian.PutUint32(huge, 0xffffffff)
	f.Add(huge)
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		rec, n, err := DecodeRecord(b)
		if !bytes.Equal(in, b) {
			t.Fatal("DecodeRecord modified its input")
		}
		if n < 0 || n > len(b) {
			t.Fatalf("size %d outside input of %d bytes", n, len(b))
		}
		if err != nil {
			if (errors.Is(err, ErrInvalidType) || errors.Is(err, ErrZeroLSN)) != (n > 0) {
				t.Fatalf("error %v with size %d", err, n)
			}
			return
		}
		if n != RecordSize(len(rec.Payload)) || len(rec.Payload) > MaxPayload {
			t.Fatalf("size %d for a payload of %d", n, len(rec.Payload))
		}
		// The payload aliases the input (no copy, no allocation) and cannot
		// be extended over the CRC.
		if len(rec.Payload) > 0 && &rec.Payload[0] != &b[RecordHeaderSize] {
			t.Fatal("payload does not alias the input")
		}
		if cap(rec.Payload) != len(rec.Payload) {
			t.Fatal("payload capacity reaches past the payload")
		}
		if again := AppendRecord(nil, rec.LSN, rec.Type, rec.Payload); !bytes.Equal(again, b[:n]) {
			t.Fatal("re-encoding differs")
		}
		if a := testing.AllocsPerRun(1, func() { DecodeRecord(b) }); a != 0 {
			t.Fatalf("decoding a valid record allocated %.0f times", a)
		}
	})
}

func FuzzScanSegment(f *testing.F) {
	good, offs := segmentBytes(1, 1, ChainLink{}, payloads(4, "value"), true)
	body := good[SegmentHeaderSize:]
	f.Add(false, body)
	f.Add(false, body[:len(body)-3])
	f.Add(false, body[:offs[2]-SegmentHeaderSize+7])
	c := bytes.Clone(body)
	c[offs[1]-SegmentHeaderSize+15] ^= 1
	f.Add(false, c)
	f.Add(false, append(bytes.Clone(body), make([]byte, 30)...))
	f.Add(true, good)
	f.Add(true, good[:40])
	header := SegmentHeader{Version: FormatVersion, Shard: 1, FirstLSN: 1}.Append(nil)

	f.Fuzz(func(t *testing.T, raw bool, b []byte) {
		// Mostly explore records behind a valid header; sometimes the whole
		// file, header included.
		file := b
		if !raw {
			file = append(bytes.Clone(header), b...)
		}
		type seen struct {
			off int64
			rec Record
		}
		var recs []seen
		res, err := ScanSegment(bytes.NewReader(file), int64(len(file)), ScanOptions{Visit: func(r Record, off int64) error {
			r.Payload = bytes.Clone(r.Payload)
			recs = append(recs, seen{off, r})
			return nil
		}})
		if err != nil {
			t.Fatalf("ScanSegment: %v", err)
		}
		if res.Offset < 0 || res.Offset > res.Size || res.Size != int64(len(file)) {
			t.Fatalf("offset %d size %d", res.Offset, res.Size)
		}
		switch res.Stop {
		case StopSealed, StopEOF:
			if res.Offset != res.Size || res.Reason != nil {
				t.Fatalf("%v ending at %d of %d (%v)", res.Stop, res.Offset, res.Size, res.Reason)
			}
		case StopTorn:
			// Valid records may follow a tear only in a format-2 segment
			// whose sync marks never claimed the damaged bytes durable.
			if res.Reason == nil || res.NextValidOffset != -1 && (res.Header.Version < 2 || res.DurableAfter > res.Offset) {
				t.Fatalf("torn with a valid record after it: %+v", res)
			}
		case StopCorrupt:
			if res.Reason == nil {
				t.Fatal("corrupt without a reason")
			}
			if errors.Is(res.Reason, ErrValidAfterTear) && res.NextValidOffset <= res.Offset {
				t.Fatalf("evidence at %d, damage at %d", res.NextValidOffset, res.Offset)
			}
		default:
			t.Fatalf("stop %v", res.Stop)
		}
		// Accepted records are consecutive, re-encode to the file's bytes and
		// tile the file from the header to Offset.
		// Sync marks, which are not visited, may sit between them.
		at := int64(SegmentHeaderSize)
		skipMarks := func(to int64) {
			for at < to {
				m, n, err := DecodeRecord(file[at:])
				if err != nil || m.Type != RecordMark {
					return
				}
				at += int64(n)
			}
		}
		for i, s := range recs {
			skipMarks(s.off)
			if s.off != at || s.rec.LSN != res.Header.FirstLSN+uint64(i) {
				t.Fatalf("record %d: offset %d LSN %d", i, s.off, s.rec.LSN)
			}
			enc := AppendRecord(nil, s.rec.LSN, s.rec.Type, s.rec.Payload)
			if !bytes.Equal(enc, file[at:at+int64(len(enc))]) {
				t.Fatalf("record %d does not match the file", i)
			}
			at += int64(len(enc))
		}
		// With a valid header, every stop is at the end of the accepted
		// records: the bad record, the tear, the byte after the seal, EOF.
		if res.Header.FirstLSN != 0 {
			skipMarks(res.Offset)
		}
		if res.Header.FirstLSN != 0 && at != res.Offset {
			t.Fatalf("records end at %d, scan stopped at %d (%v)", at, res.Offset, res.Stop)
		}
		if int64(len(recs)) != res.Records {
			t.Fatalf("visited %d, result says %d", len(recs), res.Records)
		}
		// What recovery does to a torn tail must leave a clean segment.
		if res.Stop == StopTorn {
			cut := file[:res.Offset]
			again, err := ScanSegment(bytes.NewReader(cut), int64(len(cut)), ScanOptions{})
			if err != nil || again.Stop != StopEOF || again.LastLSN != res.LastLSN {
				t.Fatalf("after cutting the torn tail: %+v %v", again, err)
			}
		}
	})
}
