package uring

import "runtime"

// Describe creates a short-lived ring with DefaultSetupFlags on a locked
// thread and reports the flags in force, the kernel's features and its
// supported opcodes. It returns an *UnavailableError where io_uring cannot be used.
func Describe() (Info, error) {
	type result struct {
		info Info
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := New(8, DefaultSetupFlags)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer r.Close()
		info := Info{Flags: r.Flags(), Features: r.Features()}
		p, err := r.Probe()
		if err != nil {
			ch <- result{info: info, err: err}
			return
		}
		for op := 0; op <= int(p.LastOp); op++ {
			if p.Supported(uint8(op)) {
				info.Supported = append(info.Supported, uint8(op))
			}
		}
		ch <- result{info: info}
	}()
	res := <-ch
	return res.info, res.err
}
