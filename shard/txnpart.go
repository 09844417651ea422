package shard

import (
	"errors"
	"fmt"
	"os"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/txnlog"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
)

// The shard's side of txns across shards (persistence/txnlog, DESIGN.md
// §3): a part's records between BEGIN and END in this shard's WAL, the
// mark at each redo point, the replay that leaves out parts whose txn did
// not commit, and the ABORTs a boot logs for them.
//
// The server opens a part (OpenPart) before each step of a txn that may
// write runs here, closes it after (ClosePart), and ends it with the
// txn's last step here (EndPart). BEGIN is logged before the part's first
// record, so a step that writes nothing logs nothing but its END.

// txnState is the shard's part state.
type txnState struct {
	open  uint64 // the txn whose step runs now, 0 for none
	begun uint64 // the txn whose BEGIN is logged
	// unended is the txn whose BEGIN is logged and its END not yet, 0 for
	// none: every BEGIN gets its END before another part begins.
	unended uint64
	// mark is the highest txid this shard's log names: at a redo point
	// the parts below it are those of txns up to mark (txnlog.Summary).
	mark uint64
	// synced is the mark when the last sync of every shard's WAL began
	// (txnsync.go); peerSyncs counts those syncs.
	synced    uint64
	peerSyncs int64

	replay *txnlog.Replay // the boot's filter, with Options.Txns
	lone   *loneReplay    // the boot's, without (txnlone.go)
}

// TxnMark is the highest txid this shard's log names (after the boot, the
// highest it replayed): txids handed out later must be above it.
func (s *Shard) TxnMark() uint64 { return s.txn.mark }

// OpenPart makes the writes that follow part of txn txid's part on this
// shard, until ClosePart.
func (s *Shard) OpenPart(txid uint64) { s.txn.open = txid }

// ClosePart ends the step of the open part.
func (s *Shard) ClosePart() { s.txn.open = 0 }

// EndPart logs txid's END, naming the shards that take part (ascending)
// and the first txid of its group (txnlog.Marker.Group; 0 or txid for
// none), and returns its LSN (0 with appendonly no). When the log refuses
// it, the part never commits: the error is MISCONF's text, for the txn's
// client, which must not be told that the txn ran.
func (s *Shard) EndPart(txid, group uint64, parts []int) (uint64, error) {
	s.txn.open = 0
	s.flushFeedPart(txid, parts)
	if s.wal == nil {
		return 0, nil
	}
	lsn, err := s.wal.Appender().AppendCommand(0, txnlog.EndArgs(txid, group, parts))
	if err != nil {
		s.refuseAppend(err)
		return 0, errors.New(s.Misconf())
	}
	s.txn.mark = max(s.txn.mark, txid)
	if s.txn.unended == txid {
		s.txn.unended = 0
	}
	return lsn, nil
}

// beginPart logs the open part's BEGIN before its first record.
func (s *Shard) beginPart() error {
	id := s.txn.open
	if s.txn.unended != 0 {
		// Replay would take every record after that BEGIN for its part.
		panic(fmt.Sprintf("shard %d: txn %d begins a part while txn %d's part never ended", s.id, id, s.txn.unended))
	}
	if _, err := s.wal.Appender().AppendCommand(0, txnlog.BeginArgs(id)); err != nil {
		return err
	}
	s.txn.begun, s.txn.unended = id, id
	s.txn.mark = max(s.txn.mark, id)
	return nil
}

// redoRecord is the record a checkpoint logs at its redo point: the txn
// mark and the database map, when either is not the default (the map
// alone as KindDBMap, as before txns across shards).
func (s *Shard) redoRecord() []byte {
	if s.txn.mark == 0 {
		if s.ks.IdentityDBMap() {
			return nil
		}
		return record.AppendDBMap(nil, s.ks.DBMap())
	}
	var m []int
	if !s.ks.IdentityDBMap() {
		m = s.ks.DBMap()
	}
	return record.AppendRedo(nil, s.txn.mark, m)
}

// replayMarker applies a MOOND.TXN record read by the WAL replay; apply
// replays a data record (a held part's, when it commits).
func (s *Shard) replayMarker(lsn uint64, args [][]byte, apply func(lsn uint64, payload []byte) error) error {
	m, err := txnlog.Parse(args)
	if err != nil {
		return fmt.Errorf("record %d: %w", lsn, err)
	}
	s.txn.mark = max(s.txn.mark, m.Txid)
	if s.txn.lone != nil {
		return s.txn.lone.marker(m, apply)
	}
	s.txn.replay.Marker(m)
	return nil
}

// replaySkips reports whether the replay leaves out (or holds) the data
// record now read.
func (s *Shard) replaySkips(lsn uint64, payload []byte) bool {
	if s.txn.lone != nil {
		return s.txn.lone.hold(lsn, payload)
	}
	return s.txn.replay.Skip()
}

// logAborts logs an ABORT for each part the replay left out, once the log
// is open; it returns the LSN of the last (0 for none).
func (s *Shard) logAborts() (uint64, error) {
	var dropped []uint64
	var skipped int64
	if r := s.txn.replay; r != nil {
		dropped, skipped = r.Dropped, r.Skipped
	}
	if l := s.txn.lone; l != nil {
		l.drop() // a part the log ends inside of
		dropped, skipped = l.dropped, l.skipped
	}
	s.txn.replay, s.txn.lone = nil, nil
	if len(dropped) == 0 {
		return 0, nil
	}
	s.log.Warn("WAL replay left out the parts of transactions that did not commit", "shard", s.id,
		"transactions", len(dropped), "records", skipped)
	if s.wal == nil {
		return 0, nil
	}
	var lsn uint64
	for _, id := range dropped {
		l, err := s.wal.Appender().AppendCommand(0, txnlog.AbortArgs(id))
		if err != nil {
			return 0, fmt.Errorf("shard %d: log the abort of txn %d: %w", s.id, id, err)
		}
		lsn = l
	}
	return lsn, nil
}

// ScanTxns is the first pass of a boot's recovery for txns across shards:
// what shard o.ID's log says about them from its redo point on. It reads
// the control file and the WAL and changes nothing; a log it cannot read
// makes the shard's own recovery fail, with that recovery's words.
func ScanTxns(o Options) (*txnlog.Summary, error) {
	sum := &txnlog.Summary{}
	c, _, err := control.Read(vfs.Default, o.Dir, uint32(o.ID))
	if err != nil {
		return nil, fmt.Errorf("shard %d: %w", o.ID, err)
	}
	var args [][]byte
	redo := c.RedoLSN
	gap := false // replay stops at a gap (aof.go): so does the summary
	_, err = wal.Recover(wal.RecoverOptions{
		Dir:      (&Shard{o: o}).walDir(),
		Shard:    uint32(o.ID),
		Redo:     redo,
		Floor:    c.CheckpointLSN + 1,
		Salvage:  o.WALSalvage || os.Getenv(wal.SalvageEnv) == "1",
		ReadOnly: true,
		Apply: func(lsn uint64, typ wal.RecordType, payload []byte) error {
			if gap {
				return nil
			}
			if typ != wal.RecordData {
				gap = record.IsGap(payload)
				if lsn == redo && len(payload) > 0 && payload[0] == record.KindRedo {
					mark, _, err := record.DecodeRedo(payload)
					if err != nil {
						return fmt.Errorf("record %d: %w", lsn, err)
					}
					sum.SetMark(mark)
				}
				return nil
			}
			if !txnlog.IsEncodedMarker(payload) {
				return nil
			}
			_, a, err := wal.DecodeCommandInto(args[:0], payload)
			if err != nil {
				return fmt.Errorf("record %d: %w", lsn, err)
			}
			args = a
			m, err := txnlog.Parse(args)
			if err != nil {
				return fmt.Errorf("record %d: %w", lsn, err)
			}
			sum.Add(m)
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("shard %d: WAL scan for transactions: %w", o.ID, err)
	}
	return sum, nil
}

// decideTxns sets up the replay's filter: from Options.Txns, or, without
// it, the one of a shard alone (txnlone.go).
func (s *Shard) decideTxns() {
	if s.o.Txns == nil {
		s.txn.lone = &loneReplay{self: uint32(s.id)}
		return
	}
	s.txn.replay = txnlog.NewReplay(s.o.Txns())
}
