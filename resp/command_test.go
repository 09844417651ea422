package resp

import (
	"slices"
	"testing"
)

// TestAppendCommandParsesBack: what AppendCommand writes, the parser reads
// back as the same arguments, empty and binary ones included.
func TestAppendCommandParsesBack(t *testing.T) {
	args := [][]byte{[]byte("SET"), {}, []byte("a\r\nb\x00")}
	buf := AppendCommand([]byte("x"), args...)[1:]
	var p Parser
	got, n, err := p.Parse(buf)
	if err != nil || n != len(buf) || !slices.EqualFunc(got, args, slices.Equal) {
		t.Fatalf("Parse(%q) = %q, %d, %v", buf, got, n, err)
	}
}
