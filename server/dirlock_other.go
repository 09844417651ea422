//go:build !unix

package server

import "os"

// lockFile creates path exclusively; the lock is the file's existence.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return func() { f.Close(); os.Remove(path) }, nil
}
