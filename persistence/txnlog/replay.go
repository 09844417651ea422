package txnlog

// Replay tells a shard's WAL replay which data records to apply: a part's
// records (between its BEGIN and END, or to the end of the log when its END
// is missing) only when the Decision committed its txn. A shard held by a
// txn writes nothing but that txn's records, so every data record between
// a BEGIN and the next END is the part's.
type Replay struct {
	d        *Decision
	skipping bool
	// Dropped lists the txids of the parts replay left out (their BEGIN
	// or END was read): the shard logs an ABORT for each before it serves.
	Dropped []uint64
	// Skipped counts the data records left out.
	Skipped int64
}

// NewReplay returns the filter of a replay under d.
func NewReplay(d *Decision) *Replay { return &Replay{d: d} }

// Marker moves the filter past a marker.
func (r *Replay) Marker(m Marker) {
	if m.Abort {
		// Logged by a boot, after whatever part the crash before it
		// tore: nothing after it belongs to that part.
		r.skipping = false
		return
	}
	committed := r.d.Committed(m.Txid)
	if !committed && (len(r.Dropped) == 0 || r.Dropped[len(r.Dropped)-1] != m.Txid) {
		r.Dropped = append(r.Dropped, m.Txid)
	}
	r.skipping = !m.End && !committed
}

// Skip reports whether the data record now read is left out.
func (r *Replay) Skip() bool {
	if r.skipping {
		r.Skipped++
	}
	return r.skipping
}
