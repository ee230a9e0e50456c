// Package oneproc runs the process on one P (runtime.GOMAXPROCS(1))
// unless $GOMAXPROCS says otherwise. It is for a short-lived process that
// does one thing at a time, such as the hook: with a second P, every
// goroutine made ready (the runtime's own, the connection's reader and
// flusher, timers) wakes another thread to look for work, and creating,
// spinning and parking those threads is CPU time the process spends for
// nothing.
//
// Import it, for its side effect, from a main package and from nothing
// else: it has no dependencies but the runtime and syscall, so it is
// initialised before nearly every other package, before their
// initialisation has allocated much (the heap a second P cached would
// otherwise be given up and faulted in anew).
package oneproc

import (
	"runtime"
	"syscall"
)

func init() {
	if _, set := syscall.Getenv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
}
