package server

import "github.com/moond-db/moond/resp"

// replyValue is a reply recorded from redis-server: the COMMAND DOCS
// entries, command tips and key specs in command_docs.resp3 (command_docs_data.go). It keeps
// RESP3's kinds (map, set) so that one record answers both protocols:
// resp.Writer flattens maps and sets for a RESP2 client as Redis does.
type replyValue struct {
	kind  byte // '$' bulk string, '+' simple string, ':' integer, '*' array, '%' map, '~' set
	str   string
	num   int64
	elems []replyValue // an array's or set's elements; a map's keys and values, alternating
}

// write writes v to w in w's protocol.
func (v replyValue) write(w *resp.Writer) {
	switch v.kind {
	case '$':
		w.BulkString(v.str)
	case '+':
		w.SimpleString(v.str)
	case ':':
		w.Int(v.num)
	case '%':
		w.MapHeader(len(v.elems) / 2)
		v.writeElems(w)
	case '~':
		w.SetHeader(len(v.elems))
		v.writeElems(w)
	default:
		w.ArrayHeader(len(v.elems))
		v.writeElems(w)
	}
}

func (v replyValue) writeElems(w *resp.Writer) {
	for _, e := range v.elems {
		e.write(w)
	}
}

// field is the value of the map entry named key, and whether there is one.
func (v replyValue) field(key string) (replyValue, bool) {
	if v.kind != '%' {
		return replyValue{}, false
	}
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == key {
			return v.elems[i+1], true
		}
	}
	return replyValue{}, false
}
