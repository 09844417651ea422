package runtime

import (
	"slices"
	"strings"
	"sync"

	"github.com/moond-db/moond/uring"
)

// uringOps are the io_uring opcodes the uring backend submits. auto selects
// io_uring only when the kernel supports every one of them.
var uringOps = []uint8{
	uring.OpNop, uring.OpRead, uring.OpWrite, uring.OpWritev, uring.OpFsync,
	uring.OpAccept, uring.OpRecv, uring.OpSend, uring.OpOpenat, uring.OpClose,
	uring.OpRenameat, uring.OpUnlinkat, uring.OpAsyncCancel, uring.OpMsgRing,
}

type probeResult struct {
	ok     bool
	reason string
	flags  uint32
}

var probeOnce = sync.OnceValue(probeUring)

// ProbeUring reports whether the uring backend can run here: a ring can be
// set up (on a locked thread, with the flags moond asks for) and the kernel
// supports every opcode moond uses. reason says why not, or describes the
// ring; flags are the setup flags in force. The answer is computed once per
// process.
func ProbeUring() (ok bool, reason string, flags uint32) {
	r := probeOnce()
	return r.ok, r.reason, r.flags
}

func probeUring() probeResult {
	info, err := uring.Describe()
	if err != nil {
		return probeResult{reason: err.Error(), flags: info.Flags}
	}
	var missing []string
	for _, op := range uringOps {
		if !slices.Contains(info.Supported, op) {
			missing = append(missing, uring.OpName(op))
		}
	}
	if len(missing) > 0 {
		return probeResult{
			reason: "kernel lacks io_uring opcodes " + strings.Join(missing, ","),
			flags:  info.Flags,
		}
	}
	return probeResult{
		ok:     true,
		reason: "io_uring flags=" + strings.Join(info.FlagNames(), ","),
		flags:  info.Flags,
	}
}
