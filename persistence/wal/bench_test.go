package wal

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

// benchArgs is a typical small write: SET with a 16-byte key and a 32-byte
// value (a 71-byte record).
var benchArgs = [][]byte{[]byte("SET"), []byte("key:000000000001"), bytes.Repeat([]byte("v"), 32)}

func reportRecords(b *testing.B, records int) {
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkAppendRecord(b *testing.B) {
	for _, size := range []int{64, 1024, 64 << 10} {
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			payload := bytes.Repeat([]byte("x"), size)
			buf := make([]byte, 0, RecordSize(size))
			b.SetBytes(int64(RecordSize(size)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				buf = AppendRecord(buf[:0], uint64(i+1), RecordData, payload)
			}
			reportRecords(b, b.N)
		})
	}
}

func BenchmarkAppenderCommand(b *testing.B) {
	for _, group := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) {
			a := NewAppender(AppenderOptions{NextLSN: 1, SegmentSize: 1 << 40})
			b.SetBytes(int64(RecordSize(CommandSize(0, benchArgs))))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, err := a.AppendCommand(0, benchArgs); err != nil {
					b.Fatal(err)
				}
				if n++; n%group == 0 {
					g := a.Take()
					last := g.LastLSN
					a.Done(g, nil)
					a.MarkDurable(last)
				}
			}
			reportRecords(b, b.N)
		})
	}
}

func BenchmarkScanSegment(b *testing.B) {
	var ps []string
	p := string(EncodeCommand(0, benchArgs))
	for range 50000 {
		ps = append(ps, p)
	}
	img, _ := segmentBytes(0, 1, ChainLink{}, ps, true)
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := ScanSegment(bytes.NewReader(img), int64(len(img)), ScanOptions{})
		if err != nil || res.Stop != StopSealed {
			b.Fatal(res, err)
		}
	}
	reportRecords(b, b.N*len(ps))
}

// BenchmarkGroupCommit measures the synchronous writer under appendfsync
// always with 1, 16 and 128 records per group commit, next to the device's
// limit: a plain loop of write + fdatasync of the same number of bytes per
// sync, on the same file system, in the same run. One op is one record.
func BenchmarkGroupCommit(b *testing.B) {
	recSize := RecordSize(CommandSize(0, benchArgs))
	for _, group := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("raw/group=%d", group), func(b *testing.B) {
			f, err := vfs.Default.Create(filepath.Join(b.TempDir(), "raw"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := bytes.Repeat([]byte("r"), recSize*group)
			b.SetBytes(int64(recSize))
			var off int64
			for i := 0; b.Loop(); i++ {
				if (i+1)%group != 0 {
					continue
				}
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
				if err := f.Datasync(); err != nil {
					b.Fatal(err)
				}
				off += int64(len(buf))
			}
			reportRecords(b, b.N)
		})
		b.Run(fmt.Sprintf("wal/group=%d", group), func(b *testing.B) {
			w, err := OpenSyncWriter(SyncWriterOptions{Dir: filepath.Join(b.TempDir(), DirName), NextLSN: 1})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(recSize))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := w.AppendCommand(0, benchArgs); err != nil {
					b.Fatal(err)
				}
				if (i+1)%group == 0 {
					if _, err := w.Commit(); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportRecords(b, b.N)
			b.ReportMetric(float64(w.Stats().Datasyncs)/b.Elapsed().Seconds(), "fdatasyncs/s")
			w.Close()
		})
	}
}
