package keyspace

import (
	"errors"
	"strconv"

	"github.com/moond-db/moond/rdb"
)

// What a master sends its replicas (server/master*.go): the snapshot of a
// full sync in the RDB file's form, and the journal's records in a form
// redis-server runs. Most records are plain Redis commands already; the
// moond-only MOOND.APPLY (journal.go) becomes the commands it stands for.

// AppendSnapshotDB appends the RDB file entries of database db's keys to
// dst (rdb.AppendFileEntry: an expiry, then the key and its value in DUMP's
// encoding) and returns how many keys and how many with a TTL it wrote.
// Keys already past their TTL are left out: the replica would drop them
// at once, and the master's expiry of them logs a DEL that the replica
// applies to nothing. A cold value is read from the heap (not installed);
// one that cannot be read is left out and counted as a cold read miss.
func (ks *Keyspace) AppendSnapshotDB(dst []byte, db int) (out []byte, keys, expires int) {
	d := ks.dbs[db]
	now := ks.Now()
	var payload []byte
	d.keys.each(func(sl *slot[entry]) {
		when := int64(0)
		if sl.kw&kwTTL != 0 {
			when = d.expires.find(d.keys.hash(sl.keyBytes()), sl.keyBytes()).v
			if when <= now {
				return
			}
			expires++
		}
		v, err := ks.valueOf(d, sl)
		if err != nil {
			return // a cold value that cannot be read: counted (cold.go)
		}
		payload = appendDump(payload[:0], v)
		dst = rdb.AppendFileEntry(dst, sl.keyBytes(), payload, when)
		keys++
	})
	return dst, keys, expires
}

// errApplyForm is a MOOND.APPLY record this side of the journal never
// writes.
var errApplyForm = errors.New("keyspace: malformed MOOND.APPLY record")

// IsApply reports whether a journal record is MOOND.APPLY.
func IsApply(args [][]byte) bool {
	return len(args) > 0 && equalFold(args[0], applyLower)
}

// ReplicaCommands calls emit with the Redis commands that do what the
// MOOND.APPLY record args does, each with its database: DEL key, RESTORE
// key <expiry ms> <DUMP payload> REPLACE ABSTTL (expiry 0 for none) for a
// PUT, the command itself for a CMD. The arguments passed to emit are
// valid only during the call.
func (ks *Keyspace) ReplicaCommands(args [][]byte, emit func(db int, cmd [][]byte)) error {
	var cmd [][]byte
	for i := 1; i < len(args); {
		if i+2 >= len(args) {
			return errApplyForm
		}
		db, err := strconv.Atoi(string(args[i+1]))
		if err != nil {
			return errApplyForm
		}
		switch {
		case equalFold(args[i], "del"):
			emit(db, append(cmd[:0], []byte("DEL"), args[i+2]))
			i += 3
		case equalFold(args[i], "cmd"):
			n, err := strconv.Atoi(string(args[i+2]))
			if err != nil || n < 1 || i+3+n > len(args) {
				return errApplyForm
			}
			emit(db, args[i+3:i+3+n])
			i += 3 + n
		case equalFold(args[i], "put") && i+5 < len(args):
			kind, err := strconv.Atoi(string(args[i+3]))
			if err != nil || kind < 0 || kind > 255 {
				return errApplyForm
			}
			v, err := ks.decodeValue(Kind(kind), args[i+4])
			if err != nil {
				return err
			}
			payload := appendDump(nil, v)
			emit(db, append(cmd[:0], []byte("RESTORE"), args[i+2], args[i+5], payload, []byte("REPLACE"), []byte("ABSTTL")))
			i += 6
		default:
			return errApplyForm
		}
	}
	return nil
}
