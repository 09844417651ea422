package replication

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/moond-db/moond/rdb"
)

// smallRDB is an RDB file with a string, a list, an expiry, two dbs and
// its checksum, for the fuzzers' seed corpus.
func smallRDB() []byte {
	b := []byte("REDIS0010")
	b = append(b, opAux)
	b = rdb.AppendString(b, []byte("redis-ver"))
	b = rdb.AppendString(b, []byte("7.0.15"))
	b = append(b, opSelectDB, 0, opResizeDB, 2, 1)
	b = append(b, opExpireTimeMS)
	b = binary.LittleEndian.AppendUint64(b, 1<<41)
	b = appendEntry(b, []byte("k"), &rdb.Object{Kind: rdb.KindString, String: []byte("v")})
	b = append(b, opSelectDB, 3)
	b = appendEntry(b, []byte("l"), &rdb.Object{Kind: rdb.KindList, Members: [][]byte{[]byte("a"), []byte("12")}})
	b = append(b, opEOF)
	return binary.LittleEndian.AppendUint64(b, rdb.CRC64(0, b))
}

// appendEntry appends a key's entry: its type byte, the key, the value.
func appendEntry(b, key []byte, o *rdb.Object) []byte {
	v := rdb.AppendObject(nil, o)
	b = append(b, v[0])
	b = rdb.AppendString(b, key)
	return append(b, v[1:]...)
}

// TestSmallRDB checks the fuzzers' seed: two keys, in dbs 0 and 3.
func TestSmallRDB(t *testing.T) {
	_, es, err := readAll(smallRDB())
	if err != nil || len(es) != 2 || string(es[0].Key) != "k" || es[0].ExpireMS != 1<<41 || es[1].DB != 3 {
		t.Fatalf("%v %+v", err, es)
	}
}

// FuzzFileReader: any input ends in entries and io.EOF or an error, never
// a panic or a hang.
func FuzzFileReader(f *testing.F) {
	f.Add(smallRDB())
	f.Add([]byte("REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewFileReader(bufio.NewReader(bytes.NewReader(b)))
		if r.Header() != nil {
			return
		}
		for range len(b) + 1 { // every entry takes a byte at least
			if _, err := r.Next(); err != nil {
				return
			}
		}
		t.Fatal("more entries than bytes")
	})
}

// FuzzReadCommand: any stream ends in commands and an error, never a
// panic.
func FuzzReadCommand(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*1\r\n$999\r\nx"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			c, err := readCommand(r)
			if err != nil {
				return
			}
			if len(c.args) == 0 {
				t.Fatal("a command without arguments")
			}
		}
	})
}
