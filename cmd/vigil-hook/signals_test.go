package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
)

// TestSignalContext: once caught, a SIGTERM ends the context (the hook's
// wait) instead of the process, with the signal as its cause.
func TestSignalContext(t *testing.T) {
	ctx, caught := signalContext(0)
	<-caught
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if err := context.Cause(ctx); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("cause %v, want the SIGTERM", err)
	}
}
