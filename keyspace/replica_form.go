package keyspace

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/moond-db/moond/rdb"
)

// What a master sends its replicas (server/master*.go): the snapshot of a
// full sync in the RDB file's form, and the journal's records in a form
// redis-server runs. Most records are plain Redis commands already; the
// moond-only MOOND.APPLY (journal.go) becomes the commands it stands for.

// SnapshotDB writes database db's keys in the RDB file's form, in chunks
// of about size bytes handed to emit, which owns each: SELECTDB and
// RESIZEDB (the table's counts, expired keys included, as Redis's
// rdbSaveDb writes them; only a hint for the loader), then per key its
// expiry, type byte, key and value encoding (DUMP's, without the footer).
// A database without keys writes nothing. Keys already past their TTL are
// left out: the replica would drop them at once, and the master's expiry
// of them logs a DEL that the replica applies to nothing. A cold value is
// read from the heap (not installed); one that cannot be read is left out
// and counted as a cold read miss. It returns how many keys, and how many
// with a TTL, it wrote. Chunking lets the master send the snapshot while
// it is still being written, instead of building it whole first.
func (ks *Keyspace) SnapshotDB(db, size int, emit func([]byte)) (keys, expires int) {
	d := ks.dbs[db]
	if d.keys.count == 0 {
		return 0, 0
	}
	now := ks.Now()
	buf := rdb.AppendSelectDB(make([]byte, 0, size+size/4), db, d.keys.count, d.expires.count)
	d.keys.each(func(sl *slot[entry]) {
		when := int64(0)
		if sl.kw&kwTTL != 0 {
			when = d.expires.find(d.keys.hash(sl.keyBytes()), sl.keyBytes()).v
			if when <= now {
				return
			}
		}
		v, err := ks.valueOf(d, sl)
		if err != nil {
			return // a cold value that cannot be read: counted (cold.go)
		}
		if when != 0 {
			expires++
			buf = append(buf, rdb.OpExpireTimeMS)
			buf = binary.LittleEndian.AppendUint64(buf, uint64(when))
		}
		// The entry is the type byte, the key, then the value; the
		// encoding starts with the type: write a place for it and the key
		// first, then move the type byte there (the value shifts by one).
		at := len(buf)
		buf = rdb.AppendString(append(buf, 0), sl.keyBytes())
		enc := len(buf)
		buf = appendEncoding(buf, v)
		buf[at] = buf[enc]
		buf = buf[:enc+copy(buf[enc:], buf[enc+1:])]
		keys++
		if len(buf) >= size {
			emit(buf)
			buf = make([]byte, 0, size+size/4)
		}
	})
	if len(buf) > 0 {
		emit(buf)
	}
	return keys, expires
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
