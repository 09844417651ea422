package runtime

import "golang.org/x/sys/unix"

// threadID is the calling OS thread's id.
func threadID() int { return unix.Gettid() }

// pinThread binds the calling OS thread to one CPU.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}
