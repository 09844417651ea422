package wal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// testRec is a record as the tests see it.
type testRec struct {
	LSN     uint64
	Type    RecordType
	Payload string
}

// segmentBytes builds a segment image: header, one data record per payload
// (LSNs from first), and a seal when sealed, each record in a group of its
// own made durable before the next, as under appendfsync always: each
// opens with a sync mark claiming its own offset. It returns the image and
// the offset where each record starts (the seal's last), after its mark.
func segmentBytes(shard uint32, first uint64, prev ChainLink, payloads []string, sealed bool) ([]byte, []int64) {
	b := SegmentHeader{Version: FormatVersion, Shard: shard, FirstLSN: first, Prev: prev}.Append(nil)
	var offs []int64
	lsn := first
	var digest uint32
	mark := func() {
		start := len(b)
		b = appendMark(b, lsn)
		fillMark(b[start:], int64(start))
	}
	for _, p := range payloads {
		mark()
		offs = append(offs, int64(len(b)))
		b = AppendRecord(b, lsn, RecordData, []byte(p))
		digest = DigestUpdate(digest, recordCRC(b))
		lsn++
	}
	if sealed {
		mark()
		offs = append(offs, int64(len(b)))
		b = AppendRecord(b, lsn, RecordSeal, AppendSeal(nil, Seal{Reason: SealRotate, Digest: digest}))
	}
	return b, offs
}

func payloads(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

func scanBytes(t *testing.T, b []byte) ScanResult {
	t.Helper()
	res, err := ScanSegment(bytes.NewReader(b), int64(len(b)), ScanOptions{})
	if err != nil {
		t.Fatalf("ScanSegment: %v", err)
	}
	return res
}

// collector is an Apply callback that keeps what it is given.
type collector struct{ recs []testRec }

func (c *collector) apply(lsn uint64, typ RecordType, payload []byte) error {
	c.recs = append(c.recs, testRec{lsn, typ, string(payload)})
	return nil
}

func (c *collector) lsns() []uint64 {
	out := make([]uint64, len(c.recs))
	for i, r := range c.recs {
		out[i] = r.LSN
	}
	return out
}

// writeLog writes the payloads as data records with a SyncWriter, one
// Commit per record, and returns their LSNs. It does not Close the writer:
// the process "crashes" with the last segment unsealed.
func writeLog(t *testing.T, o SyncWriterOptions, ps []string) []uint64 {
	t.Helper()
	w, err := OpenSyncWriter(o)
	if err != nil {
		t.Fatal(err)
	}
	var lsns []uint64
	for _, p := range ps {
		lsn, err := w.Append(RecordData, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		lsns = append(lsns, lsn)
	}
	w.closeFile()
	return lsns
}

func recoverDir(t *testing.T, o RecoverOptions) (*RecoverResult, *collector) {
	t.Helper()
	c := &collector{}
	if o.Apply == nil {
		o.Apply = c.apply
	}
	res, err := Recover(o)
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	return res, c
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "wal-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func scanFile(t *testing.T, path string) ScanResult {
	t.Helper()
	return scanBytes(t, readFile(t, path))
}
