package runtime

import "sync"

// threads maps the OS thread id of each running loop to the loop, so that
// code can tell whether it runs on a loop's thread (a locked thread runs no
// other goroutine). Only Linux knows thread ids; elsewhere threadID is 0 and
// nothing is registered.
var threads sync.Map // int → *Loop

func registerThread(l *Loop) {
	if l.tid != 0 {
		threads.Store(l.tid, l)
	}
}

func unregisterThread(l *Loop) {
	if l.tid != 0 {
		threads.CompareAndDelete(l.tid, l)
	}
}

// currentLoop returns the loop whose thread the caller runs on, or nil.
func currentLoop() *Loop {
	tid := threadID()
	if tid == 0 {
		return nil
	}
	if v, ok := threads.Load(tid); ok {
		return v.(*Loop)
	}
	return nil
}

// onThread reports whether the caller runs on l's thread (false where that
// cannot be known).
func onThread(l *Loop) bool {
	return l.tid != 0 && threadID() == l.tid && currentLoop() == l
}
