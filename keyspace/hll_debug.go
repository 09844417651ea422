package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// PFDEBUG and PFSELFTEST, Redis's debugging commands for HyperLogLogs
// (hyperloglog.tcl uses them to look at encodings and registers).

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
func cmdPFDebug(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sub, key := args[1], args[2]
	d := ks.db(c)
	sl, _ := ks.lookupWrite(c, key)
	if sl == nil {
		w.Error("ERR The specified key does not exist")
		return
	}
	b, msg := hllOf(sl)
	if msg != "" {
		w.Error(msg)
		return
	}
	switch {
	case equalFold(sub, "getreg"):
		if !ks.hllMakeDense(c, d, sl, key, w) {
			return
		}
		r := (*sl.v.buf())[hllHdrSize:]
		w.ArrayHeader(hllRegisters)
		for i := range hllRegisters {
			w.Int(int64(denseGet(r, i)))
		}
	case equalFold(sub, "decode"):
		if b[4] != hllSparse {
			w.Error("ERR HLL encoding is not sparse")
			return
		}
		w.Bulk(hllDecode(b))
	case equalFold(sub, "encoding"):
		if b[4] == hllDense {
			w.SimpleString("dense")
		} else {
			w.SimpleString("sparse")
		}
	case equalFold(sub, "todense"):
		converted := int64(b[4])
		if ks.hllMakeDense(c, d, sl, key, w) {
			w.Int(converted) // 1 for sparse, 0 for dense
		}
	default:
		w.Error("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}

// hllMakeDense turns the sparse HLL in sl dense, journaled as PFDEBUG
// TODENSE. false means it replied INVALIDOBJ.
func (ks *Keyspace) hllMakeDense(c *Client, d *db, sl *slot[entry], key []byte, w ReplyWriter) bool {
	b := sl.v.bytes()
	if b[4] == hllDense {
		return true
	}
	dense, err := hllToDense(b)
	if err != nil {
		w.Error(errHLLCorrupt)
		return false
	}
	bp := ks.hllBuf(d, sl)
	before := sl.v.heapBytes()
	*bp = dense
	ks.changedQuietly(d, sl) // Redis's PFDEBUG does not signal the key
	d.dataBytes += sl.v.heapBytes() - before
	ks.journal(c.DB, "PFDEBUG", []byte("TODENSE"), key)
	return true
}

// hllDecode lists the opcodes of the sparse HLL b as Redis's PFDEBUG
// DECODE does: "z:N" (ZERO), "Z:N" (XZERO), "v:VAL,N" (VAL), separated
// by spaces.
func hllDecode(b []byte) []byte {
	var out []byte
	for p := hllSparseOpsStart; p < len(b); {
		if len(out) > 0 {
			out = append(out, ' ')
		}
		span, val, oplen := sparseOp(b, p)
		switch {
		case val != 0:
			out = append(out, "v:"...)
			out = strconv.AppendInt(out, int64(val), 10)
			out = append(out, ',')
		case oplen == 1:
			out = append(out, "z:"...)
		default:
			out = append(out, "Z:"...)
		}
		out = strconv.AppendInt(out, int64(span), 10)
		p += oplen
	}
	return out
}

// PFSELFTEST: Redis's self test of the register access and of the
// estimator (the dense and sparse encodings agree, and the error stays
// within six standard errors up to ten million elements).
func cmdPFSelfTest(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if msg := hllSelfTest(ks.Limits.HLLSparseMaxBytes); msg != "" {
		w.Error(msg)
		return
	}
	replyOK(w)
}

// hllSelfTest runs the self test and returns the failure, "" for none.
func hllSelfTest(sparseMax int64) string {
	var regs [hllRegBytes]byte
	var want [hllRegisters]uint8
	for range 1000 {
		for i := range want {
			want[i] = uint8(rand.IntN(hllRegisterMax + 1))
			denseSet(regs[:], i, want[i])
		}
		for i := range want {
			if got := denseGet(regs[:], i); got != want[i] {
				return fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], got)
			}
		}
	}
	dense := make([]byte, hllDenseSize)
	copy(dense, "HYLL")
	sparse := newHLL()
	relErr := 1.04 / math.Sqrt(hllRegisters)
	seed := rand.Uint64()
	var ele [8]byte
	checkpoint := int64(1)
	for j := int64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		index, count := hllPatLen(ele[:])
		denseMax(dense[hllHdrSize:], index, count)
		sparse, _, _ = hllAddTo(sparse, index, count, sparseMax)
		if j != checkpoint {
			continue
		}
		if j < sparseMax/2 && sparse[4] != hllSparse {
			return "TESTFAILED sparse encoding not used"
		}
		dc, _ := hllCount(dense)
		sc, _ := hllCount(sparse)
		if dc != sc {
			return "TESTFAILED dense/sparse disagree"
		}
		maxErr := uint64(math.Ceil(relErr * 6 * float64(checkpoint)))
		if j == 10 {
			maxErr = 1
		}
		if absErr := uint64(math.Abs(float64(checkpoint - int64(dc)))); absErr > maxErr {
			return fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, absErr)
		}
		checkpoint *= 10
	}
	return ""
}

// hllAddTo raises register index of the HLL b to count.
func hllAddTo(b []byte, index int, count uint8, sparseMax int64) ([]byte, bool, error) {
	if b[4] == hllDense {
		return b, denseMax(b[hllHdrSize:], index, count), nil
	}
	return hllSparseSet(b, index, count, sparseMax)
}
