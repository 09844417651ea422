package resp

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// strs converts parsed arguments to strings for comparison; nil for none.
func strs(args [][]byte) []string {
	if len(args) == 0 {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// conn plays a connection: it appends input chunk by chunk to a buffer
// that it copies on every append (as a growing read buffer may), parses what
// it can after each chunk, and drops consumed bytes. It returns the commands
// (zero-argument ones included, as empty) and the first error.
func conn(p *Parser, chunks [][]byte) (cmds [][]string, err error) {
	var buf []byte
	for _, c := range chunks {
		nb := make([]byte, len(buf)+len(c))
		copy(nb, buf)
		copy(nb[len(buf):], c)
		buf = nb
		for {
			args, n, err := p.Parse(buf)
			if err != nil {
				return cmds, err
			}
			if n == 0 {
				if args != nil {
					return cmds, fmt.Errorf("args %q with n == 0", args)
				}
				break
			}
			if n > len(buf) {
				return cmds, fmt.Errorf("n = %d > len(buf) = %d", n, len(buf))
			}
			cmds = append(cmds, append([]string{}, strs(args)...))
			buf = buf[n:]
		}
	}
	return cmds, nil
}

func errMsg(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	if err != nil {
		return "non-protocol error: " + err.Error()
	}
	return ""
}

func TestParseMultibulk(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		n    int
	}{
		{"get", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{"GET", "k"}, 20},
		{"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO", ""}, 20},
		{"binary argument", "*1\r\n$4\r\n\x00\r\n\xff\r\n", []string{"\x00\r\n\xff"}, 14},
		{"only the first of two commands", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14},
		// Redis skips the two bytes after a payload without checking them.
		{"payload terminator unchecked", "*1\r\n$4\r\nPINGxy", []string{"PING"}, 14},
		// Redis takes a count line as ending at CR plus any one byte.
		{"count line LF unchecked", "*1\rx$4\r\nPING\r\n", []string{"PING"}, 14},
		{"zero count skipped", "*0\r\n", nil, 4},
		{"null count skipped", "*-1\r\n", nil, 5},
		{"negative count skipped", "*-10\r\n", nil, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			args, n, err := p.Parse([]byte(tt.in))
			if err != nil || n != tt.n || !reflect.DeepEqual(strs(args), tt.want) {
				t.Errorf("Parse(%q) = %q, %d, %v; want %q, %d, nil", tt.in, args, n, err, tt.want, tt.n)
			}
		})
	}
}

func TestParseNeedsMore(t *testing.T) {
	for _, in := range []string{
		"", "*", "*2", "*2\r", "*2\r\n", "*2\r\n$", "*2\r\n$3\r", "*2\r\n$3\r\nGE",
		"*2\r\n$3\r\nGET\r", "*2\r\n$3\r\nGET\r\n$1\r\nk\r",
		"PING", "PING\r", "GET \"a b", "*1\r\nfooz", "*1\r\nfooz\r",
	} {
		var p Parser
		args, n, err := p.Parse([]byte(in))
		if args != nil || n != 0 || err != nil {
			t.Errorf("Parse(%q) = %q, %d, %v; want nil, 0, nil", in, args, n, err)
		}
	}
}

func TestParseProtocolErrors(t *testing.T) {
	big := strings.Repeat("1", defaultMaxInlineLen+1)
	tests := []struct {
		name   string
		in     string
		unauth bool
		limits Limits
		want   string
	}{
		{"argument not a bulk", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", false, Limits{}, "ERR Protocol error: expected '$', got 'f'"},
		{"argument is an integer", "*1\r\n:1\r\n", false, Limits{}, "ERR Protocol error: expected '$', got ':'"},
		{"argument line empty", "*1\r\n\r\n", false, Limits{}, "ERR Protocol error: expected '$', got ' '"},
		{"argument starts with LF", "*1\r\n\n\r\n", false, Limits{}, "ERR Protocol error: expected '$', got ' '"},
		{"argument starts with NUL", "*1\r\n\x00\r\n", false, Limits{}, "ERR Protocol error: expected '$', got '"},
		{"count above INT_MAX", "*3000000000\r\n", false, Limits{}, "ERR Protocol error: invalid multibulk length"},
		{"count not a number", "*abc\r\n", false, Limits{}, "ERR Protocol error: invalid multibulk length"},
		{"count empty", "*\r\n", false, Limits{}, "ERR Protocol error: invalid multibulk length"},
		{"count with plus", "*+1\r\n", false, Limits{}, "ERR Protocol error: invalid multibulk length"},
		{"count with leading zero", "*01\r\n", false, Limits{}, "ERR Protocol error: invalid multibulk length"},
		{"count overflows int64", "*99999999999999999999\r\n", false, Limits{}, "ERR Protocol error: invalid multibulk length"},
		{"count above configured limit", "*3\r\n", false, Limits{MaxMultibulkLen: 2}, "ERR Protocol error: invalid multibulk length"},
		{"negative bulk length", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n", false, Limits{}, "ERR Protocol error: invalid bulk length"},
		{"null bulk in a request", "*1\r\n$-1\r\n", false, Limits{}, "ERR Protocol error: invalid bulk length"},
		{"bulk length above proto-max-bulk-len", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2000000000\r\n", false, Limits{}, "ERR Protocol error: invalid bulk length"},
		{"bulk length above configured limit", "*1\r\n$11\r\n", false, Limits{MaxBulkLen: 10}, "ERR Protocol error: invalid bulk length"},
		{"bulk length not a number", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$blabla\r\n", false, Limits{}, "ERR Protocol error: invalid bulk length"},
		{"bulk length empty", "*1\r\n$\r\n", false, Limits{}, "ERR Protocol error: invalid bulk length"},
		{"bulk length minus zero", "*1\r\n$-0\r\n", false, Limits{}, "ERR Protocol error: invalid bulk length"},
		{"count line too long", "*" + big, false, Limits{}, "ERR Protocol error: too big mbulk count string"},
		{"bulk count line too long", "*1\r\n$" + big, false, Limits{}, "ERR Protocol error: too big bulk count string"},
		{"inline too long", big, false, Limits{}, "ERR Protocol error: too big inline request"},
		{"inline too long with LF after limit", big + "\n", false, Limits{}, "ERR Protocol error: too big inline request"},
		{"inline too long for configured limit", "PING PING\r\n", false, Limits{MaxInlineLen: 8}, "ERR Protocol error: too big inline request"},
		{"unterminated double quote", "SET \"foo\r\n", false, Limits{}, "ERR Protocol error: unbalanced quotes in request"},
		{"unterminated single quote", "SET 'foo\r\n", false, Limits{}, "ERR Protocol error: unbalanced quotes in request"},
		{"text after closing quote", "SET \"a\"b c\r\n", false, Limits{}, "ERR Protocol error: unbalanced quotes in request"},
		{"unauthenticated count", "*11\r\n", true, Limits{}, "ERR Protocol error: unauthenticated multibulk length"},
		{"unauthenticated bulk", "*1\r\n$16385\r\n", true, Limits{}, "ERR Protocol error: unauthenticated bulk length"},
		{"unauthenticated huge bulk", "*1\r\n$100000000\r\n", true, Limits{}, "ERR Protocol error: unauthenticated bulk length"},
		{"unauthenticated still checks validity first", "*1\r\n$-1\r\n", true, Limits{}, "ERR Protocol error: invalid bulk length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parser{Limits: tt.limits, Unauthenticated: tt.unauth}
			args, n, err := p.Parse([]byte(tt.in))
			if got := errMsg(err); got != tt.want || args != nil || n != 0 {
				t.Errorf("Parse(%.40q) = %q, %d, %q; want nil, 0, %q", tt.in, args, n, got, tt.want)
			}
			if err != nil && err.Error() != tt.want {
				t.Errorf("Error() = %q, want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestParseUnauthenticatedWithinLimits(t *testing.T) {
	cmd := "*10\r\n" + strings.Repeat("$1\r\nx\r\n", 9) + "$16384\r\n" + strings.Repeat("y", 16384) + "\r\n"
	p := Parser{Unauthenticated: true}
	args, n, err := p.Parse([]byte(cmd))
	if err != nil || n != len(cmd) || len(args) != 10 || len(args[9]) != 16384 {
		t.Fatalf("Parse = %d args, %d, %v; want 10 args, %d, nil", len(args), n, err, len(cmd))
	}
	// Inline commands are not limited further before AUTH.
	line := "SET k " + strings.Repeat("v", 20000) + "\r\n"
	if args, _, err := p.Parse([]byte(line)); err != nil || len(args) != 3 {
		t.Fatalf("inline: %d args, %v", len(args), err)
	}
}

func TestParseLimitsAreInclusive(t *testing.T) {
	p := Parser{Limits: Limits{MaxBulkLen: 3, MaxMultibulkLen: 2}}
	cmd := "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
	if args, _, err := p.Parse([]byte(cmd)); err != nil || len(args) != 2 {
		t.Fatalf("Parse(%q) = %q, %v", cmd, args, err)
	}
	// An inline line of exactly MaxInlineLen bytes before its LF is taken.
	p = Parser{Limits: Limits{MaxInlineLen: 10}}
	line := "PING 12345\n"
	if args, n, err := p.Parse([]byte(line)); err != nil || n != len(line) || len(args) != 2 {
		t.Fatalf("Parse(%q) = %q, %d, %v", line, args, n, err)
	}
	if _, _, err := p.Parse([]byte("PING 123456\n")); errMsg(err) != msgTooBigInline {
		t.Fatalf("one byte over: %v", err)
	}
}

func TestParseSkipsEmptyCommands(t *testing.T) {
	for _, in := range []string{"\r\n", "\n", "   \r\n", " \t\v\f\r\n", "\x00abc\r\n", "*0\r\n", "*-1\r\n", "*-10\r\n"} {
		var p Parser
		args, n, err := p.Parse([]byte(in + "PING\r\n"))
		if err != nil || n != len(in) || len(args) != 0 {
			t.Errorf("Parse(%q) = %q, %d, %v; want no args, %d, nil", in, args, n, err, len(in))
		}
	}
}

func TestParseInline(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"words", "SET key value\r\n", []string{"SET", "key", "value"}},
		{"LF only", "PING\n", []string{"PING"}},
		{"runs of blanks", "  GET \t  key  \r\n", []string{"GET", "key"}},
		{"vertical tab inside a word", "a\vb c\r\n", []string{"a\vb", "c"}},
		{"lone CR inside the line", "a\rb\r\n", []string{"a", "b"}},
		{"double quotes", "SET \"a key\" \"\"\r\n", []string{"SET", "a key", ""}},
		{"hex escape", "SET k \"\\x41\\x62\\xfF\"\r\n", []string{"SET", "k", "Ab\xff"}},
		{"hex escape of NUL", "SET k \"\\x00\"\r\n", []string{"SET", "k", "\x00"}},
		{"short hex escape", "\"\\x4g\"\r\n", []string{"x4g"}},
		{"named escapes", "\"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n", []string{"\n\r\t\b\a\\\"q"}},
		{"single quotes", "SET 'a \"b\" \\n' x\r\n", []string{"SET", "a \"b\" \\n", "x"}},
		{"escaped single quote", "'it\\'s'\r\n", []string{"it's"}},
		{"quote inside a word", "a\"b c\"\r\n", []string{"ab c"}},
		{"single quote inside a word", "x'y z' w\r\n", []string{"xy z", "w"}},
		{"quoted then plain", "\"a\" b 'c' d\r\n", []string{"a", "b", "c", "d"}},
		{"closing quote then tab", "\"a\"\tb\r\n", []string{"a", "b"}},
		{"closing quote then vertical tab", "\"a\"\vb\r\n", []string{"a", "b"}},
		{"NUL ends the line", "GET k\x00junk \"\r\n", []string{"GET", "k"}},
		{"high bytes", "SET \xe2\x82\xac \xff\r\n", []string{"SET", "\xe2\x82\xac", "\xff"}},
		{"star inside is inline", "GET *\r\n", []string{"GET", "*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			args, n, err := p.Parse([]byte(tt.in))
			if err != nil || n != len(tt.in) || !reflect.DeepEqual(strs(args), tt.want) {
				t.Errorf("Parse(%q) = %q, %d, %v; want %q, %d, nil", tt.in, strs(args), n, err, tt.want, len(tt.in))
			}
		})
	}
}

// pipeline is a stream of requests of every shape, ending cleanly.
var pipeline = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n" +
	"\r\n" +
	"PING\r\n" +
	"*0\r\n" +
	"*2\r\n$3\r\nGET\r\n$0\r\n\r\n" +
	"SET \"a b\" 'c\\'d' \"\\x41\\n\"\n" +
	"*-1\r\n" +
	"*1\r\n$12\r\n\r\n$4\r\n\r\n*1\r\n\r\n" +
	"  \r\n" +
	"*2\r\n$4\r\nECHO\r\n$40\r\n" + strings.Repeat("x", 40) + "\r\n" +
	"QUIT\r\n"

var pipelineWant = [][]string{
	{"SET", "key", "value"},
	{},
	{"PING"},
	{},
	{"GET", ""},
	{"SET", "a b", "c'd", "A\n"},
	{},
	{"\r\n$4\r\n\r\n*1\r\n"},
	{},
	{"ECHO", strings.Repeat("x", 40)},
	{"QUIT"},
}

func TestParseSplitAtEveryByte(t *testing.T) {
	in := []byte(pipeline)
	for k := 0; k <= len(in); k++ {
		var p Parser
		got, err := conn(&p, [][]byte{in[:k], in[k:]})
		if err != nil || !reflect.DeepEqual(got, pipelineWant) {
			t.Fatalf("split at %d: %q, %v\nwant %q", k, got, err, pipelineWant)
		}
	}
	var chunks [][]byte
	for i := range in {
		chunks = append(chunks, in[i:i+1])
	}
	var p Parser
	got, err := conn(&p, chunks)
	if err != nil || !reflect.DeepEqual(got, pipelineWant) {
		t.Fatalf("byte by byte: %q, %v\nwant %q", got, err, pipelineWant)
	}
}

func TestParseErrorsSplitAtEveryByte(t *testing.T) {
	big := strings.Repeat("9", 100)
	for _, tt := range []struct{ in, want string }{
		{"PING\r\n*1\r\n$3\r\nabc\r\n*2\r\nfooz\r\n", msgExpectedDollar + "f'"},
		{"PING\r\n*1\r\n$" + big + "\r\n", msgTooBigBulkCount},
		{"*1\r\n$4\r\nPING\r\n*" + big, msgTooBigMbulkCount},
		{"PING\r\n" + big, msgTooBigInline},
		{"PING\r\nGET \"x\r\n", msgUnbalancedQuotes},
		{"*1\r\n$-1\r\n", msgInvalidBulk},
	} {
		in := []byte(tt.in)
		for k := 0; k <= len(in); k++ {
			p := Parser{Limits: Limits{MaxInlineLen: 64}}
			_, err := conn(&p, [][]byte{in[:k], in[k:]})
			if got := errMsg(err); got != tt.want {
				t.Fatalf("%q split at %d: %q, want %q", tt.in, k, got, tt.want)
			}
		}
	}
}

func TestParseBigArgumentIncrementally(t *testing.T) {
	payload := bytes.Repeat([]byte("v"), 1<<20)
	cmd := append([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n"), payload...)
	cmd = append(cmd, "\r\n"...)
	head := len(cmd) - len(payload) - 2

	var p Parser
	if _, n, _ := p.Parse(cmd[:head-1]); n != 0 || p.Pending() != 0 {
		t.Fatalf("before the length line ends: n = %d, Pending = %d", n, p.Pending())
	}
	if _, n, _ := p.Parse(cmd[:head]); n != 0 || p.Pending() != len(payload)+2 {
		t.Fatalf("after the length line: n = %d, Pending = %d, want %d", n, p.Pending(), len(payload)+2)
	}
	if _, n, _ := p.Parse(cmd[:head+1000]); n != 0 || p.Pending() != len(payload)+2-1000 {
		t.Fatalf("Pending = %d, want %d", p.Pending(), len(payload)+2-1000)
	}
	args, n, err := p.Parse(cmd)
	if err != nil || n != len(cmd) || len(args) != 3 || !bytes.Equal(args[2], payload) || p.Pending() != 0 {
		t.Fatalf("Parse = %d args, %d, %v, Pending %d", len(args), n, err, p.Pending())
	}
}

func TestParseBulkLengthNearMaxInt64(t *testing.T) {
	p := Parser{Limits: Limits{MaxBulkLen: 1<<63 - 1}}
	for _, l := range []string{"9223372036854775807", "9223372036854775806", "9223372036854775805"} {
		p.Reset()
		in := []byte("*1\r\n$" + l + "\r\nabc\r\n")
		if args, n, err := p.Parse(in); args != nil || n != 0 || err != nil || p.Pending() <= 0 {
			t.Errorf("Parse(%q) = %q, %d, %v, Pending %d; want need more", in, args, n, err, p.Pending())
		}
	}
}

func TestParseHugeCountReservesNothing(t *testing.T) {
	var p Parser
	in := []byte("*2147483647\r\n$1\r\nx\r\n")
	if _, n, err := p.Parse(in); n != 0 || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	if cap(p.spans) > 16 || cap(p.args) > 16 {
		t.Fatalf("reserved spans %d, args %d", cap(p.spans), cap(p.args))
	}
}

func TestParseArgsAreCapped(t *testing.T) {
	var p Parser
	buf := []byte("*2\r\n$1\r\na\r\n$1\r\nb\r\nSET \"x\" y\r\n")
	args, n, _ := p.Parse(buf)
	_ = append(args[0], 'Z')
	if string(buf[:n]) != "*2\r\n$1\r\na\r\n$1\r\nb\r\n" {
		t.Fatalf("appending to an argument overwrote the buffer: %q", buf)
	}
	args, _, _ = p.Parse(buf[n:])
	_ = append(args[1], 'Z')
	if string(args[2]) != "y" || string(args[1]) != "x" {
		t.Fatalf("appending to an unescaped argument overwrote the next: %q", args)
	}
}

func TestParseShorterBufferStartsOver(t *testing.T) {
	var p Parser
	p.Parse([]byte("*2\r\n$3\r\nGET\r\n$1"))
	args, n, err := p.Parse([]byte("PING\r\n"))
	if err != nil || n != 6 || !reflect.DeepEqual(strs(args), []string{"PING"}) {
		t.Fatalf("Parse = %q, %d, %v", args, n, err)
	}
}

func TestParseReset(t *testing.T) {
	var p Parser
	p.Parse([]byte("*2\r\n$3\r\nGET\r\n$1\r\n"))
	p.Reset()
	args, n, err := p.Parse([]byte("*1\r\n$4\r\nPING\r\n"))
	if err != nil || n != 14 || !reflect.DeepEqual(strs(args), []string{"PING"}) {
		t.Fatalf("Parse after Reset = %q, %d, %v", args, n, err)
	}
}

func TestParseAfterErrorStartsOver(t *testing.T) {
	var p Parser
	if _, _, err := p.Parse([]byte("*2\r\n$3\r\nGET\r\nxx\r\n")); err == nil {
		t.Fatal("no error")
	}
	args, _, err := p.Parse([]byte("PING\r\n"))
	if err != nil || !reflect.DeepEqual(strs(args), []string{"PING"}) {
		t.Fatalf("Parse = %q, %v", args, err)
	}
}

func TestParseDropsMemoryOfHugeCommands(t *testing.T) {
	var p Parser
	cmd := "*5000\r\n" + strings.Repeat("$1\r\nx\r\n", 5000)
	if args, _, err := p.Parse([]byte(cmd)); err != nil || len(args) != 5000 {
		t.Fatalf("Parse = %d args, %v", len(args), err)
	}
	p.Parse([]byte("PING\r\n"))
	if cap(p.args) > keepArgs || cap(p.spans) > keepArgs {
		t.Fatalf("kept args %d, spans %d", cap(p.args), cap(p.spans))
	}
}

func TestParseDoesNotAllocate(t *testing.T) {
	buf := []byte(strings.Repeat("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nSET \"a b\" c\r\n", 10))
	var p Parser
	parseAll := func() {
		for b := buf; len(b) > 0; {
			_, n, err := p.Parse(b)
			if err != nil || n == 0 {
				t.Fatalf("Parse: %d, %v", n, err)
			}
			b = b[n:]
		}
	}
	parseAll()
	if allocs := testing.AllocsPerRun(100, parseAll); allocs != 0 {
		t.Fatalf("%v allocations per pipeline, want 0", allocs)
	}
}

func TestExceedsQueryBuffer(t *testing.T) {
	var p Parser
	if p.ExceedsQueryBuffer(1<<30) || !p.ExceedsQueryBuffer(1<<30+1) {
		t.Error("default limit is not 1 GiB")
	}
	p.Limits.QueryBufferLimit = 100
	if p.ExceedsQueryBuffer(100) || !p.ExceedsQueryBuffer(101) {
		t.Error("configured limit not applied")
	}
}

func TestDefaultLimits(t *testing.T) {
	want := Limits{MaxBulkLen: 512 << 20, MaxMultibulkLen: 1<<31 - 1, MaxInlineLen: 64 << 10, QueryBufferLimit: 1 << 30}
	if got := DefaultLimits(); got != want {
		t.Errorf("DefaultLimits() = %+v, want %+v", got, want)
	}
	if got := (Limits{}).withDefaults(); got != want {
		t.Errorf("zero Limits mean %+v, want %+v", got, want)
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"-7", -7, true}, {"1234567890", 1234567890, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"00", 0, false}, {"01", 0, false},
		{"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false}, {"0x10", 0, false},
		{"000000000000000000001", 0, false},
	}
	for _, tt := range tests {
		v, ok := parseInt([]byte(tt.in))
		if v != tt.v || ok != tt.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tt.in, v, ok, tt.v, tt.ok)
		}
	}
}

// TestShortLineAgreesWithTheGeneralPath checks the fast path for length
// lines against findLine and parseInt on every line of up to 8 bytes
// that starts with its type byte (as the parser's callers make sure) and
// goes on over an alphabet of digits, signs, line ends and others, for
// several line limits: where shortLine answers, the general path answers
// the same.
func TestShortLineAgreesWithTheGeneralPath(t *testing.T) {
	alphabet := []byte("$019-\r\n")
	buf := append(make([]byte, 0, 8), '$')
	var walk func()
	checked := 0
	walk = func() {
		for _, max := range []int{1, 3, 64 << 10} {
			n, cr, ok := shortLine(buf, 0, max)
			if !ok {
				continue
			}
			checked++
			var p Parser
			i, _ := p.findLine(buf, 0, '\r', max)
			want, wok := int64(0), false
			if i >= 0 && i+2 <= len(buf) {
				want, wok = parseInt(buf[1:i])
			}
			if !wok || i != cr || want != n {
				t.Fatalf("shortLine(%q, max %d) = %d at %d; general path: %d at %d (ok %v)", buf, max, n, cr, want, i, wok)
			}
		}
		if len(buf) == cap(buf) {
			return
		}
		for _, c := range alphabet {
			buf = append(buf, c)
			walk()
			buf = buf[:len(buf)-1]
		}
	}
	walk()
	if checked == 0 {
		t.Fatal("the fast path answered nothing")
	}
	for _, s := range []string{"$64\r\n", "*3\r\n", "$123456789\r\n"} {
		if _, _, ok := shortLine([]byte(s), 0, 64<<10); !ok {
			t.Errorf("shortLine(%q) takes the slow path", s)
		}
	}
	for _, s := range []string{"$1234567890\r\n", "$123456789\r", "$0\r\n", "$-1\r\n", "$12\r\n"[:3]} {
		if _, _, ok := shortLine([]byte(s), 0, 64<<10); ok {
			t.Errorf("shortLine(%q) answers; the general path must", s)
		}
	}
}
