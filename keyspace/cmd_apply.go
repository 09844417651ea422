package keyspace

// MOOND.APPLY, the journal-only command of the writes that touch several
// keys (RENAME, COPY, MOVE, SMOVE, ...; see the grammar in journal.go). It
// is not in the command table: Exec runs it only while Loading, and to a
// client it is an unknown command.

// applyName is the command's name as records carry it; applyLower as
// equalFold matches it.
const (
	applyName  = "MOOND.APPLY"
	applyLower = "moond.apply"
)

// applyOp is one parsed op: DEL (put false, cmd nil), PUT, or CMD (cmd
// holds the command's arguments, key is cmd[1]).
type applyOp struct {
	put    bool
	db     int
	key    []byte
	v      value
	expiry int64
	cmd    [][]byte
}

// parseApply checks MOOND.APPLY's ops and returns them (the values are
// copies, the keys alias args), or the error reply.
func (ks *Keyspace) parseApply(args [][]byte) ([]applyOp, string) {
	if len(args) < 2 {
		return nil, errArity(applyLower)
	}
	ops := ks.applyOps[:0]
	for i := 1; i < len(args); {
		var op applyOp
		switch {
		case equalFold(args[i], "del") && i+2 < len(args):
			op.key = args[i+2]
		case equalFold(args[i], "cmd") && i+3 < len(args):
			n, ok := parseInt(args[i+2])
			if !ok || n < 2 || n > int64(len(args)-i-3) {
				return nil, errSyntax
			}
			op.cmd = args[i+3 : i+3+int(n)]
			if spec := Lookup(op.cmd[0]); spec == nil || !spec.write || spec.FirstKey != 1 || spec.LastKey != 1 || !spec.arityOK(len(op.cmd)) {
				return nil, "ERR MOOND.APPLY CMD runs only single-key writes, not '" + cString(op.cmd[0], 32) + "'"
			}
			op.key = op.cmd[1]
		case equalFold(args[i], "put") && i+5 < len(args):
			op.put, op.key = true, args[i+2]
			kind, ok := parseInt(args[i+3])
			if !ok || kind < 0 || kind > 255 {
				return nil, "ERR invalid value kind '" + cString(args[i+3], 32) + "'"
			}
			v, err := ks.decodeValue(Kind(kind), args[i+4])
			if err != nil {
				return nil, noNewlines("ERR " + err.Error())
			}
			op.v = v
			if op.expiry, ok = parseInt(args[i+5]); !ok || op.expiry < 0 {
				return nil, errInvalidExpire(applyLower)
			}
		default:
			return nil, errSyntax
		}
		db, msg := ks.SelectIndex(args[i+1])
		if msg != "" {
			return nil, msg
		}
		op.db = db
		ops = append(ops, op)
		switch {
		case op.put:
			i += 6
		case op.cmd != nil:
			i += 3 + len(op.cmd)
		default:
			i += 3
		}
	}
	ks.applyOps = ops
	return ops, ""
}

// execApply runs MOOND.APPLY. With lsn > 0 it is Replay's: an op applies
// to its key only when the key passes the per-key LSN rule (replayPasses).
func (ks *Keyspace) execApply(args [][]byte, w ReplyWriter, lsn uint64) {
	ops, msg := ks.parseApply(args)
	if msg != "" {
		w.Error(msg)
		return
	}
	for _, op := range ops {
		if lsn > 0 && !ks.replayPasses(lsn, op.db, op.key) {
			continue
		}
		if op.cmd != nil {
			ks.applyCmd(op)
			continue
		}
		d := ks.dbs[op.db]
		sl, h := ks.lookup(op.db, op.key)
		if !op.put {
			if sl != nil {
				ks.deleteKey(d, h, op.key)
			}
			continue
		}
		sl = ks.setKey(d, h, sl, op.key, op.v, false)
		if op.expiry != 0 {
			ks.setExpiry(d, h, sl, op.expiry)
		}
	}
	clear(ops)
	replyOK(w)
}

// applyCmd runs a CMD op: a single-key write in its journal form, in the
// op's database. Its reply is dropped: a journal-form command applied to
// the state its record was written over cannot fail (journal.go), and a
// record never fails halfway because of one op.
func (ks *Keyspace) applyCmd(op applyOp) {
	c := Client{DB: op.db}
	spec := Lookup(op.cmd[0])
	if ks.Loading && ks.cold.keys > 0 && !ks.warmForReplay(&c, spec, op.cmd, discardReplies{}) {
		return // its key's cold value is unreadable (cold_load.go)
	}
	spec.run(ks, &c, op.cmd, discardReplies{})
}

// discardReplies is a ReplyWriter that drops everything.
type discardReplies struct{}

func (discardReplies) SimpleString(string)     {}
func (discardReplies) Error(string)            {}
func (discardReplies) Int(int64)               {}
func (discardReplies) Bulk([]byte)             {}
func (discardReplies) BulkString(string)       {}
func (discardReplies) Null()                   {}
func (discardReplies) NullArray()              {}
func (discardReplies) ArrayHeader(int)         {}
func (discardReplies) MapHeader(int)           {}
func (discardReplies) SetHeader(int)           {}
func (discardReplies) PushHeader(int)          {}
func (discardReplies) Double(float64)          {}
func (discardReplies) Bool(bool)               {}
func (discardReplies) Verbatim(string, []byte) {}
func (discardReplies) BigNumber(string)        {}
func (discardReplies) Raw([]byte)              {}
func (discardReplies) Reset()                  {}
func (discardReplies) Grow(int)                {}
