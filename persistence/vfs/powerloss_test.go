package vfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestPowerLossKeepsSyncedBytesAndVariesTheRest writes a synced prefix and
// an unsynced rest that shares its last page, crashes many times and checks
// that the synced bytes always survive while the unsynced ones come out in
// every shape the model promises: new, old, zeroed, torn, cut short.
func TestPowerLossKeepsSyncedBytesAndVariesTheRest(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "f")
	pl := NewPowerLoss()
	fs := pl.FS(Default)
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	synced := bytes.Repeat([]byte{0xaa}, PageSize+1000)
	unsynced := bytes.Repeat([]byte{0xbb}, 2*PageSize)
	if _, err := f.WriteAt(synced, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(unsynced, int64(len(synced))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := pl.Unsynced(path); got != int64(len(unsynced)) {
		t.Fatalf("unsynced %d bytes, want %d", got, len(unsynced))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var total CrashReport
	shapes := map[string]bool{}
	for i := range 200 {
		dst := filepath.Join(t.TempDir(), "img")
		rep, err := pl.Crash(rng, root, dst)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dst, "f"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < len(synced) || !bytes.Equal(b[:len(synced)], synced) {
			t.Fatalf("crash %d lost synced bytes: %d bytes, prefix intact %v", i, len(b), len(b) >= len(synced) && bytes.Equal(b[:len(synced)], synced))
		}
		for _, c := range b[len(synced):] {
			switch c {
			case 0xbb:
				shapes["new"] = true
			case 0:
				shapes["zero or old"] = true
			default:
				t.Fatalf("crash %d: byte %#x was never written there", i, c)
			}
		}
		total.Kept += rep.Kept
		total.Old += rep.Old
		total.Zeroed += rep.Zeroed
		total.Torn += rep.Torn
		total.CutBytes += rep.CutBytes
	}
	if len(shapes) != 2 || total.Kept == 0 || total.Old == 0 || total.Zeroed == 0 || total.Torn == 0 || total.CutBytes == 0 {
		t.Fatalf("shapes %v, totals %+v", shapes, total)
	}
	// A sync covers the rest: nothing varies any more.
	f, err = fs.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n := pl.Unsynced(path); n != 0 {
		t.Fatalf("unsynced after fsync: %d", n)
	}
	dst := filepath.Join(t.TempDir(), "img")
	if rep, err := pl.Crash(rng, root, dst); err != nil || rep.DamagedAny || rep.Pages != 0 {
		t.Fatalf("crash after fsync: %+v %v", rep, err)
	}
}
