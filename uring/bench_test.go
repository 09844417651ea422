//go:build linux

package uring

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkNop measures NOP round trips through the ring, submitted one at a
// time and in batches of 32.
func BenchmarkNop(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			r := newRing(b, 64)
			cqes := make([]CQE, 64)
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				for j := 0; j < batch; j++ {
					r.GetSQE().PrepNop()
				}
				if _, err := r.SubmitAndWait(uint32(batch)); err != nil {
					b.Fatal(err)
				}
				got := 0
				for got < batch {
					n := r.PeekCQEs(cqes)
					r.CQAdvance(uint32(n))
					got += n
				}
			}
		})
	}
}

// BenchmarkWrite4KFdatasync compares one 4 KiB write followed by fdatasync,
// as a linked pair on the ring, with plain pwrite+fdatasync syscalls, in the
// same run on the same file system.
func BenchmarkWrite4KFdatasync(b *testing.B) {
	buf := make([]byte, 4096)
	b.Run("ring", func(b *testing.B) {
		r := newRing(b, 8)
		fd := tempFile(b, unix.O_RDWR)
		cqes := make([]CQE, 2)
		b.SetBytes(4096)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w := r.GetSQE()
			w.PrepWrite(fd, buf, uint64(i%256)*4096)
			w.SetFlags(SQEIOLink)
			r.GetSQE().PrepFsync(fd, FsyncDatasync)
			if _, err := r.SubmitAndWait(2); err != nil {
				b.Fatal(err)
			}
			got := 0
			for got < 2 {
				n := r.PeekCQEs(cqes)
				for _, c := range cqes[:n] {
					if c.Res < 0 {
						b.Fatal(c.Err())
					}
				}
				r.CQAdvance(uint32(n))
				got += n
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fsyncs/s")
	})
	b.Run("syscalls", func(b *testing.B) {
		fd := tempFile(b, unix.O_RDWR)
		b.SetBytes(4096)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := unix.Pwrite(fd, buf, int64(i%256)*4096); err != nil {
				b.Fatal(err)
			}
			if err := unix.Fdatasync(fd); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fsyncs/s")
	})
}
