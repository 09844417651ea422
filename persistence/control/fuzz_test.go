package control

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzDecodeControl decodes arbitrary bytes, as they are and with a valid
// checksum; whatever decodes must encode back to the same bytes.
func FuzzDecodeControl(f *testing.F) {
	f.Add(sample().Encode())
	f.Add(Fresh(0).Encode())
	f.Add(make([]byte, Size))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(b []byte) {
			in := bytes.Clone(b)
			c, err := Decode(b)
			if !bytes.Equal(in, b) {
				t.Fatal("Decode modified its input")
			}
			if err != nil {
				return
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("decoded an invalid control: %v", err)
			}
			if !bytes.Equal(c.Encode(), b) {
				t.Fatal("re-encoding differs")
			}
		}
		check(b)
		if len(b) == Size {
			s := bytes.Clone(b)
			copy(s, Magic)
			binary.LittleEndian.PutUint32(s[offCRC:], crc32.Checksum(s[:offCRC], castagnoli))
			check(s)
		}
	})
}
