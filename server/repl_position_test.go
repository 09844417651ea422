package server

import (
	"strings"
	"testing"

	"github.com/moond-db/moond/replication"
)

// TestSavedPositionFormat: a replica's position and a master's own are
// read back as written, the mark telling them apart; a line of the older
// three-field form is a replica's; malformed lines are refused.
func TestSavedPositionFormat(t *testing.T) {
	id := strings.Repeat("ab", 20)
	for _, p := range []savedPosition{
		{Position: replication.Position{ReplID: id, Offset: 1984, DB: 5}},
		{Position: replication.Position{ReplID: id, Offset: 0, DB: 0}, own: true},
	} {
		got, err := parseSavedPosition(p.String())
		if err != nil || got != p {
			t.Fatalf("%q read back as %+v (%v), want %+v", p.String(), got, err, p)
		}
	}
	if got, err := parseSavedPosition(id + " 7 3\n"); err != nil || got.own || got.Offset != 7 || got.DB != 3 {
		t.Fatalf("the three-field form read as %+v (%v), want a replica's position", got, err)
	}
	for _, bad := range []string{"", id, id + " 7", id + " 7 3 replica", id + " 7 3 master x",
		"short 7 3", id + " -1 0", id + " 7 -2", id + " x 3 master"} {
		if p, err := parseSavedPosition(bad); err == nil {
			t.Fatalf("%q accepted as %+v", bad, p)
		}
	}
}
