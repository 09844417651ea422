package shard

import (
	"github.com/moond-db/moond/persistence/txnlog"
)

// loneReplay decides the parts of txns in one pass over the log of a shard
// that is the only one (Options.Txns nil): it holds a part's records from
// its BEGIN and applies them at its END when the END names this shard
// alone, as txnlog.Decide would over this shard's summary; a part whose END
// names another shard, or that the log ends inside of, is left out (and
// ABORTed by the boot). No first pass over the log is needed.
type loneReplay struct {
	self    uint32
	holding uint64 // the txn whose part is held, 0 for none
	held    []heldRecord
	dropped []uint64
	skipped int64
}

// heldRecord is a data record of a held part.
type heldRecord struct {
	lsn     uint64
	payload []byte // a copy: the log's buffer is reused
}

// hold keeps a data record of the held part, reporting false when no part
// is held (the record is applied now).
func (l *loneReplay) hold(lsn uint64, payload []byte) bool {
	if l.holding == 0 {
		return false
	}
	l.held = append(l.held, heldRecord{lsn, append([]byte(nil), payload...)})
	return true
}

// marker moves past m, applying the held records with apply when m ends a
// part that commits.
func (l *loneReplay) marker(m txnlog.Marker, apply func(lsn uint64, payload []byte) error) error {
	switch {
	case m.Abort:
		l.drop()
	case m.End:
		if l.holding != m.Txid {
			l.drop() // another txn's part, torn (a crash's)
		}
		if len(m.Parts) == 1 && m.Parts[0] == l.self {
			held := l.held
			l.holding, l.held = 0, nil
			for _, r := range held {
				if err := apply(r.lsn, r.payload); err != nil {
					return err
				}
			}
			return nil
		}
		l.holding = m.Txid // an empty part is left out too
		l.drop()
	default:
		l.drop() // a part the log holds no END of: a crash's
		l.holding = m.Txid
	}
	return nil
}

// drop leaves out the held part.
func (l *loneReplay) drop() {
	if l.holding != 0 {
		l.dropped = append(l.dropped, l.holding)
		l.skipped += int64(len(l.held))
	}
	l.holding, l.held = 0, nil
}
