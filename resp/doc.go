// Package resp speaks the Redis serialization protocol (RESP) on behalf of
// moond: it parses client requests and encodes replies.
//
// Requests arrive either as multibulk commands (*N\r\n$len\r\narg\r\n...),
// which is what every client library sends, or as inline commands (a line of
// space-separated words, as typed into telnet). [Parser] reads both from a
// byte buffer incrementally, with Redis's hard limits and Redis's error texts,
// so that oversized or malformed input is refused exactly as Redis refuses it.
//
// Replies are built with [Writer], which appends them to a byte slice in the
// connection's protocol version: RESP2, or RESP3 after HELLO 3.
//
// The server splits multi-key commands per shard and reassembles the shards'
// replies; [NextReply] and [SplitArray] cut an encoded reply buffer back into
// whole replies and into the elements of an array reply.
//
// The package imports nothing of moond and allocates nothing per command or
// per reply in steady state.
package resp
