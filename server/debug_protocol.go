package server

import (
	"strings"

	"github.com/moond-db/moond/resp"
)

// debugProtocol is DEBUG PROTOCOL <type>: a sample reply of each RESP
// type, in the connection's protocol, as Redis's tests of clients and of
// RESP3 use it. An attribute (RESP3 only: moond sends none otherwise) and
// a push (RESP3 only: an error under RESP2) are followed by a plain reply,
// as in Redis.
func debugProtocol(c *conn, name []byte) {
	typ := strings.ToLower(string(name))
	write, ok := debugProtocolReplies[typ]
	if typ == "push" && c.out.Proto < 3 {
		c.errorReply("ERR RESP2 is not supported by this command")
		return
	}
	if !ok {
		c.errorReply("ERR Wrong protocol type name. Please use one of the following: " +
			"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
		return
	}
	c.replyLocal(write)
}

// debugProtocolReplies write DEBUG PROTOCOL's reply of each type.
var debugProtocolReplies = map[string]func(w *resp.Writer){
	"string":  func(w *resp.Writer) { w.BulkString("Hello World") },
	"integer": func(w *resp.Writer) { w.Int(12345) },
	"double":  func(w *resp.Writer) { w.Double(3.141) },
	"bignum":  func(w *resp.Writer) { w.BigNumber("1234567999999999999999999999999999999") },
	"null":    func(w *resp.Writer) { w.Null() },
	"array": func(w *resp.Writer) {
		w.ArrayHeader(3)
		for j := range int64(3) {
			w.Int(j)
		}
	},
	"set": func(w *resp.Writer) {
		w.SetHeader(3)
		for j := range int64(3) {
			w.Int(j)
		}
	},
	"map": func(w *resp.Writer) {
		w.MapHeader(3)
		for j := range int64(3) {
			w.Int(j)
			w.Bool(j == 1)
		}
	},
	"attrib": func(w *resp.Writer) {
		if w.Proto == 3 {
			w.Raw([]byte("|1\r\n"))
			w.BulkString("key-popularity")
			w.ArrayHeader(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	},
	"push": func(w *resp.Writer) {
		w.PushHeader(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	},
	"true":     func(w *resp.Writer) { w.Bool(true) },
	"false":    func(w *resp.Writer) { w.Bool(false) },
	"verbatim": func(w *resp.Writer) { w.Verbatim("txt", []byte("This is a verbatim\nstring")) },
}
