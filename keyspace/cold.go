package keyspace

import (
	"bytes"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/wal"
)

// The cold tier (DESIGN §4 "maxmemory and eviction", §9). Under
// tiered-storage, eviction makes a victim cold instead of deleting it when
// its current version is durable in the heap: the key has a location and
// no dirty bit, so the record at the location is exactly its value. A cold
// key keeps its slot (key, kind, TTL, LRU/LFU bits, location) and drops its
// value; nothing is journaled, since nothing changed.
//
// Invariants:
//   - a cold key is clean and has a location: whatever would change its
//     value or its expiry needs the value first (NeedsValue), so that the
//     checkpoint never takes a cold key (Version panics on one);
//   - a value that is read back is installed only while the key is still
//     cold at the location it was read from (InstallCold);
//   - a large value in chunks (source.chunks) stays warm: its record is a
//     head whose chunks would have to be read too.
//
// A command that needs a cold key's value waits for it: the server has the
// shard read the record's pages on the ring and install the value, then
// runs the command (ColdKeys, InstallCold); where it cannot wait (a step
// under a transaction's hold), the shard reads the record synchronously
// (WarmSync). A record that cannot be read is an error reply, never a nil:
// the key stays cold.

// coldMark is the address that marks a cold value: p == &coldMark, and w
// holds the kind's object tag (so that kind() needs no test of its own)
// and, in its low 48 bits, the memory the value took when it was warm.
var coldMark byte

func coldValue(k Kind, size int64) value {
	return value{p: unsafe.Pointer(&coldMark), w: uint64(tagObject+k)<<tagShift | uint64(size)&lenMask}
}

func (v value) isCold() bool { return v.p == unsafe.Pointer(&coldMark) }

// coldSize is the memory a cold value took when it was warm.
func (v value) coldSize() int64 { return int64(v.w & lenMask) }

// ColdReader reads a heap record synchronously: the page cache, then the
// file (the shard's heap). Set by the shard when it has a heap.
type ColdReader interface {
	ReadColdRecord(id heap.RecordID) (heap.Record, error)
}

// ColdStats are the cold tier's figures (INFO, /metrics).
type ColdStats struct {
	Keys      int64         // keys whose value is cold now
	Bytes     int64         // the memory those values took when warm
	Cooled    int64         // values made cold
	Reads     int64         // cold values read back and installed
	SyncReads int64         // of Reads, read synchronously (under a transaction's hold)
	Misses    int64         // reads that failed: the command answered an error
	ReadTime  time.Duration // total time of the reads, from the command's wait to the install
	// ReadSeconds are the reads' times, in wal.SyncSecondsBounds' buckets
	// (50 µs to 1.6 s).
	ReadSeconds wal.Histogram
}

// coldState is the keyspace's cold tier state.
type coldState struct {
	keys  int64 // cold keys in every database: the hot path's one test
	stats ColdStats
	// failed is set when an eviction run under tiered-storage found no
	// key it could make cold (all dirty): the shard asks for a checkpoint.
	failed bool
}

// HasCold reports whether any key is cold: the command path's one test.
func (ks *Keyspace) HasCold() bool { return ks.cold.keys > 0 }

// ColdStats returns the cold tier's figures.
func (ks *Keyspace) ColdStats() ColdStats {
	s := ks.cold.stats
	s.Keys = ks.cold.keys
	s.Bytes = 0
	for _, d := range ks.dbs {
		s.Bytes += d.coldBytes
	}
	return s
}

// ColdStuck reports, once, that an eviction run under tiered-storage
// found no key it could make cold (every sampled key dirty or cold): the
// shard then asks for a checkpoint, which makes the dirty keys durable.
func (ks *Keyspace) ColdStuck() bool {
	f := ks.cold.failed
	ks.cold.failed = false
	return f
}

// NoteColdRead counts a cold value read back in took (the server's wait).
func (ks *Keyspace) NoteColdRead(took time.Duration) {
	ks.cold.stats.Reads++
	ks.cold.stats.ReadTime += took
	ks.cold.stats.ReadSeconds.Observe(&wal.SyncSecondsBounds, took.Seconds())
}

// coolable reports whether the key in sl, of database d, may be made cold:
// warm, clean, with a location, and not in chunks. While a take is in
// progress, and until the checkpoint placed every key it took, no key is:
// the take clears a key's dirty bit before the checkpoint writes its
// version (take.go), and in between the location names the version
// before, so cooling would drop the only copy of the current value.
func (ks *Keyspace) coolable(d *db, sl *slot[entry]) bool {
	if sl.v.isCold() || sl.v.loc&locDirtyAny != 0 || sl.v.loc&locWhere == 0 {
		return false
	}
	if ks.take.phase != takeIdle || ks.take.unplaced > 0 {
		return false
	}
	if len(ks.src.chunks) > 0 && ks.src.chunks[pairKey{d.phys, sl.key()}] != nil {
		return false
	}
	return true
}

// coolKey makes the key of database dbi cold: its value leaves memory.
// The caller checked coolable.
func (ks *Keyspace) coolKey(dbi int, h uint64, key []byte) {
	d := ks.dbs[dbi]
	sl := d.keys.find(h, key)
	if sl == nil || !ks.coolable(d, sl) {
		panic(fmt.Sprintf("keyspace: cooling key %q that may not be cold", key))
	}
	size := sl.v.heapBytes()
	ks.keepSpare(sl.v.value)
	sl.v.value = coldValue(sl.v.kind(), size)
	d.dataBytes -= size
	d.coldKeys++
	d.coldBytes += size
	ks.cold.keys++
	ks.cold.stats.Cooled++
}

// coldGone accounts for the cold value of the key in sl, of database d,
// leaving: the key is deleted or given a new value.
func (ks *Keyspace) coldGone(d *db, sl *slot[entry]) {
	d.coldKeys--
	d.coldBytes -= sl.v.coldSize()
	ks.cold.keys--
}

// ColdKey is a key whose value is cold: where its record is.
type ColdKey struct {
	Phys int    // its physical database
	Key  []byte // a copy
	Loc  heap.RecordID
}

// ColdKeys appends to dst the keys of a command, run by c, whose values
// are cold and which the command needs (see NeedsValue). Expired keys are
// left out: the command deletes them.
func (ks *Keyspace) ColdKeys(c *Client, spec *CommandSpec, args [][]byte, dst []ColdKey) []ColdKey {
	if ks.cold.keys == 0 || spec == nil || !NeedsValue(spec, args) || c.DB < 0 || c.DB >= len(ks.dbs) {
		return dst
	}
	var posBuf [16]int
	d := ks.dbs[c.DB]
	now := ks.Now()
	for _, p := range commandKeys(spec, args, posBuf[:0]) {
		key := args[p]
		h := d.keys.hash(key)
		sl := d.keys.find(h, key)
		if sl == nil || !sl.v.isCold() {
			continue
		}
		if sl.kw&kwTTL != 0 && !ks.Loading && now > d.expires.find(h, key).v {
			continue
		}
		id, _ := ks.slotLoc(d.phys, sl)
		dst = append(dst, ColdKey{Phys: d.phys, Key: append([]byte(nil), key...), Loc: id})
	}
	return dst
}

// commandKeys lists the indexes in args of the keys the command names.
func commandKeys(spec *CommandSpec, args [][]byte, dst []int) []int {
	if spec.Subcommands != nil && len(args) >= 2 {
		if sub := spec.subcommand(args[1]); sub != nil {
			spec = sub
		}
	}
	if spec.MovableKeys != nil {
		return spec.MovableKeys(args, dst)
	}
	if spec.FirstKey <= 0 {
		return dst
	}
	last := spec.LastKey
	if last < 0 {
		last += len(args)
	}
	step := max(spec.Step, 1)
	for i := spec.FirstKey; i <= last && i < len(args); i += step {
		dst = append(dst, i)
	}
	return dst
}

// ErrColdGone is InstallCold's answer when the key is no longer cold at
// the location its record was read from: nothing to install.
var ErrColdGone = errors.New("keyspace: the key is no longer cold there")

// InstallCold makes the cold key k warm again with rec, the record read
// from k.Loc. The key must still be cold at that location (else
// ErrColdGone, nothing changed); the record must be the key's (heap key
// and kind) and decode, else an error and the key stays cold. The value
// keeps none of rec's bytes: the caller may read the next record into the
// same buffer.
func (ks *Keyspace) InstallCold(k ColdKey, rec heap.Record) error {
	if k.Phys < 0 || k.Phys >= len(ks.pdbs) {
		return ErrColdGone
	}
	d := ks.pdbs[k.Phys]
	sl := d.keys.find(d.keys.hash(k.Key), k.Key)
	if sl == nil || !sl.v.isCold() {
		return ErrColdGone
	}
	if id, ok := ks.slotLoc(d.phys, sl); !ok || id != k.Loc {
		return ErrColdGone
	}
	var kb [64]byte
	if want := AppendHeapKey(kb[:0], d.phys, k.Key); !bytes.Equal(rec.Key, want) {
		return fmt.Errorf("record %v holds another key", k.Loc)
	}
	if Kind(rec.Kind) != sl.v.kind() {
		return fmt.Errorf("record %v holds a %s, the key is a %s", k.Loc, Kind(rec.Kind), sl.v.kind())
	}
	v, err := ks.readBackValue(Kind(rec.Kind), rec.Value)
	if err != nil {
		return fmt.Errorf("record %v: %w", k.Loc, err)
	}
	ks.coldGone(d, sl)
	sl.v.value = v
	d.dataBytes += v.heapBytes()
	return nil
}

// readBackValue decodes a cold record's value of kind k. A string takes a
// spare buffer when there is one (spare.go): under tiered storage each
// value read back in makes another leave, whose bytes it can reuse. Every
// kind's decoder copies what it keeps (the test
// TestInstallColdKeepsNoBytesOfTheRecordEveryKind holds them to it).
func (ks *Keyspace) readBackValue(k Kind, enc []byte) (value, error) {
	if k == KindString {
		if v, ok := ks.spareString(enc); ok {
			return v, nil
		}
	}
	return ks.decodeValue(k, enc)
}

// ColdError is the reply to a command whose key's cold value could not be
// read.
func ColdError(key []byte, err error) string {
	return fmt.Sprintf("IOERR cold value of key '%s' cannot be read: %s", cString(key, 128), noNewlines(err.Error()))
}

// WarmSync reads the cold values the command needs through ks.Cold,
// synchronously, and installs them. It returns the error reply of the
// first that cannot be read ("" when all are warm), counted as a miss.
func (ks *Keyspace) WarmSync(c *Client, spec *CommandSpec, args [][]byte) string {
	var buf [4]ColdKey
	for _, k := range ks.ColdKeys(c, spec, args, buf[:0]) {
		if msg := ks.warmOne(k); msg != "" {
			return msg
		}
	}
	return ""
}

// WarmKey is WarmSync for one key of the database at logical index db,
// whatever reads it (a gathered command's export, which runs under its
// txn's hold).
func (ks *Keyspace) WarmKey(db int, key []byte) string {
	if ks.cold.keys == 0 || db < 0 || db >= len(ks.dbs) {
		return ""
	}
	d := ks.dbs[db]
	sl := d.keys.find(d.keys.hash(key), key)
	if sl == nil || !sl.v.isCold() {
		return ""
	}
	id, _ := ks.slotLoc(d.phys, sl)
	return ks.warmOne(ColdKey{Phys: d.phys, Key: append([]byte(nil), key...), Loc: id})
}

// warmOne reads the cold key k synchronously and installs its value; it
// returns the error reply when that fails, counted as a miss.
func (ks *Keyspace) warmOne(k ColdKey) string {
	start := time.Now()
	err := errors.New("no heap to read it from")
	if ks.Cold != nil {
		var rec heap.Record
		if rec, err = ks.Cold.ReadColdRecord(k.Loc); err == nil {
			err = ks.InstallCold(k, rec)
		}
	}
	switch {
	case err == nil:
		ks.NoteColdRead(time.Since(start))
		ks.cold.stats.SyncReads++
	case errors.Is(err, ErrColdGone):
	default:
		ks.cold.stats.Misses++
		return ColdError(k.Key, err)
	}
	return ""
}

// valueOf returns the value of the key in sl, of database d: its own, or
// for a cold key the value read from the heap, not installed (whole-keyspace
// walks: DEBUG DIGEST, a replica's snapshot). A read that fails is counted.
func (ks *Keyspace) valueOf(d *db, sl *slot[entry]) (value, error) {
	if !sl.v.isCold() {
		return sl.v.value, nil
	}
	id, ok := ks.slotLoc(d.phys, sl)
	if !ok || ks.Cold == nil {
		ks.cold.stats.Misses++
		return value{}, errors.New("cold value with no heap record")
	}
	rec, err := ks.Cold.ReadColdRecord(id)
	if err == nil {
		var v value
		if v, err = ks.decodeValue(Kind(rec.Kind), rec.Value); err == nil {
			ks.cold.stats.SyncReads++
			return v, nil
		}
	}
	ks.cold.stats.Misses++
	return value{}, err
}
