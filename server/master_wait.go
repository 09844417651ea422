package server

import (
	"time"

	"github.com/moond-db/moond/resp"
)

// WAIT numreplicas timeout on a master: how many replicas acknowledged
// (REPLCONF ACK) the stream up to the master's offset when WAIT ran,
// which is at or beyond the offset of the client's last write. A WAIT
// that must wait asks the replicas for an ACK (REPLCONF GETACK * in the
// stream, as Redis does) and waits on a goroutine, off the shard's loop;
// the connection runs nothing else meanwhile, as a blocked client.

// ackedAtLeast counts the online replicas whose ACK reached off.
func (s *Server) ackedAtLeast(off int64) int {
	n := 0
	for _, r := range s.replicasNow() {
		if r.online.Load() && r.ackOff.Load() >= off {
			n++
		}
	}
	return n
}

// ackChanged returns a channel closed at the next ACK of any replica.
func (m *masterState) ackChanged() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acked == nil {
		m.acked = make(chan struct{})
	}
	return m.acked
}

// noteAck wakes the WAITs (a replica's ACK came).
func (m *masterState) noteAck() {
	m.mu.Lock()
	if m.acked != nil {
		close(m.acked)
		m.acked = nil
	}
	m.mu.Unlock()
}

// waitReplicas answers WAIT once want replicas acknowledged target or
// timeout (0: none) passed.
func (c *conn) waitReplicas(want int64, timeout time.Duration) {
	srv := c.w.srv
	b := srv.master.backlogNow()
	var target int64
	if b != nil {
		target = b.Offset()
	}
	n := srv.ackedAtLeast(target)
	if int64(n) >= want || b == nil || c.multi != nil {
		c.replyLocal(func(w *resp.Writer) { w.Int(int64(n)) })
		return
	}
	b.Feed(-1, [][]byte{[]byte("REPLCONF"), []byte("GETACK"), []byte("*")})
	w, proto := c.w, c.out.Proto
	reply := c.newPending(1, nil)
	c.blockWait = reply
	go func() {
		var deadline <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		for {
			changed := srv.master.ackChanged()
			if n = srv.ackedAtLeast(target); int64(n) >= want {
				break
			}
			select {
			case <-changed:
				continue
			case <-deadline:
			case <-srv.stopped:
			}
			n = srv.ackedAtLeast(target)
			break
		}
		_ = w.loop.Post(func() {
			out := resp.Writer{Proto: proto}
			out.Int(int64(n))
			reply.fill(0, out.Buf)
			c.txnReplied(reply)
		})
	}()
}
