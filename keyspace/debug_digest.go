package keyspace

import (
	"crypto/sha1"
	"encoding/binary"
	"strconv"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE (Redis's debug.c): a SHA-1 based
// signature of the data set that does not depend on the order keys are
// stored in, so that two servers, or one before and after a restart, can
// be compared. Each key's digest mixes its name, its type, its value's
// elements (in order for strings and lists; XORed, so in any order, for
// sets, hashes and sorted sets) and whether it has a TTL; the data set's
// is, database by database, the database's number mixed in, then the XOR
// of its keys' digests' SHA-1s. A shard gives the XOR per database
// (DigestDatabases), which the server combines over the shards.

// Digest is a 20-byte SHA-1 state.
type Digest [20]byte

// xorDigest XORs the SHA-1 of p into d.
func (d *Digest) xorDigest(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mixDigest XORs the SHA-1 of p into d, then replaces d by its SHA-1: the
// order of mixes matters.
func (d *Digest) mixDigest(p []byte) {
	d.xorDigest(p)
	*d = sha1.Sum(d[:])
}

// Xor XORs o into d.
func (d *Digest) Xor(o Digest) {
	for i := range d {
		d[i] ^= o[i]
	}
}

// MixDB mixes database number db into d, as the data set's digest does
// before the XOR of the database's keys.
func (d *Digest) MixDB(db int) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(db))
	d.mixDigest(b[:])
}

// digestExpire is what a key with a TTL XORs into its digest.
var digestExpire = []byte("!!expire!!")

// objectDigest adds a value and its TTL flag to d (Redis's
// xorObjectDigest).
func objectDigest(d *Digest, v value, hasTTL bool) {
	var t [4]byte
	binary.BigEndian.PutUint32(t[:], uint32(v.kind())) // Redis's OBJ_ numbers
	d.mixDigest(t[:])
	switch v.kind() {
	case KindString:
		if v.isInt() {
			d.mixDigest(strconv.AppendInt(nil, v.intVal(), 10))
		} else {
			d.mixDigest(v.bytes())
		}
	case KindList:
		l := (*list)(v.p)
		for ni := 0; ni < l.numNodes(); ni++ {
			n := l.node(ni)
			for p := int(n.lo); p < len(n.b); {
				var e []byte
				e, p = readFwd(n.b, p)
				d.mixDigest(e)
			}
		}
	case KindSet:
		setEach(v.p, func(m []byte) { d.xorDigest(m) })
	case KindZSet:
		zsetEach((*zset)(v.p), func(m []byte, s float64) {
			var e Digest
			e.mixDigest(m)
			e.mixDigest(strconv.AppendFloat(nil, s, 'g', 17, 64))
			d.xorDigest(e[:])
		})
	case KindHash:
		hashEach(v.p, func(f, val []byte) bool {
			var e Digest
			e.mixDigest(f)
			e.mixDigest(val)
			d.xorDigest(e[:])
			return true
		})
	}
	if hasTTL {
		d.xorDigest(digestExpire)
	}
}

// zsetEach calls fn for every member of z with its score.
func zsetEach(z *zset, fn func(m []byte, s float64)) {
	if z.sk == nil {
		z.lp.each(0, z.lp.count()-1, false, fn)
		return
	}
	for x := z.sk.header.lv(0).forward; x != nil; x = x.lv(0).forward {
		fn(unsafeBytes(x.member), x.score)
	}
}

// DigestValue is DEBUG DIGEST-VALUE's digest of key in database db: its
// value's and TTL flag's, without its name; zero for a missing key.
// Expired keys not yet deleted count, as in Redis.
func (ks *Keyspace) DigestValue(db int, key []byte) Digest {
	var d Digest
	if db < 0 || db >= len(ks.dbs) {
		return d
	}
	t := ks.dbs[db]
	if sl := t.keys.find(t.keys.hash(key), key); sl != nil {
		if v, err := ks.valueOf(t, sl); err == nil {
			objectDigest(&d, v, sl.kw&kwTTL != 0)
		}
	}
	return d
}

// DigestDatabases returns, for each database, the XOR of its keys'
// digests and whether it has keys.
func (ks *Keyspace) DigestDatabases() ([]Digest, []bool) {
	sums := make([]Digest, len(ks.dbs))
	some := make([]bool, len(ks.dbs))
	for i, t := range ks.dbs {
		some[i] = t.keys.count > 0
		t.keys.each(func(sl *slot[entry]) {
			var d Digest
			d.mixDigest(sl.keyBytes())
			if v, err := ks.valueOf(t, sl); err == nil {
				objectDigest(&d, v, sl.kw&kwTTL != 0)
			} else {
				d.mixDigest([]byte("!cold value unreadable")) // counted (cold.go)
			}
			sums[i].xorDigest(d[:])
		})
	}
	return sums, some
}
