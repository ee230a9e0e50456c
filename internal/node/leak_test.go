package node

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

// TestCloseLeavesNoGoroutines starts and closes a node with traffic and
// checks nothing it started is left running.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	s := startTest(t, t.TempDir())
	c, err := s.Client(t.Context(), "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(t.Context(), action("leak-1", "c-1", "ls")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before,
		// nats-server keeps process-wide helpers alive after Shutdown.
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Node).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server.ticker"),
		// nats.go v1.55.0: an object store Put (the driver's snapshots) starts
		// this goroutine and, when its cleanup wins the race for the publisher's
		// lock, leaves it waiting on a nil channel for good (jetstream/publish.go,
		// resetPendingAcksOnReconnect; cleanupReplySub). Not Vigil's to fix.
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
	)
}
