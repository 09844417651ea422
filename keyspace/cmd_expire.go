package keyspace

import "math"

// Expiry commands (Redis's expire.c).

// Flags of EXPIRE's options.
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// parseExpireFlags parses EXPIRE's NX|XX|GT|LT options. It returns the
// error reply, "" if none.
func parseExpireFlags(opts [][]byte) (int, string) {
	flags := 0
	for _, opt := range opts {
		switch {
		case equalFold(opt, "nx"):
			flags |= expNX
		case equalFold(opt, "xx"):
			flags |= expXX
		case equalFold(opt, "gt"):
			flags |= expGT
		case equalFold(opt, "lt"):
			flags |= expLT
		default:
			return 0, noNewlines("ERR Unsupported option " + cString(opt, len(opt)))
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		return 0, "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		return 0, "ERR GT and LT options at the same time are not compatible"
	}
	return flags, ""
}

// expireGeneric is EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT (Redis's
// expireGenericCommand): the time argument, in seconds or milliseconds, is
// added to base (now for the relative forms, 0 for the absolute ones).
func (ks *Keyspace) expireGeneric(c *Client, args [][]byte, w ReplyWriter, name string, base int64, seconds bool) {
	flags, msg := parseExpireFlags(args[3:])
	if msg != "" {
		w.Error(msg)
		return
	}
	when, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			w.Error(errInvalidExpire(name))
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		w.Error(errInvalidExpire(name))
		return
	}
	when += base
	key := args[1]
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		w.Int(0)
		return
	}
	d := ks.db(c)
	if flags != 0 {
		cur := ks.expiryOf(d, h, sl)
		if flags&expNX != 0 && cur != -1 ||
			flags&expXX != 0 && cur == -1 ||
			// No TTL counts as an infinite one: GT never beats it, LT always does.
			flags&expGT != 0 && (cur == -1 || when <= cur) ||
			flags&expLT != 0 && cur != -1 && when >= cur {
			w.Int(0)
			return
		}
	}
	if ks.alreadyExpired(when) {
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyGeneric, "del", key, c.DB)
		w.Int(1)
		return
	}
	ks.setExpiry(d, h, sl, when)
	ks.journalExpireAt(c.DB, key, when)
	ks.notify(NotifyGeneric, "expire", key, c.DB)
	w.Int(1)
}

func cmdExpire(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.expireGeneric(c, args, w, "expire", ks.now, true)
}

func cmdPExpire(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.expireGeneric(c, args, w, "pexpire", ks.now, false)
}

func cmdExpireAt(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.expireGeneric(c, args, w, "expireat", 0, true)
}

func cmdPExpireAt(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.expireGeneric(c, args, w, "pexpireat", 0, false)
}

// ttlGeneric is TTL, PTTL, EXPIRETIME and PEXPIRETIME: -2 for a missing
// key, -1 for a key without TTL, else the time left (or, if abs, the expiry
// time), in milliseconds or rounded to seconds.
func (ks *Keyspace) ttlGeneric(c *Client, key []byte, w ReplyWriter, ms, abs bool) {
	sl, h := ks.lookupReadNoTouch(c, key)
	if sl == nil {
		w.Int(-2)
		return
	}
	when := ks.expiryOf(ks.db(c), h, sl)
	if when == -1 {
		w.Int(-1)
		return
	}
	t := when
	if !abs {
		t = max(when-ks.now, 0)
	}
	if !ms {
		t = t/1000 + (t%1000+500)/1000 // (t+500)/1000 without overflow
	}
	w.Int(t)
}

func cmdTTL(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.ttlGeneric(c, args[1], w, false, false)
}

func cmdPTTL(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.ttlGeneric(c, args[1], w, true, false)
}

func cmdExpireTime(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.ttlGeneric(c, args[1], w, false, true)
}

func cmdPExpireTime(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.ttlGeneric(c, args[1], w, true, true)
}

func cmdPersist(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	sl, h := ks.lookupWrite(c, key)
	if sl != nil && ks.removeExpiry(ks.db(c), h, sl) {
		ks.journal(c.DB, "PERSIST", key)
		ks.notify(NotifyGeneric, "persist", key, c.DB)
		w.Int(1)
		return
	}
	w.Int(0)
}
