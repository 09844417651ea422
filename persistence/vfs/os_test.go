package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultFileOperations(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := Default.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(sub, "f")
	f, err := Default.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello world")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("W"), 6); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatalf("Datasync: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	buf := make([]byte, 11)
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "hello World" {
		t.Fatalf("read %q", buf)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 11 {
		t.Fatalf("Stat: %v %v", fi, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	if err := Default.Truncate(name, 5); err != nil {
		t.Fatal(err)
	}
	rw, err := Default.OpenReadWrite(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.WriteAt([]byte("!"), 5); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 16)
	n, _ := ro.ReadAt(got, 0)
	ro.Close()
	if !bytes.Equal(got[:n], []byte("hello!")) {
		t.Fatalf("after truncate and write: %q", got[:n])
	}

	if err := Default.Rename(name, filepath.Join(sub, "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Create(filepath.Join(sub, "a")); err != nil {
		t.Fatal(err)
	}
	names, err := Default.List(sub)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"a", "c"}) {
		t.Fatalf("List: %v", names)
	}
	d, err := Default.OpenDir(sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatalf("directory Sync: %v", err)
	}
	d.Close()
	if err := Default.Remove(filepath.Join(sub, "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Stat(filepath.Join(sub, "c")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat after Remove: %v", err)
	}
}
