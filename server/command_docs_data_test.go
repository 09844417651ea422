package server

import (
	"strings"
	"testing"
)

// TestCommandDocsDataParses: the embedded file holds its source line and
// three maps, and a truncated or padded copy is refused, not half read.
func TestCommandDocsDataParses(t *testing.T) {
	tables, err := loadCommandDocs(commandDocsData)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables[0]) == 0 || len(tables[1]) == 0 || len(tables[2]) == 0 {
		t.Fatalf("tables of %d, %d and %d entries", len(tables[0]), len(tables[1]), len(tables[2]))
	}
	if v, ok := tables[0]["get"].field("summary"); !ok || !strings.Contains(v.str, "value of a key") {
		t.Fatalf("GET's summary: %+v", v)
	}
	for _, bad := range [][]byte{commandDocsData[:len(commandDocsData)-3], append(append([]byte(nil), commandDocsData...), '+')} {
		if _, err := loadCommandDocs(bad); err == nil {
			t.Fatalf("a copy of %d bytes (of %d) was read", len(bad), len(commandDocsData))
		}
	}
}
