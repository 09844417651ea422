//go:build linux

package uring

import (
	"testing"
	"unsafe"
)

func TestABISizesMatchKernel(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"io_uring_sqe", unsafe.Sizeof(SQE{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(CQE{}), 16},
		{"io_uring_params", unsafe.Sizeof(params{}), 120},
		{"io_uring_getevents_arg", unsafe.Sizeof(getEventsArg{}), 24},
		{"__kernel_timespec", unsafe.Sizeof(Timespec{}), 16},
		{"sqe.user_data offset", unsafe.Offsetof(SQE{}.UserData), 32},
		{"sqe.addr3 offset", unsafe.Offsetof(SQE{}.Addr3), 48},
	} {
		if c.got != c.want {
			t.Errorf("%s: size %d, kernel ABI says %d", c.name, c.got, c.want)
		}
	}
}
