package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
)

func alloc(t *testing.T, m *Manifest) uint32 {
	t.Helper()
	id, err := m.AllocateFileID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// sample has live files 1 and 3, file 2 tombstoned at checkpoint 500, and
// next id 4.
func sample(t *testing.T) *Manifest {
	t.Helper()
	m := New(2)
	for range 3 {
		alloc(t, m)
	}
	if err := m.Tombstone(2, 500); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManifestRoundTripsThroughTheFile(t *testing.T) {
	dir := t.TempDir()
	m := sample(t)
	if err := m.Write(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Read(vfs.Default, dir, 2)
	if err != nil || !ok {
		t.Fatalf("read: %v, exists %v", err, ok)
	}
	if !slices.Equal(got.Entries(), m.Entries()) || got.NextID() != 4 {
		t.Fatalf("read %+v next %d, wrote %+v", got.Entries(), got.NextID(), m.Entries())
	}
	if !slices.Equal(got.Live(), []uint32{1, 3}) || !got.IsLive(3) || got.IsLive(2) || got.IsLive(9) {
		t.Fatalf("live %v", got.Live())
	}
}

func TestAMissingManifestIsAnEmptyRegistry(t *testing.T) {
	m, ok, err := Read(vfs.Default, t.TempDir(), 1)
	if err != nil || ok || len(m.Entries()) != 0 || m.NextID() != 1 {
		t.Fatalf("%v, exists %v, %+v", err, ok, m)
	}
}

func TestTheFileIDCounterNeverMovesBack(t *testing.T) {
	dir := t.TempDir()
	m := sample(t) // next 4
	m.SeedPast(1)
	if m.NextID() != 4 {
		t.Fatalf("seeding past a lower id moved the counter to %d", m.NextID())
	}
	// The highest id is tombstoned, unlinked and forgotten: its number is
	// still never handed out again, in this process or after a restart.
	if err := m.Tombstone(3, 600); err != nil {
		t.Fatal(err)
	}
	if err := m.Forget(3); err != nil {
		t.Fatal(err)
	}
	if err := m.Write(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	if id := alloc(t, m); id != 4 {
		t.Fatalf("allocated %d after forgetting 3, want 4", id)
	}
	back, _, err := Read(vfs.Default, dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if id := alloc(t, back); id != 4 {
		t.Fatalf("after a restart, allocated %d, want 4", id)
	}
	// A file on disk above the counter moves it past that file.
	heapDir := filepath.Join(dir, heap.DirName)
	if err := os.MkdirAll(heapDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(heap.FilePath(heapDir, 9), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := back.Sweep(vfs.Default, heapDir); err != nil {
		t.Fatal(err)
	}
	if id := alloc(t, back); id != 10 {
		t.Fatalf("allocated %d with heap file 9 on disk, want 10", id)
	}
	back.SeedPast(5)
	if back.NextID() != 11 {
		t.Fatalf("counter %d after seeding past 5, want 11", back.NextID())
	}
}

func TestFileIDsRunOutInsteadOfWrapping(t *testing.T) {
	m := New(0)
	m.SeedPast(0xfffffffe)
	if id := alloc(t, m); id != 0xffffffff {
		t.Fatalf("allocated %#x", id)
	}
	if _, err := m.AllocateFileID(); !errors.Is(err, ErrExhausted) {
		t.Fatalf("got %v, want ErrExhausted", err)
	}
	if _, err := Decode(m.Encode()); err != nil {
		t.Fatalf("manifest with every id used does not decode: %v", err)
	}
}

func TestTombstoneLifecycle(t *testing.T) {
	m := New(1)
	a, b := alloc(t, m), alloc(t, m)
	if err := m.Tombstone(a, 100); err != nil {
		t.Fatal(err)
	}
	if err := m.Tombstone(a, 200); err == nil {
		t.Fatal("tombstoned a file twice")
	}
	if err := m.Tombstone(7, 100); err == nil {
		t.Fatal("tombstoned an unregistered file")
	}
	if err := m.Forget(b); err == nil {
		t.Fatal("forgot a live file")
	}
	if got := m.Unlinkable(99); len(got) != 0 {
		t.Fatalf("unlinkable %v before the tombstone's checkpoint finalized", got)
	}
	if got := m.Unlinkable(100); !slices.Equal(got, []uint32{a}) {
		t.Fatalf("unlinkable %v at the tombstone's checkpoint, want [%d]", got, a)
	}
	if e, _ := m.Lookup(a); e.State != Tombstoned || e.Checkpoint != 100 {
		t.Fatalf("entry %+v", e)
	}
	if err := m.Forget(a); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Lookup(a); ok || len(m.Unlinkable(1000)) != 0 {
		t.Fatal("a forgotten file is still registered")
	}
}

func TestSweepListsTheHeapFilesTheManifestNeverRegistered(t *testing.T) {
	heapDir := t.TempDir()
	m := sample(t) // 1 live, 2 tombstoned, 3 live
	for _, name := range []string{heap.FileName(1), heap.FileName(2), heap.FileName(5), heap.FileName(7), "manifest.tmp", "other"} {
		if err := os.WriteFile(filepath.Join(heapDir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.Sweep(vfs.Default, heapDir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []uint32{5, 7}) {
		t.Fatalf("sweep %v, want [5 7]", got)
	}
	if m.NextID() != 8 {
		t.Fatalf("counter %d, want past 7", m.NextID())
	}
	if err := RemoveFiles(vfs.Default, heapDir, got); err != nil {
		t.Fatal(err)
	}
	left, err := heap.ListFiles(vfs.Default, heapDir)
	if err != nil || !slices.Equal(left, []uint32{1, 2}) {
		t.Fatalf("left %v, %v", left, err)
	}
	if err := RemoveFiles(vfs.Default, heapDir, got); err != nil {
		t.Fatalf("removing files already gone: %v", err)
	}
}

func TestEveryBitOfTheManifestIsCovered(t *testing.T) {
	good := sample(t).Encode()
	for i := range good {
		for bit := range 8 {
			b := bytes.Clone(good)
			b[i] ^= 1 << bit
			if _, err := Decode(b); err == nil {
				t.Fatalf("flipping bit %d of byte %d went unnoticed", bit, i)
			}
		}
	}
}

func resealed(t *testing.T, mutate func([]byte)) []byte {
	b := sample(t).Encode()
	mutate(b)
	end := len(b) - 4
	binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[:end], castagnoli))
	return b
}

func TestCorruptManifestsFailWithAnErrorNamingTheFile(t *testing.T) {
	entry := func(i int) int { return HeaderSize + EntrySize*i }
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrSize},
		{"truncated", sample(t).Encode()[:40], ErrSize},
		{"count", resealed(t, func(b []byte) { b[offCount] = 4 }), ErrSize},
		{"huge count", resealed(t, func(b []byte) { binary.LittleEndian.PutUint32(b[offCount:], 1<<30) }), ErrSize},
		{"magic", resealed(t, func(b []byte) { b[1] = 'x' }), ErrBadMagic},
		{"checksum", func() []byte { b := sample(t).Encode(); b[entry(1)+8] ^= 1; return b }(), ErrChecksum},
		{"version", resealed(t, func(b []byte) { b[offVersion] = 9 }), ErrVersion},
		{"version 1 with key counts", resealed(t, func(b []byte) { b[offVersion] = 1; b[offReserved] = 1 }), ErrInvalid},
		{"key counts past the end", resealed(t, func(b []byte) { b[offReserved] = 1 }), ErrSize},
		{"next zero", resealed(t, func(b []byte) { binary.LittleEndian.PutUint64(b[offNext:], 0) }), ErrInvalid},
		{"next at an id", resealed(t, func(b []byte) { binary.LittleEndian.PutUint64(b[offNext:], 3) }), ErrInvalid},
		{"id zero", resealed(t, func(b []byte) { binary.LittleEndian.PutUint32(b[entry(0):], 0) }), ErrInvalid},
		{"out of order", resealed(t, func(b []byte) { binary.LittleEndian.PutUint32(b[entry(1):], 1) }), ErrInvalid},
		{"state", resealed(t, func(b []byte) { b[entry(0)+4] = 3 }), ErrInvalid},
		{"live with checkpoint", resealed(t, func(b []byte) { b[entry(0)+8] = 1 }), ErrInvalid},
		{"tombstone without checkpoint", resealed(t, func(b []byte) { clear(b[entry(1)+8 : entry(1)+16]) }), ErrInvalid},
		{"entry reserved", resealed(t, func(b []byte) { b[entry(2)+6] = 1 }), ErrInvalid},
		{"another shard", resealed(t, func(b []byte) { b[offShard] = 3 }), ErrShard},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(Path(dir), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, ok, err := Read(vfs.Default, dir, 2)
			if !ok || !errors.Is(err, tc.want) {
				t.Fatalf("got %v (exists %v), want %v", err, ok, tc.want)
			}
			var me *Error
			if !errors.As(err, &me) || me.Path != Path(dir) {
				t.Fatalf("error %v does not name %s", err, Path(dir))
			}
		})
	}
}

func TestAFailedManifestCommitLeavesTheOldOne(t *testing.T) {
	dir := t.TempDir()
	old := sample(t)
	if err := old.Write(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	m := sample(t)
	alloc(t, m)
	for name, rule := range map[string]vfs.Rule{
		"torn":   vfs.TornWrite("manifest.tmp", 30),
		"fsync":  vfs.EIOOnSync("manifest.tmp"),
		"rename": {Op: vfs.OpRename, Fault: vfs.FaultError, Err: syscall.EIO},
	} {
		ff := vfs.NewFaulty(vfs.Default)
		ff.Add(rule)
		if err := m.Write(ff, dir); err == nil {
			t.Fatalf("%s: commit reported success", name)
		}
		ff.Reset()
		got, _, err := Read(vfs.Default, dir, 2)
		if err != nil || !slices.Equal(got.Entries(), old.Entries()) {
			t.Fatalf("%s: after a failed commit: %v, %+v", name, err, got)
		}
	}
	if err := m.Write(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := Read(vfs.Default, dir, 2); len(got.Entries()) != 4 {
		t.Fatalf("commit after the failures: %+v", got.Entries())
	}
}

// The key counts a checkpoint sets are what the next boot reads; a
// version 1 manifest (none) still reads, without them.
func TestKeyCountsRoundTripAndVersionOneStillReads(t *testing.T) {
	m := sample(t)
	m.SetKeyCounts([]uint64{1_000_000, 0, 7})
	got, err := Decode(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.KeyCounts(), []uint64{1_000_000, 0, 7}) {
		t.Fatalf("key counts %v after a round trip", got.KeyCounts())
	}
	v1 := sample(t).Encode()
	binary.LittleEndian.PutUint32(v1[offVersion:], 1)
	end := len(v1) - 4
	binary.LittleEndian.PutUint32(v1[end:], crc32.Checksum(v1[:end], castagnoli))
	old, err := Decode(v1)
	if err != nil {
		t.Fatalf("a version 1 manifest does not read: %v", err)
	}
	if old.KeyCounts() != nil || len(old.Entries()) != len(sample(t).Entries()) {
		t.Fatalf("version 1: key counts %v, %d entries", old.KeyCounts(), len(old.Entries()))
	}
}
