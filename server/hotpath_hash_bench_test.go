package server

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkHotPathHash is BenchmarkHotPath's rows for hashes and sets,
// shaped like bench/types_compare.sh's: HSET and HGET of random fields of
// ONE hash of hotPathElems fields, SADD and SISMEMBER of random members of
// ONE set of hotPathElems members, the fields and members named as
// redis-benchmark's -r names them (element:%012d) and all present, so that
// HSET overwrites a 3-byte value and SADD adds nothing, as in the bench.
// Each batch is hotPathBatch commands of different elements. The rows
// "HSET-new+HDEL" and "SADD-new+SREM" add an element that is not there
// and remove it again, for the allocations a new field or member costs.
// Each row runs without and with reading ahead of the pipeline
// (prefetchWindow).
//
//	go test -run '^$' -bench HotPathHash -benchmem ./server/
func BenchmarkHotPathHash(b *testing.B) {
	const hotPathElems = 100_000
	elem := func(i int) string { return fmt.Sprintf("element:%012d", i) }
	var preload [][]string
	for i := range hotPathElems {
		preload = append(preload,
			[]string{"HSET", "myhash", elem(i), "xxx"},
			[]string{"SADD", "myset", elem(i)})
	}
	rows := []struct {
		name string
		cmd  func(e string) [][]string
	}{
		{"HSET", func(e string) [][]string { return [][]string{{"HSET", "myhash", e, "xxx"}} }},
		{"HGET", func(e string) [][]string { return [][]string{{"HGET", "myhash", e}} }},
		{"SADD", func(e string) [][]string { return [][]string{{"SADD", "myset", e}} }},
		{"SISMEMBER", func(e string) [][]string { return [][]string{{"SISMEMBER", "myset", e}} }},
		{"HSET-new+HDEL", func(e string) [][]string {
			return [][]string{{"HSET", "myhash", "new:" + e, "xxx"}, {"HDEL", "myhash", "new:" + e}}
		}},
		{"SADD-new+SREM", func(e string) [][]string {
			return [][]string{{"SADD", "myset", "new:" + e}, {"SREM", "myset", "new:" + e}}
		}},
	}
	for _, row := range rows {
		for _, ahead := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s-100k/readahead=%v", row.name, ahead), func(b *testing.B) {
				old := readAhead
				readAhead = ahead // before the server's loop starts
				b.Cleanup(func() { readAhead = old })
				rng := rand.New(rand.NewPCG(1, 2))
				var cmds [][]string
				for len(cmds) < 1024*hotPathBatch {
					cmds = append(cmds, row.cmd(elem(rng.IntN(hotPathElems)))...)
				}
				benchHotPath(b, "no", cmds, 0, preload...)
			})
		}
	}
}
