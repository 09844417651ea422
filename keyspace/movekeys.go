package keyspace

import (
	"fmt"
	"strconv"
)

// Moving keys between keyspaces: how a reshard (a boot with another
// --shards than the data directory was written with) carries every key
// from the shard its slot mapped to under the old count to the one it maps
// to under the new. A key travels as what MOOND.APPLY's PUT op holds: its
// logical database, the key, its kind, its value in the heap encoding
// (heapcodec.go) and its absolute expiry, so that every kind that has a
// heap encoding moves unchanged.
//
// The logical database is SELECT's index, not the physical id: the new
// keyspaces start with the identity database map, and each key lands in
// the database a client saw it in, whatever SWAPDBs came before.

// MovedKey is one key as a reshard moves it. Its slices are valid only
// during the call that hands it over.
type MovedKey struct {
	DB     int    // logical database (SELECT's index)
	Key    []byte // the key
	Kind   Kind   // the value's kind
	Value  []byte // the value in the heap encoding
	Expiry int64  // absolute expiry in unix ms, 0 for none
}

// ExportKeys calls fn for every key of every database that has not
// expired at now (unix ms), in no particular order, and stops at fn's
// first error. fn must not change the keyspace.
func (ks *Keyspace) ExportKeys(now int64, fn func(MovedKey) error) error {
	var buf []byte
	for dbi, d := range ks.dbs {
		var err error
		d.keys.each(func(sl *slot[entry]) {
			if err != nil {
				return
			}
			var k MovedKey
			var ok bool
			if k, buf, ok = ks.exportSlot(dbi, sl, now, buf); ok {
				err = fn(k)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ExportKey returns key of the database at logical index db as
// ExportKeys hands keys over, its slices copies, and false when the key
// does not exist or expired at now. Cross-shard commands read the keys
// they need on other shards with it.
func (ks *Keyspace) ExportKey(db int, key []byte, now int64) (MovedKey, bool) {
	if db < 0 || db >= len(ks.dbs) {
		return MovedKey{}, false
	}
	d := ks.dbs[db]
	sl := d.keys.find(d.keys.hash(key), key)
	if sl == nil {
		return MovedKey{}, false
	}
	k, _, ok := ks.exportSlot(db, sl, now, nil)
	if !ok {
		return MovedKey{}, false
	}
	k.Key = append([]byte(nil), k.Key...)
	if k.Kind == KindString && !sl.v.isInt() {
		k.Value = append([]byte(nil), k.Value...)
	}
	return k, true
}

// exportSlot is the key in sl, of the database at logical index dbi, as a
// MovedKey whose value is encoded into buf (returned, for reuse) or is
// the string's own bytes; false when it expired at now.
func (ks *Keyspace) exportSlot(dbi int, sl *slot[entry], now int64, buf []byte) (MovedKey, []byte, bool) {
	d := ks.dbs[dbi]
	k := MovedKey{DB: dbi, Key: sl.keyBytes(), Kind: sl.v.kind()}
	if when := ks.expiryOf(d, d.keys.hashString(sl.key()), sl); when >= 0 {
		if now > when {
			return MovedKey{}, buf, false // expired (Redis's keyIsExpired): dropped
		}
		k.Expiry = when
	}
	v := sl.v.value
	if v.isCold() {
		var err error
		if v, err = ks.valueOf(d, sl); err != nil {
			return MovedKey{}, buf, false // unreadable: counted (cold.go); WarmKey first to answer it
		}
	}
	switch {
	case v.isInt():
		buf = strconv.AppendInt(buf[:0], v.intVal(), 10)
		k.Value = buf
	case v.kind() == KindString:
		k.Value = v.bytes()
	default:
		buf = v.appendEncoded(buf[:0])
		k.Value = buf
	}
	return k, buf, true
}

// ImportKey stores a moved key, replacing the key if it exists, and
// journals it as MOOND.APPLY PUT, so that the Log holds it as any write.
// A value that does not decode, or a database out of range, is an error
// and changes nothing.
func (ks *Keyspace) ImportKey(k MovedKey) error {
	if k.DB < 0 || k.DB >= len(ks.dbs) {
		return fmt.Errorf("keyspace: moved key in database %d, but the server has %d (--databases)", k.DB, len(ks.dbs))
	}
	if k.Expiry < 0 {
		return fmt.Errorf("keyspace: moved key with a negative expiry %d", k.Expiry)
	}
	v, err := ks.decodeValue(k.Kind, k.Value)
	if err != nil {
		return fmt.Errorf("keyspace: moved key of kind %s: %w", k.Kind, err)
	}
	ks.now = ks.Now()
	// A moved key is no event: it existed before, on another shard.
	on := ks.notifyOn
	ks.notifyOn = 0
	defer func() { ks.notifyOn = on }()
	d := ks.dbs[k.DB]
	h := d.keys.hash(k.Key)
	sl := ks.setKey(d, h, d.keys.find(h, k.Key), k.Key, v, false)
	if k.Expiry != 0 {
		ks.setExpiry(d, h, sl, k.Expiry)
	}
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(k.DB, k.Key, v, k.Expiry)
		ks.jend(k.DB)
	}
	return nil
}
