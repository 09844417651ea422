package keyspace

import (
	"math/big"
	"strings"
	"unsafe"
)

// ParseInt is parseInt for the server's commands, whose integer arguments
// Redis parses the same way (CLIENT PAUSE's timeout, ...).
func ParseInt(b []byte) (int64, bool) { return parseInt(b) }

// parseInt parses b as Redis's string2ll does: an optional '-', then "0" or
// a digit 1-9 followed by digits, the whole of b, within int64. No '+', no
// spaces, no leading zeros, no "-0".
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to itself, as wanted
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// parseCursor parses a SCAN cursor as Redis does with strtoul: optional
// sign ('-' negates modulo 2^64), decimal digits, nothing else; an empty
// string is 0. A leading space or an overflow is an error.
func parseCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			// strtoul consumed nothing: the sign is left over.
			return 0, false
		}
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// Long doubles. INCRBYFLOAT computes in C's long double, which on x86-64 is
// the x87 80-bit format: a 64-bit mantissa and a 15-bit exponent. A
// big.Float of 64 bits of precision, rounding to nearest even, gives the
// same sums; the exponent range is checked by hand.

const (
	ldPrec         = 64
	ldMaxExp       = 16384  // |x| < 2^16384
	ldMinExp       = -16444 // below the smallest subnormal, strtold gives 0 and ERANGE
	ldMaxChars     = 5 * 1024
	ldHumanDecimal = 17
)

// parseLongDouble parses b as Redis's string2ld does with strtold: the
// whole of b, no leading space, decimal or hexadecimal (0x...p...) notation,
// "inf"/"infinity" with an optional sign; NaN, overflow and underflow to
// zero refused.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= ldMaxChars || isSpace(b[0]) {
		return nil, false
	}
	s := string(b)
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	if l := strings.ToLower(body); l == "inf" || l == "infinity" {
		return new(big.Float).SetInf(neg), true
	}
	if !strtoldSyntax(body) {
		return nil, false
	}
	f, _, err := new(big.Float).SetPrec(ldPrec).Parse(s, 0)
	if err != nil || !ldInRange(f) {
		return nil, false
	}
	return f, true
}

// strtoldSyntax reports whether strtold would consume all of s (sign
// already removed) as a finite number.
func strtoldSyntax(s string) bool {
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	expChar := byte('e')
	if hex {
		s = s[2:]
		isDigit = func(c byte) bool {
			return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		}
		expChar = 'p'
	}
	digits, i := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i]|0x20) == expChar {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		if n == 0 {
			return false
		}
	}
	return i == len(s)
}

// ldInRange reports whether a finite f is representable as a long double
// without overflow or underflow to zero.
func ldInRange(f *big.Float) bool {
	if f.IsInf() {
		return false
	}
	if f.Sign() == 0 {
		return true
	}
	exp := f.MantExp(nil)
	return exp <= ldMaxExp && exp >= ldMinExp
}

// formatLongDouble formats f as Redis's ld2string in LD_STR_HUMAN mode:
// "%.17Lf", then trailing zeros after the point dropped, then the point if
// nothing follows it, and "-0" written "0".
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', ldHumanDecimal)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// unsafeBytes views s as a byte slice that must not be written.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
