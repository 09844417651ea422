package server

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"
)

// TestServingBlockedPopsAllocatesLittle checks the allocations of serving
// blocked BRPOPs, from the push that serves them to the replies their
// clients read: per delivery, the reply's copy and the list each push
// creates and its pop deletes (the consumers wait, so each push serves
// one), 4 in all. The key strings of the lookups, the serve arguments,
// client and reply writer, the ready list and the messages' closures
// each used to allocate too: 16 per delivery.
func TestServingBlockedPopsAllocatesLittle(t *testing.T) {
	s := startTest(t, "auto", 1, "appendonly", "no")
	w := s.workers[0]
	const consumers, rounds = 8, 100
	d := dialDeliveries(t, s.Addr(), consumers)
	brpop := []byte("*3\r\n$5\r\nBRPOP\r\n$6\r\nbenchq\r\n$1\r\n0\r\n")
	served := "*2\r\n$6\r\nbenchq\r\n$1\r\nx\r\n"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	blocked := func() int {
		var n int
		if err := w.loop.Call(ctx, func() { n = w.blockedClients }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var mallocs uint64
	var before, after runtime.MemStats
	reply := make([]byte, len(served))
	for round := range rounds + 1 {
		for _, c := range d.consumers {
			if _, err := c.Write(brpop); err != nil {
				t.Fatal(err)
			}
		}
		for blocked() < consumers {
			if ctx.Err() != nil {
				t.Fatal("the consumers did not block")
			}
		}
		runtime.ReadMemStats(&before)
		if _, err := d.producer.Write(d.push[:consumers*len(d.push)/deliveryDepth]); err != nil {
			t.Fatal(err)
		}
		for range consumers {
			if line, err := d.r.ReadSlice('\n'); err != nil || line[0] != ':' {
				t.Fatalf("LPUSH: %q, %v", line, err)
			}
		}
		for _, c := range d.consumers {
			if _, err := io.ReadFull(c, reply); err != nil || string(reply) != served {
				t.Fatalf("BRPOP: %q, %v", reply, err)
			}
		}
		runtime.ReadMemStats(&after)
		if round > 0 { // the first grows buffers and queues
			mallocs += after.Mallocs - before.Mallocs
		}
	}
	perDelivery := float64(mallocs) / (consumers * rounds)
	t.Logf("%.2f allocations per delivery", perDelivery)
	if perDelivery > 6 {
		t.Errorf("%.2f allocations per delivery, want at most 6", perDelivery)
	}
}
