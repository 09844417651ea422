package tests

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A subscriber that never reads is disconnected at
// client-output-buffer-limit pubsub, so that its pending messages do not
// grow without bound; the disconnection is counted in INFO.

// slowSubscriber subscribes a raw connection to ch and never reads again.
func slowSubscriber(t *testing.T, s *server, ch string) *rawConn {
	r := s.raw()
	r.send("SUBSCRIBE " + ch + "\r\n")
	for range 6 {
		r.line()
	}
	return r
}

// drainedToEOF reads what the server sent until the connection ends, and
// reports whether it did within 10s.
func drainedToEOF(r *rawConn) bool {
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, r.r)
	return err == nil || !isTimeout(err)
}

// publishUntilGone publishes size-byte messages to ch until nobody
// receives them, and returns the bytes published; it fails past max.
func publishUntilGone(t *testing.T, cl *redis.Client, ch string, size, max int) int {
	t.Helper()
	c := ctx(t)
	msg := strings.Repeat("x", size)
	sent := 0
	for sent < max {
		pipe := cl.Pipeline()
		for range 64 {
			pipe.Publish(c, ch, msg)
		}
		cmds, err := pipe.Exec(c)
		if err != nil {
			t.Fatal(err)
		}
		sent += 64 * size
		if cmds[len(cmds)-1].(*redis.IntCmd).Val() == 0 {
			return sent
		}
	}
	t.Fatalf("the slow subscriber still receives after %d bytes", sent)
	return sent
}

func TestPubSubSlowSubscriberHardLimit(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		if err := cl.ConfigSet(c, "client-output-buffer-limit", "pubsub 1mb 0 0").Err(); err != nil {
			t.Fatal(err)
		}
		slow := slowSubscriber(t, s, "firehose")
		// Besides the 1 MiB of the limit, the kernel's socket buffers
		// hold some: 64 MiB is far more than both.
		sent := publishUntilGone(t, cl, "firehose", 4096, 64<<20)
		if !drainedToEOF(slow) {
			t.Fatal("the slow subscriber's connection is still open")
		}
		info := cl.Info(c, "stats").Val()
		if !strings.Contains(info, "client_output_buffer_limit_disconnections:1\r\n") {
			t.Fatalf("INFO does not count the disconnection:\n%s", info)
		}
		if n := cl.PubSubNumSub(c, "firehose").Val()["firehose"]; n != 0 {
			t.Fatalf("NUMSUB firehose = %d after the disconnection", n)
		}
		t.Logf("disconnected after %d KiB published", sent>>10)
	})
}

func TestPubSubSlowSubscriberSoftLimit(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		if err := cl.ConfigSet(c, "client-output-buffer-limit", "pubsub 0 256kb 2").Err(); err != nil {
			t.Fatal(err)
		}
		if got := cl.ConfigGet(c, "client-output-buffer-limit").Val()["client-output-buffer-limit"]; !strings.HasSuffix(got, "pubsub 0 262144 2") {
			t.Fatalf("CONFIG GET client-output-buffer-limit = %q", got)
		}
		slow := slowSubscriber(t, s, "trickle")
		// Over the soft limit (the socket buffers full first), and still
		// connected: the soft limit allows two seconds.
		msg := strings.Repeat("y", 4096)
		start := time.Now()
		for range 16 << 20 / 4096 / 64 {
			pipe := cl.Pipeline()
			for range 64 {
				pipe.Publish(c, "trickle", msg)
			}
			cmds, err := pipe.Exec(c)
			if err != nil {
				t.Fatal(err)
			}
			if n := cmds[len(cmds)-1].(*redis.IntCmd).Val(); n != 1 && time.Since(start) < 2*time.Second {
				t.Fatalf("the subscriber was closed before its soft limit's seconds (PUBLISH = %d)", n)
			}
		}
		// CLIENT LIST shows the pending output (omem: beyond 16 KiB).
		if time.Since(start) < 2*time.Second {
			list := cl.Do(c, "CLIENT", "LIST", "TYPE", "pubsub").String()
			omem := -1
			for _, f := range strings.Fields(list) {
				if v, ok := strings.CutPrefix(f, "omem="); ok {
					omem, _ = strconv.Atoi(v)
				}
			}
			if omem < 256<<10-16<<10 || omem > 16<<20 {
				t.Fatalf("the slow subscriber's omem is %d; want its pending output, over the soft limit:\n%s", omem, list)
			}
		}
		// Still over the soft limit two seconds later: the next
		// message closes it.
		deadline := time.Now().Add(10 * time.Second)
		for cl.Publish(c, "trickle", msg).Val() != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the slow subscriber was never closed at its soft limit")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !drainedToEOF(slow) {
			t.Fatal("the slow subscriber's connection is still open")
		}
		if info := cl.Info(c, "stats").Val(); !strings.Contains(info, "client_output_buffer_limit_disconnections:1\r\n") {
			t.Fatalf("INFO does not count the disconnection")
		}
	})
}

// Subscribers closed at the limit in the middle of a delivery leave the
// others of the same channel whole: every message reaches every reading
// subscriber, and PUBLISH counts it.
func TestPubSubSlowSubscribersLeaveTheOthersWhole(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		if err := cl.ConfigSet(c, "client-output-buffer-limit", "pubsub 256kb 0 0").Err(); err != nil {
			t.Fatal(err)
		}
		const pairs = 6
		var readers []*redis.PubSub
		for range pairs {
			slowSubscriber(t, s, "mixed")
			ps := s.client(2).Subscribe(c, "mixed")
			if _, err := ps.Receive(c); err != nil {
				t.Fatal(err)
			}
			readers = append(readers, ps)
		}
		const size = 4096
		msg := strings.Repeat("z", size)
		got := make(chan int, pairs)
		for _, ps := range readers {
			go func() {
				n := 0
				for {
					m, err := ps.ReceiveMessage(c)
					if err != nil || m.Payload == "end" {
						got <- n
						return
					}
					n++
				}
			}()
		}
		published := 0
		for gone := false; !gone; {
			if published > 64<<20/size {
				t.Fatal("the slow subscribers still receive after 64 MiB")
			}
			pipe := cl.Pipeline()
			for range 64 {
				pipe.Publish(c, "mixed", msg)
			}
			cmds, err := pipe.Exec(c)
			if err != nil {
				t.Fatal(err)
			}
			published += 64
			for _, cmd := range cmds {
				if n := cmd.(*redis.IntCmd).Val(); n < pairs {
					t.Fatalf("PUBLISH reached %d subscribers; the %d that read must all count", n, pairs)
				}
			}
			gone = cmds[len(cmds)-1].(*redis.IntCmd).Val() == pairs
		}
		cl.Publish(c, "mixed", "end")
		for range pairs {
			if n := <-got; n != published {
				t.Fatalf("a reading subscriber got %d of %d messages", n, published)
			}
		}
		if info := cl.Info(c, "stats").Val(); !strings.Contains(info, "client_output_buffer_limit_disconnections:"+strconv.Itoa(pairs)+"\r\n") {
			t.Fatalf("INFO does not count %d disconnections:\n%s", pairs, info)
		}
	})
}
