package server

import (
	"crypto/rand"
	"encoding/hex"
	goruntime "runtime"
)

func numCPU() int { return goruntime.NumCPU() }

// newRunID returns 40 random hex characters, like Redis's run_id.
func newRunID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
