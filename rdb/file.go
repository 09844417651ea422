package rdb

import "encoding/binary"

// Writing an RDB file (what a master sends a replica in a full sync): the
// file's header, AUX fields, per database SELECTDB and RESIZEDB, then
// each key as [EXPIRETIME_MS ms] <type> <key> <value>, the EOF opcode and
// the CRC-64 of every byte before it. A key's <type> <value> is exactly a
// DUMP payload without its footer, so the keyspace's DUMP encoding is
// reused as it is.

// The opcodes a file written here uses (Redis's RDB_OPCODE_*).
const (
	OpAux          = 250
	OpResizeDB     = 251
	OpExpireTimeMS = 252
	OpSelectDB     = 254
	OpEOF          = 255
)

// AppendFileHeader appends "REDIS0010".
func AppendFileHeader(dst []byte) []byte {
	return append(dst, "REDIS0010"...)
}

// AppendAux appends an AUX field.
func AppendAux(dst []byte, key, val string) []byte {
	dst = append(dst, OpAux)
	dst = AppendString(dst, []byte(key))
	return AppendString(dst, []byte(val))
}

// AppendSelectDB appends SELECTDB db and RESIZEDB keys expires.
func AppendSelectDB(dst []byte, db, keys, expires int) []byte {
	dst = append(dst, OpSelectDB)
	dst = AppendLen(dst, uint64(db))
	dst = append(dst, OpResizeDB)
	dst = AppendLen(dst, uint64(keys))
	return AppendLen(dst, uint64(expires))
}

// AppendFileEntry appends a key of the file: its expiry (unix ms, 0 for
// none), then payload's type byte, the key and payload's value. payload is
// a DUMP payload (with its footer).
func AppendFileEntry(dst, key, payload []byte, expireMS int64) []byte {
	if expireMS != 0 {
		dst = append(dst, OpExpireTimeMS)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(expireMS))
	}
	dst = append(dst, payload[0])
	dst = AppendString(dst, key)
	return append(dst, payload[1:len(payload)-footerLen]...)
}

// AppendFileEnd appends the EOF opcode and the CRC-64 of the file (all of
// file, which must start with the header).
func AppendFileEnd(file []byte) []byte {
	file = append(file, OpEOF)
	return binary.LittleEndian.AppendUint64(file, CRC64(0, file))
}
