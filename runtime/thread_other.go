//go:build !linux

package runtime

// threadID is 0 where thread ids are not known.
func threadID() int { return 0 }

// pinThread is a no-op outside Linux: CPU affinity is a hint moond only
// applies where sched_setaffinity exists.
func pinThread(cpu int) error { return nil }
