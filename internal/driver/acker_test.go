package driver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestCommitsDoNotWaitForAnAck: an acknowledgement whose confirmation
// never comes (the consumer's leader died with it in flight) holds no
// commit: the next batches are stored and checkpointed meanwhile, the
// hung confirmation gives up within ackTimeout, and the newest
// acknowledgement is confirmed last.
func TestCommitsDoNotWaitForAnAck(t *testing.T) {
	d := fakeDriver(t, &fakePub{}, nil)
	release := make(chan struct{})
	var hung atomic.Bool
	var lastConfirmed atomic.Uint64
	batch := func(from, to uint64, hang bool) foldedBatch {
		ms := msgs(t, from, to, nil)
		last := ms[len(ms)-1].(*fakeMsg)
		last.doubleAck = func(ctx context.Context) error {
			if hang {
				hung.Store(true)
				select {
				case <-ctx.Done(): // ackTimeout
					return ctx.Err()
				case <-release:
				}
			}
			lastConfirmed.Store(last.seq)
			return nil
		}
		fb, stop := d.fold(t.Context(), nil, ms)
		if stop != nil {
			t.Fatal(stop)
		}
		return fb
	}
	p := &pipeline{work: make(chan foldedBatch, 8), failed: make(chan error, 1), freed: make(chan struct{}, 1), done: make(chan struct{})}
	go d.commitLoop(t.Context(), p)
	p.work <- batch(1, 2, true)
	wait.Eventually(t, wait.Default, func() string {
		if !hung.Load() {
			return "the first batch's store has not started"
		}
		return ""
	})
	p.work <- batch(3, 4, false)
	p.work <- batch(5, 6, false)
	for d.Checkpointed() != 6 {
		select {
		case err := <-p.failed:
			t.Fatal(err)
		case <-time.After(time.Millisecond):
		}
	}
	// Stored and checkpointed while the first confirmation still hangs.
	if lastConfirmed.Load() != 0 {
		t.Fatalf("confirmed %d before the hung one returned", lastConfirmed.Load())
	}
	close(release)
	close(p.work)
	<-p.done
	if got := lastConfirmed.Load(); got != 6 {
		t.Fatalf("last confirmed %d, want 6 (the newest acknowledgement)", got)
	}
}

var _ jetstream.Msg = (*fakeMsg)(nil)
