package keyspace

import "math/rand/v2"

// LFU access counters (Redis's evict.c), kept in the 24 bits of a slot's
// kw that hold the LRU clock under the other policies: the high 16 bits
// are the minute (mod 2^16) the counter was last decremented or
// incremented, the low 8 bits a logarithmic counter of accesses. A
// switch of policy at run time reinterprets the bits, as in Redis; keys
// adjust as they are accessed.

// lfuInitVal is LFU_INIT_VAL: a new key's counter, so that it may
// collect a few accesses before it is the first to go.
const lfuInitVal = 5

// lfuMinutes is LFUGetTimeInMinutes: the minute of unix time nowMs, 16 bits.
func lfuMinutes(nowMs int64) uint64 { return uint64(nowMs/60000) & 0xffff }

// lfuBits returns the 24 LRU/LFU bits of kw.
func lfuBits(kw uint64) uint64 { return kw & kwLRUMask >> kwLRUShift }

// lfuCounter is LFUDecrAndReturn: the counter in bits, less one for each
// lfu-decay-time minutes elapsed since it was last updated. It does not
// store the decayed value: an access does (lfuAccess).
func (ks *Keyspace) lfuCounter(bits uint64) uint64 {
	ldt, counter := bits>>8, bits&0xff
	decay := uint64(max(ks.Eviction.LFUDecayTime, 0))
	if decay == 0 {
		return counter
	}
	now := lfuMinutes(ks.now)
	elapsed := now - ldt
	if now < ldt {
		elapsed = 0xffff - ldt + now // the 16-bit minute wrapped once
	}
	if periods := elapsed / decay; periods > 0 {
		if periods >= counter {
			return 0
		}
		return counter - periods
	}
	return counter
}

// lfuIncr is LFULogIncr: the counter goes up with probability
// 1/((counter-lfuInitVal)*lfu-log-factor+1), saturating at 255, so that
// it grows with the logarithm of the accesses.
func (ks *Keyspace) lfuIncr(counter uint64) uint64 {
	if counter == 255 {
		return 255
	}
	base := float64(counter) - lfuInitVal
	if base < 0 {
		base = 0
	}
	if rand.Float64() < 1/(base*float64(max(ks.Eviction.LFULogFactor, 0))+1) {
		counter++
	}
	return counter
}

// lfuAccess is updateLFU: the kw LRU/LFU field after an access of the key
// whose kw is kw (decayed, then incremented, stamped with this minute).
func (ks *Keyspace) lfuAccess(kw uint64) uint64 {
	counter := ks.lfuIncr(ks.lfuCounter(lfuBits(kw)))
	return (lfuMinutes(ks.now)<<8 | counter) << kwLRUShift
}

// lfuNew is the LFU field of a key just created.
func (ks *Keyspace) lfuNew() uint64 {
	return (lfuMinutes(ks.now)<<8 | lfuInitVal) << kwLRUShift
}
