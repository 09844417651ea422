package replication

import (
	"slices"
	"strconv"
	"strings"
)

// How a txn's parts become one list of commands (the body of its
// MULTI/EXEC). The parts' keys are disjoint (a key lives on one shard), so
// any order that keeps each part's order leaves the replica with the same
// data, but for the commands that act on every shard's keys: FLUSHALL,
// FLUSHDB and SWAPDB. Each shard logs those it ran (SWAPDB always, a flush
// when it had keys to drop), at the place it ran them in the txn's order:
// they are barriers. When every non-empty part logged the same barriers,
// the parts are cut at them and merged segment by segment: first every
// part's commands before the first barrier, then the barrier once, and so
// on, which is the order the master ran them in. When they differ (an EXEC
// that flushed while some shard had no keys of it), the parts are
// concatenated in shard order, each SWAPDB kept once: DESIGN.md says where
// that may differ from the master.

// barrierKey names a command that acts on every shard's keys ("" for
// another): FLUSHALL, FLUSHDB with its database, SWAPDB with its two.
func barrierKey(db int, cmd [][]byte) string {
	if len(cmd) == 0 {
		return ""
	}
	switch name := strings.ToUpper(string(cmd[0])); {
	case name == "FLUSHALL":
		return name
	case name == "FLUSHDB":
		return name + " " + strconv.Itoa(db)
	case name == "SWAPDB" && len(cmd) == 3:
		return name + " " + string(cmd[1]) + " " + string(cmd[2])
	}
	return ""
}

// segments cuts u's commands at its barriers: segs[i] are the indexes of
// the commands before barrier i (the last one after every barrier).
func segments(u *Unit) (barriers []string, at []int, segs [][]int) {
	segs = [][]int{nil}
	for i, cmd := range u.Cmds {
		if k := barrierKey(u.DBs[i], cmd); k != "" {
			barriers = append(barriers, k)
			at = append(at, i)
			segs = append(segs, nil)
			continue
		}
		segs[len(segs)-1] = append(segs[len(segs)-1], i)
	}
	return barriers, at, segs
}

// mergeParts returns the commands of parts (in ascending shard order) as
// one list.
func mergeParts(parts []*Unit) (dbs []int, cmds [][][]byte) {
	var (
		barriers []string
		first    *Unit // the first non-empty part: its barriers are kept
		firstAt  []int
		cut      = make([][][]int, len(parts))
		aligned  = true
	)
	for i, u := range parts {
		if len(u.Cmds) == 0 {
			continue
		}
		b, at, segs := segments(u)
		cut[i] = segs
		if first == nil {
			first, firstAt, barriers = u, at, b
		} else if !slices.Equal(b, barriers) {
			aligned = false
		}
	}
	if first == nil {
		return nil, nil
	}
	if !aligned {
		return concatParts(parts)
	}
	for seg := 0; seg <= len(barriers); seg++ {
		for i, u := range parts {
			if cut[i] == nil {
				continue
			}
			for _, j := range cut[i][seg] {
				dbs, cmds = append(dbs, u.DBs[j]), append(cmds, u.Cmds[j])
			}
		}
		if seg < len(barriers) {
			j := firstAt[seg]
			dbs, cmds = append(dbs, first.DBs[j]), append(cmds, first.Cmds[j])
		}
	}
	return dbs, cmds
}

// concatParts is mergeParts for parts whose barriers differ: one part
// after the other, SWAPDB from the first part that logged one only (every
// shard logs each SWAPDB).
func concatParts(parts []*Unit) (dbs []int, cmds [][][]byte) {
	swapFrom := -1
	for _, u := range parts {
		for i, cmd := range u.Cmds {
			if !strings.HasPrefix(barrierKey(u.DBs[i], cmd), "SWAPDB") {
				dbs, cmds = append(dbs, u.DBs[i]), append(cmds, cmd)
				continue
			}
			if swapFrom == -1 {
				swapFrom = u.Shard
			}
			if swapFrom == u.Shard {
				dbs, cmds = append(dbs, u.DBs[i]), append(cmds, cmd)
			}
		}
	}
	return dbs, cmds
}
