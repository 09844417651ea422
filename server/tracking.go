package server

import (
	"slices"
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// CLIENT TRACKING: server-assisted client-side caching, by Redis 7.0's
// rules (src/tracking.c, tests/unit/tracking.tcl).
//
// Where the pieces live:
//   - a connection's mode (connTracking) is its own, on its shard;
//   - the keys a tracking client read are remembered on the shard that
//     owns each key (tracking_table.go), with the ids of the clients that
//     read them; a write of the key there (the keyspace's Tracker hook)
//     takes the key out and queues an invalidation for each id;
//   - the BCAST prefixes are a server-wide directory (tracking_bcast.go)
//     that every shard matches the keys it changes against;
//   - invalidations go out before the shard's loop waits, one message per
//     home shard, and the client's home delivers them, following a
//     REDIRECT to the shard of the client it names (tracking_send.go).
//
// Order: a read's keys are remembered on their shard before the read runs
// there (rememberReads runs at dispatch, and its message to another shard
// goes out before the command's batch), so a write after the read always
// finds them. An invalidation reaches the client after every reply it owed
// when the invalidation arrived (pushBehind), so it never comes before the
// reply of the read it invalidates, and one that the client's own command
// caused comes after that command's reply, as in Redis.
//
// Nothing of it is persisted: after a restart clients reconnect and enable
// tracking again, with empty caches, as with Redis.

// connTracking is a connection's CLIENT TRACKING mode; nil while off.
type connTracking struct {
	redirect                     int64 // client id the invalidations go to; 0: this one
	bcast, optin, optout, noloop bool
	// caching is CLIENT CACHING yes (OPTIN) or no (OPTOUT) given for the
	// next command (Redis's CLIENT_TRACKING_CACHING).
	caching bool
	// broken: the redirect client was gone when an invalidation was due.
	broken bool
	// prefixes are the BCAST prefixes, in the order given ("" for all).
	prefixes []string
}

// trackingOptions are CLIENT TRACKING's parsed options.
type trackingOptions struct {
	redirect                     int64
	bcast, optin, optout, noloop bool
	prefixes                     []string
}

// clientTracking is CLIENT TRACKING on|off [REDIRECT id] [BCAST]
// [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP], with Redis's checks in
// Redis's order.
func clientTracking(c *conn, args [][]byte) {
	var o trackingOptions
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		switch opt := strings.ToLower(string(args[j])); {
		case opt == "redirect" && more:
			j++
			if o.redirect != 0 {
				c.errorReply("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := keyspace.ParseInt(args[j])
			if !ok {
				c.errorReply("ERR value is not an integer or out of range")
				return
			}
			if _, ok := c.w.srv.homeOf(id); !ok {
				c.errorReply("ERR The client ID you want redirect to does not exist")
				return
			}
			o.redirect = id
		case opt == "bcast":
			o.bcast = true
		case opt == "optin":
			o.optin = true
		case opt == "optout":
			o.optout = true
		case opt == "noloop":
			o.noloop = true
		case opt == "prefix" && more:
			j++
			o.prefixes = append(o.prefixes, string(args[j]))
		default:
			c.errorReply("ERR syntax error")
			return
		}
	}
	switch strings.ToLower(string(args[2])) {
	case "on":
		if msg := c.trackingOnError(&o); msg != "" {
			c.errorReply(msg)
			return
		}
		c.enableTracking(&o)
	case "off":
		c.disableTracking()
		c.ok()
	default:
		c.errorReply("ERR syntax error")
	}
}

// trackingOnError checks CLIENT TRACKING on's options against each other
// and against the connection's mode.
func (c *conn) trackingOnError(o *trackingOptions) string {
	t := c.track
	switch {
	case !o.bcast && len(o.prefixes) > 0:
		return "ERR PREFIX option requires BCAST mode to be enabled"
	case t != nil && t.bcast != o.bcast:
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	case o.bcast && (o.optin || o.optout):
		return "ERR OPTIN and OPTOUT are not compatible with BCAST"
	case o.optin && o.optout:
		return "ERR You can't specify both OPTIN mode and OPTOUT mode"
	case t != nil && (o.optin && t.optout || o.optout && t.optin):
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	}
	if o.bcast {
		return prefixCollision(c.track, o.prefixes)
	}
	return ""
}

// prefixCollision is Redis's checkPrefixCollisionsOrReply: no two
// prefixes of one client may both match a key (one starts the other).
func prefixCollision(t *connTracking, prefixes []string) string {
	overlap := func(a, b string) bool {
		return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
	}
	for i, p := range prefixes {
		if t != nil {
			for _, have := range t.prefixes {
				if overlap(have, p) {
					return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + have + "'. Prefixes for a single client must not overlap."
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// enableTracking is Redis's enableTracking, then the OK. A BCAST client's
// OK waits until every shard knows its prefixes, so that a write any
// client makes after the OK is broadcast.
func (c *conn) enableTracking(o *trackingOptions) {
	t := c.track
	if t == nil {
		t = &connTracking{}
		c.track = t
		c.w.srv.tracking.clients.Add(1)
	}
	t.redirect, t.broken = o.redirect, false
	t.bcast, t.optin, t.optout, t.noloop = o.bcast, o.optin, o.optout, o.noloop
	if !o.bcast {
		c.ok()
		return
	}
	added := o.prefixes
	if len(added) == 0 {
		added = []string{""}
	}
	var fresh []string
	for _, p := range added {
		if !slices.Contains(t.prefixes, p) {
			t.prefixes = append(t.prefixes, p)
			fresh = append(fresh, p)
		}
	}
	c.w.srv.tracking.addPrefixes(fresh, c.id, c.w.id)
	c.fanoutCollect(func(w *worker, _ int) { w.track.updateGate() }, func(w *resp.Writer) { w.SimpleString("OK") })
}

// disableTracking is Redis's disableTracking (CLIENT TRACKING off, RESET,
// a closed connection). The keys the client read stay in the shards'
// tables until written, as in Redis: an invalidation for a client that no
// longer tracks is dropped at its home.
func (c *conn) disableTracking() {
	t := c.track
	if t == nil {
		return
	}
	if t.bcast {
		c.w.srv.tracking.removePrefixes(t.prefixes, c.id)
	}
	c.track = nil
	c.w.srv.tracking.clients.Add(-1)
}

// clientCaching is CLIENT CACHING yes|no.
func clientCaching(c *conn, args [][]byte) {
	t := c.track
	if t == nil {
		c.errorReply("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch strings.ToLower(string(args[2])) {
	case "yes":
		if !t.optin {
			c.errorReply("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case "no":
		if !t.optout {
			c.errorReply("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.errorReply("ERR syntax error")
		return
	}
	t.caching = true
	c.ok()
}

// clientGetRedir is CLIENT GETREDIR: the redirect id, 0 for none, -1
// when tracking is off.
func clientGetRedir(c *conn) {
	id := c.redir()
	c.replyLocal(func(w *resp.Writer) { w.Int(id) })
}

// clientTrackingInfo is CLIENT TRACKINGINFO: flags, redirect, prefixes.
func clientTrackingInfo(c *conn) {
	t := c.track
	flags := []string{"off"}
	redirect := int64(-1)
	var prefixes []string
	if t != nil {
		flags = []string{"on"}
		add := func(on bool, name string) {
			if on {
				flags = append(flags, name)
			}
		}
		add(t.bcast, "bcast")
		add(t.optin, "optin")
		add(t.optin && t.caching, "caching-yes")
		add(t.optout, "optout")
		add(t.optout && t.caching, "caching-no")
		add(t.noloop, "noloop")
		add(t.broken, "broken_redirect")
		redirect = t.redirect
		prefixes = slices.Sorted(slices.Values(t.prefixes)) // Redis's radix tree order
	}
	c.replyLocal(func(w *resp.Writer) {
		w.MapHeader(3)
		w.BulkString("flags")
		w.SetHeader(len(flags))
		for _, f := range flags {
			w.BulkString(f)
		}
		w.BulkString("redirect")
		w.Int(redirect)
		w.BulkString("prefixes")
		w.ArrayHeader(len(prefixes))
		for _, p := range prefixes {
			w.BulkString(p)
		}
	})
}

// tracksReads reports whether the keys of a read-only command this client
// runs now are to be remembered: tracking on, not BCAST, and the OPTIN or
// OPTOUT rule (Redis's trackingRememberKeys).
func (c *conn) tracksReads() bool {
	t := c.track
	return t != nil && !t.bcast && !(t.optin && !t.caching) && !(t.optout && t.caching)
}

// afterCommand ends the effect of CLIENT CACHING: it covers the next
// command only, or the whole transaction when given before or inside
// MULTI (Redis clears CLIENT_TRACKING_CACHING after any command but a
// CLIENT command, outside MULTI).
func (c *conn) afterCommand(cmd *command) {
	if t := c.track; t != nil && t.caching && c.multi == nil && cmd.name != "client" {
		t.caching = false
	}
}

// rememberReads remembers, for a tracking client, the keys of the
// read-only command it is about to run, on the shard of each key: here at
// once, on another shard by a message that goes out before the command.
func (c *conn) rememberReads(spec *keyspace.CommandSpec, args [][]byte) {
	if !spec.ReadOnly() || !c.tracksReads() {
		return
	}
	var posBuf [16]int
	pos := keyPositions(spec, args, posBuf[:0])
	var remote map[int][][]byte
	for _, p := range pos {
		s := c.w.srv.shardOf(args[p])
		if s == c.w.id {
			c.w.track.remember(args[p], c.id)
			continue
		}
		if remote == nil {
			remote = map[int][][]byte{}
		}
		remote[s] = append(remote[s], append([]byte(nil), args[p]...))
	}
	id := c.id
	for s, keys := range remote {
		tw := c.w.srv.workers[s]
		c.w.send(tw, func() {
			for _, k := range keys {
				tw.track.remember(k, id)
			}
		})
	}
}

// redir is CLIENT LIST's redir field: the redirect id, 0 for none, -1
// when tracking is off (as CLIENT GETREDIR).
func (c *conn) redir() int64 {
	if c.track == nil {
		return -1
	}
	return c.track.redirect
}
