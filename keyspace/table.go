package keyspace

import (
	"slices"
	"strings"
)

// CommandSpec describes a command as Redis 7.0's COMMAND reports it, plus
// the handler that runs it.
type CommandSpec struct {
	// Name is the lower-case name; a subcommand's is "container|sub", as
	// in COMMAND's output and in Redis's error messages.
	Name string
	// Arity is the number of arguments, the name included; negative means
	// at least -Arity.
	Arity int
	// Flags are the command flags in the order COMMAND lists them.
	Flags []string
	// FirstKey, LastKey and Step locate the keys: arguments FirstKey,
	// FirstKey+Step, ... up to LastKey (negative counts from the end: -1 is
	// the last argument). FirstKey 0 means no keys.
	FirstKey, LastKey, Step int
	// ACLCategories are the categories, '@' included, in COMMAND's order.
	ACLCategories []string
	// Subcommands are a container command's subcommands (OBJECT's).
	Subcommands []*CommandSpec
	// MovableKeys, for a command whose keys depend on its arguments
	// (Redis's "movablekeys": SINTERCARD numkeys key..., ZUNIONSTORE,
	// LMPOP, ...), appends to dst the indexes in args of its keys, and
	// the server routes by them instead of FirstKey, LastKey and Step. It
	// must accept any args (a wrong count is the command's own error to
	// give) and never index past them.
	MovableKeys func(args [][]byte, dst []int) []int
	// Block is set for a blocking command (BLPOP, BZPOPMIN, ...): how the
	// server waits when the command finds no data (Client.WouldBlock).
	Block *BlockSpec

	run func(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter)
	// elem: args[2] is an element (a field, a member) of the hash or set
	// at args[1], which the server may read ahead (PrefetchesElement).
	elem     bool
	write    bool // Flags holds "write" (set at init)
	readonly bool // Flags holds "readonly" (set at init)
	denyoom  bool // Flags holds "denyoom" (set at init)
}

// Writes reports whether the command may change data (the "write" flag).
// A nil spec (an unknown command) writes nothing.
func (s *CommandSpec) Writes() bool { return s != nil && s.write }

// PrefetchesElement reports whether args[2] of the command is an element
// of the hash or set at args[1] (HGET, HSET, SADD, SISMEMBER, ...), for
// Keyspace.PrefetchElements.
func (s *CommandSpec) PrefetchesElement() bool { return s != nil && s.elem }

// ReadOnly reports whether the command has the "readonly" flag: it reads
// keys and writes none (the commands whose keys CLIENT TRACKING
// remembers).
func (s *CommandSpec) ReadOnly() bool { return s != nil && s.readonly }

// DenyOOM reports whether the command has the "denyoom" flag: it may add
// data, and is refused while memory is over maxmemory.
func (s *CommandSpec) DenyOOM() bool { return s != nil && s.denyoom }

// KeyPositions returns the indexes in args of the keys the command names
// (args[0] being the command), from FirstKey, LastKey and Step.
func (s *CommandSpec) KeyPositions(argc int) []int {
	if s.FirstKey == 0 {
		return nil
	}
	last := s.LastKey
	if last < 0 {
		last += argc
	}
	var pos []int
	for i := s.FirstKey; i <= last && i < argc; i += s.Step {
		pos = append(pos, i)
	}
	return pos
}

// arityOK reports whether argc arguments fit the command's arity.
func (s *CommandSpec) arityOK(argc int) bool {
	if s.Arity >= 0 {
		return argc == s.Arity
	}
	return argc >= -s.Arity
}

// Common flag and category lists, shared by many entries.
var (
	fRO        = []string{"readonly"}
	fROFast    = []string{"readonly", "fast"}
	fW         = []string{"write"}
	fWFast     = []string{"write", "fast"}
	fWDeny     = []string{"write", "denyoom"}
	fWDenyFast = []string{"write", "denyoom", "fast"}

	cStrReadFast  = []string{"@read", "@string", "@fast"}
	cStrReadSlow  = []string{"@read", "@string", "@slow"}
	cStrWriteFast = []string{"@write", "@string", "@fast"}
	cStrWriteSlow = []string{"@write", "@string", "@slow"}
	cKeyReadFast  = []string{"@keyspace", "@read", "@fast"}
	cKeyReadSlow  = []string{"@keyspace", "@read", "@slow"}
	cKeyWriteFast = []string{"@keyspace", "@write", "@fast"}
	cKeyWriteSlow = []string{"@keyspace", "@write", "@slow"}
)

// specs is the command table, with Redis 7.0's arity, flags, key positions
// and ACL categories for every command this package implements: one list
// per family, each in the file of its commands.
var specs = slices.Concat(stringSpecs, keySpecs, dbSpecs, hashSpecs, setSpecs, bitmapSpecs, hllSpecs, listSpecs, zsetSpecs, blockSpecs, dumpSpecs)

// stringSpecs are the string commands.
var stringSpecs = []*CommandSpec{
	{Name: "get", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrReadFast, run: cmdGet},
	{Name: "set", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteSlow, run: cmdSet},
	{Name: "setnx", Arity: 3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdSetNX},
	{Name: "setex", Arity: 4, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteSlow, run: cmdSetEX},
	{Name: "psetex", Arity: 4, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteSlow, run: cmdPSetEX},
	{Name: "getset", Arity: 3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdGetSet},
	{Name: "getdel", Arity: 2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdGetDel},
	{Name: "getex", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdGetEx},
	{Name: "mget", Arity: -2, Flags: fROFast, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cStrReadFast, run: cmdMGet},
	{Name: "mset", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: -1, Step: 2, ACLCategories: cStrWriteSlow, run: cmdMSet},
	{Name: "msetnx", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: -1, Step: 2, ACLCategories: cStrWriteSlow, run: cmdMSetNX},
	{Name: "append", Arity: 3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdAppend},
	{Name: "strlen", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrReadFast, run: cmdStrlen},
	{Name: "getrange", Arity: 4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrReadSlow, run: cmdGetRange},
	{Name: "substr", Arity: 4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrReadSlow, run: cmdGetRange},
	{Name: "setrange", Arity: 4, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteSlow, run: cmdSetRange},
	{Name: "incr", Arity: 2, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdIncr},
	{Name: "decr", Arity: 2, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdDecr},
	{Name: "incrby", Arity: 3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdIncrBy},
	{Name: "decrby", Arity: 3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdDecrBy},
	{Name: "incrbyfloat", Arity: 3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cStrWriteFast, run: cmdIncrByFloat},
	{Name: "lcs", Arity: -3, Flags: fRO, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cStrReadSlow, run: cmdLCS},
}

// keySpecs are the commands on keys of any type.
var keySpecs = []*CommandSpec{
	{Name: "del", Arity: -2, Flags: fW, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cKeyWriteSlow, run: cmdDel},
	{Name: "unlink", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdDel},
	{Name: "exists", Arity: -2, Flags: fROFast, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cKeyReadFast, run: cmdExists},
	{Name: "touch", Arity: -2, Flags: fROFast, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cKeyReadFast, run: cmdTouch},
	{Name: "type", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyReadFast, run: cmdType},
	{Name: "rename", Arity: 3, Flags: fW, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cKeyWriteSlow, run: cmdRename},
	{Name: "renamenx", Arity: 3, Flags: fWFast, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cKeyWriteFast, run: cmdRenameNX},
	{Name: "copy", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cKeyWriteSlow, run: cmdCopy},
	{Name: "move", Arity: 3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdMove},
	{Name: "keys", Arity: 2, Flags: fRO, ACLCategories: []string{"@keyspace", "@read", "@slow", "@dangerous"}, run: cmdKeys},
	{Name: "scan", Arity: -2, Flags: fRO, ACLCategories: cKeyReadSlow, run: cmdScan},
	{Name: "randomkey", Arity: 1, Flags: fRO, ACLCategories: cKeyReadSlow, run: cmdRandomKey},
	{Name: "dbsize", Arity: 1, Flags: fROFast, ACLCategories: cKeyReadFast, run: cmdDBSize},
	{Name: "expire", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdExpire},
	{Name: "pexpire", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdPExpire},
	{Name: "expireat", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdExpireAt},
	{Name: "pexpireat", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdPExpireAt},
	{Name: "ttl", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyReadFast, run: cmdTTL},
	{Name: "pttl", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyReadFast, run: cmdPTTL},
	{Name: "expiretime", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyReadFast, run: cmdExpireTime},
	{Name: "pexpiretime", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyReadFast, run: cmdPExpireTime},
	{Name: "persist", Arity: 2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyWriteFast, run: cmdPersist},
	{Name: "object", Arity: -2, Flags: []string{}, ACLCategories: []string{"@slow"}, Subcommands: []*CommandSpec{
		{Name: "object|encoding", Arity: 3, Flags: fRO, FirstKey: 2, LastKey: 2, Step: 1, ACLCategories: cKeyReadSlow, run: cmdObjectEncoding},
		{Name: "object|freq", Arity: 3, Flags: fRO, FirstKey: 2, LastKey: 2, Step: 1, ACLCategories: cKeyReadSlow, run: cmdObjectFreq},
		{Name: "object|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@keyspace", "@slow"}, run: cmdObjectHelp},
		{Name: "object|idletime", Arity: 3, Flags: fRO, FirstKey: 2, LastKey: 2, Step: 1, ACLCategories: cKeyReadSlow, run: cmdObjectIdletime},
		{Name: "object|refcount", Arity: 3, Flags: fRO, FirstKey: 2, LastKey: 2, Step: 1, ACLCategories: cKeyReadSlow, run: cmdObjectRefcount},
	}},
	{Name: "memory", Arity: -2, Flags: []string{}, ACLCategories: []string{"@slow"}, Subcommands: []*CommandSpec{
		{Name: "memory|help", Arity: 2, Flags: []string{"loading", "stale"}, ACLCategories: []string{"@slow"}, run: cmdMemoryHelp},
		{Name: "memory|purge", Arity: 2, Flags: []string{}, ACLCategories: []string{"@slow"}, run: cmdMemoryPurge},
		{Name: "memory|usage", Arity: -3, Flags: fRO, FirstKey: 2, LastKey: 2, Step: 1, ACLCategories: []string{"@read", "@slow"}, run: cmdMemoryUsage},
		// The server answers these three (server/cmd_memory.go): here for COMMAND.
		{Name: "memory|doctor", Arity: 2, Flags: []string{}, ACLCategories: []string{"@slow"}, run: cmdServerOnly},
		{Name: "memory|malloc-stats", Arity: 2, Flags: []string{}, ACLCategories: []string{"@slow"}, run: cmdServerOnly},
		{Name: "memory|stats", Arity: 2, Flags: []string{}, ACLCategories: []string{"@slow"}, run: cmdServerOnly},
	}},
}

// dbSpecs are the commands on whole databases.
var dbSpecs = []*CommandSpec{
	{Name: "flushdb", Arity: -1, Flags: fW, ACLCategories: []string{"@keyspace", "@write", "@slow", "@dangerous"}, run: cmdFlushDB},
	{Name: "flushall", Arity: -1, Flags: fW, ACLCategories: []string{"@keyspace", "@write", "@slow", "@dangerous"}, run: cmdFlushAll},
	{Name: "swapdb", Arity: 3, Flags: fWFast, ACLCategories: []string{"@keyspace", "@write", "@fast", "@dangerous"}, run: cmdSwapDB},
}

// byName indexes specs by lower-case name.
var byName map[string]*CommandSpec

// maxNameLen bounds the names Lookup folds on the stack.
const maxNameLen = 32

func init() {
	byName = make(map[string]*CommandSpec, len(specs))
	for _, s := range specs {
		if len(s.Name) > maxNameLen || s.Name != strings.ToLower(s.Name) {
			panic("keyspace: bad command name " + s.Name)
		}
		byName[s.Name] = s
		for _, sub := range append([]*CommandSpec{s}, s.Subcommands...) {
			sub.write = slices.Contains(sub.Flags, "write")
			sub.readonly = slices.Contains(sub.Flags, "readonly")
			sub.denyoom = slices.Contains(sub.Flags, "denyoom")
		}
	}
}

// Lookup returns the spec of the command named name, in any case, or nil
// if this package does not implement it. It does not allocate.
func Lookup(name []byte) *CommandSpec {
	if len(name) > maxNameLen {
		return nil
	}
	var buf [maxNameLen]byte
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return byName[string(buf[:len(name)])]
}

// Specs returns every command this package implements, in table order.
// The specs are shared: callers must not modify them.
func Specs() []*CommandSpec { return specs }

// Subcommand returns the container's subcommand named name, in any case,
// or nil.
func (s *CommandSpec) Subcommand(name []byte) *CommandSpec { return s.subcommand(name) }

// subcommand returns the container's subcommand named name, or nil.
func (s *CommandSpec) subcommand(name []byte) *CommandSpec {
	prefix := len(s.Name) + 1
	for _, sub := range s.Subcommands {
		if equalFold(name, sub.Name[prefix:]) {
			return sub
		}
	}
	return nil
}
