package server

// subscriberSet is the connections of one shard subscribed to one channel
// or pattern. PUBLISH walks it for every message, so the connections sit
// in a slice (a walk is a linear scan, not a map iteration); the index
// map makes a removal O(1) by moving the last connection into the hole.
// Delivery order among subscribers is therefore not subscription order;
// no client can observe the difference, since each has its own socket.
type subscriberSet struct {
	conns []*conn
	index map[*conn]int
}

func newSubscriberSet() *subscriberSet {
	return &subscriberSet{index: make(map[*conn]int)}
}

// add puts c in the set; adding a member again changes nothing.
func (s *subscriberSet) add(c *conn) {
	if _, ok := s.index[c]; ok {
		return
	}
	s.index[c] = len(s.conns)
	s.conns = append(s.conns, c)
}

// remove takes c out of the set, if it is there.
func (s *subscriberSet) remove(c *conn) {
	i, ok := s.index[c]
	if !ok {
		return
	}
	last := len(s.conns) - 1
	if i != last {
		moved := s.conns[last]
		s.conns[i] = moved
		s.index[moved] = i
	}
	s.conns[last] = nil
	s.conns = s.conns[:last]
	delete(s.index, c)
}

// len is the number of connections in the set; 0 for a nil set.
func (s *subscriberSet) len() int {
	if s == nil {
		return 0
	}
	return len(s.conns)
}

// deliver pushes msg, as a message of kind (with pattern for pmessage),
// to every connection in the set and returns how many there were. The
// message is encoded once per protocol. A push may close a connection
// over its output limit, which takes it out of the set during the walk:
// the walk then stays at the index the last connection moved into.
func (s *subscriberSet) deliver(kind string, pattern []byte, msg *pubMessage) int64 {
	if s == nil {
		return 0
	}
	var n int64
	var enc [2][]byte // the message encoded for RESP2 and RESP3, on first use
	for i := 0; i < len(s.conns); {
		c := s.conns[i]
		p := protoIndex(c)
		if enc[p] == nil {
			enc[p] = encodeMessage(c.out.Proto, kind, pattern, msg.channel, msg.payload)
		}
		c.push(enc[p])
		n++
		if i < len(s.conns) && s.conns[i] == c {
			i++
		}
	}
	return n
}
