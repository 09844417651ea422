package uring

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	enterGetEvents uint32 = 1 << 0
	enterExtArg    uint32 = 1 << 3

	sqNeedWakeup uint32 = 1 << 0
	sqCQOverflow uint32 = 1 << 1
	sqTaskrun    uint32 = 1 << 2
)

// getEventsArg mirrors struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask     uint64
	sigmaskSz   uint32
	minWaitUsec uint32
	ts          uint64
}

// GetSQE returns the next free SQE, or nil when the submission queue is full
// (submit, then ask again). The SQE comes zeroed; fill it with a Prep method.
// An SQE that was taken counts as prepared and goes out with the next submit,
// so always prepare what you take.
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqKHead)
	if r.sqeTail-head >= r.sqEntries {
		return nil
	}
	s := &r.sqes[r.sqeTail&r.sqMask]
	r.sqeTail++
	*s = SQE{}
	return s
}

// SQReady is the number of SQEs prepared and not yet consumed by the kernel.
func (r *Ring) SQReady() uint32 { return r.sqeTail - atomic.LoadUint32(r.sqKHead) }

// SQSpace is the number of SQEs GetSQE can still hand out before a submit.
func (r *Ring) SQSpace() uint32 { return r.sqEntries - r.SQReady() }

// flush publishes the prepared SQEs to the kernel (store-release of the tail)
// and returns how many are waiting to be consumed.
func (r *Ring) flush() uint32 {
	atomic.StoreUint32(r.sqKTail, r.sqeTail)
	return r.sqeTail - atomic.LoadUint32(r.sqKHead)
}

// enter calls io_uring_enter, retrying EINTR. Each retry re-publishes the SQ,
// so SQEs consumed before the interruption are not submitted twice.
func (r *Ring) enter(minComplete uint32, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, error) {
	for {
		toSubmit := r.flush()
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit),
			uintptr(minComplete), uintptr(flags), uintptr(arg), argSize)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
}

// Submit hands every prepared SQE to the kernel and returns how many it took.
// With SetupSubmitAll the kernel takes a whole batch even when one SQE in it
// is invalid (that one completes with an error CQE).
func (r *Ring) Submit() (int, error) {
	if r.flush() == 0 && !r.needsEnter() {
		return 0, nil
	}
	return r.enter(0, r.taskrunFlags(), nil, 0)
}

// needsEnter says whether the kernel wants an io_uring_enter even with
// nothing to submit: deferred task work or overflowed CQEs to flush.
func (r *Ring) needsEnter() bool {
	return atomic.LoadUint32(r.sqKFlags)&(sqTaskrun|sqCQOverflow) != 0
}

// taskrunFlags are the enter flags that let pending task work run: with
// DEFER_TASKRUN completions are only produced when the owner enters with
// GETEVENTS.
func (r *Ring) taskrunFlags() uint32 {
	if r.flags&SetupDeferTaskrun != 0 {
		return enterGetEvents
	}
	return 0
}

// SubmitAndWait submits the prepared SQEs and waits until at least waitNr
// CQEs are ready.
func (r *Ring) SubmitAndWait(waitNr uint32) (int, error) {
	return r.enter(waitNr, enterGetEvents, nil, 0)
}

// SubmitAndWaitTimeout submits the prepared SQEs and waits until waitNr CQEs
// are ready or timeout has passed; a timeout with nothing ready returns
// unix.ETIME. The wait resumes after EINTR with the time that is left.
// timeout <= 0 waits without a bound.
func (r *Ring) SubmitAndWaitTimeout(waitNr uint32, timeout time.Duration) (int, error) {
	if timeout <= 0 {
		return r.SubmitAndWait(waitNr)
	}
	if r.features&FeatExtArg == 0 {
		return r.waitWithTimeoutSQE(waitNr, timeout)
	}
	deadline := time.Now().Add(timeout)
	submitted := 0
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		r.waitTS = Timespec{Sec: int64(left / time.Second), Nsec: int64(left % time.Second)}
		r.waitArg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.waitTS)))}
		toSubmit := r.flush()
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(waitNr),
			uintptr(enterGetEvents|enterExtArg), uintptr(unsafe.Pointer(&r.waitArg)), unsafe.Sizeof(r.waitArg))
		switch errno {
		case 0:
			return submitted + int(n), nil
		case unix.EINTR:
			// Anything consumed before the signal counts as submitted.
			submitted += int(toSubmit - r.flush())
			continue
		default:
			if errno == unix.ETIME && submitted > 0 {
				return submitted, nil
			}
			return submitted, errno
		}
	}
}

// waitWithTimeoutSQE is the pre-5.11 way to bound a wait: a TIMEOUT SQE whose
// CQE (user_data TimeoutUserData) wakes the waiter.
func (r *Ring) waitWithTimeoutSQE(waitNr uint32, timeout time.Duration) (int, error) {
	s := r.GetSQE()
	if s == nil {
		if _, err := r.Submit(); err != nil {
			return 0, err
		}
		if s = r.GetSQE(); s == nil {
			return 0, unix.EBUSY
		}
	}
	r.fallTS = Timespec{Sec: int64(timeout / time.Second), Nsec: int64(timeout % time.Second)}
	s.PrepTimeout(&r.fallTS, waitNr, 0)
	s.SetUserData(TimeoutUserData)
	return r.SubmitAndWait(1)
}

// GetEvents lets the kernel run deferred completion work and flush
// overflowed CQEs, so that PeekCQEs sees them. It submits prepared SQEs too.
func (r *Ring) GetEvents() error {
	_, err := r.enter(0, enterGetEvents, nil, 0)
	return err
}

// CQReady is the number of CQEs ready to be reaped.
func (r *Ring) CQReady() uint32 {
	return atomic.LoadUint32(r.cqKTail) - *r.cqKHead
}

// PeekCQEs copies up to len(cqes) ready CQEs without consuming them; call
// CQAdvance with the number handled. When none are ready but the kernel has
// deferred work or overflowed CQEs pending, it enters the kernel once to
// collect them.
func (r *Ring) PeekCQEs(cqes []CQE) int {
	ready := r.CQReady()
	if ready == 0 && r.needsEnter() {
		if r.GetEvents() == nil {
			ready = r.CQReady()
		}
	}
	n := min(uint32(len(cqes)), ready)
	head := *r.cqKHead
	for i := uint32(0); i < n; i++ {
		cqes[i] = r.cqes[(head+i)&r.cqMask]
	}
	return int(n)
}

// CQAdvance marks n CQEs as consumed (store-release of the head), giving
// their slots back to the kernel.
func (r *Ring) CQAdvance(n uint32) {
	if n > 0 {
		atomic.StoreUint32(r.cqKHead, *r.cqKHead+n)
	}
}

// WaitCQE submits what is prepared and returns the next CQE, consuming it,
// waiting at most timeout (<= 0: without a bound). It returns unix.ETIME when
// the time ran out with nothing ready.
func (r *Ring) WaitCQE(timeout time.Duration) (CQE, error) {
	var one [1]CQE
	for {
		if r.PeekCQEs(one[:]) == 1 {
			r.CQAdvance(1)
			return one[0], nil
		}
		if _, err := r.SubmitAndWaitTimeout(1, timeout); err != nil {
			return CQE{}, err
		}
		if r.CQReady() == 0 && r.features&FeatExtArg != 0 && timeout > 0 {
			// Woken without a CQE (e.g. task work that produced none): wait again.
			continue
		}
	}
}
