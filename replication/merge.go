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
// FLUSHDB and SWAPDB. Each shard logs those it ran at the place it ran
// them in the txn's order (SWAPDB always, a flush only when it had keys to
// drop): they are barriers. The parts are cut at their barriers and merged
// segment by segment: every part's commands before the first barrier, the
// barrier once, and so on, which is the order the master ran them in.
// A part that logged fewer barriers (a shard with no keys at a flush) is
// aligned at the end: its commands go after the barriers it did not log
// (see DESIGN.md for why that leaves the same data). When a part's
// barriers are not the last ones of the longest list, the parts are
// concatenated in shard order, each SWAPDB kept once.

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
		skel   *Unit // the part with the most barriers: its barriers are sent
		skelB  []string
		skelAt []int
		bars   = make([][]string, len(parts))
		cut    = make([][][]int, len(parts))
	)
	for i, u := range parts {
		if len(u.Cmds) == 0 {
			continue
		}
		b, at, segs := segments(u)
		bars[i], cut[i] = b, segs
		if skel == nil || len(b) > len(skelB) {
			skel, skelB, skelAt = u, b, at
		}
	}
	if skel == nil {
		return nil, nil
	}
	for i := range parts {
		if cut[i] != nil && !slices.Equal(bars[i], skelB[len(skelB)-len(bars[i]):]) {
			return concatParts(parts)
		}
	}
	for seg := 0; seg <= len(skelB); seg++ {
		for i, u := range parts {
			if j := seg - (len(skelB) - len(bars[i])); cut[i] != nil && j >= 0 {
				for _, c := range cut[i][j] {
					dbs, cmds = append(dbs, u.DBs[c]), append(cmds, u.Cmds[c])
				}
			}
		}
		if seg < len(skelB) {
			c := skelAt[seg]
			dbs, cmds = append(dbs, skel.DBs[c]), append(cmds, skel.Cmds[c])
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
