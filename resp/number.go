package resp

import "math"

// parseInt parses a decimal integer the way Redis's string2ll does, because
// the lengths in a request are accepted or refused by its rules: an optional
// '-', then either a lone "0" or a digit 1-9 followed by digits, within the
// range of int64. A '+', a space, a leading zero, "-0" and the empty string
// are all refused.
func parseInt(b []byte) (int64, bool) {
	// string2ll refuses 21 bytes or more (LONG_STR_SIZE).
	if len(b) == 0 || len(b) >= 21 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if b[0] == '-' {
		neg, i = true, 1
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	v := uint64(b[i] - '0')
	for i++; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 || v > (math.MaxUint64-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	switch {
	case !neg && v <= math.MaxInt64:
		return int64(v), true
	case neg && v <= math.MaxInt64:
		return -int64(v), true
	case neg && v == 1<<63:
		return math.MinInt64, true
	}
	return 0, false
}
