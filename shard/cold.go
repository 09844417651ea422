package shard

import (
	"errors"
	"fmt"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/persistence/heap"
)

// The shard's side of the cold tier (keyspace/cold.go, DESIGN §9). A
// command that needs a cold value waits for it: the server parks the
// connection (or the batch) and calls WarmKeys, which reads the records'
// pages on the ring through the page loader (pageload.go), installs the
// values and calls back; the server then runs the command. Exec reads
// whatever is still cold synchronously (ReadColdRecord, counted apart):
// the steps of transactions and the commands of blocked clients, which run
// where no wait is possible, and a read that failed on the ring, whose
// error the synchronous read gives the reply.

// warmRounds bounds the rounds of page reads one WarmKeys waits for (a
// record's head, then one overflow page a round): past it, Exec reads the
// rest synchronously.
const warmRounds = 64

// ReadColdRecord reads the record at id synchronously, through the page
// cache (keyspace.ColdReader).
func (s *Shard) ReadColdRecord(id heap.RecordID) (heap.Record, error) {
	if s.ckpt == nil {
		return heap.Record{}, errors.New("the shard has no heap")
	}
	return heapReader{s.ckpt.heap}.ReadColdRecord(id)
}

// heapReader reads cold values from a heap synchronously: the boot's WAL
// replay, before the shard holds the heap (loadPersisted).
type heapReader struct{ h *heap.Heap }

func (r heapReader) ReadColdRecord(id heap.RecordID) (heap.Record, error) {
	rec, err := r.h.ReadThrough(id, nil)
	if err != nil {
		return heap.Record{}, fmt.Errorf("read heap record %v: %w", id, err)
	}
	return rec, nil
}

// ColdKeys appends to dst the keys of the command, for client cl, whose
// values are cold and needed (keyspace.ColdKeys).
func (s *Shard) ColdKeys(cl *keyspace.Client, spec *keyspace.CommandSpec, args [][]byte, dst []keyspace.ColdKey) []keyspace.ColdKey {
	if !s.ks.HasCold() {
		return dst
	}
	return s.ks.ColdKeys(cl, spec, args, dst)
}

// WarmKeys installs the values of the cold keys whose records are cached
// and reports true when that was all of them. Otherwise it reads the
// pages the others need on the ring, installs those values too, calls
// done on the loop's thread and reports false. A record that cannot be
// read is left cold: the command's run (Exec) reads it again and answers
// the error.
func (s *Shard) WarmKeys(keys []keyspace.ColdKey, done func()) bool {
	if s.ckpt == nil || s.ckpt.mgr == nil {
		// No checkpoint manager (appendonly no since the boot): the page
		// loader reports missing files to it, so Exec reads synchronously.
		return true
	}
	start := time.Now()
	rest, pages := s.warmCached(keys, start)
	if len(pages) == 0 {
		return true
	}
	s.loadWarm(rest, pages, start, 1, done)
	return false
}

// loadWarm reads pages, then installs what they made readable, for
// another round when a record needs more.
func (s *Shard) loadWarm(keys []keyspace.ColdKey, pages []heap.PageID, start time.Time, round int, done func()) {
	s.loadPages(pages, func(err error) {
		if err != nil || round >= warmRounds {
			done() // a page that cannot be read: Exec answers the error
			return
		}
		rest, more := s.warmCached(keys, start)
		if len(more) == 0 {
			done()
			return
		}
		s.loadWarm(rest, more, start, round+1, done)
	})
}

// warmCached installs the keys whose records are cached, and returns the
// others and the pages they need next.
func (s *Shard) warmCached(keys []keyspace.ColdKey, start time.Time) ([]keyspace.ColdKey, []heap.PageID) {
	var pages []heap.PageID
	var rest []keyspace.ColdKey
	for _, k := range keys {
		rec, err := s.ckpt.heap.Read(k.Loc, s.coldBuf)
		s.keepColdBuf(rec)
		var nr *heap.NotResidentError
		switch {
		case errors.As(err, &nr):
			pages = append(pages, nr.Page)
			rest = append(rest, k)
		case err != nil:
			// Exec reads it again and answers the error.
		case s.ks.InstallCold(k, rec) == nil:
			s.ks.NoteColdRead(time.Since(start))
		}
	}
	return rest, pages
}

// maxColdBuf bounds the record buffer kept between cold reads.
const maxColdBuf = 64 << 10

// keepColdBuf keeps a buffer for the next cold read as large as rec, the
// record just read, within maxColdBuf. The buffer is the shard's scratch:
// InstallCold copies what it keeps, so the next read may overwrite it.
func (s *Shard) keepColdBuf(rec heap.Record) {
	need := len(rec.Key) + len(rec.Value)
	if need > cap(s.coldBuf) && need <= maxColdBuf {
		s.coldBuf = make([]byte, 0, need)
	}
}

// coldStuck asks for a checkpoint when an eviction run under
// tiered-storage found no key it could make cold: the dirty keys become
// durable, and so may be made cold by the next run.
func (s *Shard) coldStuck() {
	if s.ks.ColdStuck() && s.Checkpoints() {
		s.ckpt.mgr.Request(nil)
	}
}
