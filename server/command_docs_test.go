package server

import "testing"

// TestCommandDocsCoverEveryCommand checks that command_docs.resp3
// documents every command and subcommand moond has: a command added
// without running internal/cmddocgen fails here.
func TestCommandDocsCoverEveryCommand(t *testing.T) {
	names := CommandNames()
	if len(names) < 200 {
		t.Fatalf("CommandNames lists %d commands", len(names))
	}
	for _, name := range names {
		doc, ok := commandDocs[name]
		if !ok {
			t.Errorf("%s: no COMMAND DOCS entry; run internal/cmddocgen", name)
			continue
		}
		if _, ok := doc.field("summary"); !ok {
			t.Errorf("%s: COMMAND DOCS entry without a summary", name)
		}
	}
}
