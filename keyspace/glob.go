package keyspace

// Match reports whether s matches the glob pattern, exactly as Redis's
// stringmatchlen decides it for KEYS, SCAN MATCH and the like. In the
// pattern, '*' matches any run of bytes, '?' any one byte, "[abc]" one of
// the bytes listed and "[^abc]" one byte not listed, "[a-z]" one byte in the
// range (ends in either order), and a backslash makes the next byte, also
// inside brackets, stand for itself.
//
// Redis's quirks are kept: the empty string matches only the empty pattern
// (not even "*": KEYS * and SCAN MATCH * skip matching altogether); an
// unterminated bracket matches as if closed at the end of the pattern; in
// "[a-]" the '-' makes a range up to ']'; range ends compare as C's signed
// chars, so bytes >= 0x80 sort below 'a'; a trailing lone backslash is a
// literal. With nocase, ASCII letters match either case.
//
// Matching costs at most O(len(pattern) * len(s)): once the rest of a
// pattern after a '*' fails to match at every later position, no earlier
// '*' can help, and the search stops. Patterns nesting more than 1000 '*'
// are refused (no match), as Redis refuses them.
func Match(pattern, s []byte, nocase bool) bool {
	skipLonger := false
	return globMatch(pattern, s, nocase, &skipLonger, 0)
}

func globMatch(p, s []byte, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatch(p[1:], s, nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			// The rest of the pattern matches nowhere in the rest of s:
			// a longer match for an earlier '*' cannot help either.
			*skipLonger = true
			return false
		case '?':
			p, s = p[1:], s[1:]
		case '[':
			var ok bool
			if p, ok = matchClass(p[1:], s[0], nocase); !ok {
				return false
			}
			s = s[1:]
		default:
			if p[0] == '\\' && len(p) >= 2 {
				p = p[1:]
			}
			if !byteEqual(p[0], s[0], nocase) {
				return false
			}
			p, s = p[1:], s[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// matchClass matches c against the bracket class that starts at p (just
// after '['), and returns the pattern after the class.
func matchClass(p []byte, c byte, nocase bool) ([]byte, bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	match := false
	for {
		switch {
		case len(p) == 0:
			// Unterminated: the class ends with the pattern.
			return p, match != not
		case p[0] == '\\' && len(p) >= 2:
			if p[1] == c {
				match = true
			}
			p = p[2:]
		case p[0] == ']':
			return p[1:], match != not
		case len(p) >= 3 && p[1] == '-':
			lo, hi, x := int(int8(p[0])), int(int8(p[2])), int(int8(c))
			if lo > hi {
				lo, hi = hi, lo
			}
			if nocase {
				lo, hi, x = lowerInt(lo), lowerInt(hi), lowerInt(x)
			}
			if x >= lo && x <= hi {
				match = true
			}
			p = p[3:]
		default:
			if byteEqual(p[0], c, nocase) {
				match = true
			}
			p = p[1:]
		}
	}
}

func byteEqual(a, b byte, nocase bool) bool {
	if nocase {
		return lower(a) == lower(b)
	}
	return a == b
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerInt(c int) int {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
