package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalsAfter is how long the hook runs before it catches SIGINT and
// SIGTERM. Catching them starts the runtime's signal threads, 0.1-0.4 ms
// of a hook's CPU on this project's machines (and, statically linked,
// about as much of its wall time), and a hook that is answered at once
// (the gate decided by rule, in a few milliseconds) never needs them. A signal
// before then ends the process as it would before main runs: the client
// sends one only to a hook it gave up on (its timeout, tens of seconds, or
// the person interrupting the turn), whose answer it no longer reads.
const signalsAfter = 20 * time.Millisecond

// signalContext returns a context that SIGINT and SIGTERM end once delay
// has passed since the call (and until the process exits: the relay is
// never stopped, which would cost a round trip with the runtime's signal
// thread for each signal, and change nothing). Its Done channel stays open
// otherwise. caught is closed once the signals are caught.
func signalContext(delay time.Duration) (ctx context.Context, caught <-chan struct{}) {
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	time.AfterFunc(delay, func() {
		sig, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		context.AfterFunc(sig, func() { cancel(context.Cause(sig)) })
		close(done)
	})
	return ctx, done
}
