package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestRecordRoundTripEveryType(t *testing.T) {
	cases := []struct {
		typ     RecordType
		payload []byte
	}{
		{RecordData, EncodeCommand(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})},
		{RecordData, nil},
		{RecordCheckpoint, []byte("redo=42")},
		{RecordSeal, AppendSeal(nil, Seal{Reason: SealRecovery, Truncated: 77})},
		{RecordData, bytes.Repeat([]byte{0xAB}, 1<<20)},
	}
	for i, c := range cases {
		lsn := uint64(1000 + i)
		b := AppendRecord([]byte("prefix"), lsn, c.typ, c.payload)
		if len(b) != len("prefix")+RecordSize(len(c.payload)) {
			t.Fatalf("%v: encoded %d bytes", c.typ, len(b))
		}
		rec, n, err := DecodeRecord(append(b[len("prefix"):], "trailing"...))
		if err != nil {
			t.Fatalf("%v: %v", c.typ, err)
		}
		if n != RecordSize(len(c.payload)) || rec.LSN != lsn || rec.Type != c.typ || !bytes.Equal(rec.Payload, c.payload) {
			t.Fatalf("%v: decoded %+v n=%d", c.typ, rec, n)
		}
		if rec.CRC != recordCRC(b) {
			t.Fatalf("%v: CRC %x, trailer %x", c.typ, rec.CRC, recordCRC(b))
		}
	}
}

func TestAppendRecordDoesNotAllocate(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 100)
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendRecord(buf[:0], 7, RecordData, payload)
	})
	if allocs != 0 {
		t.Fatalf("AppendRecord allocates %.1f times per call", allocs)
	}
}

func TestDecodeRecordDetectsCorruptionOfEveryField(t *testing.T) {
	payload := []byte("SET key value")
	good := AppendRecord(nil, 42, RecordData, payload)
	fields := []struct {
		name     string
		from, to int
	}{
		{"length", 0, 4},
		{"lsn", 4, 12},
		{"type", 12, 13},
		{"payload", 13, 13 + len(payload)},
		{"crc", 13 + len(payload), len(good)},
	}
	for _, f := range fields {
		t.Run(f.name, func(t *testing.T) {
			for i := f.from; i < f.to; i++ {
				for bit := range 8 {
					b := bytes.Clone(good)
					b[i] ^= 1 << bit
					// Keep bytes after the record, as in a segment, so that a
					// larger length does not simply run out of input.
					b = append(b, make([]byte, 64)...)
					if _, _, err := DecodeRecord(b); err == nil {
						t.Fatalf("byte %d bit %d flipped: decoded without error", i, bit)
					}
				}
			}
		})
	}
}

func TestDecodeRecordErrorsAreClassified(t *testing.T) {
	good := AppendRecord(nil, 5, RecordData, []byte("abc"))
	if _, _, err := DecodeRecord(good[:RecordHeaderSize-1]); !errors.Is(err, ErrIncomplete) {
		t.Errorf("short header: %v", err)
	}
	if _, _, err := DecodeRecord(good[:len(good)-1]); !errors.Is(err, ErrIncomplete) {
		t.Errorf("short record: %v", err)
	}
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint32(huge, MaxPayload+1)
	if _, _, err := DecodeRecord(huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge length: %v", err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	if _, _, err := DecodeRecord(bad); !errors.Is(err, ErrChecksum) {
		t.Errorf("bad crc: %v", err)
	}
	// Checksummed but invalid: these are never torn writes.
	if _, _, err := DecodeRecord(rechecksum(withByte(good, 12, 9))); !errors.Is(err, ErrInvalidType) {
		t.Errorf("type 9: %v", err)
	}
	if _, _, err := DecodeRecord(rechecksum(withByte(good, 12, 0))); !errors.Is(err, ErrInvalidType) {
		t.Errorf("type 0: %v", err)
	}
	zeroLSN := bytes.Clone(good)
	binary.LittleEndian.PutUint64(zeroLSN[4:], 0)
	if _, _, err := DecodeRecord(rechecksum(zeroLSN)); !errors.Is(err, ErrZeroLSN) {
		t.Errorf("LSN 0: %v", err)
	}
}

func TestZeroFilledBytesNeverDecode(t *testing.T) {
	for n := 0; n < 64; n++ {
		if _, _, err := DecodeRecord(make([]byte, n)); err == nil {
			t.Fatalf("%d zero bytes decoded as a record", n)
		}
	}
}

func TestAppendRecordPanicsOnInvalidInput(t *testing.T) {
	for name, f := range map[string]func(){
		"lsn 0":    func() { AppendRecord(nil, 0, RecordData, nil) },
		"type 0":   func() { AppendRecord(nil, 1, 0, nil) },
		"type 200": func() { AppendRecord(nil, 1, 200, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestSealPayloadRoundTrip(t *testing.T) {
	s := Seal{Reason: SealRecovery, Truncated: 1 << 40, Digest: 0xfeedface}
	got, err := DecodeSeal(AppendSeal(nil, s))
	if err != nil || got != s {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := DecodeSeal([]byte{1}); !errors.Is(err, ErrBadSeal) {
		t.Errorf("short seal: %v", err)
	}
	if _, err := DecodeSeal(AppendSeal(nil, Seal{Reason: 9})); !errors.Is(err, ErrBadSeal) {
		t.Errorf("bad reason: %v", err)
	}
}

// withByte returns a copy of b with b[i] = v.
func withByte(b []byte, i int, v byte) []byte {
	c := bytes.Clone(b)
	c[i] = v
	return c
}

// rechecksum recomputes the CRC of the single record in b, as a writer
// with a bug (or an attacker) would.
func rechecksum(b []byte) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[len(c)-4:], crc32c(c[:len(c)-4]))
	return c
}
