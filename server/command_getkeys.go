package server

import (
	"slices"
	"strconv"
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// commandGetKeys is COMMAND GETKEYS and, withFlags, GETKEYSANDFLAGS: the
// keys of the command cmd, found as moond routes it, and each key's
// access flags, from Redis's key specs of the command. The refusals come
// in Redis's order: an unknown command, one without keys, a wrong number
// of arguments, arguments that name no keys (a bad key count).
func commandGetKeys(c *conn, cmd [][]byte, withFlags bool) {
	spec := keyspace.Lookup(cmd[0])
	if spec == nil {
		spec = findServerSpec(string(cmd[0])) // MIGRATE, SSUBSCRIBE, ...
	}
	if spec == nil {
		c.errorReply("ERR Invalid command specified")
		return
	}
	own := spec
	if spec.Subcommands != nil && len(cmd) >= 2 {
		if own = spec.Subcommand(cmd[1]); own == nil {
			c.errorReply("ERR Invalid command specified")
			return
		}
	}
	if !specHasKeys(own.Name) {
		c.errorReply("ERR The command has no key arguments")
		return
	}
	if !arityOK(own.Arity, len(cmd)) {
		c.errorReply("ERR Invalid number of arguments specified for command")
		return
	}
	var pos []int
	for _, p := range keyPositions(spec, cmd, nil) {
		if !slices.Contains(keyFlags(spec, cmd, p), "not_key") {
			pos = append(pos, p)
		}
	}
	if len(pos) == 0 || !keyCountsValid(own.Name, cmd) {
		c.errorReply("ERR Invalid arguments specified for command")
		return
	}
	keys := make([][]byte, len(pos))
	flags := make([][]string, len(pos))
	for i, p := range pos {
		keys[i] = append([]byte(nil), cmd[p]...)
		if withFlags {
			flags[i] = keyFlags(spec, cmd, p)
		}
	}
	c.replyLocal(func(w *resp.Writer) {
		w.ArrayHeader(len(keys))
		for i, k := range keys {
			if !withFlags {
				w.Bulk(k)
				continue
			}
			w.ArrayHeader(2)
			w.Bulk(k)
			w.SetHeader(len(flags[i]))
			for _, f := range flags[i] {
				w.SimpleString(f)
			}
		}
	})
}

// keyFlags are the access flags of the key at args[pos]: those of the
// first of the command's key specs that finds it, less "incomplete",
// or, for the two commands whose key spec says "variable_flags", what
// their arguments make of it, as Redis's setGetKeys and bitfieldGetKeys.
func keyFlags(spec *keyspace.CommandSpec, args [][]byte, pos int) []string {
	name := spec.Name
	if spec.Subcommands != nil && len(args) >= 2 {
		if sub := spec.Subcommand(args[1]); sub != nil {
			name = sub.Name
		}
	}
	switch name {
	case "set":
		if hasArg(args[3:], "get") {
			return []string{"RW", "access", "update"}
		}
		return []string{"OW", "update"}
	case "bitfield":
		if bitfieldWrites(args) {
			return []string{"RW", "access", "update"}
		}
		return []string{"RO", "access"}
	}
	for _, ks := range commandKeySpecs[name].elems {
		if keySpecFinds(ks, args, pos) {
			return keySpecFlags(ks)
		}
	}
	return nil
}

// specHasKeys reports whether the command named name has keys: a key
// spec that does not say "not_key" (SPUBLISH's channel is no key).
func specHasKeys(name string) bool {
	for _, ks := range commandKeySpecs[name].elems {
		if !slices.Contains(keySpecFlags(ks), "not_key") {
			return true
		}
	}
	return false
}

// keyCountsValid reports whether each key count a key spec of the
// command named name reads from args is a positive number of keys that
// args hold (ZUNIONSTORE dst 0 k, LMPOP 5 k are not).
func keyCountsValid(name string, args [][]byte) bool {
	for _, ks := range commandKeySpecs[name].elems {
		find, _ := ks.field("find_keys")
		if kind, _ := find.field("type"); kind.str != "keynum" {
			continue
		}
		first, ok := keySpecBegin(ks, args)
		fs, _ := find.field("spec")
		idx := first + specInt(fs, "keynumidx")
		if !ok || idx >= len(args) {
			return false
		}
		n, err := strconv.Atoi(string(args[idx]))
		last := first + specInt(fs, "firstkey") + (n-1)*specInt(fs, "keystep")
		if err != nil || n <= 0 || last >= len(args) {
			return false
		}
	}
	return true
}

// bitfieldWrites reports whether BITFIELD's operations include a SET or
// an INCRBY with its arguments, read as Redis's bitfieldGetKeys reads
// them (GET type offset and OVERFLOW mode skipped whole).
func bitfieldWrites(args [][]byte) bool {
	for i := 2; i < len(args); i++ {
		left := len(args) - i - 1
		switch op := strings.ToLower(string(args[i])); {
		case op == "get" && left >= 2:
			i += 2
		case (op == "set" || op == "incrby") && left >= 2:
			return true
		case op == "overflow" && left >= 1:
			i++
		}
	}
	return false
}

// hasArg reports whether args hold word, in any case.
func hasArg(args [][]byte, word string) bool {
	for _, a := range args {
		if strings.EqualFold(string(a), word) {
			return true
		}
	}
	return false
}

// keySpecFlags are a key spec's flags less "incomplete".
func keySpecFlags(ks replyValue) []string {
	set, _ := ks.field("flags")
	var out []string
	for _, f := range set.elems {
		if f.str != "incomplete" {
			out = append(out, f.str)
		}
	}
	return out
}

// keySpecFinds reports whether the key spec ks, applied to args, finds a
// key at pos: its begin_search (an index, or the argument after a keyword)
// gives the first key, its find_keys (a range, or a key count) the rest.
func keySpecFinds(ks replyValue, args [][]byte, pos int) bool {
	first, ok := keySpecBegin(ks, args)
	if !ok {
		return false
	}
	find, _ := ks.field("find_keys")
	kind, _ := find.field("type")
	fs, _ := find.field("spec")
	last, step := first, 1
	switch kind.str {
	case "range":
		lastkey, keystep, limit := specInt(fs, "lastkey"), specInt(fs, "keystep"), specInt(fs, "limit")
		step = keystep
		switch {
		case lastkey >= 0:
			last = first + lastkey
		case limit <= 1:
			last = len(args) + lastkey
		default:
			last = first + (len(args)-first)/limit + lastkey
		}
	case "keynum":
		idx := first + specInt(fs, "keynumidx")
		if idx >= len(args) {
			return false
		}
		n, err := strconv.Atoi(string(args[idx]))
		if err != nil || n <= 0 {
			return false
		}
		step = specInt(fs, "keystep")
		first += specInt(fs, "firstkey")
		last = first + (n-1)*step
	default:
		return false
	}
	return step > 0 && pos >= first && pos <= last && (pos-first)%step == 0
}

// keySpecBegin is the index of the first key a key spec's begin_search
// finds in args.
func keySpecBegin(ks replyValue, args [][]byte) (int, bool) {
	begin, _ := ks.field("begin_search")
	kind, _ := begin.field("type")
	bs, _ := begin.field("spec")
	switch kind.str {
	case "index":
		return specInt(bs, "index"), true
	case "keyword":
		word, _ := bs.field("keyword")
		from, end, dir := specInt(bs, "startfrom"), len(args), 1
		if from < 0 {
			from, end, dir = len(args)+from, 0, -1
		}
		for i := from; i != end && i > 0 && i < len(args); i += dir {
			if strings.EqualFold(string(args[i]), word.str) {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// specInt is the integer field key of a key spec's part.
func specInt(v replyValue, key string) int {
	f, _ := v.field(key)
	return int(f.num)
}
