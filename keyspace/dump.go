package keyspace

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/moond-db/moond/rdb"
)

// DUMP and RESTORE's serialization: a value in Redis's RDB encoding
// (package rdb), so that what redis-server 7.0 dumps restores here and
// back. DUMP writes each kind's encoding straight from the value; RESTORE
// decodes the payload into an rdb.Object, writes that in the kind's heap
// encoding (heapcodec.go) and builds the value with the kind's decoder,
// which checks it whole and picks the representation the keyspace's
// encoding limits call for, as Redis's rdbLoadObject does with its own.

// appendDump appends the DUMP payload of v to dst: its encoding and the
// footer (RDB version and CRC-64).
func appendDump(dst []byte, v value) []byte {
	start := len(dst)
	return rdb.AppendFooter(appendEncoding(dst, v), start)
}

// appendEncoding appends v's type byte and RDB encoding, DUMP's payload
// without its footer (an RDB file's entry has none).
func appendEncoding(dst []byte, v value) []byte {
	switch v.kind() {
	case KindString:
		dst = append(dst, rdb.TypeString)
		if v.isInt() {
			dst = rdb.AppendInt(dst, v.intVal())
		} else {
			dst = rdb.AppendString(dst, v.bytes())
		}
	case KindList:
		l := (*list)(v.p)
		dst = append(dst, rdb.TypeList)
		dst = rdb.AppendLen(dst, uint64(l.len()))
		for ni := 0; ni < l.numNodes(); ni++ {
			n := l.node(ni)
			for p := int(n.lo); p < len(n.b); {
				var e []byte
				e, p = readFwd(n.b, p)
				dst = rdb.AppendString(dst, e)
			}
		}
	case KindSet:
		dst = append(dst, rdb.TypeSet)
		dst = rdb.AppendLen(dst, uint64(setCard(v.p)))
		setEach(v.p, func(m []byte) { dst = rdb.AppendString(dst, m) })
	case KindZSet:
		z := (*zset)(v.p)
		dst = append(dst, rdb.TypeZSet2)
		dst = rdb.AppendLen(dst, uint64(z.card()))
		each := func(m []byte, s float64) {
			dst = rdb.AppendString(dst, m)
			dst = rdb.AppendBinaryDouble(dst, s)
		}
		if z.sk == nil {
			z.lp.each(0, z.lp.count()-1, false, each)
		} else {
			for x := z.sk.header.lv(0).forward; x != nil; x = x.lv(0).forward {
				each(unsafeBytes(x.member), x.score)
			}
		}
	case KindHash:
		dst = append(dst, rdb.TypeHash)
		dst = rdb.AppendLen(dst, uint64(hashLen(v.p)))
		hashEach(v.p, func(f, val []byte) bool {
			dst = rdb.AppendString(dst, f)
			dst = rdb.AppendString(dst, val)
			return true
		})
	default:
		panic("keyspace: DUMP of a value of kind " + v.kind().String())
	}
	return dst
}

// restoredValue builds the value an rdb.Object describes, a new one that
// owns its memory. An object the kind's decoder refuses (it should not:
// rdb checks what the decoders check) is an error.
func (ks *Keyspace) restoredValue(o *rdb.Object) (value, error) {
	var enc []byte
	var k Kind
	switch o.Kind {
	case rdb.KindString:
		return newStringValue(o.String), nil
	case rdb.KindList:
		k = KindList
		enc = binary.AppendUvarint(enc, uint64(len(o.Members)))
		enc = appendUvarintStrings(enc, o.Members)
	case rdb.KindSet:
		k = KindSet
		enc = append(enc, setCodecStrings)
		enc = binary.AppendUvarint(enc, uint64(len(o.Members)))
		enc = appendUvarintStrings(enc, o.Members)
	case rdb.KindHash:
		k = KindHash
		enc = binary.AppendUvarint(enc, uint64(len(o.Members)))
		for i, f := range o.Members {
			enc = appendUvarintStrings(enc, [][]byte{f, o.Values[i]})
		}
	case rdb.KindZSet:
		// The heap encoding is in the set's order: by score, then member.
		k = KindZSet
		order := make([]int, len(o.Members))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			sa, sb := o.Scores[a], o.Scores[b]
			switch {
			case sa < sb:
				return -1
			case sa > sb:
				return 1
			}
			return bytes.Compare(o.Members[a], o.Members[b])
		})
		enc = binary.AppendUvarint(enc, uint64(len(order)))
		for _, i := range order {
			enc = appendZEntry(enc, o.Members[i], o.Scores[i])
		}
	default:
		return value{}, rdb.ErrFormat
	}
	return ks.decodeValue(k, enc)
}

// appendUvarintStrings appends each string as uvarint(length) ‖ bytes.
func appendUvarintStrings(dst []byte, ss [][]byte) []byte {
	for _, s := range ss {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}
