package keyspace

import (
	"bytes"
	"math"
	"testing"
)

func TestHeapKeyRoundTrip(t *testing.T) {
	for _, c := range []struct {
		db  int
		key string
	}{{0, ""}, {0, "k"}, {15, "key:1"}, {127, "x"}, {128, "x"}, {300, "\x00\xff"}, {math.MaxInt32, "big"}} {
		hk := AppendHeapKey([]byte("prefix"), c.db, []byte(c.key))[len("prefix"):]
		db, key, err := DecodeHeapKey(hk)
		if err != nil || db != c.db || string(key) != c.key {
			t.Errorf("(%d, %q): heap key %x decodes to (%d, %q, %v)", c.db, c.key, hk, db, key, err)
		}
	}
	if hk := AppendHeapKey(nil, 1, []byte("k")); !bytes.Equal(hk, []byte("\x01k")) {
		t.Errorf("heap key of (1, k) = %x, want uvarint(1) ‖ k", hk)
	}
}

func TestDecodeHeapKeyRefusesMalformedKeys(t *testing.T) {
	for _, hk := range []string{
		"",                      // no database
		"\x80",                  // truncated uvarint
		"\x80\x00k",             // 0 in two bytes: not the shortest form
		"\x81\x00k",             // 1 in two bytes
		"\x80\x80\x80\x80\x08k", // 2^31: past int32
		"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7fk", // 64-bit overflow
	} {
		if db, key, err := DecodeHeapKey([]byte(hk)); err == nil {
			t.Errorf("heap key %x decodes to (%d, %q), want an error", hk, db, key)
		}
	}
}

func TestStringValueCodecGivesSETsRepresentation(t *testing.T) {
	ks := NewKeyspace(1, nil)
	for _, c := range []struct{ in, encoding string }{
		{"123", "int"}, {"-9223372036854775808", "int"}, {"9223372036854775808", "embstr"},
		{"0123", "embstr"}, {"", "embstr"}, {"hello", "embstr"}, {string(make([]byte, 45)), "raw"},
	} {
		v := newStringValue([]byte(c.in))
		enc := v.appendEncoded(nil)
		if string(enc) != c.in {
			t.Errorf("%q encodes to %q", c.in, enc)
		}
		got, err := ks.decodeValue(KindString, enc)
		if err != nil || got.encoding() != c.encoding || string(got.appendTo(nil)) != c.in {
			t.Errorf("%q decodes to %q (%s, %v), want encoding %s", c.in, got.appendTo(nil), got.encoding(), err, c.encoding)
		}
	}
	// A mutable buffer (APPEND's) encodes as its bytes and decodes as SET
	// would store them.
	b := bufValue([]byte("42"))
	if got, _ := ks.decodeValue(KindString, b.appendEncoded(nil)); got.encoding() != "int" || got.intVal() != 42 {
		t.Errorf("buffer 42 decodes to %s %q", got.encoding(), got.appendTo(nil))
	}
	for _, k := range []Kind{KindList, KindSet, KindZSet, KindHash, KindStream, 200} {
		// "x" is no kind's valid encoding (or the kind has none).
		if _, err := ks.decodeValue(k, []byte("x")); err == nil {
			t.Errorf("kind %d decodes x without an error", k)
		}
	}
}

// FuzzHeapCodec checks that heap keys and string values round-trip, and
// that DecodeHeapKey never panics and accepts only the canonical form.
func FuzzHeapCodec(f *testing.F) {
	f.Add([]byte("\x00k"), uint32(0), []byte("12"))
	f.Add([]byte("\x80\x01key"), uint32(128), []byte("-0"))
	f.Add([]byte{}, uint32(1<<31-1), []byte("x"))
	ks := NewKeyspace(1, nil)
	f.Fuzz(func(t *testing.T, raw []byte, db uint32, val []byte) {
		if d, key, err := DecodeHeapKey(raw); err == nil {
			if again := AppendHeapKey(nil, d, key); !bytes.Equal(again, raw) {
				t.Fatalf("heap key %x decodes to (%d, %q), which encodes to %x", raw, d, key, again)
			}
		}
		dbi := int(db & math.MaxInt32)
		hk := AppendHeapKey(nil, dbi, val)
		if d, key, err := DecodeHeapKey(hk); err != nil || d != dbi || !bytes.Equal(key, val) {
			t.Fatalf("(%d, %x): %x decodes to (%d, %x, %v)", dbi, val, hk, d, key, err)
		}
		v := newStringValue(val)
		got, err := ks.decodeValue(KindString, v.appendEncoded(nil))
		if err != nil || got.encoding() != v.encoding() || !bytes.Equal(got.appendTo(nil), val) {
			t.Fatalf("%q: decodes to %q (%s, %v), SET stores %s", val, got.appendTo(nil), got.encoding(), err, v.encoding())
		}
	})
}
