package tests

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Pipelines that mix single-key commands, multi-key commands over two
// shards and MULTI/EXEC blocks: a client sees its own writes in the order
// it sent them, and the replies inside EXEC in the order it queued.

// TestMultiPipelineSeesOwnWrites sends the brief's pipeline in one write:
// SET k1 v; MSET k1 x k2 y (two shards); GET k1 ...
func TestMultiPipelineSeesOwnWrites(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		k1, k2 := keyOnShard("pk1-", 0), keyOnShard("pk2-", 1)
		// Several connections, so that some land on each shard.
		for conn := range 4 {
			c := s.client(2)
			cmds, err := c.Pipelined(ctx(t), func(p redis.Pipeliner) error {
				p.Set(ctx(t), k1, "v", 0)
				p.Get(ctx(t), k1)
				p.MSet(ctx(t), k1, "x", k2, "y")
				p.Get(ctx(t), k1)
				p.Get(ctx(t), k2)
				p.Do(ctx(t), "multi")
				p.Do(ctx(t), "set", k2, "z")
				p.Do(ctx(t), "mget", k1, k2)
				p.Do(ctx(t), "del", k1)
				p.Do(ctx(t), "exec")
				p.MGet(ctx(t), k1, k2)
				p.Del(ctx(t), k1, k2)
				p.MGet(ctx(t), k1, k2)
				return nil
			})
			if err != nil {
				t.Fatalf("connection %d: %v", conn, err)
			}
			got := make([]string, len(cmds))
			for i, cmd := range cmds {
				got[i] = showCmd(cmd)
			}
			want := []string{"OK", "v", "OK", "x", "y", "OK", "QUEUED", "QUEUED", "QUEUED",
				"[OK [x z] 1]", "[(nil) z]", "1", "[(nil) (nil)]"}
			if strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Fatalf("connection %d:\n got %q\nwant %q", conn, got, want)
			}
		}
	})
}

// TestMultiExecReplyOrder queues INCRs alternating between keys of two
// shards: EXEC answers in the queue order.
func TestMultiExecReplyOrder(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		a, b := keyOnShard("ord-a", 0), keyOnShard("ord-b", 1)
		x := newTxClient(t, s, 2)
		x.want("OK", "multi")
		var want []string
		for i := 1; i <= 50; i++ {
			x.want("QUEUED", "incrby", a, 1)
			x.want("QUEUED", "incrby", b, 1000)
			x.want("QUEUED", "mget", b, a)
			want = append(want, strconv.Itoa(i), strconv.Itoa(1000*i), fmt.Sprintf("[%d %d]", 1000*i, i))
		}
		x.want("["+strings.Join(want, " ")+"]", "exec")
	})
}

// TestMultiPipelineModel sends random pipelines of SET, INCRBY, GET, MSET,
// MGET, DEL, EXISTS and MULTI blocks (ending in EXEC, DISCARD or
// EXECABORT) over keys of both shards, from
// several connections at once (each on its own keys), and checks every
// reply against a model of what one client alone sees.
func TestMultiPipelineModel(t *testing.T) {
	const (
		conns     = 4
		pipelines = 5
		perPipe   = 80
	)
	eachServer(t, func(t *testing.T, s *server) {
		var wg sync.WaitGroup
		for ci := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				keys := make([]string, 4)
				for i := range keys {
					keys[i] = keyOnShard(fmt.Sprintf("pm%d-%d-", ci, i), i%2)
				}
				c := s.client(2)
				m := &pipeModel{keys: keys, vals: map[string]int{}, rng: rand.New(rand.NewPCG(uint64(ci), 3))}
				for pi := range pipelines {
					if msg := m.runPipeline(t, c, perPipe); msg != "" {
						t.Errorf("connection %d, pipeline %d: %s", ci, pi, msg)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// pipeModel is one client's keys as it alone changes them.
type pipeModel struct {
	keys []string
	vals map[string]int // absent: no key
	rng  *rand.Rand
}

// runPipeline sends n random commands (a MULTI block counting as its
// commands) in one pipeline and compares the replies with the model's.
func (m *pipeModel) runPipeline(t *testing.T, c *redis.Client, n int) string {
	var args [][]any
	var want []string
	for len(args) < n {
		if m.rng.IntN(5) == 0 {
			a, w := m.randomBlock()
			args = append(args, a...)
			want = append(want, w...)
			continue
		}
		a, w := m.randomCommand()
		args = append(args, a)
		want = append(want, w)
	}
	// Pipelined's error is the first command's error: each command's
	// reply, errors included, is compared below.
	cmds, _ := c.Pipelined(ctx(t), func(p redis.Pipeliner) error {
		for _, a := range args {
			p.Do(ctx(t), a...)
		}
		return nil
	})
	if len(cmds) != len(args) {
		return fmt.Sprintf("%d replies to %d commands", len(cmds), len(args))
	}
	for i, cmd := range cmds {
		if got := showCmd(cmd); got != want[i] {
			return fmt.Sprintf("command %d %v: got %s, want %s", i, args[i], got, want[i])
		}
	}
	return ""
}

// randomBlock is MULTI, a few commands and EXEC; or DISCARD instead of
// EXEC, or a command with a wrong number of arguments that makes EXEC
// answer EXECABORT: then nothing of the block changes the model.
func (m *pipeModel) randomBlock() ([][]any, []string) {
	saved := maps.Clone(m.vals)
	args, want := [][]any{{"multi"}}, []string{"OK"}
	var inner []string
	for range 1 + m.rng.IntN(6) {
		a, w := m.randomCommand()
		args = append(args, a)
		want = append(want, "QUEUED")
		inner = append(inner, w)
	}
	switch m.rng.IntN(6) {
	case 0:
		m.vals = saved
		return append(args, []any{"discard"}), append(want, "OK")
	case 1:
		m.vals = saved
		args = append(args, []any{"set", m.keys[0]}, []any{"exec"})
		return args, append(want, "-ERR wrong number of arguments for 'set' command", errExecAbort)
	}
	return append(args, []any{"exec"}), append(want, "["+strings.Join(inner, " ")+"]")
}

// randomCommand picks a command, applies it to the model and returns it
// with its expected reply.
func (m *pipeModel) randomCommand() ([]any, string) {
	k := m.keys[m.rng.IntN(len(m.keys))]
	some := m.someKeys()
	switch m.rng.IntN(7) {
	case 0:
		v := m.rng.IntN(100)
		m.vals[k] = v
		return []any{"set", k, v}, "OK"
	case 1:
		d := 1 + m.rng.IntN(10)
		m.vals[k] += d
		return []any{"incrby", k, d}, strconv.Itoa(m.vals[k])
	case 2:
		return []any{"get", k}, m.show(k)
	case 3:
		a := []any{"mset"}
		for _, k := range some {
			v := m.rng.IntN(100)
			m.vals[k] = v
			a = append(a, k, v)
		}
		return a, "OK"
	case 4:
		a := []any{"mget"}
		var w []string
		for _, k := range some {
			a = append(a, k)
			w = append(w, m.show(k))
		}
		return a, "[" + strings.Join(w, " ") + "]"
	case 5:
		a, n := []any{"del"}, 0
		for _, k := range some {
			a = append(a, k)
			if _, ok := m.vals[k]; ok {
				n++
			}
			delete(m.vals, k)
		}
		return a, strconv.Itoa(n)
	default:
		a, n := []any{"exists"}, 0
		for _, k := range some {
			a = append(a, k)
			if _, ok := m.vals[k]; ok {
				n++
			}
		}
		return a, strconv.Itoa(n)
	}
}

// someKeys is 1 to 4 distinct keys of the model, in random order.
func (m *pipeModel) someKeys() []string {
	p := m.rng.Perm(len(m.keys))[:1+m.rng.IntN(len(m.keys))]
	out := make([]string, len(p))
	for i, j := range p {
		out[i] = m.keys[j]
	}
	return out
}

func (m *pipeModel) show(k string) string {
	if v, ok := m.vals[k]; ok {
		return strconv.Itoa(v)
	}
	return "(nil)"
}

// showCmd writes a pipelined command's reply as showReply does.
func showCmd(cmd redis.Cmder) string {
	switch c := cmd.(type) {
	case *redis.Cmd:
		return showReply(c.Result())
	case *redis.StatusCmd:
		return showReply(c.Result())
	case *redis.StringCmd:
		return showReply(c.Result())
	case *redis.IntCmd:
		return showReply(c.Result())
	case *redis.SliceCmd:
		v, err := c.Result()
		return showReply(v, err)
	}
	return fmt.Sprintf("%T", cmd)
}
