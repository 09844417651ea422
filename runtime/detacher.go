package runtime

// Detacher is a Backend that can hand a socket over to other code: the
// server's replicas, whose sockets leave the loop for goroutines of their
// own (server/master_sync.go).
type Detacher interface {
	// Detach returns a duplicate of fd's descriptor, which the caller
	// owns, and closes fd as Close does but without shutting the socket
	// down: operations pending on fd end with ECANCELED, as after Close.
	Detach(fd FD) (int, error)
}
