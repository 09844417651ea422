package keyspace

import "time"

// Expiry. A key with a TTL has kwTTL set in its slot and its unix-ms expiry
// time in its database's expires table, under the same key bytes. A key is
// expired when now > its time (Redis's keyIsExpired); EXPIRE and friends
// delete at once when given a time <= now (checkAlreadyExpired). Neither
// happens while Loading.

// expiryOf returns the expiry time of the key in sl, or -1 if it has none.
func (ks *Keyspace) expiryOf(d *db, h uint64, sl *slot[entry]) int64 {
	if sl.kw&kwTTL == 0 {
		return -1
	}
	return d.expires.find(h, sl.keyBytes()).v
}

// expired reports whether key, which has a TTL, is past it.
func (ks *Keyspace) expired(d *db, h uint64, key []byte) bool {
	if ks.Loading {
		return false
	}
	return ks.now > d.expires.find(h, key).v
}

// setExpiry gives the key in sl the expiry time when.
func (ks *Keyspace) setExpiry(d *db, h uint64, sl *slot[entry], when int64) {
	setExpiryRaw(d, h, sl, when)
	ks.changed(d, sl)
}

// setExpiryRaw is setExpiry without dirty tracking.
func setExpiryRaw(d *db, h uint64, sl *slot[entry], when int64) {
	if sl.kw&kwTTL != 0 {
		d.expires.find(h, sl.keyBytes()).v = when
		return
	}
	d.expires.insert(h, sl.key(), when, 0)
	sl.kw |= kwTTL
}

// removeExpiry clears the key's TTL and reports whether it had one.
func (ks *Keyspace) removeExpiry(d *db, h uint64, sl *slot[entry]) bool {
	if !removeExpiryRaw(d, h, sl) {
		return false
	}
	ks.changed(d, sl)
	return true
}

// removeExpiryRaw is removeExpiry without dirty tracking.
func removeExpiryRaw(d *db, h uint64, sl *slot[entry]) bool {
	if sl.kw&kwTTL == 0 {
		return false
	}
	d.expires.remove(h, sl.keyBytes())
	sl.kw &^= kwTTL
	return true
}

// alreadyExpired is Redis's checkAlreadyExpired: whether an expiry time
// given to EXPIRE-like commands means "delete now".
func (ks *Keyspace) alreadyExpired(when int64) bool {
	return when <= ks.now && !ks.Loading
}

// expireKey deletes key from database dbi because its time has come,
// counts it and journals the deletion.
func (ks *Keyspace) expireKey(dbi int, h uint64, key []byte) {
	ks.stats.ExpiredKeys++
	if ks.journaling() {
		ks.delArgs[1] = key
		ks.log(dbi, ks.delArgs[:])
		ks.delArgs[1] = nil
	}
	ks.deleteKey(ks.dbs[dbi], h, key)
	ks.notify(NotifyExpired, "expired", key, dbi)
}

// ExpireIfDue deletes key of the database at logical index db if its time
// has come, as any access does (Redis's expireIfNeeded): counted,
// journaled and notified. A cross-shard command reads its keys with
// ExportKey, which leaves an expired key in place, and calls this first.
func (ks *Keyspace) ExpireIfDue(db int, key []byte) {
	if db < 0 || db >= len(ks.dbs) {
		return
	}
	ks.now = ks.Now()
	ks.lookup(db, key)
}

// Active expiry parameters, after Redis's activeExpireCycle.
const (
	// expireKeysPerLoop is how many keys with a TTL one round samples.
	expireKeysPerLoop = 20
	// expireStalePerc: a database gets another round while more than this
	// percentage of the keys sampled had expired.
	expireStalePerc = 25
)

// ActiveExpire runs one active expiry cycle and returns the number of keys
// it deleted. It visits the databases in turn, resuming where the previous
// cycle stopped; in each it samples up to 20 keys with a TTL at a time,
// walking the expires table with a persistent cursor, deletes those whose
// time has come, and samples again while more than 25% of a sample had
// expired. It stops when budget (wall-clock time, checked every 16 rounds)
// runs out, and does nothing while Loading.
func (ks *Keyspace) ActiveExpire(budget time.Duration) (expired int) {
	if ks.Loading || ks.expiryPaused {
		return 0
	}
	start := time.Now()
	ks.now = ks.Now()
	var sampled, stale int
	rounds := 0
	timedOut := false
	for n := 0; n < len(ks.dbs) && !timedOut; n++ {
		dbi := ks.expireDB
		ks.expireDB = (ks.expireDB + 1) % len(ks.dbs)
		for {
			rounds++
			s, e := ks.expireRound(dbi)
			sampled += s
			stale += e
			if rounds%16 == 0 && time.Since(start) > budget {
				timedOut = true
				ks.stats.ExpiredTimeCapReached++
				break
			}
			if s == 0 || e*100/s <= expireStalePerc {
				break
			}
		}
	}
	ks.stats.ExpireCycleTime += time.Since(start)
	perc := 0.0
	if sampled > 0 {
		perc = float64(stale) / float64(sampled)
	}
	ks.stats.ExpiredStalePerc = perc*0.05 + ks.stats.ExpiredStalePerc*0.95
	return stale
}

// expireRound samples up to expireKeysPerLoop keys with a TTL in database
// dbi, deletes the expired ones and returns how many it sampled and
// deleted. It also refreshes the database's average TTL estimate.
func (ks *Keyspace) expireRound(dbi int) (sampled, deleted int) {
	d := ks.dbs[dbi]
	if d.expires.count == 0 {
		d.avgTTL = 0
		return 0, 0
	}
	due := ks.keysTmp[:0]
	var ttlSum int64
	ttlN := 0
	// Each scan step visits one or two segments; stop after a full pass.
	for steps := 0; sampled < expireKeysPerLoop && steps < len(d.expires.segs)+1; steps++ {
		d.expireCursor = d.expires.scan(d.expireCursor, func(sl *slot[int64]) {
			sampled++
			if ttl := sl.v - ks.now; ttl > 0 {
				ttlSum += ttl
				ttlN++
			}
			if ks.now > sl.v {
				due = append(due, sl.key())
			}
		})
		if d.expireCursor == 0 {
			break
		}
	}
	for _, k := range due {
		key := unsafeBytes(k)
		ks.expireKey(dbi, d.keys.hash(key), key)
	}
	if ttlN > 0 {
		avg := ttlSum / int64(ttlN)
		if d.avgTTL == 0 {
			d.avgTTL = avg
		}
		d.avgTTL = d.avgTTL/50*49 + avg/50
	}
	clear(due)
	ks.keysTmp = due[:0]
	return sampled, len(due)
}

// SetExpiryPaused stops or restarts the deletion of expired keys, as
// CLIENT PAUSE does in Redis: while it is on, ActiveExpire deletes
// nothing and a command that writes nothing finds an expired key missing
// but leaves it in place (expired_keys does not move). A write still
// deletes the expired keys it meets, before it runs, as a key it would
// otherwise create twice.
func (ks *Keyspace) SetExpiryPaused(on bool) {
	ks.expiryPaused = on
	ks.keepExpired = false
}
