package tests

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Issue 14, defect 2, as reported: SET; SAVE; restart; remove the heap
// file; DEL; SAVE. The SAVE finishes, the loss is counted, and the keys
// left are written again, so that the next boot opens the heap.
func TestHeapFileRemovedAfterARestartIsCountedAndItsKeysWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "pool", 1)
	c := s.client(2)
	bg := ctx(t)
	for i := range 10 {
		c.Set(bg, "k"+strconv.Itoa(i), i, 0)
	}
	if err := c.Save(bg).Err(); err != nil {
		t.Fatal(err)
	}
	s.kill9()
	s = startServerIn(t, dir, "pool", 1)
	c = s.client(2)
	files, _ := filepath.Glob(filepath.Join(dir, "shard-000", "heap", "heap-*.dat"))
	if len(files) != 1 {
		t.Fatalf("heap files %v, want one", files)
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	c.Del(bg, "k0")
	save, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	if err := c.Save(save).Err(); err != nil {
		t.Fatalf("SAVE: %v (checkpoint_state %s)\n%s", err, infoField(t, c, "checkpoint_state"), s.log.String())
	}
	if n := infoInt(t, c, "heap_vanished_unexpected"); n != 1 {
		t.Fatalf("heap_vanished_unexpected %d, want 1", n)
	}
	s.kill9()
	s = startServerIn(t, dir, "pool", 1)
	c = s.client(2)
	if n, _ := c.DBSize(bg).Result(); n != 9 {
		t.Fatalf("DBSIZE %d after the restart, want 9\n%s", n, s.log.String())
	}
}
