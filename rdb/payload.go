package rdb

import (
	"encoding/binary"
	"errors"
)

// A DUMP payload (Redis's createDumpPayload and verifyDumpPayload) is an
// object's RDB type byte and encoding followed by a footer: the RDB
// version, two bytes little-endian, and the CRC-64 of everything before
// the CRC, eight bytes little-endian.

// Version is the RDB version Redis 7.0 writes, and the highest this
// package reads.
const Version = 10

// footerLen is the length of a payload's footer.
const footerLen = 10

// ErrPayload is VerifyPayload's error: a payload too short, of a later RDB
// version, or whose checksum does not match (Redis's "DUMP payload version
// or checksum are wrong").
var ErrPayload = errors.New("rdb: DUMP payload version or checksum are wrong")

// AppendFooter appends the version and checksum of a DUMP payload to b,
// which holds the object from b[start:]: the payload is b[start:].
func AppendFooter(b []byte, start int) []byte {
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b[start:]))
}

// VerifyPayload checks a DUMP payload's footer and returns the object's
// bytes (type byte and encoding), aliasing p.
func VerifyPayload(p []byte) ([]byte, error) {
	if len(p) < footerLen {
		return nil, ErrPayload
	}
	body := len(p) - footerLen
	if binary.LittleEndian.Uint16(p[body:]) > Version {
		return nil, ErrPayload
	}
	if CRC64(0, p[:body+2]) != binary.LittleEndian.Uint64(p[body+2:]) {
		return nil, ErrPayload
	}
	return p[:body:body], nil
}

// Dump returns the DUMP payload of o.
func Dump(o *Object) []byte {
	return AppendFooter(AppendObject(nil, o), 0)
}

// Restore decodes a DUMP payload: ErrPayload when the footer is wrong, an
// error wrapping ErrFormat when the object does not decode. As Redis,
// bytes between the object and the footer are ignored. The Object's
// slices may alias p.
func Restore(p []byte) (Object, error) {
	body, err := VerifyPayload(p)
	if err != nil {
		return Object{}, err
	}
	o, _, err := DecodeObject(body)
	return o, err
}
