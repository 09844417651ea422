package keyspace

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// Parsing of sorted-set arguments: scores, score ranges and lex ranges,
// as Redis's getDoubleFromObject, zslParseRange and zslParseLexRange.

// strtod parses b as C's strtod must consume it whole: leading white
// space, an optional sign, then "inf", "infinity", "nan" (any case), a
// hexadecimal (0x...[p...]) or decimal number. erange is strtod's ERANGE:
// an overflow to ±inf or an underflow to zero.
func strtod(b []byte) (f float64, erange, ok bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	s := string(b[i:])
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), false, true
		}
		return math.Inf(1), false, true
	case "nan":
		return math.NaN(), false, true
	}
	if !strtoldSyntax(body) {
		return 0, false, false
	}
	hex := len(body) > 2 && body[0] == '0' && (body[1]|0x20) == 'x'
	if hex && !strings.ContainsAny(body, "pP") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false, false
		}
		return f, true, true
	}
	if f == 0 && nonZeroMantissa(body, hex) {
		return f, true, true // underflow
	}
	return f, false, true
}

// nonZeroMantissa reports whether a number's digits before its exponent
// are not all zero.
func nonZeroMantissa(body string, hex bool) bool {
	if hex {
		body = body[2:]
	}
	for _, c := range []byte(body) {
		switch {
		case !hex && (c == 'e' || c == 'E'), hex && (c == 'p' || c == 'P'):
			return false
		case c >= '1' && c <= '9', hex && (c|0x20) >= 'a' && (c|0x20) <= 'f':
			return true
		}
	}
	return false
}

// parseScore parses a score or increment as getDoubleFromObject: the whole
// argument, no leading space, not NaN, no overflow or underflow.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	if f, ok := smallIntScore(b); ok {
		return f, true
	}
	f, erange, ok := strtod(b)
	if !ok || math.IsNaN(f) || erange && (math.IsInf(f, 0) || f == 0) {
		return 0, false
	}
	return f, true
}

// smallIntScore is parseScore's fast path for the common score: an
// optional minus and at most 15 decimal digits, which a float64 holds
// exactly, so that the result is strtod's ("-0" is negative zero).
func smallIntScore(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	f := float64(n)
	if neg {
		f = -f
	}
	return f, true
}

// formatScore is a score in the journal: the shortest decimal that parses
// back to the same float64, inf and -inf as such.
func formatScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// scoreRange is zrangespec: [min, max], each end exclusive or not.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

// parseRangeBound parses one end of a score range as zslParseRange: "("
// for exclusive, then what strtod takes whole (an empty string is 0),
// NaN refused.
func parseRangeBound(b []byte) (f float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		ex, b = true, b[1:]
	}
	if len(b) == 0 {
		return 0, ex, true
	}
	f, _, ok = strtod(b)
	return f, ex, ok && !math.IsNaN(f)
}

func parseScoreRange(min, max []byte) (r scoreRange, ok bool) {
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseRangeBound(min)
	r.max, r.maxex, ok2 = parseRangeBound(max)
	return r, ok1 && ok2
}

// empty reports a range nothing can be in.
func (r *scoreRange) empty() bool {
	return r.min > r.max || r.min == r.max && (r.minex || r.maxex)
}

// belowMin reports whether s is below the range's start.
func (r *scoreRange) belowMin(_ []byte, s float64) bool {
	return s < r.min || r.minex && s == r.min
}

// notAboveMax reports whether s is not past the range's end.
func (r *scoreRange) notAboveMax(_ []byte, s float64) bool {
	return s < r.max || !r.maxex && s == r.max
}

// lexBound is one end of a lex range: "-" (inf -1), "+" (inf 1), or a
// string, inclusive ("[") or exclusive ("(").
type lexBound struct {
	s   []byte
	inf int
	ex  bool
}

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) != 1 {
			return lexBound{}, false
		}
		if b[0] == '+' {
			return lexBound{inf: 1}, true
		}
		return lexBound{inf: -1}, true
	case '(':
		return lexBound{s: b[1:], ex: true}, true
	case '[':
		return lexBound{s: b[1:]}, true
	}
	return lexBound{}, false
}

// cmp compares the bound with member m, as sdscmplex with minstring and
// maxstring.
func (lb *lexBound) cmp(m []byte) int {
	if lb.inf != 0 {
		return lb.inf
	}
	return bytes.Compare(lb.s, m)
}

type lexRange struct{ min, max lexBound }

func parseLexRange(min, max []byte) (r lexRange, ok bool) {
	var ok1, ok2 bool
	r.min, ok1 = parseLexBound(min)
	r.max, ok2 = parseLexBound(max)
	return r, ok1 && ok2
}

func (r *lexRange) empty() bool {
	if r.min.inf == 1 || r.max.inf == -1 {
		return true
	}
	if r.min.inf == -1 || r.max.inf == 1 {
		return false
	}
	c := bytes.Compare(r.min.s, r.max.s)
	return c > 0 || c == 0 && (r.min.ex || r.max.ex)
}

func (r *lexRange) belowMin(m []byte, _ float64) bool {
	c := r.min.cmp(m)
	return c > 0 || c == 0 && r.min.ex
}

func (r *lexRange) notAboveMax(m []byte, _ float64) bool {
	c := r.max.cmp(m)
	return c > 0 || c == 0 && !r.max.ex
}

// zbounds is a range's ranks: [start, end), from the two predicates.
func zbounds(z *zset, belowMin, notAboveMax func([]byte, float64) bool) (int, int) {
	start := z.countWhile(belowMin)
	end := z.countWhile(notAboveMax)
	return start, max(end, start)
}
