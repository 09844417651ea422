package server

import "strings"

// CLIENT REPLY ON|OFF|SKIP, as Redis 7.0 has it: under OFF a connection's
// commands run and answer nothing (errors included); SKIP drops the reply
// of the next command only; ON answers OK and replies again. OFF and
// SKIP answer nothing themselves. Messages pushed to the connection
// (Pub/Sub, invalidations) are not replies and still go.

// replyMode is a connection's CLIENT REPLY setting.
type replyMode uint8

const (
	replyOn   replyMode = iota
	replyOff            // CLIENT REPLY OFF
	replySkip           // CLIENT REPLY SKIP: the next command's reply is dropped
)

// clientReply is CLIENT REPLY ON|OFF|SKIP.
func clientReply(c *conn, args [][]byte) {
	switch strings.ToLower(string(args[2])) {
	case "on":
		c.reply = replyOn
		c.replyForced = true
		c.ok()
	case "off":
		c.reply = replyOff
	case "skip":
		if c.reply != replyOff {
			c.reply = replySkip
		}
	default:
		c.errorReply("ERR syntax error")
	}
}

// dispatchSilenced runs a command whose reply CLIENT REPLY suppresses:
// what it wrote to the output is cut, and its queued replies (from other
// shards, or a blocked command's) are marked to be dropped when they come.
// A CLIENT REPLY ON among them keeps its OK, as in Redis.
func (c *conn) dispatchSilenced(args [][]byte) {
	skip := c.reply == replySkip
	if skip {
		c.reply = replyOn // this command's reply is the one skipped
	}
	wasEmpty, n0, start := c.queue.empty(), len(c.queue.items), len(c.out.Buf)
	c.replyForced = false
	c.dispatchCommand(args)
	if c.pauseHeld && skip {
		c.reply = replySkip // held, not run: the skip waits for it
	}
	if c.replyForced {
		return
	}
	from := n0
	if wasEmpty {
		// Nothing was queued before: whatever is queued now is this
		// command's, and only it wrote to the output since start.
		from = c.queue.head
		if len(c.out.Buf) > start {
			c.out.Buf = c.out.Buf[:start]
		}
	}
	for _, p := range c.queue.items[from:] {
		p.drop = true
	}
}
