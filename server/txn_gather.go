package server

import (
	"bytes"
	"strconv"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// Commands that read keys of one shard to write keys of another (RENAME,
// COPY, SMOVE, LMOVE, SINTERSTORE, ZUNIONSTORE, BITOP, PFMERGE, ...) or
// that compute over keys of several shards (SINTER, ZUNION, SINTERCARD,
// LCS, ...) run as a txn in two rounds (gathered): with every shard held,
// each shard hands over the command's keys it holds (value, kind,
// expiry: keyspace.MovedKey); the coordinator runs the command on a
// scratch keyspace holding those keys only, which gives the reply; then
// each key whose state the command changed is stored back on its shard
// (logged as MOOND.APPLY PUT) or deleted (DEL), and the shards are
// released. The command thus runs on copies of its keys: correct for any
// command, at the cost of copying the values it touches.

// gatherKey is one key a gathered command touches, and where it lives.
type gatherKey struct {
	db    int
	key   []byte
	shard int
	// before is the key as its shard handed it over (found false: no
	// such key), written on that shard, read on the coordinator once
	// the shard answered (the mailboxes order the two).
	before keyspace.MovedKey
	found  bool
	// coldErr is the error reply when the key's value is cold and could
	// not be read (keyspace/cold.go): the command answers it.
	coldErr string
}

// runGathered runs spec, whose keys (at pos in args) live on several
// shards, on copies of its keys (see above).
func (c *conn) runGathered(spec *keyspace.CommandSpec, args [][]byte, pos []int) {
	args = copyArgs(args)
	keys := c.gatherKeys(spec, args, pos, c.client.DB)
	var shards []int
	for _, k := range keys {
		shards = append(shards, k.shard)
	}
	reply := c.newPending(1, nil)
	c.blockWait = reply
	proto, db := c.out.Proto, c.client.DB
	answer := func(b []byte) {
		reply.fill(0, b)
		c.txnReplied(reply)
	}
	t := c.w.beginTxnAlone(shards, func(t *txn) {
		gatherExport(t, keys, proto, func() {
			c.gatheredRun(t, spec, args, db, keys, proto, true, answer)
		})
	})
	t.writes = spec.Writes()
	t.onRefused = func(msg string) { answer(errorReply(proto, msg)) }
}

// gatherExport has every shard of t hand over its keys of keys (their
// before and found), then calls then on the coordinator.
func gatherExport(t *txn, keys []*gatherKey, proto int, then func()) {
	left := len(t.shards)
	for _, s := range t.shards {
		t.readStep(s, proto, func(w *worker, _ *resp.Writer) uint64 {
			for _, k := range keys {
				if k.shard == w.id {
					// A key due goes as on a local read: its expiry is
					// an event, notified before the command's.
					w.ks.ExpireIfDue(k.db, k.key)
				}
			}
			if len(w.notify.targets) > 0 {
				w.flushNotes()
			}
			now := w.ks.Now()
			for _, k := range keys {
				if k.shard != w.id {
					continue
				}
				// Under the hold: a cold value is read synchronously.
				if k.coldErr = w.ks.WarmKey(k.db, k.key); k.coldErr == "" {
					k.before, k.found = w.ks.ExportKey(k.db, k.key, now)
				}
			}
			return 0
		}, func([]byte) {
			if left--; left == 0 {
				then()
			}
		})
	}
}

// gatherKeys lists the keys a command touches: those at pos in the
// connection's database, and COPY's destination in the database its DB
// option names.
func (c *conn) gatherKeys(spec *keyspace.CommandSpec, args [][]byte, pos []int, db int) []*gatherKey {
	var keys []*gatherKey
	add := func(db int, key []byte) {
		for _, k := range keys {
			if k.db == db && bytes.Equal(k.key, key) {
				return
			}
		}
		keys = append(keys, &gatherKey{db: db, key: key, shard: c.w.srv.shardOf(key)})
	}
	for _, p := range pos {
		add(db, args[p])
	}
	if spec.Name == "copy" {
		for i := 3; i+1 < len(args); i++ {
			if n, err := strconv.Atoi(string(args[i+1])); err == nil && bytes.EqualFold(args[i], []byte("db")) && n >= 0 && n < c.w.srv.databases() {
				add(n, args[2])
			}
		}
	}
	return keys
}

// gatheredRun runs the command (in database db) on a scratch keyspace of
// the gathered keys and stores back what it changed (see above); finish
// gets the reply. With release set, t needs its shards no more after.
func (c *conn) gatheredRun(t *txn, spec *keyspace.CommandSpec, args [][]byte, db int, keys []*gatherKey, proto int, release bool, finish func([]byte)) {
	scratch := keyspace.NewKeyspace(c.w.srv.databases(), c.w.ks.Now)
	scratch.Limits = c.w.ks.Limits
	fail := func(msg string) {
		for _, s := range t.shards {
			if release {
				t.release(s)
			}
		}
		w := resp.Writer{Proto: proto}
		w.Error(msg)
		finish(w.Buf)
	}
	for _, k := range keys {
		if k.coldErr != "" {
			fail(k.coldErr)
			return
		}
		if k.found {
			if err := scratch.ImportKey(k.before); err != nil {
				fail("ERR internal error: " + err.Error())
				return
			}
		}
	}
	// The command's events are reported from here once its writes are
	// stored back (none when that fails).
	var events *eventLog
	if classes := t.g.coord.notify.classes; classes&(keyspace.NotifyKeyspace|keyspace.NotifyKeyevent) != 0 {
		events = &eventLog{}
		scratch.Notifier = events
		scratch.SetNotify(classes)
	}
	out := resp.Writer{Proto: proto}
	cl := keyspace.Client{DB: db, NoBlock: true}
	scratch.ExecSpec(&cl, spec, args, &out)
	result := out.Buf
	succeed := func() {
		if events != nil {
			events.replay(t.g.coord)
			t.g.coord.flushNotes()
		}
		finish(result)
	}
	changes := map[int][]gatherChange{}
	now := scratch.Now()
	for _, k := range keys {
		after, ok := scratch.ExportKey(k.db, k.key, now)
		switch {
		case !ok && k.found:
			changes[k.shard] = append(changes[k.shard], gatherChange{db: k.db, key: k.key})
		case ok && (!k.found || !sameMoved(after, k.before)):
			changes[k.shard] = append(changes[k.shard], gatherChange{db: k.db, key: k.key, put: true, value: after})
		}
	}
	if release && t.writes {
		// The parts are on the shards that store something back, each
		// with its last step; the others are released at once.
		t.writers = []int{}
		for _, s := range t.shards {
			if len(changes[s]) > 0 {
				t.writers = append(t.writers, s)
			}
		}
	}
	left := len(t.shards)
	var failed []byte
	for _, s := range t.shards {
		list := changes[s]
		if len(list) == 0 {
			if release {
				t.release(s)
			}
			if left--; left == 0 {
				succeed()
			}
			continue
		}
		t.step(s, proto, func(w *worker, out *resp.Writer) uint64 { return w.storeBack(list, out) }, release, func(r []byte) {
			if len(r) > 0 && r[0] == '-' && failed == nil {
				failed = r
			}
			if left--; left > 0 {
				return
			}
			if failed != nil {
				finish(failed)
				return
			}
			succeed()
		})
	}
}

// gatherChange is what a gathered command did to one key of a shard:
// stored value (put) or deleted it.
type gatherChange struct {
	db    int
	key   []byte
	put   bool
	value keyspace.MovedKey
}

// sameMoved reports whether two exports of a key hold the same state.
func sameMoved(a, b keyspace.MovedKey) bool {
	return a.Kind == b.Kind && a.Expiry == b.Expiry && bytes.Equal(a.Value, b.Value)
}

// storeBack applies a gathered command's changes to this shard's keys,
// logged as any write, and wakes the clients blocked on them (served when
// the txn releases the shard). It writes an error to out when the shard
// refuses writes, and returns the LSN of the last record.
func (w *worker) storeBack(list []gatherChange, out *resp.Writer) uint64 {
	// The command's events come from its coordinator (gatheredRun): the
	// store-back's own DELs and PUTs are none.
	w.ks.SetNotify(0)
	defer w.ks.SetNotify(w.notify.classes)
	var lsn uint64
	for _, ch := range list {
		if ch.put {
			l, err := w.sh.PutKey(ch.value)
			if err != nil {
				out.Error(err.Error())
				return lsn
			}
			lsn = max(lsn, l)
		} else {
			var scratch resp.Writer
			cl := keyspace.Client{DB: ch.db}
			lsn = max(lsn, w.exec(&cl, keyspace.Lookup([]byte("del")), [][]byte{[]byte("DEL"), ch.key}, &scratch))
			if len(scratch.Buf) > 0 && scratch.Buf[0] == '-' {
				out.Raw(scratch.Buf)
				return lsn
			}
		}
		if len(w.waits) > 0 {
			if k := (waitKey{ch.db, string(ch.key)}); w.waits[k] != nil {
				w.markReady(k)
			}
		}
	}
	return lsn
}
