package keyspace

import "strconv"

// The write journal. Every write that changed the data hands the Log one
// record, an argument vector that Exec can run, in a form whose effect does
// not depend on the clock or on chance:
//
//	SET, SETNX, SETEX, PSETEX, GETSET, SET ... GET    SET k v [PXAT ms | KEEPTTL]
//	MSET, MSETNX                                      MSET k v ...
//	INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT           SET k <resulting value> KEEPTTL
//	APPEND on a missing key, SETRANGE on a missing key SET k <resulting value> KEEPTTL
//	APPEND on an existing key                         APPEND k <appended bytes>
//	SETRANGE on an existing key                       SETRANGE k <offset> <bytes>
//	GETDEL, DEL, UNLINK                               DEL k ... (the keys that existed)
//	GETEX EX|PX|EXAT|PXAT, EXPIRE, PEXPIRE,
//	EXPIREAT, PEXPIREAT                               PEXPIREAT k ms, or DEL k for a time already past
//	GETEX PERSIST, PERSIST                            PERSIST k
//	RENAME, RENAMENX (db d)                           MOOND.APPLY DEL d src PUT d dst <kind> <value> <expiry>
//	COPY src dst [DB n] [REPLACE]                     MOOND.APPLY PUT n dst <kind> <value> <expiry>
//	MOVE k n (db d)                                   MOOND.APPLY DEL d k PUT n k <kind> <value> <expiry>
//	RESTORE k ttl payload [REPLACE] ... (db d)        MOOND.APPLY PUT d k <kind> <value> <expiry>, or DEL k
//	                                                  for a REPLACE whose TTL was already past
//	FLUSHDB, FLUSHALL, SWAPDB                         FLUSHDB, FLUSHALL, SWAPDB a b
//	a key expiring (lazily or actively)               DEL k
//
// The record's database (Append's db) is the client's. Every database
// a record names is a logical index (SELECT's), never a physical id (see
// cmd_db.go): replaying the records from a redo point over the database
// map of that point (SetDBMap) gives each the physical database it had.
//
// No record reads a key other than the ones it writes: the effect of a
// record on a key depends only on that key's own prior state. Replay over
// a fuzzy heap relies on it (see Replay): a key loaded from the heap may
// be newer than a record, and a record must never copy such a key's newer
// state into another. RENAME, COPY and MOVE, which read their source, are
// therefore journaled as the values they wrote, in MOOND.APPLY, a command
// that only replay runs (Exec knows it only while Loading; clients get the
// unknown-command error, and COMMAND does not list it):
//
//	MOOND.APPLY op [op ...]
//	op = DEL <db> <key>
//	   | PUT <db> <key> <kind> <value> <expiry>
//	   | CMD <db> <n> <arg1> ... <argn>
//
// applied in order, all or nothing (every op is checked first). <db> is a
// database index, <kind> the Kind as a decimal number (0 for a string),
// <value> the value in the heap encoding (heapcodec.go: a string's bytes),
// <expiry> the absolute expiry time in unix ms, 0 for none. DEL deletes
// the key if it exists; PUT stores the value, replacing the key and its
// TTL if it exists; CMD runs a single-key write command (arg1 its name,
// arg2 its key) in its journal form, so that a command changing two keys
// by a little each (SMOVE: SREM on one, SADD on the other) logs the two
// changes in one record, applied together or not at all. The reply is +OK.
//
// FLUSHDB and FLUSHALL touch every key of their databases; Replay applies
// them key by key too. SWAPDB touches no key: it only swaps the logical
// indexes of two databases, whose keys keep their physical database and
// so their heap records (cmd_db.go); the checkpoint logs the resulting map
// at its redo point (DBMap), so the record needs no values.
//
// In-place updates log the change, not the value: APPEND and SETRANGE on
// an existing string are journaled as themselves, so that the log grows
// with what clients send, not with the square of a value appended to
// again and again (the INCR family stays a SET of its result: an integer
// is at most 20 bytes, and INCRBYFLOAT's result is not what it was sent).
// Such a record's effect depends on the key's prior state, as KEEPTTL's
// and PERSIST's already do; replay gets it right because the state it
// applies the record to is the state the command saw:
//
//   - A key's heap version is stamped with the LSN of the last record
//     appended when it was taken (Version), which holds every change up
//     to that LSN and none after: a record at lsn is in the heap version
//     exactly when lsn <= the key's LSN. Replay applies a record to a key
//     only when lsn is above it (replayPasses), so a delta is never
//     applied twice.
//   - A key whose heap LSN is at or above the redo point is in the boot
//     map; every record for it between its LSN and lsn is above both and
//     replays, in order, before lsn: by induction, the record meets the
//     key as the command did. A key the heap holds from below the redo
//     point did not change between its LSN and the redo point (it would
//     have been dirty and taken again), so the same holds from redo on.
//   - A key the heap lacks though it existed at the redo point was
//     deleted by a record at or above redo that the checkpoint saw; the
//     records before that DEL may meet another base, but they touch only
//     that key, cannot fail for it (APPEND and SETRANGE create a missing
//     key; the size limit is not checked while Loading), and the DEL
//     replays after them: from the DEL on the key is what it was.
//
// So a delta meets the base the command saw, or a key its later DEL
// resets: never the wrong base in the end, never twice. A split record
// (a value above the WAL's record limit) has the LSN of its last part,
// the LSN LastLSN gives, so the rule holds for it unchanged.
//
// A command that changed nothing (SET NX on an existing key, DEL of a
// missing key, EXPIRE GT that lost) writes no record. Replaying the records
// in order through Exec, with Loading set, rebuilds the same keys, values
// and expiry times. (Encodings may differ: INCRBYFLOAT leaves an "embstr"
// that the replayed SET may store as "int", as in Redis's own replication.)

// Log is where a keyspace's writes go: the shard's write-ahead log. The
// keyspace calls it on its own thread, once per effective write.
type Log interface {
	// Append logs one record. args and their bytes are valid only during
	// the call: the log copies what it keeps. It returns the record's LSN,
	// or 0 when the record is not persisted (appendonly no).
	Append(db int, args [][]byte) uint64
	// LastLSN is the LSN of the last record appended (after recovery, the
	// last one replayed), 0 before the first. Version stamps a key's
	// version with it: an upper bound of the key's last change, and exact
	// enough, because the version holds every change up to it.
	LastLSN() uint64
}

// journaling reports whether writes must be journaled.
func (ks *Keyspace) journaling() bool { return ks.Log != nil && !ks.Loading }

// log hands one record to the Log and remembers its LSN as the running
// command's (see ExecSpec).
func (ks *Keyspace) log(dbi int, args [][]byte) {
	if lsn := ks.Log.Append(dbi, args); lsn != 0 {
		ks.execLSN = lsn
	}
}

// jstart begins a record with the command name cmd.
func (ks *Keyspace) jstart(cmd string) {
	ks.jargs = append(ks.jargs[:0], unsafeBytes(cmd))
	ks.jnum = ks.jnum[:0]
}

func (ks *Keyspace) jadd(args ...[]byte) { ks.jargs = append(ks.jargs, args...) }

// jint adds the decimal form of n. The digits go to jnum, which only grows
// during a record: a slice taken before append moved it still reads its
// digits from the old array.
func (ks *Keyspace) jint(n int64) {
	start := len(ks.jnum)
	ks.jnum = strconv.AppendInt(ks.jnum, n, 10)
	ks.jargs = append(ks.jargs, ks.jnum[start:len(ks.jnum):len(ks.jnum)])
}

// jend hands the record to the Log.
func (ks *Keyspace) jend(dbi int) {
	ks.log(dbi, ks.jargs)
	clear(ks.jargs)
	ks.jargs = ks.jargs[:0]
}

// journal writes a record of fixed arguments.
func (ks *Keyspace) journal(dbi int, cmd string, args ...[]byte) {
	if !ks.journaling() {
		return
	}
	ks.jstart(cmd)
	ks.jadd(args...)
	ks.jend(dbi)
}

// journalSetValue records key's new value as SET key value KEEPTTL, the
// deterministic form of the commands that compute a value from the old one.
func (ks *Keyspace) journalSetValue(dbi int, key []byte, v value) {
	if !ks.journaling() {
		return
	}
	ks.jstart("SET")
	ks.jadd(key)
	if v.isInt() {
		ks.jint(v.intVal())
	} else {
		ks.jadd(v.bytes())
	}
	ks.jadd(kwKeepTTL)
	ks.jend(dbi)
}

// journalSetRange records SETRANGE key off b on an existing string: the
// change, not the resulting value (see above for why replay is exact).
func (ks *Keyspace) journalSetRange(dbi int, key []byte, off int64, b []byte) {
	if !ks.journaling() {
		return
	}
	ks.jstart("SETRANGE")
	ks.jadd(key)
	ks.jint(off)
	ks.jadd(b)
	ks.jend(dbi)
}

// journalExpireAt records a new absolute expiry time.
func (ks *Keyspace) journalExpireAt(dbi int, key []byte, when int64) {
	if !ks.journaling() {
		return
	}
	ks.jstart("PEXPIREAT")
	ks.jadd(key)
	ks.jint(when)
	ks.jend(dbi)
}

// jdel adds MOOND.APPLY's DEL op.
func (ks *Keyspace) jdel(dbi int, key []byte) {
	ks.jadd(kwOpDel)
	ks.jint(int64(dbi))
	ks.jadd(key)
}

// jput adds MOOND.APPLY's PUT op: key in database dbi holds v, expiring at
// when (-1 for never).
func (ks *Keyspace) jput(dbi int, key []byte, v value, when int64) {
	ks.jadd(kwOpPut)
	ks.jint(int64(dbi))
	ks.jadd(key)
	ks.jint(int64(v.kind()))
	switch {
	case v.isInt():
		ks.jint(v.intVal())
	case v.kind() == KindString:
		ks.jadd(v.bytes()) // the encoding of a string is its bytes
	default:
		ks.jadd(v.appendEncoded(nil))
	}
	ks.jint(max(when, 0))
}

var (
	kwKeepTTL = []byte("KEEPTTL")
	kwPXAT    = []byte("PXAT")
	kwOpDel   = []byte("DEL")
	kwOpPut   = []byte("PUT")
	kwOpCmd   = []byte("CMD")
)
