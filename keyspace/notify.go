package keyspace

import "strings"

// Keyspace notifications (Redis's notify.c, notify-keyspace-events): each
// command tells a Notifier what it did to which key, with the event name
// and class Redis's notifyKeyspaceEvent calls give, in the same order. The
// server publishes them on __keyspace@<db>__:<key> and
// __keyevent@<db>__:<event>. The keyspace only decides whether an event's
// class is on (one test of Keyspace.notifyOn per call site, so that a
// write pays nothing more while notifications are off) and never notifies
// while Loading: keys loaded at boot, journal replay and keys a reshard or
// a cross-shard command store back are not events.
//
// Where the events come from:
//   - each command in cmd_*.go calls ks.notify with its event after its
//     write, as Redis's t_*.c, db.c and bitops.c do;
//   - "new" (class n) from addKey, Redis's dbAdd: every key created;
//   - "expired" (class x) from expireKey: lazy expiry on access and the
//     active cycle alike;
//   - "keymiss" (class m) from lookupReadNoTouch, Redis's lookupKeyRead
//     on a miss;
//   - "evicted" (class e) from evictKey (evict.go), for each key maxmemory
//     evicts.

// EventClass is a set of notification classes: Redis's NOTIFY_* bits, with
// the same values.
type EventClass uint32

// The classes, with the character notify-keyspace-events names each by.
const (
	NotifyKeyspace EventClass = 1 << 0  // K: publish on __keyspace@<db>__:<key>
	NotifyKeyevent EventClass = 1 << 1  // E: publish on __keyevent@<db>__:<event>
	NotifyGeneric  EventClass = 1 << 2  // g: DEL, EXPIRE, RENAME, ...
	NotifyString   EventClass = 1 << 3  // $
	NotifyList     EventClass = 1 << 4  // l
	NotifySet      EventClass = 1 << 5  // s
	NotifyHash     EventClass = 1 << 6  // h
	NotifyZSet     EventClass = 1 << 7  // z
	NotifyExpired  EventClass = 1 << 8  // x
	NotifyEvicted  EventClass = 1 << 9  // e
	NotifyStream   EventClass = 1 << 10 // t: accepted; moond has no streams
	NotifyKeyMiss  EventClass = 1 << 11 // m
	NotifyModule   EventClass = 1 << 13 // d: accepted; moond has no modules
	NotifyNew      EventClass = 1 << 14 // n

	// NotifyAll is A: every type class, but neither m nor n (as in Redis).
	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZSet | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// eventClassChars pairs each character with its class, in the order
// String writes the type classes.
var eventClassChars = []struct {
	c     byte
	class EventClass
}{
	{'g', NotifyGeneric}, {'$', NotifyString}, {'l', NotifyList}, {'s', NotifySet},
	{'h', NotifyHash}, {'z', NotifyZSet}, {'x', NotifyExpired}, {'e', NotifyEvicted},
	{'t', NotifyStream}, {'d', NotifyModule}, {'n', NotifyNew},
	{'K', NotifyKeyspace}, {'E', NotifyKeyevent}, {'m', NotifyKeyMiss}, {'A', NotifyAll},
}

// ErrEventClass is the text Redis answers a notify-keyspace-events value
// with a character that names no class.
const ErrEventClass = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

// ParseEventClasses is Redis's keyspaceEventsStringToFlags: the classes a
// notify-keyspace-events value names, false when a character names none.
func ParseEventClasses(s string) (EventClass, bool) {
	var out EventClass
next:
	for i := 0; i < len(s); i++ {
		for _, e := range eventClassChars {
			if e.c == s[i] {
				out |= e.class
				continue next
			}
		}
		return 0, false
	}
	return out, true
}

// String is Redis's keyspaceEventsFlagsToString: the normalized form CONFIG
// GET answers ("KEA" reads back as "AKE").
func (c EventClass) String() string {
	var b strings.Builder
	if c&NotifyAll == NotifyAll {
		b.WriteByte('A')
	} else {
		for _, e := range eventClassChars[:11] {
			if c&e.class != 0 {
				b.WriteByte(e.c)
			}
		}
	}
	for _, e := range eventClassChars[11:14] {
		if c&e.class != 0 {
			b.WriteByte(e.c)
		}
	}
	return b.String()
}

// A Notifier receives the keyspace's events (the server publishes them).
// It is called on the shard's thread, in the order the events happen; it
// must not call back into the keyspace.
type Notifier interface {
	// Notify reports that event (of class) happened to key in the
	// database at logical index db (SELECT's). key is only valid during
	// the call.
	Notify(class EventClass, event string, key []byte, db int)
}

// SetNotify sets the classes the Notifier hears of. Events are published
// only when K or E is on too; without either, nothing is, and the keyspace
// skips every event.
func (ks *Keyspace) SetNotify(classes EventClass) {
	if classes&(NotifyKeyspace|NotifyKeyevent) == 0 {
		classes = 0
	}
	ks.notifyOn = classes &^ (NotifyKeyspace | NotifyKeyevent)
}

// NotifyClasses returns the type classes events are reported for (0 when
// notifications are off), as SetNotify left them.
func (ks *Keyspace) NotifyClasses() EventClass { return ks.notifyOn }

// notify reports an event on key of the database at logical index dbi, if
// its class is on. It inlines to one test.
func (ks *Keyspace) notify(class EventClass, event string, key []byte, dbi int) {
	if ks.notifyOn&class != 0 {
		ks.notifySlow(class, event, key, dbi)
	}
}

//go:noinline
func (ks *Keyspace) notifySlow(class EventClass, event string, key []byte, dbi int) {
	if ks.Notifier != nil && !ks.Loading {
		ks.Notifier.Notify(class, event, key, dbi)
	}
}

// notifyDB is notify for a database given by pointer (addKey's callers).
func (ks *Keyspace) notifyDB(class EventClass, event string, key []byte, d *db) {
	if ks.notifyOn&class != 0 {
		ks.notifySlow(class, event, key, ks.watch.logicalOf[d.phys])
	}
}
