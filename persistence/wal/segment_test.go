package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

func TestSegmentHeaderRoundTrip(t *testing.T) {
	h := SegmentHeader{Version: FormatVersion, Shard: 7, FirstLSN: 101,
		Prev: ChainLink{FirstLSN: 50, SealLSN: 100, SealCRC: 0xdeadbeef}}
	b := h.Append(nil)
	if len(b) != SegmentHeaderSize {
		t.Fatalf("header is %d bytes", len(b))
	}
	got, err := DecodeSegmentHeader(b)
	if err != nil || got != h {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestSegmentHeaderCorruptionOfEveryByteIsDetected(t *testing.T) {
	b := SegmentHeader{Version: FormatVersion, Shard: 1, FirstLSN: 9,
		Prev: ChainLink{FirstLSN: 1, SealLSN: 8, SealCRC: 3}}.Append(nil)
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x10
		if _, err := DecodeSegmentHeader(c); err == nil {
			t.Fatalf("byte %d flipped: header accepted", i)
		}
	}
}

func TestSegmentHeaderRejectsInconsistentContent(t *testing.T) {
	cases := map[string]SegmentHeader{
		"first LSN 0":            {Version: FormatVersion, FirstLSN: 0},
		"prev seal not before":   {Version: FormatVersion, FirstLSN: 10, Prev: ChainLink{FirstLSN: 1, SealLSN: 10}},
		"prev first after seal":  {Version: FormatVersion, FirstLSN: 10, Prev: ChainLink{FirstLSN: 9, SealLSN: 8}},
		"prev without first LSN": {Version: FormatVersion, FirstLSN: 10, Prev: ChainLink{SealLSN: 8}},
	}
	for name, h := range cases {
		if _, err := DecodeSegmentHeader(h.Append(nil)); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if _, err := DecodeSegmentHeader(SegmentHeader{Version: FormatVersion + 1, FirstLSN: 1}.Append(nil)); !errors.Is(err, ErrVersion) {
		t.Errorf("version %d: got %v", FormatVersion+1, err)
	}
	if _, err := DecodeSegmentHeader(SegmentHeader{Version: 0, FirstLSN: 1}.Append(nil)); !errors.Is(err, ErrVersion) {
		t.Errorf("version 0: got %v", err)
	}
	if _, err := DecodeSegmentHeader(make([]byte, 10)); !errors.Is(err, ErrShortHeader) {
		t.Errorf("short: got %v", err)
	}
	reserved := SegmentHeader{Version: FormatVersion, FirstLSN: 1}.Append(nil)
	reserved[50] = 1
	if _, err := DecodeSegmentHeader(rechecksumHeader(reserved)); !errors.Is(err, ErrBadHeader) {
		t.Errorf("reserved bytes: got %v", err)
	}
}

// rechecksumHeader recomputes a header's CRC after an edit.
func rechecksumHeader(b []byte) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[headerCRCOffset:], crc32c(c[:headerCRCOffset]))
	return c
}

func TestSegmentNames(t *testing.T) {
	if got := SegmentName(0x1f); got != "wal-000000000000001f.log" {
		t.Fatalf("name %q", got)
	}
	for _, lsn := range []uint64{1, 0xabcdef, 1<<64 - 1} {
		if got, ok := ParseSegmentName(SegmentName(lsn)); !ok || got != lsn {
			t.Fatalf("parse(%d) = %d %v", lsn, got, ok)
		}
	}
	for _, bad := range []string{"wal-1.log", "wal-000000000000001F.log", "wal-0000000000000000.log",
		"wal-000000000000001f.log.tmp", "x-000000000000001f.log", "wal-00000000000000zz.log"} {
		if _, ok := ParseSegmentName(bad); ok {
			t.Errorf("%q parsed as a segment name", bad)
		}
	}
	if !isTempSegment("wal-000000000000001f.log.tmp") || isTempSegment("wal-x.log.tmp") {
		t.Error("isTempSegment")
	}
}

func TestCreateSegmentIsAtomicAndDurable(t *testing.T) {
	dir := t.TempDir()
	h := SegmentHeader{Shard: 3, FirstLSN: 5}
	f, err := CreateSegment(vfs.Default, dir, h)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != SegmentName(5) {
		t.Fatalf("directory holds %v", names)
	}
	got, err := DecodeSegmentHeader(readFile(t, filepath.Join(dir, SegmentName(5))))
	h.Version = FormatVersion
	if err != nil || got != h {
		t.Fatalf("header %+v, %v", got, err)
	}
	if _, err := CreateSegment(vfs.Default, dir, h); err == nil {
		t.Fatal("CreateSegment replaced an existing segment")
	}
}

func TestCreateSegmentFailedFsyncLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	ff.Add(vfs.EIOOnSync("*.tmp"))
	_, err := CreateSegment(ff, dir, SegmentHeader{FirstLSN: 1})
	if !errors.Is(err, syscall.EIO) || !vfs.IsSyncFailure(err) {
		t.Fatalf("got %v, want a sync failure with EIO", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("left behind %v", names)
	}
}

func TestCreateSegmentFsyncsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	id := ff.Add(vfs.Rule{Op: vfs.OpSync, Path: dir, Fault: vfs.FaultError, Err: syscall.EIO})
	_, err := CreateSegment(ff, dir, SegmentHeader{FirstLSN: 1})
	if ff.Hits(id) != 1 || !vfs.IsSyncFailure(err) {
		t.Fatalf("directory fsync not attempted or not reported: hits %d, err %v", ff.Hits(id), err)
	}
}

func TestListSegmentsReturnsFirstLSNsAscending(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{SegmentName(300), SegmentName(1), SegmentName(20),
		SegmentName(40) + tempSuffix, "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ListSegments(vfs.Default, dir)
	if err != nil || !slices.Equal(got, []uint64{1, 20, 300}) {
		t.Fatalf("ListSegments: %v, %v; want [1 20 300]", got, err)
	}
	got, err = ListSegments(vfs.Default, filepath.Join(dir, "missing"))
	if err != nil || got != nil {
		t.Fatalf("ListSegments of a missing directory: %v, %v", got, err)
	}
}
