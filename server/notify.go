package server

import (
	"strconv"

	"github.com/moond-db/moond/keyspace"
)

// Keyspace notifications (notify-keyspace-events, Redis's notify.c): each
// worker is its keyspace's Notifier and publishes the events its shard
// reports as Pub/Sub messages, on __keyspace@<db>__:<key> (message: the
// event) when K is on and __keyevent@<db>__:<event> (message: the key)
// when E is. Subscribers on any shard receive them, as a PUBLISH's.
//
//   - With no subscriber to a channel starting "__key" and no pattern
//     anywhere (the directory's counts), an event costs two atomic loads;
//     otherwise the directory names the shards to deliver to, and no
//     message is built for none.
//   - Nothing is delivered inside the command: the keyspace reports events
//     while the command writes its reply. The messages wait in
//     notifyState, one list per target shard, and leave when the command
//     returns (worker.exec; for the events of the active expiry cycle,
//     before the loop waits): this shard's subscribers get them at once,
//     the others' in one mailbox message per shard, posted before the
//     command's reply can leave, which keeps a shard's events in order
//     at every receiver and waits for no reply. A subscriber that runs
//     the command itself therefore gets the push after the reply (Redis
//     pushes it before).
//   - CONFIG SET notify-keyspace-events reaches every shard
//     (applyRuntimeConfig); a shard that boots takes the setting then.

// notifyState is a worker's side of keyspace notifications.
type notifyState struct {
	classes keyspace.EventClass // as configured, K and E included
	out     [][]*pubMessage     // by target shard: messages to deliver
	targets []int               // shards with messages in out, in order
}

// setNotify applies notify-keyspace-events to this shard.
func (w *worker) setNotify(classes keyspace.EventClass) {
	w.notify.classes = classes
	if w.ks != nil {
		w.ks.SetNotify(classes)
	}
}

// Notify is the keyspace's Notifier: it queues the event's messages for
// the shards that have subscribers to their channels.
func (w *worker) Notify(_ keyspace.EventClass, event string, key []byte, db int) {
	dir := &w.srv.pubsub
	if dir.nKeyChannels.Load() == 0 && dir.nPatterns.Load() == 0 {
		return
	}
	var num [20]byte
	dbs := strconv.AppendInt(num[:0], int64(db), 10)
	if w.notify.classes&keyspace.NotifyKeyspace != 0 {
		w.queueEvent(keyChannel("__keyspace@", dbs, key), []byte(event))
	}
	if w.notify.classes&keyspace.NotifyKeyevent != 0 {
		w.queueEvent(keyChannel("__keyevent@", dbs, []byte(event)), key)
	}
}

// keyChannel is prefix + db + "__:" + name, in a new slice.
func keyChannel(prefix string, db, name []byte) []byte {
	b := make([]byte, 0, len(prefix)+len(db)+3+len(name))
	b = append(b, prefix...)
	b = append(b, db...)
	b = append(b, "__:"...)
	return append(b, name...)
}

// queueEvent queues a message on channel (which it keeps) for every shard
// with a subscriber to it or a matching pattern; payload is copied.
func (w *worker) queueEvent(channel, payload []byte) {
	w.pubsub.targets = w.srv.pubsub.targets(false, channel, w.pubsub.targets)
	var msg *pubMessage
	n := &w.notify
	for s := range w.srv.nshards {
		if !w.pubsub.targets.has(s) {
			continue
		}
		if msg == nil {
			msg = &pubMessage{channel: channel, payload: append([]byte(nil), payload...)}
		}
		if n.out == nil {
			n.out = make([][]*pubMessage, w.srv.nshards)
		}
		if len(n.out[s]) == 0 {
			n.targets = append(n.targets, s)
		}
		n.out[s] = append(n.out[s], msg)
	}
}

// flushNotes delivers the queued messages: this shard's at once, each
// other shard's in one mailbox message (runtime.Loop.BeforeWait, ahead of
// flushPushed, which sends what was pushed).
func (w *worker) flushNotes() {
	n := &w.notify
	for _, s := range n.targets {
		msgs := n.out[s]
		n.out[s] = nil
		if s == w.id {
			w.deliverAll(msgs)
			continue
		}
		target := w.srv.workers[s]
		w.send(target, func() { target.deliverAll(msgs) })
	}
	n.targets = n.targets[:0]
}

// deliverAll delivers messages to this shard's subscribers, in order.
func (w *worker) deliverAll(msgs []*pubMessage) {
	for _, m := range msgs {
		w.deliver(m)
	}
}

// eventLog records the events of a command run on a scratch keyspace (a
// gathered command, txn_gather.go), to be reported once its writes are
// stored back.
type eventLog struct {
	events []loggedEvent
}

type loggedEvent struct {
	class keyspace.EventClass
	event string
	key   []byte
	db    int
}

func (l *eventLog) Notify(class keyspace.EventClass, event string, key []byte, db int) {
	l.events = append(l.events, loggedEvent{class, event, append([]byte(nil), key...), db})
}

// replay reports the recorded events to w, as its own keyspace would.
func (l *eventLog) replay(w *worker) {
	for _, e := range l.events {
		w.Notify(e.class, e.event, e.key, e.db)
	}
}
