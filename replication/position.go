package replication

// Where a replica's data stands in its master's history, so that a new
// link (REPLICAOF another master) or a promotion carries it on (PSYNC2,
// docs/DESIGN.md §3 "Replication").

// Position is a point of a master's history that the local server holds
// exactly: the stream of ReplID applied up to Offset, its last command in
// database DB.
type Position struct {
	ReplID string
	Offset int64
	DB     int
}

// Position returns where the link's data stands once Stop returned: ok is
// false when it is no clean point of a history (no sync completed, a
// snapshot or a MULTI cut off, commands read but not answered by the
// local server, the local connection failed), and then only a full sync
// may follow.
func (l *Link) Position() (Position, bool) {
	<-l.done // the link's goroutine is over: its fields are settled
	a, id := l.cur.Load(), *l.replID.Load()
	if a == nil || id == "" || l.inMulti || l.Loading() || a.acked.Load() != l.readOff.Load() {
		return Position{}, false
	}
	return Position{ReplID: id, Offset: a.acked.Load(), DB: l.db}, true
}

// resumeFrom makes the link's first PSYNC ask to continue at p (Start).
func (l *Link) resumeFrom(p Position) {
	if p.ReplID == "" {
		return
	}
	l.setReplID(p.ReplID)
	l.readOff.Store(p.Offset)
	l.db = p.DB
	l.resumed = true
}
