package server

import (
	"sync"

	"github.com/moond-db/moond/persistence/txnlog"
	"github.com/moond-db/moond/shard"
)

// startDecidingTxns starts the first pass of a boot over the logs of n
// shards (opts gives each one's options) on goroutines of its own, while
// the shards load their heaps, and makes it what their options' Txns
// return: it waits for the pass.
func (s *Server) startDecidingTxns(n int, opts func(int) shard.Options) {
	done := make(chan struct{})
	var d *txnlog.Decision
	go func() {
		defer close(done)
		d = s.decideTxns(n, opts)
	}()
	s.txnDecision.Store(&txnDecision{wait: func() *txnlog.Decision {
		<-done
		return d
	}})
}

// txnDecision is a boot's decision on txns across shards, once its first
// pass is done (wait).
type txnDecision struct {
	wait func() *txnlog.Decision
}

// decideTxns is the first pass of a boot over the logs of n shards (opts
// gives each one's options), before any replays: which txns across shards
// committed (persistence/txnlog). Txids handed out from now on start above
// every one the logs name. A log the pass cannot read holds no part here:
// the shard's own recovery then fails on it, with its own words.
func (s *Server) decideTxns(n int, opts func(int) shard.Options) *txnlog.Decision {
	sums := make(map[uint32]*txnlog.Summary, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sum, err := shard.ScanTxns(opts(i))
			if err != nil {
				s.log.Warn("transactions across shards: a WAL could not be read ahead of its recovery", "shard", i, "err", err)
				return
			}
			mu.Lock()
			sums[uint32(i)] = sum
			mu.Unlock()
		})
	}
	wg.Wait()
	d := txnlog.Decide(sums)
	s.txnAbove(d.Max())
	return d
}

// txnAbove makes the txids handed out from now on exceed txid.
func (s *Server) txnAbove(txid uint64) {
	for {
		cur := s.txnSeq.Load()
		if cur >= txid || s.txnSeq.CompareAndSwap(cur, txid) {
			return
		}
	}
}
