package control

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
)

func sample() Control {
	return Control{Shard: 3, RedoLSN: 1000, CheckpointLSN: 1042, Time: time.UnixMilli(1_700_000_000_123), NextFileID: 17}
}

func TestControlFileRoundTrips(t *testing.T) {
	dir := t.TempDir()
	if err := Write(vfs.Default, dir, sample()); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Read(vfs.Default, dir, 3)
	if err != nil || !ok {
		t.Fatalf("read: %v, exists %v", err, ok)
	}
	if want := sample(); got.Shard != want.Shard || got.RedoLSN != want.RedoLSN || got.CheckpointLSN != want.CheckpointLSN ||
		!got.Time.Equal(want.Time) || got.NextFileID != want.NextFileID {
		t.Fatalf("read %+v, wrote %+v", got, want)
	}
	if _, err := os.Stat(Path(dir) + vfs.TempSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

func TestAMissingControlFileIsAFreshShard(t *testing.T) {
	c, ok, err := Read(vfs.Default, t.TempDir(), 5)
	if err != nil || ok {
		t.Fatalf("err %v, exists %v", err, ok)
	}
	if c != Fresh(5) || c.RedoLSN != 1 {
		t.Fatalf("got %+v, want a fresh shard with redo 1", c)
	}
}

func TestEveryBitOfTheControlFileIsCovered(t *testing.T) {
	good := sample().Encode()
	for i := range Size {
		for bit := range 8 {
			b := bytes.Clone(good)
			b[i] ^= 1 << bit
			if _, err := Decode(b); err == nil {
				t.Fatalf("flipping bit %d of byte %d went unnoticed", bit, i)
			}
		}
	}
}

func resealed(mutate func([]byte)) []byte {
	b := sample().Encode()
	mutate(b)
	binary.LittleEndian.PutUint32(b[offCRC:], crc32.Checksum(b[:offCRC], castagnoli))
	return b
}

func TestCorruptControlFilesFailWithAnErrorNamingTheFile(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrSize},
		{"truncated", sample().Encode()[:40], ErrSize},
		{"extended", append(sample().Encode(), 0), ErrSize},
		{"magic", resealed(func(b []byte) { b[0] = 'X' }), ErrBadMagic},
		{"checksum", func() []byte { b := sample().Encode(); b[offRedo] ^= 1; return b }(), ErrChecksum},
		{"version", resealed(func(b []byte) { b[offVersion] = 2 }), ErrVersion},
		{"redo zero", resealed(func(b []byte) { binary.LittleEndian.PutUint64(b[offRedo:], 0) }), ErrInvalid},
		{"checkpoint below redo", resealed(func(b []byte) { binary.LittleEndian.PutUint64(b[offCheckpoint:], 999) }), ErrInvalid},
		{"next file id zero", resealed(func(b []byte) { binary.LittleEndian.PutUint32(b[offNextFile:], 0) }), ErrInvalid},
		{"reserved", resealed(func(b []byte) { b[offReserved+3] = 1 }), ErrInvalid},
		{"another shard", resealed(func(b []byte) { b[offShard] = 4 }), ErrShard},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(Path(dir), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, ok, err := Read(vfs.Default, dir, 3)
			if !ok || !errors.Is(err, tc.want) {
				t.Fatalf("got %v (exists %v), want %v", err, ok, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Path != Path(dir) {
				t.Fatalf("error %v does not name %s", err, Path(dir))
			}
		})
	}
}

// failAt writes sample() over an existing control file holding Fresh(3),
// with rule breaking one step, and returns what the file holds afterwards
// (after the "restart" that lifts a crash) and the error.
func failAt(t *testing.T, rule vfs.Rule) (Control, error) {
	t.Helper()
	dir := t.TempDir()
	old := Fresh(3)
	if err := Write(vfs.Default, dir, old); err != nil {
		t.Fatal(err)
	}
	ff := vfs.NewFaulty(vfs.Default)
	id := ff.Add(rule)
	err := Write(ff, dir, sample())
	if ff.Hits(id) == 0 {
		t.Fatalf("rule %+v never fired", rule)
	}
	ff.Reset()
	c, _, rerr := Read(ff, dir, 3)
	if rerr != nil {
		t.Fatalf("control file unreadable after a failed write: %v", rerr)
	}
	return c, err
}

func TestAFailedControlWriteLeavesTheOldFileWhole(t *testing.T) {
	cases := map[string]vfs.Rule{
		"create":    {Op: vfs.OpCreate, Path: "control.tmp", Fault: vfs.FaultError, Err: syscall.ENOSPC},
		"write":     vfs.ENOSPCOnWrite("control.tmp"),
		"short":     vfs.ShortWrite("control.tmp", 10),
		"torn":      vfs.TornWrite("control.tmp", 20),
		"fsync":     vfs.EIOOnSync("control.tmp"),
		"rename":    {Op: vfs.OpRename, Fault: vfs.FaultError, Err: syscall.EIO},
		"dir fsync": {Op: vfs.OpSync, Fault: vfs.FaultError, Err: syscall.EIO, Skip: 1}, // the temp file's fsync passes
	}
	for name, rule := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := failAt(t, rule)
			if err == nil {
				t.Fatal("write reported success")
			}
			if name == "dir fsync" {
				// The rename happened: the new content is in place, but
				// its durability is unknown, and the error says so.
				if !vfs.IsSyncFailure(err) || c.RedoLSN != sample().RedoLSN {
					t.Fatalf("err %v, redo %d", err, c.RedoLSN)
				}
				return
			}
			if c != Fresh(3) {
				t.Fatalf("after a failed %s the file holds %+v, want the old content", name, c)
			}
			if name == "fsync" && !vfs.IsSyncFailure(err) {
				t.Fatalf("a failed fsync is not reported as one: %v", err)
			}
		})
	}
}

func TestPrepareGivesTheStepsAndBytesWriteUses(t *testing.T) {
	dir := t.TempDir()
	w := Prepare(dir, sample())
	if w.Dir != dir || w.Final != Path(dir) || w.Temp != Path(dir)+".tmp" || len(w.Data) != Size {
		t.Fatalf("%+v", w)
	}
	if err := Write(vfs.Default, dir, sample()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(Path(dir))
	if err != nil || !bytes.Equal(b, w.Data) {
		t.Fatalf("file differs from Prepare's bytes: %v", err)
	}
}

func TestEncodeRefusesAnInvalidControl(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("encoded redo LSN 0")
		}
	}()
	Control{NextFileID: 1}.Encode()
}
