package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/moond-db/moond/rdb"
)

// ErrRDB is wrapped by every error of a malformed or truncated RDB file.
var ErrRDB = errors.New("replication: bad RDB file")

// The RDB file's opcodes (Redis's RDB_OPCODE_*).
const (
	opFunction2    = 245
	opFunction     = 246
	opModuleAux    = 247
	opIdle         = 248
	opFreq         = 249
	opAux          = 250
	opResizeDB     = 251
	opExpireTimeMS = 252
	opExpireTime   = 253
	opSelectDB     = 254
	opEOF          = 255
)

// The value types (Redis's RDB_TYPE_*) whose encoding is one string blob:
// zipmap, ziplists, intset, listpacks.
const (
	typeHashZipmap   = 9
	typeListZiplist  = 10
	typeZSetZiplist  = 12
	typeHashZiplist  = 13
	typeListQuicklst = 14
	typeSetListpack  = 20
	// TypeStream and TypeStream2 are RDB_TYPE_STREAM_LISTPACKS and
	// _LISTPACKS_2 (Redis 7.0's): read whole so that the keys after one
	// can be read, though moond has no streams.
	TypeStream  = 15
	TypeStream2 = 19
)

// maxRDBVersion is the newest RDB version the reader takes (Redis 7.0's).
const maxRDBVersion = rdb.Version

// Entry is one key of an RDB file.
type Entry struct {
	DB  int
	Key []byte
	// Value is the key's RDB type byte and encoding exactly as the file
	// holds it: the body of a DUMP payload (rdb.AppendFooter completes it).
	Value []byte
	// ExpireMS is the absolute expiry in Unix milliseconds, or -1.
	ExpireMS int64
	// Idle (seconds, under an LRU policy) and Freq (the LFU counter,
	// under an LFU policy) are what the master saved for eviction, or -1.
	Idle int64
	Freq int
}

// FileReader reads an RDB file (Redis's rdbLoadRio) from a stream, one key
// at a time, without holding more than one value in memory. The values
// are not decoded here: they are copied byte for byte, so that the
// keyspace's RESTORE decodes and checks them as it does a DUMP payload.
// The checksum at the end is checked over every byte read.
type FileReader struct {
	r       *bufio.Reader
	crc     uint64
	off     int64
	version int
	db      int
	done    bool
	one     [1]byte // byte1's checksum input, kept off the heap
	// Aux holds the file's AUX fields (redis-ver, repl-id, repl-offset...).
	Aux map[string]string
	// Skipped counts the functions the file holds, which moond has no
	// place for.
	Skipped int
	// Reuse makes Next reuse the memory of the entry it returned last:
	// an entry and its slices are then valid only until the next call,
	// and a load allocates nothing per key for them.
	Reuse bool
	ent   Entry
	kbuf  []byte // the key's raw bytes, with Reuse
	vbuf  []byte // the value's bytes, with Reuse
	// DBKeys and DBExpires are the RESIZEDB figures of the database the
	// file is in (its keys, and how many of them expire): a hint to size
	// its tables by, 0 when the file gave none after the last SELECTDB.
	DBKeys, DBExpires int
}

// NewFileReader reads the RDB file at the start of r. It reads nothing
// beyond the file's end, so r may go on with other data.
func NewFileReader(r *bufio.Reader) *FileReader {
	return &FileReader{r: r, Aux: map[string]string{}}
}

// errf returns an error wrapping ErrRDB, with where it happened.
func (f *FileReader) errf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrRDB, f.off, fmt.Sprintf(format, args...))
}

// Header reads and checks the "REDIS0010" header.
func (f *FileReader) Header() error {
	b, err := f.take(nil, 9)
	if err != nil {
		return err
	}
	if string(b[:5]) != "REDIS" {
		return f.errf("no REDIS header: %q", b[:5])
	}
	v, err := strconv.Atoi(string(b[5:]))
	if err != nil || v < 1 || v > maxRDBVersion {
		return f.errf("RDB version %q not supported", b[5:])
	}
	f.version = v
	return nil
}

// Next returns the next key, or io.EOF at the end of the file, once its
// checksum was checked. Any other error wraps ErrRDB or is the stream's.
func (f *FileReader) Next() (*Entry, error) {
	if f.done {
		return nil, io.EOF
	}
	e := &f.ent
	if !f.Reuse {
		e = new(Entry)
	}
	*e = Entry{ExpireMS: -1, Idle: -1, Freq: -1}
	for {
		op, err := f.byte1()
		if err != nil {
			return nil, err
		}
		switch op {
		case opEOF:
			return nil, f.end()
		case opSelectDB:
			n, err := f.plainLen()
			if err != nil {
				return nil, err
			}
			f.db, f.DBKeys, f.DBExpires = int(n), 0, 0
		case opResizeDB:
			if f.DBKeys, err = f.resizeLen(); err != nil {
				return nil, err
			}
			if f.DBExpires, err = f.resizeLen(); err != nil {
				return nil, err
			}
		case opExpireTimeMS:
			b, err := f.take(nil, 8)
			if err != nil {
				return nil, err
			}
			e.ExpireMS = int64(binary.LittleEndian.Uint64(b))
		case opExpireTime:
			b, err := f.take(nil, 4)
			if err != nil {
				return nil, err
			}
			e.ExpireMS = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
		case opFreq:
			c, err := f.byte1()
			if err != nil {
				return nil, err
			}
			e.Freq = int(c)
		case opIdle:
			n, err := f.plainLen()
			if err != nil {
				return nil, err
			}
			e.Idle = int64(n)
		case opAux:
			if err := f.aux(); err != nil {
				return nil, err
			}
		case opFunction2:
			if _, err := f.str(); err != nil {
				return nil, err
			}
			f.Skipped++
		case opFunction, opModuleAux:
			return nil, f.errf("opcode %d (pre-7.0 function or module data) not supported", op)
		default:
			return f.entry(op, e)
		}
	}
}

// entry reads a key and its value of RDB type t into e.
func (f *FileReader) entry(t byte, e *Entry) (*Entry, error) {
	kbuf, vbuf := []byte(nil), make([]byte, 0, 64)
	if f.Reuse {
		kbuf, vbuf = f.kbuf[:0], f.vbuf[:0]
	}
	raw, err := f.copyString(kbuf)
	if err != nil {
		return nil, err
	}
	key, _, err := rdb.DecodeString(raw)
	if err != nil {
		return nil, f.errf("key: %v", err)
	}
	v, err := f.copyValue(append(vbuf, t), t)
	if err != nil {
		return nil, err
	}
	if f.Reuse && cap(raw) <= maxKeptBuf && cap(v) <= maxKeptBuf {
		f.kbuf, f.vbuf = raw, v // a large value's memory is not kept for good
	}
	e.DB, e.Key, e.Value = f.db, key, v
	return e, nil
}

// maxKeptBuf is the largest key or value buffer Reuse keeps for the next
// entry.
const maxKeptBuf = 1 << 20

// aux reads one AUX field.
func (f *FileReader) aux() error {
	k, err := f.str()
	if err != nil {
		return err
	}
	v, err := f.str()
	if err != nil {
		return err
	}
	f.Aux[string(k)] = string(v)
	return nil
}

// end reads the checksum after the EOF opcode and checks it; a zero
// checksum means the master saves with rdbchecksum off.
func (f *FileReader) end() error {
	f.done = true
	if f.version < 5 {
		return io.EOF
	}
	sum := f.crc
	b, err := f.take(nil, 8)
	if err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint64(b); got != 0 && got != sum {
		return f.errf("checksum %#x, computed %#x", got, sum)
	}
	return io.EOF
}

// copyValue appends the encoding of a value of type t, as it is, to dst.
func (f *FileReader) copyValue(dst []byte, t byte) ([]byte, error) {
	switch t {
	case rdb.TypeString, rdb.TypeSetIntset, rdb.TypeHashListpack, rdb.TypeZSetListpack,
		typeHashZipmap, typeListZiplist, typeZSetZiplist, typeHashZiplist, typeSetListpack:
		return f.copyString(dst)
	case rdb.TypeList, rdb.TypeSet, typeListQuicklst:
		return f.copyStrings(dst, 1, nil)
	case rdb.TypeHash:
		return f.copyStrings(dst, 2, nil)
	case rdb.TypeZSet:
		return f.copyStrings(dst, 1, (*FileReader).copyDecimalDouble)
	case rdb.TypeZSet2:
		return f.copyStrings(dst, 1, func(f *FileReader, dst []byte) ([]byte, error) { return f.take(dst, 8) })
	case rdb.TypeListQuicklist2:
		return f.copyStrings(dst, 1, nil, (*FileReader).copyNodeKind)
	case TypeStream, TypeStream2:
		return f.copyStream(dst, t == TypeStream2)
	}
	return nil, f.errf("value of RDB type %d (a module value) not supported", t)
}

// copyStream copies a stream (Redis 7.0's rdbSaveObject): its listpacks,
// its length and ids, then its consumer groups with their pending entries
// and consumers. v2 streams hold more ids and counters.
func (f *FileReader) copyStream(dst []byte, v2 bool) ([]byte, error) {
	dst, err := f.copyStrings(dst, 2, nil) // node key, listpack
	if err != nil {
		return nil, err
	}
	lens := 3 // length, last id
	if v2 {
		lens += 5 // first id, max deleted id, entries added
	}
	if dst, err = f.copyLens(dst, lens); err != nil {
		return nil, err
	}
	dst, groups, err := f.copyLen(dst)
	if err != nil {
		return nil, err
	}
	for range groups {
		if dst, err = f.copyString(dst); err != nil { // name
			return nil, err
		}
		lens := 2 // last id
		if v2 {
			lens++ // entries read
		}
		if dst, err = f.copyLens(dst, lens); err != nil {
			return nil, err
		}
		if dst, err = f.copyPEL(dst, true); err != nil {
			return nil, err
		}
		if dst, err = f.copyConsumers(dst); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// copyPEL copies a pending entries list: ids (16 bytes), each with its
// delivery time and count in a group's list.
func (f *FileReader) copyPEL(dst []byte, group bool) ([]byte, error) {
	dst, n, err := f.copyLen(dst)
	if err != nil {
		return nil, err
	}
	for range n {
		if dst, err = f.take(dst, 16); err != nil {
			return nil, err
		}
		if group {
			if dst, err = f.take(dst, 8); err != nil {
				return nil, err
			}
			if dst, _, err = f.copyLen(dst); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}

// copyConsumers copies a group's consumers: name, seen time, their PEL.
func (f *FileReader) copyConsumers(dst []byte) ([]byte, error) {
	dst, n, err := f.copyLen(dst)
	if err != nil {
		return nil, err
	}
	for range n {
		if dst, err = f.copyString(dst); err != nil {
			return nil, err
		}
		if dst, err = f.take(dst, 8); err != nil {
			return nil, err
		}
		if dst, err = f.copyPEL(dst, false); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// copyLens copies n lengths.
func (f *FileReader) copyLens(dst []byte, n int) ([]byte, error) {
	var err error
	for range n {
		if dst, _, err = f.copyLen(dst); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// copyStrings copies a count and, count times, each of before, per
// strings, and each of after.
func (f *FileReader) copyStrings(dst []byte, per int, after func(*FileReader, []byte) ([]byte, error),
	before ...func(*FileReader, []byte) ([]byte, error)) ([]byte, error) {
	dst, n, err := f.copyLen(dst)
	if err != nil {
		return nil, err
	}
	for range n {
		for _, b := range before {
			if dst, err = b(f, dst); err != nil {
				return nil, err
			}
		}
		for range per {
			if dst, err = f.copyString(dst); err != nil {
				return nil, err
			}
		}
		if after != nil {
			if dst, err = after(f, dst); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}

// copyNodeKind copies a QUICKLIST_2 node's container (plain or packed).
func (f *FileReader) copyNodeKind(dst []byte) ([]byte, error) {
	dst, _, err := f.copyLen(dst)
	return dst, err
}

// copyDecimalDouble copies a score of the old RDB_TYPE_ZSET: a length
// byte (253, 254 and 255 stand alone) and that many bytes.
func (f *FileReader) copyDecimalDouble(dst []byte) ([]byte, error) {
	c, err := f.byte1()
	if err != nil {
		return nil, err
	}
	dst = append(dst, c)
	if c >= 253 {
		return dst, nil
	}
	return f.take(dst, int(c))
}

// copyString copies a string in any of its encodings.
func (f *FileReader) copyString(dst []byte) ([]byte, error) {
	c, err := f.byte1()
	if err != nil {
		return nil, err
	}
	dst = append(dst, c)
	if c>>6 != 3 {
		n, err := f.lenAfter(&dst, c)
		if err != nil {
			return nil, err
		}
		return f.takeLen(dst, n)
	}
	switch c & 0x3f {
	case 0:
		return f.take(dst, 1)
	case 1:
		return f.take(dst, 2)
	case 2:
		return f.take(dst, 4)
	case 3:
		dst, clen, err := f.copyLen(dst)
		if err != nil {
			return nil, err
		}
		if dst, _, err = f.copyLen(dst); err != nil {
			return nil, err
		}
		return f.takeLen(dst, clen)
	}
	return nil, f.errf("unknown string encoding %d", c&0x3f)
}

// takeLen is take for a length read from the file, which may be anything.
func (f *FileReader) takeLen(dst []byte, n uint64) ([]byte, error) {
	if n > maxStringLen {
		return nil, f.errf("a string of %d bytes", n)
	}
	return f.take(dst, int(n))
}

// maxStringLen bounds one string of the file (Redis's are 512 MB at most,
// a listpack or ziplist 4 GB).
const maxStringLen = 1 << 33

// copyLen copies a length (not a special encoding) and returns it.
func (f *FileReader) copyLen(dst []byte) ([]byte, uint64, error) {
	c, err := f.byte1()
	if err != nil {
		return nil, 0, err
	}
	dst = append(dst, c)
	if c>>6 == 3 {
		return nil, 0, f.errf("an encoded string where a length belongs")
	}
	n, err := f.lenAfter(&dst, c)
	return dst, n, err
}

// lenAfter reads the rest of a length whose first byte c was read,
// appending its bytes to *dst. A length may be any 64-bit number (stream
// ids are lengths): who uses one as a size or a count checks it.
func (f *FileReader) lenAfter(dst *[]byte, c byte) (uint64, error) {
	switch {
	case c>>6 == 0:
		return uint64(c & 0x3f), nil
	case c>>6 == 1:
		c2, err := f.byte1()
		if err != nil {
			return 0, err
		}
		*dst = append(*dst, c2)
		return uint64(c&0x3f)<<8 | uint64(c2), nil
	case c == 0x80:
		b, err := f.take(nil, 4)
		if err != nil {
			return 0, err
		}
		*dst = append(*dst, b...)
		return uint64(binary.BigEndian.Uint32(b)), nil
	case c == 0x81:
		b, err := f.take(nil, 8)
		if err != nil {
			return 0, err
		}
		*dst = append(*dst, b...)
		return binary.BigEndian.Uint64(b), nil
	}
	return 0, f.errf("bad length byte %#x", c)
}

// plainLen reads a length an opcode takes (a db number, an idle time).
func (f *FileReader) plainLen() (int, error) {
	_, n, err := f.copyLen(nil)
	if err == nil && n > math.MaxInt32 {
		return 0, f.errf("%d where a db number or a time belongs", n)
	}
	return int(n), err
}

// resizeLen reads a count of RESIZEDB, which may be any length; one
// beyond an int32 is kept as that bound (it is a hint).
func (f *FileReader) resizeLen() (int, error) {
	_, n, err := f.copyLen(nil)
	return int(min(n, math.MaxInt32)), err
}

// str reads a string in any encoding, decoded.
func (f *FileReader) str() ([]byte, error) {
	raw, err := f.copyString(nil)
	if err != nil {
		return nil, err
	}
	s, _, err := rdb.DecodeString(raw)
	if err != nil {
		return nil, f.errf("%v", err)
	}
	return s, nil
}

// byte1 reads one byte.
func (f *FileReader) byte1() (byte, error) {
	c, err := f.r.ReadByte()
	if err != nil {
		return 0, f.truncated(err)
	}
	f.one[0] = c
	f.crc = rdb.CRC64(f.crc, f.one[:])
	f.off++
	return c, nil
}

// take appends the next n bytes to dst, reading in chunks so that a lying
// length costs no more memory than the bytes that really came.
func (f *FileReader) take(dst []byte, n int) ([]byte, error) {
	const chunk = 1 << 20
	for n > 0 {
		m := min(n, chunk)
		start := len(dst)
		dst = append(dst, make([]byte, m)...)
		if _, err := io.ReadFull(f.r, dst[start:]); err != nil {
			return nil, f.truncated(err)
		}
		f.crc = rdb.CRC64(f.crc, dst[start:])
		f.off += int64(m)
		n -= m
	}
	return dst, nil
}

// truncated turns an end of input inside the file into ErrRDB.
func (f *FileReader) truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return f.errf("truncated")
	}
	return fmt.Errorf("replication: reading the RDB file: %w", err)
}
