package rdb

import "math"

// The RDB type bytes (Redis's RDB_TYPE_*) of the values this package
// reads or writes.
const (
	TypeString         = 0
	TypeList           = 1
	TypeSet            = 2
	TypeZSet           = 3
	TypeHash           = 4
	TypeZSet2          = 5
	TypeSetIntset      = 11
	TypeHashListpack   = 16
	TypeZSetListpack   = 17
	TypeListQuicklist2 = 18
)

// The containers of a QUICKLIST_2 node.
const (
	nodePlain  = 1
	nodePacked = 2
)

// Kind is the data type of an Object.
type Kind uint8

// The kinds of Object.
const (
	KindString Kind = iota
	KindList
	KindSet
	KindZSet
	KindHash
)

// Object is a value in a form independent of any representation. Which
// fields hold it depends on Kind:
//
//	KindString  String
//	KindList    Members, head to tail
//	KindSet     Members
//	KindZSet    Members and Scores, in pairs (in no required order)
//	KindHash    Members (the fields) and Values, in pairs
//
// A decoded Object's slices may alias the decoder's input. A decoded
// collection is never empty and never holds a member (set, sorted set) or
// field (hash) twice, nor a NaN score.
type Object struct {
	Kind    Kind
	String  []byte
	Members [][]byte
	Values  [][]byte
	Scores  []float64
}

// AppendObject appends o's RDB type byte and encoding to dst, in the
// plain encodings (see the package documentation).
func AppendObject(dst []byte, o *Object) []byte {
	switch o.Kind {
	case KindString:
		dst = append(dst, TypeString)
		return AppendString(dst, o.String)
	case KindList:
		dst = append(dst, TypeList)
		return appendStrings(dst, o.Members)
	case KindSet:
		dst = append(dst, TypeSet)
		return appendStrings(dst, o.Members)
	case KindZSet:
		dst = append(dst, TypeZSet2)
		dst = AppendLen(dst, uint64(len(o.Members)))
		for i, m := range o.Members {
			dst = AppendString(dst, m)
			dst = AppendBinaryDouble(dst, o.Scores[i])
		}
		return dst
	case KindHash:
		dst = append(dst, TypeHash)
		dst = AppendLen(dst, uint64(len(o.Members)))
		for i, f := range o.Members {
			dst = AppendString(dst, f)
			dst = AppendString(dst, o.Values[i])
		}
		return dst
	}
	panic("rdb: an Object of unknown kind")
}

// appendStrings appends a count and the strings.
func appendStrings(dst []byte, ss [][]byte) []byte {
	dst = AppendLen(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = AppendString(dst, s)
	}
	return dst
}

// DecodeObject decodes the RDB type byte and encoding at the start of b,
// and returns the object and the bytes after it.
func DecodeObject(b []byte) (Object, []byte, error) {
	r := &reader{b: b}
	t, err := r.readByte()
	if err != nil {
		return Object{}, nil, err
	}
	o, err := r.readObject(t)
	if err != nil {
		return Object{}, nil, err
	}
	return o, b[r.off:], nil
}

// readObject reads the encoding of a value of RDB type t.
func (r *reader) readObject(t byte) (Object, error) {
	switch t {
	case TypeString:
		s, err := r.readString()
		return Object{Kind: KindString, String: s}, err
	case TypeList:
		ms, err := r.readStrings()
		if err != nil {
			return Object{}, err
		}
		return Object{Kind: KindList, Members: ms}, nil
	case TypeListQuicklist2:
		return r.readQuicklist2()
	case TypeSet:
		ms, err := r.readStrings()
		if err != nil {
			return Object{}, err
		}
		return newSet(ms)
	case TypeSetIntset:
		blob, err := r.readString()
		if err != nil {
			return Object{}, err
		}
		ms, err := intsetMembers(blob)
		if err != nil {
			return Object{}, err
		}
		return newSet(ms)
	case TypeZSet, TypeZSet2:
		return r.readZSet(t == TypeZSet2)
	case TypeZSetListpack:
		es, err := r.readListpack()
		if err != nil {
			return Object{}, err
		}
		return zsetFromPairs(es)
	case TypeHash:
		return r.readHash()
	case TypeHashListpack:
		es, err := r.readListpack()
		if err != nil {
			return Object{}, err
		}
		if len(es)%2 != 0 {
			return Object{}, formatErr("hash listpack of %d entries", len(es))
		}
		o := Object{Kind: KindHash}
		for i := 0; i < len(es); i += 2 {
			o.Members = append(o.Members, es[i])
			o.Values = append(o.Values, es[i+1])
		}
		return newHash(o)
	}
	return Object{}, formatErr("unsupported RDB type %d", t)
}

// readStrings reads a count and that many strings; the count must not be
// zero (Redis keeps no empty collection).
func (r *reader) readStrings() ([][]byte, error) {
	n, err := r.readCount(1)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, formatErr("empty collection")
	}
	out := make([][]byte, 0, n)
	for range n {
		s, err := r.readString()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// readListpack reads a string holding a listpack and returns its entries,
// refusing an empty one.
func (r *reader) readListpack() ([][]byte, error) {
	blob, err := r.readString()
	if err != nil {
		return nil, err
	}
	es, err := listpackEntries(blob)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, formatErr("empty listpack")
	}
	return es, nil
}

// readQuicklist2 reads a list of RDB_TYPE_LIST_QUICKLIST_2: a count of
// nodes, each a container (plain: one element; packed: a listpack) and a
// string. As Redis, an empty listpack node is skipped; a list with no
// element at all is refused.
func (r *reader) readQuicklist2() (Object, error) {
	n, err := r.readCount(2)
	if err != nil {
		return Object{}, err
	}
	o := Object{Kind: KindList}
	for range n {
		container, special, err := r.readLen()
		if err != nil {
			return Object{}, err
		}
		if special || container != nodePlain && container != nodePacked {
			return Object{}, formatErr("quicklist node of container %d", container)
		}
		data, err := r.readString()
		if err != nil {
			return Object{}, err
		}
		if len(data) == 0 {
			return Object{}, formatErr("empty quicklist node")
		}
		if container == nodePlain {
			o.Members = append(o.Members, data)
			continue
		}
		es, err := listpackEntries(data)
		if err != nil {
			return Object{}, err
		}
		o.Members = append(o.Members, es...)
	}
	if len(o.Members) == 0 {
		return Object{}, formatErr("empty list")
	}
	return o, nil
}

// readZSet reads RDB_TYPE_ZSET_2 (binary scores) or RDB_TYPE_ZSET
// (decimal scores).
func (r *reader) readZSet(binary bool) (Object, error) {
	n, err := r.readCount(2)
	if err != nil {
		return Object{}, err
	}
	if n == 0 {
		return Object{}, formatErr("empty sorted set")
	}
	o := Object{Kind: KindZSet, Members: make([][]byte, 0, n), Scores: make([]float64, 0, n)}
	for range n {
		m, err := r.readString()
		if err != nil {
			return Object{}, err
		}
		var s float64
		if binary {
			s, err = r.readBinaryDouble()
		} else {
			s, err = r.readDecimalDouble()
		}
		if err != nil {
			return Object{}, err
		}
		o.Members = append(o.Members, m)
		o.Scores = append(o.Scores, s)
	}
	return newZSet(o)
}

// zsetFromPairs builds a sorted set from a listpack's member, score pairs.
func zsetFromPairs(es [][]byte) (Object, error) {
	if len(es)%2 != 0 {
		return Object{}, formatErr("sorted set listpack of %d entries", len(es))
	}
	o := Object{Kind: KindZSet}
	for i := 0; i < len(es); i += 2 {
		s, err := parseScore(es[i+1])
		if err != nil {
			return Object{}, err
		}
		o.Members = append(o.Members, es[i])
		o.Scores = append(o.Scores, s)
	}
	return newZSet(o)
}

// readHash reads RDB_TYPE_HASH: a count of pairs, then field and value.
func (r *reader) readHash() (Object, error) {
	n, err := r.readCount(2)
	if err != nil {
		return Object{}, err
	}
	if n == 0 {
		return Object{}, formatErr("empty hash")
	}
	o := Object{Kind: KindHash, Members: make([][]byte, 0, n), Values: make([][]byte, 0, n)}
	for range n {
		f, err := r.readString()
		if err != nil {
			return Object{}, err
		}
		v, err := r.readString()
		if err != nil {
			return Object{}, err
		}
		o.Members = append(o.Members, f)
		o.Values = append(o.Values, v)
	}
	return newHash(o)
}

// newSet checks that no member repeats.
func newSet(ms [][]byte) (Object, error) {
	if len(ms) == 0 {
		return Object{}, formatErr("empty set")
	}
	if dup(ms) {
		return Object{}, formatErr("set member repeated")
	}
	return Object{Kind: KindSet, Members: ms}, nil
}

// newZSet checks that no member repeats and no score is NaN.
func newZSet(o Object) (Object, error) {
	for _, s := range o.Scores {
		if math.IsNaN(s) {
			return Object{}, formatErr("NaN score")
		}
	}
	if dup(o.Members) {
		return Object{}, formatErr("sorted set member repeated")
	}
	return o, nil
}

// newHash checks that no field repeats.
func newHash(o Object) (Object, error) {
	if dup(o.Members) {
		return Object{}, formatErr("hash field repeated")
	}
	return o, nil
}

// dup reports whether a string appears twice in ss.
func dup(ss [][]byte) bool {
	seen := make(map[string]struct{}, len(ss))
	for _, s := range ss {
		if _, ok := seen[string(s)]; ok {
			return true
		}
		seen[string(s)] = struct{}{}
	}
	return false
}
