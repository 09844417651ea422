package keyspace

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// eventLog is a Notifier that writes each event as "class event key@db".
type eventLog struct{ events []string }

func (l *eventLog) Notify(class EventClass, event string, key []byte, db int) {
	l.events = append(l.events, fmt.Sprintf("%s %s %s@%d", class, event, key, db))
}

// notifyHarness is a harness whose keyspace reports every class of event.
func notifyHarness(t *testing.T) (*harness, *eventLog) {
	h := newHarness(t)
	l := &eventLog{}
	h.ks.Notifier = l
	h.ks.SetNotify(NotifyKeyspace | NotifyAll | NotifyKeyMiss | NotifyNew)
	return h, l
}

func TestEventClassesParseAndString(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"", ""},
		{"KEA", "AKE"},
		{"AKE", "AKE"},
		{"Ex", "xE"},
		{"K$lshzxeg", "g$lshzxeK"},
		{"Egshlz$xetdnmK", "AKEm"},
		{"nKEm", "nKEm"},
		{"Kg$lshzxetd", "AK"},
		{"AAAA", "A"},
		{"KEg$", "g$KE"},
	} {
		got, ok := ParseEventClasses(c.in)
		if !ok || got.String() != c.out {
			t.Errorf("%q: got %q, %v; want %q", c.in, got.String(), ok, c.out)
		}
	}
	for _, bad := range []string{"Z", "KEa", "K E", "KE!", "b"} {
		if _, ok := ParseEventClasses(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// notifyCases are commands and the events they report, in order, after
// their setup ran (with notifications on, but its events dropped). The
// names, classes and order are Redis 7.0's (t_*.c, db.c, bitops.c,
// hyperloglog.c).
var notifyCases = []struct {
	name  string
	setup []string
	cmd   string
	want  []string
}{
	// Strings.
	{"set new", nil, "SET k v", []string{"n new k@0", "$ set k@0"}},
	{"set existing", []string{"SET k v"}, "SET k w", []string{"$ set k@0"}},
	{"set ex", nil, "SET k v EX 100", []string{"n new k@0", "$ set k@0", "g expire k@0"}},
	{"set nx fails", []string{"SET k v"}, "SET k w NX", nil},
	{"set get miss", nil, "SET k v GET", []string{"m keymiss k@0", "n new k@0", "$ set k@0"}},
	{"setex", nil, "SETEX k 10 v", []string{"n new k@0", "$ set k@0", "g expire k@0"}},
	{"setnx", nil, "SETNX k v", []string{"n new k@0", "$ set k@0"}},
	{"psetex", []string{"SET k v"}, "PSETEX k 100 w", []string{"$ set k@0", "g expire k@0"}},
	{"getset", []string{"SET k v"}, "GETSET k w", []string{"$ set k@0"}},
	{"getdel", []string{"SET k v"}, "GETDEL k", []string{"g del k@0"}},
	{"getdel miss", nil, "GETDEL k", []string{"m keymiss k@0"}},
	{"getex ex", []string{"SET k v"}, "GETEX k EX 10", []string{"g expire k@0"}},
	{"getex persist", []string{"SET k v EX 10"}, "GETEX k PERSIST", []string{"g persist k@0"}},
	{"getex persist no ttl", []string{"SET k v"}, "GETEX k PERSIST", nil},
	{"getex past", []string{"SET k v"}, "GETEX k PXAT 1", []string{"g del k@0"}},
	{"mset", nil, "MSET a 1 b 2", []string{"n new a@0", "$ set a@0", "n new b@0", "$ set b@0"}},
	{"msetnx fails", []string{"SET b 1"}, "MSETNX a 1 b 2", nil},
	{"append", []string{"SET k v"}, "APPEND k w", []string{"$ append k@0"}},
	// RESTORE's events (a payload cannot be written here) are in
	// TestNotifyRestore (dump_test.go); a refused one has none.
	{"restore busy", []string{"SET k v"}, "RESTORE k 0 x", nil},
	{"restore bad payload", nil, "RESTORE k 0 x REPLACE", nil},
	{"append new", nil, "APPEND k w", []string{"n new k@0", "$ append k@0"}},
	{"setrange", []string{"SET k v"}, "SETRANGE k 3 w", []string{"$ setrange k@0"}},
	{"setrange empty", []string{"SET k v"}, "SETRANGE k 3 \"\"", nil},
	{"incr", nil, "INCR k", []string{"n new k@0", "$ incrby k@0"}},
	{"decrby", []string{"SET k 5"}, "DECRBY k 2", []string{"$ incrby k@0"}},
	{"decr", []string{"SET k 5"}, "DECR k", []string{"$ incrby k@0"}},
	{"incrby", []string{"SET k 5"}, "INCRBY k 5", []string{"$ incrby k@0"}},
	{"incrbyfloat", []string{"SET k 5"}, "INCRBYFLOAT k 1.5", []string{"$ incrbyfloat k@0"}},
	{"incr not int", []string{"SET k x"}, "INCR k", nil},
	{"get miss", nil, "GET k", []string{"m keymiss k@0"}},
	{"mget", []string{"SET a 1"}, "MGET a b", []string{"m keymiss b@0"}},
	{"strlen hit", []string{"SET a 1"}, "STRLEN a", nil},
	// Bitmaps and HyperLogLogs.
	{"setbit", nil, "SETBIT k 7 1", []string{"n new k@0", "$ setbit k@0"}},
	{"setbit same", []string{"SETBIT k 7 1"}, "SETBIT k 7 1", nil},
	{"bitfield", nil, "BITFIELD k SET u8 0 1", []string{"n new k@0", "$ setbit k@0"}},
	{"bitfield get", []string{"SET k a"}, "BITFIELD k GET u8 0", nil},
	{"bitop", []string{"SET a x"}, "BITOP NOT d a", []string{"n new d@0", "$ set d@0"}},
	{"bitop empty", []string{"SET d x"}, "BITOP AND d a b", []string{"m keymiss a@0", "m keymiss b@0", "g del d@0"}},
	{"pfadd", nil, "PFADD h a b", []string{"n new h@0", "$ pfadd h@0"}},
	{"pfadd nothing new", []string{"PFADD h a"}, "PFADD h a", nil},
	{"pfmerge", []string{"PFADD a x"}, "PFMERGE d a", []string{"m keymiss d@0", "n new d@0", "$ pfadd d@0"}},
	// Generic.
	{"del", []string{"SET a 1", "SET b 1"}, "DEL a c b", []string{"g del a@0", "g del b@0"}},
	{"unlink", []string{"SET a 1"}, "UNLINK a", []string{"g del a@0"}},
	{"exists", nil, "EXISTS a", []string{"m keymiss a@0"}},
	{"type", nil, "TYPE a", []string{"m keymiss a@0"}},
	{"ttl", nil, "TTL a", []string{"m keymiss a@0"}},
	{"touch", nil, "TOUCH a", []string{"m keymiss a@0"}},
	{"object", nil, "OBJECT ENCODING a", nil},
	{"rename", []string{"SET a 1", "SET b 2"}, "RENAME a b", []string{"n new b@0", "g rename_from a@0", "g rename_to b@0"}},
	{"renamenx fails", []string{"SET a 1", "SET b 2"}, "RENAMENX a b", nil},
	{"rename same", []string{"SET a 1"}, "RENAME a a", nil},
	{"copy", []string{"SET a 1"}, "COPY a b DB 3", []string{"n new b@3", "g copy_to b@3"}},
	{"copy miss", nil, "COPY a b", []string{"m keymiss a@0"}},
	{"move", []string{"SET a 1"}, "MOVE a 2", []string{"n new a@2", "g move_from a@0", "g move_to a@2"}},
	{"expire", []string{"SET a 1"}, "EXPIRE a 100", []string{"g expire a@0"}},
	{"pexpire", []string{"SET a 1"}, "PEXPIRE a 100", []string{"g expire a@0"}},
	{"expireat", []string{"SET a 1"}, "EXPIREAT a 99999999999", []string{"g expire a@0"}},
	{"pexpireat", []string{"SET a 1"}, "PEXPIREAT a 99999999999999", []string{"g expire a@0"}},
	{"expire nx fails", []string{"SET a 1 EX 5"}, "EXPIRE a 100 NX", nil},
	{"expire past", []string{"SET a 1"}, "PEXPIREAT a 1", []string{"g del a@0"}},
	{"expire negative", []string{"SET a 1"}, "EXPIRE a -1", []string{"g del a@0"}},
	{"persist", []string{"SET a 1 EX 5"}, "PERSIST a", []string{"g persist a@0"}},
	{"persist none", []string{"SET a 1"}, "PERSIST a", nil},
	{"flushall", []string{"SET a 1"}, "FLUSHALL", nil},
	{"swapdb", []string{"SET a 1"}, "SWAPDB 0 1", nil},
	// Lists.
	{"lpush", nil, "LPUSH l a b", []string{"n new l@0", "l lpush l@0"}},
	{"rpush", []string{"RPUSH l a"}, "RPUSH l b", []string{"l rpush l@0"}},
	{"lpushx miss", nil, "LPUSHX l a", nil},
	{"rpushx", []string{"RPUSH l a"}, "RPUSHX l b", []string{"l rpush l@0"}},
	{"linsert", []string{"RPUSH l a"}, "LINSERT l BEFORE a b", []string{"l linsert l@0"}},
	{"linsert no pivot", []string{"RPUSH l a"}, "LINSERT l BEFORE x b", nil},
	{"lset", []string{"RPUSH l a"}, "LSET l 0 b", []string{"l lset l@0"}},
	{"lpop", []string{"RPUSH l a b"}, "LPOP l", []string{"l lpop l@0"}},
	{"rpop empties", []string{"RPUSH l a"}, "RPOP l", []string{"l rpop l@0", "g del l@0"}},
	{"lpop count", []string{"RPUSH l a b c"}, "LPOP l 5", []string{"l lpop l@0", "g del l@0"}},
	{"ltrim", []string{"RPUSH l a b c"}, "LTRIM l 0 0", []string{"l ltrim l@0"}},
	{"ltrim all", []string{"RPUSH l a b c"}, "LTRIM l 5 6", []string{"l ltrim l@0", "g del l@0"}},
	{"ltrim nothing", []string{"RPUSH l a b c"}, "LTRIM l 0 -1", []string{"l ltrim l@0"}},
	{"lrem", []string{"RPUSH l a b a"}, "LREM l 0 a", []string{"l lrem l@0"}},
	{"lrem empties", []string{"RPUSH l a"}, "LREM l 0 a", []string{"l lrem l@0", "g del l@0"}},
	{"lmove", []string{"RPUSH s a b"}, "LMOVE s d LEFT RIGHT", []string{"n new d@0", "l rpush d@0", "l lpop s@0"}},
	{"lmove empties", []string{"RPUSH s a", "RPUSH d x"}, "LMOVE s d RIGHT LEFT", []string{"l lpush d@0", "l rpop s@0", "g del s@0"}},
	{"lmove same", []string{"RPUSH s a b"}, "LMOVE s s LEFT RIGHT", []string{"l rpush s@0", "l lpop s@0"}},
	{"rpoplpush", []string{"RPUSH s a b"}, "RPOPLPUSH s d", []string{"n new d@0", "l lpush d@0", "l rpop s@0"}},
	{"lmpop", []string{"RPUSH b x y"}, "LMPOP 2 a b RIGHT COUNT 2", []string{"l rpop b@0", "g del b@0"}},
	{"blpop", []string{"RPUSH b x y"}, "BLPOP a b 0", []string{"l lpop b@0"}},
	{"brpop", []string{"RPUSH b x"}, "BRPOP b 0", []string{"l rpop b@0", "g del b@0"}},
	{"brpoplpush", []string{"RPUSH s a b"}, "BRPOPLPUSH s d 0", []string{"n new d@0", "l lpush d@0", "l rpop s@0"}},
	{"blmpop", []string{"RPUSH b x y"}, "BLMPOP 0 1 b LEFT COUNT 5", []string{"l lpop b@0", "g del b@0"}},
	{"blmove", []string{"RPUSH s a"}, "BLMOVE s d LEFT LEFT 0", []string{"n new d@0", "l lpush d@0", "l lpop s@0", "g del s@0"}},
	{"lrange", nil, "LRANGE l 0 -1", []string{"m keymiss l@0"}},
	// Hashes.
	{"hset", nil, "HSET h f v g w", []string{"n new h@0", "h hset h@0"}},
	{"hmset", []string{"HSET h f v"}, "HMSET h f x", []string{"h hset h@0"}},
	{"hsetnx", []string{"HSET h f v"}, "HSETNX h g v", []string{"h hset h@0"}},
	{"hsetnx exists", []string{"HSET h f v"}, "HSETNX h f v", nil},
	{"hincrby", nil, "HINCRBY h f 2", []string{"n new h@0", "h hincrby h@0"}},
	{"hincrbyfloat", []string{"HSET h f 1"}, "HINCRBYFLOAT h f 2.5", []string{"h hincrbyfloat h@0"}},
	{"hdel", []string{"HSET h f v g w"}, "HDEL h f x", []string{"h hdel h@0"}},
	{"hdel empties", []string{"HSET h f v"}, "HDEL h f", []string{"h hdel h@0", "g del h@0"}},
	{"hdel none", []string{"HSET h f v"}, "HDEL h x", nil},
	{"hget miss", nil, "HGET h f", []string{"m keymiss h@0"}},
	// Sets.
	{"sadd", nil, "SADD s a b", []string{"n new s@0", "s sadd s@0"}},
	{"sadd nothing new", []string{"SADD s a"}, "SADD s a", nil},
	{"srem", []string{"SADD s a b"}, "SREM s a", []string{"s srem s@0"}},
	{"srem empties", []string{"SADD s a"}, "SREM s a x", []string{"s srem s@0", "g del s@0"}},
	{"spop", []string{"SADD s a b"}, "SPOP s", []string{"s spop s@0"}},
	{"spop empties", []string{"SADD s a"}, "SPOP s", []string{"s spop s@0", "g del s@0"}},
	{"spop count all", []string{"SADD s a b"}, "SPOP s 5", []string{"s spop s@0", "g del s@0"}},
	{"spop count", []string{"SADD s a b c"}, "SPOP s 1", []string{"s spop s@0"}},
	{"smove", []string{"SADD s a b"}, "SMOVE s d a", []string{"s srem s@0", "n new d@0", "s sadd d@0"}},
	{"smove empties", []string{"SADD s a", "SADD d a"}, "SMOVE s d a", []string{"s srem s@0", "g del s@0"}},
	{"sinterstore", []string{"SADD a x y", "SADD b y"}, "SINTERSTORE d a b", []string{"n new d@0", "s sinterstore d@0"}},
	{"sinterstore empty", []string{"SADD d x"}, "SINTERSTORE d a b", []string{"m keymiss a@0", "m keymiss b@0", "g del d@0"}},
	{"sunionstore", []string{"SADD a x"}, "SUNIONSTORE d a b", []string{"m keymiss b@0", "n new d@0", "s sunionstore d@0"}},
	{"sdiffstore", []string{"SADD a x", "SADD d q"}, "SDIFFSTORE d a b", []string{"m keymiss b@0", "s sdiffstore d@0"}},
	{"sinter", nil, "SINTER a", []string{"m keymiss a@0"}},
	// Sorted sets.
	{"zadd", nil, "ZADD z 1 a", []string{"n new z@0", "z zadd z@0"}},
	{"zadd same", []string{"ZADD z 1 a"}, "ZADD z 1 a", nil},
	{"zadd incr", []string{"ZADD z 1 a"}, "ZADD z INCR 1 a", []string{"z zincr z@0"}},
	{"zincrby", nil, "ZINCRBY z 1 a", []string{"n new z@0", "z zincr z@0"}},
	{"zrem", []string{"ZADD z 1 a 2 b"}, "ZREM z a", []string{"z zrem z@0"}},
	{"zrem empties", []string{"ZADD z 1 a"}, "ZREM z a", []string{"z zrem z@0", "g del z@0"}},
	{"zremrangebyscore", []string{"ZADD z 1 a 2 b"}, "ZREMRANGEBYSCORE z 1 1", []string{"z zremrangebyscore z@0"}},
	{"zremrangebyrank", []string{"ZADD z 1 a 2 b"}, "ZREMRANGEBYRANK z 0 -1", []string{"z zremrangebyrank z@0", "g del z@0"}},
	{"zremrangebylex", []string{"ZADD z 0 a 0 b"}, "ZREMRANGEBYLEX z [a [a", []string{"z zremrangebylex z@0"}},
	{"zpopmin", []string{"ZADD z 1 a 2 b"}, "ZPOPMIN z", []string{"z zpopmin z@0"}},
	{"zpopmax all", []string{"ZADD z 1 a 2 b"}, "ZPOPMAX z 5", []string{"z zpopmax z@0", "g del z@0"}},
	{"bzpopmin", []string{"ZADD z 1 a"}, "BZPOPMIN z 0", []string{"z zpopmin z@0", "g del z@0"}},
	{"bzpopmax", []string{"ZADD z 1 a 2 b"}, "BZPOPMAX z 0", []string{"z zpopmax z@0"}},
	{"bzmpop", []string{"ZADD z 1 a 2 b"}, "BZMPOP 0 1 z MIN COUNT 5", []string{"z zpopmin z@0", "g del z@0"}},
	{"zmpop", []string{"ZADD z 1 a 2 b"}, "ZMPOP 1 z MAX", []string{"z zpopmax z@0"}},
	{"zunionstore", []string{"ZADD a 1 x"}, "ZUNIONSTORE d 2 a b", []string{"m keymiss b@0", "n new d@0", "z zunionstore d@0"}},
	{"zinterstore empty", []string{"ZADD a 1 x", "ZADD d 1 x"}, "ZINTERSTORE d 2 a b", []string{"m keymiss b@0", "g del d@0"}},
	{"zdiffstore", []string{"ZADD a 1 x"}, "ZDIFFSTORE d 1 a", []string{"n new d@0", "z zdiffstore d@0"}},
	{"zrangestore", []string{"ZADD a 1 x"}, "ZRANGESTORE d a 0 -1", []string{"n new d@0", "z zrangestore d@0"}},
	{"zscore miss", nil, "ZSCORE z a", []string{"m keymiss z@0"}},
}

func TestNotifyEvents(t *testing.T) {
	for _, c := range notifyCases {
		t.Run(c.name, func(t *testing.T) {
			h, l := notifyHarness(t)
			for _, s := range c.setup {
				h.run(s)
			}
			l.events = nil
			args := strings.Fields(c.cmd)
			for i, a := range args {
				if a == `""` {
					args[i] = ""
				}
			}
			reply := h.do(args...)
			if !slices.Equal(l.events, c.want) {
				t.Fatalf("%s (reply %s): events\n got %q\nwant %q", c.cmd, reply, l.events, c.want)
			}
		})
	}
}

func TestNotifyDatabase(t *testing.T) {
	h, l := notifyHarness(t)
	h.c.DB = 5
	h.run("SET k v")
	want := []string{"n new k@5", "$ set k@5"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("got %q, want %q", l.events, want)
	}
	// After SWAPDB the key's database is known by its new index.
	h.run("SWAPDB 5 6")
	l.events = nil
	h.c.DB = 6
	h.run("RENAME k j")
	want = []string{"n new j@6", "g rename_from k@6", "g rename_to j@6"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("got %q, want %q", l.events, want)
	}
}

func TestNotifyClassesFilter(t *testing.T) {
	h, l := notifyHarness(t)
	h.ks.SetNotify(NotifyKeyevent | NotifyList)
	h.run("SET k v")
	h.run("LPUSH l a")
	h.run("DEL l")
	want := []string{"l lpush l@0"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("got %q, want %q", l.events, want)
	}
	// Classes without K or E report nothing.
	l.events = nil
	h.ks.SetNotify(NotifyAll)
	if h.ks.NotifyClasses() != 0 {
		t.Fatalf("classes %s without K or E", h.ks.NotifyClasses())
	}
	h.run("LPUSH l a")
	if len(l.events) != 0 {
		t.Fatalf("events %q without K or E", l.events)
	}
}

func TestNotifyExpiry(t *testing.T) {
	h, l := notifyHarness(t)
	h.run("SET a 1 PX 100")
	h.run("SET b 1 PX 100")
	h.clock += 101
	l.events = nil
	// Lazy: the access expires the key, then misses.
	h.run("GET a")
	want := []string{"x expired a@0", "m keymiss a@0"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("lazy: got %q, want %q", l.events, want)
	}
	// Active: the cycle expires the key.
	l.events = nil
	h.ks.ActiveExpire(1 << 30)
	want = []string{"x expired b@0"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("active: got %q, want %q", l.events, want)
	}
}

func TestNotifyExpireIfDue(t *testing.T) {
	h, l := notifyHarness(t)
	h.run("SET a 1 PX 100")
	h.run("SET b 1")
	h.ks.ExpireIfDue(0, []byte("a"))
	h.ks.ExpireIfDue(0, []byte("b"))
	h.ks.ExpireIfDue(99, []byte("b"))
	l.events = nil
	h.ks.ExpireIfDue(0, []byte("a")) // not due yet
	h.clock += 101
	h.ks.ExpireIfDue(0, []byte("a"))
	want := []string{"x expired a@0"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("got %q, want %q", l.events, want)
	}
	if got := h.run("EXISTS a b"); got != "(integer) 1" {
		t.Fatalf("EXISTS a b: %s", got)
	}
}

func TestNotifyEvicted(t *testing.T) {
	h, l := notifyHarness(t)
	h.c.DB = 2
	h.run("SET a 1")
	h.run("SET b 1")
	l.events = nil
	h.evictTo(AllKeysRandom, 5, 0) // fails once no key is left: the tables stay
	if got := h.run("DBSIZE"); got != "(integer) 0" {
		t.Fatalf("DBSIZE after eviction: %s", got)
	}
	sort.Strings(l.events)
	want := []string{"e evicted a@2", "e evicted b@2"}
	if !slices.Equal(l.events, want) {
		t.Fatalf("got %q, want %q", l.events, want)
	}
}

func TestNotifyQuietWhileLoadingAndImporting(t *testing.T) {
	h, l := notifyHarness(t)
	h.ks.Loading = true
	h.run("SET a 1")
	h.ks.Loading = false
	if err := h.ks.ImportKey(MovedKey{DB: 0, Key: []byte("b"), Kind: KindString, Value: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if len(l.events) != 0 {
		t.Fatalf("events %q", l.events)
	}
	h.run("SET c 1")
	if len(l.events) != 2 {
		t.Fatalf("after the import: events %q", l.events)
	}
}

// Every write command has a case above, or says why it has none: a new
// command must decide its events.
func TestNotifyCasesCoverEveryWrite(t *testing.T) {
	// Redis 7.0 publishes nothing for these (PFDEBUG TODENSE signals the
	// key modified, no more).
	silent := map[string]bool{"flushdb": true, "flushall": true, "swapdb": true, "pfdebug": true}
	covered := map[string]bool{}
	for _, c := range notifyCases {
		covered[strings.ToLower(strings.Fields(c.cmd)[0])] = true
	}
	for _, s := range Specs() {
		if s.Writes() && !covered[s.Name] && !silent[s.Name] {
			t.Errorf("write command %s: no notification case", s.Name)
		}
	}
}
