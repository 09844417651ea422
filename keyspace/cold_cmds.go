package keyspace

// Which commands need a cold key's value (cold.go). By default every
// command with keys does: only those named here run on a cold key as it
// is, because they read nothing of the value and change neither it nor
// the key's expiry in a way the checkpoint would have to write:
//
//   - existence, type and TTL: EXISTS, TYPE, TTL, PTTL, EXPIRETIME,
//     PEXPIRETIME, TOUCH, OBJECT IDLETIME and FREQ;
//   - deletion: DEL, UNLINK (the key's record becomes its grave, as for
//     any deletion);
//   - a plain overwrite: SET without GET, SETNX, SETEX, PSETEX, MSET,
//     MSETNX. The new value marks the key dirty, and the next checkpoint
//     supersedes the old record, as for any overwrite.
//
// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT and PERSIST do need the value:
// they mark the key dirty, and the checkpoint then writes a new version
// of the key, value included (a heap record holds the expiry with the
// value), so a cold key is warmed first.
var coldFreeCommands = map[string]bool{
	"exists": true, "type": true, "ttl": true, "pttl": true,
	"expiretime": true, "pexpiretime": true, "touch": true,
	"object|idletime": true, "object|freq": true,
	"del": true, "unlink": true,
	"setnx": true, "setex": true, "psetex": true, "mset": true, "msetnx": true,
}

// NeedsValue reports whether the command needs the values of its keys:
// whether a cold key of it must be warmed before it runs.
func NeedsValue(spec *CommandSpec, args [][]byte) bool {
	if spec.Subcommands != nil && len(args) >= 2 {
		if sub := spec.subcommand(args[1]); sub != nil {
			spec = sub
		}
	}
	if spec.Name == "set" {
		return setReadsOld(args)
	}
	return !coldFreeCommands[spec.Name]
}

// setReadsOld reports whether a SET returns the old value (GET). Its
// other options (NX, XX, KEEPTTL, expiries) read only the key's existence
// and TTL.
func setReadsOld(args [][]byte) bool {
	for _, a := range args[min(3, len(args)):] {
		if len(a) == 3 && (a[0]|0x20) == 'g' && (a[1]|0x20) == 'e' && (a[2]|0x20) == 't' {
			return true
		}
	}
	return false
}
