package tests

import "testing"

// TestMasterOnThePoolBackend: a moond master on the portable pool backend
// hands its replica's socket over (runtime.Detacher) as the io_uring one
// does: a redis-server replica gets the full copy, follows the workload,
// and acknowledges the master's offset.
func TestMasterOnThePoolBackend(t *testing.T) {
	s := startServer(t, "pool", 2)
	maddr := s.addr()
	fillMaster(t, maddr)
	host, port := hostPort(t, maddr)
	r := startRedisServer(t, "--replicaof", host, port)
	raddr := r.Options().Addr
	waitLinkUp(t, r)
	waitEqual(t, maddr, raddr)
	masterWrites(t, maddr)
	waitEqual(t, maddr, raddr)
	waitOffsets(t, s.client(2), r, "slave_repl_offset")
}
