package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
)

// blocked is a publisher that stores nothing until release is closed.
type blocked struct {
	outputPublisher
	release chan struct{}
}

func (b *blocked) wait(ctx context.Context) error {
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blocked) Publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b.outputPublisher.Publish(ctx, msg)
}

func (b *blocked) PublishAll(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b.outputPublisher.PublishAll(ctx, msgs)
}

// folds collects what Config.OnFold is given.
type folds struct {
	mu   sync.Mutex
	outs map[string]processors.Output
	seqs []uint64
}

func (f *folds) add(seq uint64, outs []processors.Output) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seqs = append(f.seqs, seq)
	for _, o := range outs {
		f.outs[o.Event.ID] = o
	}
}

func (f *folds) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seqs)
}

// storedBodies returns VIGIL_DERIVED's messages by id, as stored.
func (e *env) storedBodies(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := natsutil.ReadStream(t.Context(), e.js, natsutil.ReadOptions{Stream: events.StreamDerived}, func(r natsutil.RawRecord) error {
		d, err := events.DecodeDerived(r.Data)
		if err != nil {
			return err
		}
		out[d.ID] = bytes.Clone(r.Data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDriverFoldsAheadOfStores: while VIGIL_DERIVED stores nothing, the
// driver goes on folding what the log delivers and hands each record's
// outputs to OnFold, in log order, and its checkpoint does not move; once
// the stream stores again, every output is stored exactly as OnFold was
// given it (byte for byte) and the checkpoint reaches the last record.
func TestDriverFoldsAheadOfStores(t *testing.T) {
	e := startEnv(t, envOptions{})
	f := &folds{outs: map[string]processors.Output{}}
	pub := &blocked{release: make(chan struct{})}
	r := e.runWith(t, Config{Processor: &recorder{}, Durable: "vigil-p", MaxBatch: 2, MaxAhead: 4, OnFold: f.add},
		func(p outputPublisher) outputPublisher {
			pub.outputPublisher = p
			return pub
		})
	const n = 9
	var last uint64
	for i := range n {
		last = e.append(t, fmt.Sprintf("ahead-%d", i))
	}
	// With MaxAhead 4 the fold runs 4 records ahead of a committer that
	// cannot store (more when the first batch handed over is big): it must
	// get that far, and no further than MaxAhead plus one batch of 2.
	wait.Eventually(t, wait.Default, func() string {
		r.alive(t)
		if n := f.count(); n < 4 {
			return fmt.Sprintf("folded %d records while the stream stored nothing, want 4", n)
		}
		return ""
	})
	// Once the fold waits for room it folds nothing more: the committer
	// stores nothing, so no room comes.
	wait.Eventually(t, wait.Default, func() string {
		r.alive(t)
		if r.d.roomWaits.Load() == 0 {
			return "the fold never waited for room"
		}
		return ""
	})
	if got := f.count(); got > 4+2 {
		t.Fatalf("folded %d records ahead of a committer that stored nothing; MaxAhead is 4 (+ one batch of 2 waiting)", got)
	}
	if got := len(e.storedBodies(t)); got != 0 {
		t.Fatalf("VIGIL_DERIVED holds %d outputs before the publisher stored any", got)
	}
	if r.d.Checkpointed() != 0 {
		t.Fatalf("checkpoint %d before any output was stored", r.d.Checkpointed())
	}
	close(pub.release)
	r.waitFolded(t, last)
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, s := range f.seqs {
		if s != uint64(i+1) {
			t.Fatalf("OnFold seqs %v, want 1..%d in order", f.seqs, n)
		}
	}
	if len(f.seqs) != n {
		t.Fatalf("OnFold got %d records, want %d", len(f.seqs), n)
	}
	stored := e.storedBodies(t)
	if len(stored) != n {
		t.Fatalf("VIGIL_DERIVED holds %d outputs, want %d", len(stored), n)
	}
	for id, o := range f.outs {
		want, err := o.Event.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stored[id], want) {
			t.Errorf("output %s: stored %x, OnFold was given %x", id, stored[id], want)
		}
	}
}

// TestDriverCommitFailureStops: a sink that fails while the fold runs
// ahead stops the driver with its error (nothing after it acknowledged),
// however far the fold got.
func TestDriverCommitFailureStops(t *testing.T) {
	e := startEnv(t, envOptions{})
	sink := &fakeSink{apply: func([]Applied) error { return errors.New("disk full") }}
	d, err := New(Config{JS: e.js, Processor: &recorder{}, Durable: "vigil-f", Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(t.Context()) }()
	<-d.Ready()
	e.append(t, "fails-1")
	e.append(t, "fails-2")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("Run = %v, want the sink's error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the driver did not stop on a failing sink")
	}
	if d.Checkpointed() != 0 {
		t.Fatalf("checkpoint %d after the sink failed", d.Checkpointed())
	}
}

// TestDriverStopCommitsWhatIsFolded: a driver stopped while its fold runs
// ahead of a committer that is still storing commits what it folded
// before it returns: the checkpoint reaches the last record folded, and
// the snapshot at stop covers it, so the next start folds nothing. Also
// when the fold was waiting for room to hand its last batch over
// (MaxAhead reached).
func TestDriverStopCommitsWhatIsFolded(t *testing.T) {
	for _, c := range []struct {
		name     string
		maxAhead int
		folded   int // the fewest records the fold gets to while nothing is stored
	}{{"room", 8, 6}, {"full", 2, 3}} { // full: batches of 1 or 2, and the first is always handed over
		t.Run(c.name, func(t *testing.T) {
			e := startEnv(t, envOptions{})
			f := &folds{outs: map[string]processors.Output{}}
			pub := &blocked{release: make(chan struct{})}
			store := newMemStore()
			snaps := SnapshotConfig{Every: 1000, Interval: -1, Store: store}
			r := e.runWith(t, Config{Processor: &tally{}, Durable: "vigil-test", MaxBatch: 2, MaxAhead: c.maxAhead, OnFold: f.add, Snapshots: snaps},
				func(p outputPublisher) outputPublisher {
					pub.outputPublisher = p
					return pub
				})
			for i := range 6 {
				e.append(t, fmt.Sprintf("stop-%d", i))
			}
			wait.Eventually(t, wait.Default, func() string {
				r.alive(t)
				if n := f.count(); n < c.folded {
					return fmt.Sprintf("folded %d of %d records", n, c.folded)
				}
				return ""
			})
			// The fold has reached the log's end (all 6 folded), or its
			// wait for room, where it stays: nothing is stored.
			wait.Eventually(t, wait.Default, func() string {
				r.alive(t)
				if f.count() < 6 && r.d.roomWaits.Load() == 0 {
					return fmt.Sprintf("folded %d of 6 records and not waiting for room", f.count())
				}
				return ""
			})
			if r.d.Checkpointed() != 0 {
				t.Fatalf("checkpoint %d before any output was stored", r.d.Checkpointed())
			}
			last := uint64(f.count())
			// The stores come back only after the stop is asked for.
			time.AfterFunc(100*time.Millisecond, func() { close(pub.release) })
			r.halt(t)
			if got := r.d.Checkpointed(); got != last {
				t.Fatalf("checkpoint %d after the stop, want %d (everything folded)", got, last)
			}
			if got := len(e.storedBodies(t)); got != int(last) {
				t.Fatalf("VIGIL_DERIVED holds %d outputs, want %d", got, last)
			}
			if seqs := seqsIn(t, store); len(seqs) == 0 || seqs[len(seqs)-1] != last {
				t.Fatalf("snapshots at %v, want one at stop (%d)", seqs, last)
			}
			waitConsumer(t, e, last)
			tl := &tally{}
			r = e.run(t, Config{Processor: tl, Snapshots: snaps})
			if wu := r.d.WarmUp(); wu.Restored != last || wu.Folded != 0 {
				t.Fatalf("warm-up %+v, want the snapshot at %d and nothing folded", wu, last)
			}
		})
	}
}
