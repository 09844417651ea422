//go:build !amd64

package monoclock

func readTSC() uint64 { return 0 }

func tscUsable() bool { return false }
