package pairinglog

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// keepOutcomes is how many recent outcomes a Reader remembers by seq.
const keepOutcomes = 256

// ErrNotFolded means the event at a seq is not a pairing event the
// Reader folded (another subject, or not stored).
var ErrNotFolded = errors.New("pairinglog: no pairing event at that log seq")

// Reader folds the pairing events of VIGIL_LOG (the log subject of
// pairing.Conversation) with the pairing fold, incrementally: each Sync
// reads only what was stored since the last. It is safe for concurrent use.
type Reader struct {
	js jetstream.JetStream
	// OnOutcome, when set before the first read, is called with every
	// outcome folded (outside the Reader's lock, in log order).
	OnOutcome func(pairing.Outcome)

	mu       sync.Mutex
	fold     *pairing.Fold
	next     uint64
	outcomes map[uint64]pairing.Outcome
	order    []uint64
	// changed is closed, and replaced, whenever next moves.
	changed chan struct{}
}

// NewReader returns a reader of js's VIGIL_LOG; it reads nothing until
// Sync or Follow.
func NewReader(js jetstream.JetStream) *Reader {
	return &Reader{js: js, fold: pairing.New(), next: 1, outcomes: map[uint64]pairing.Outcome{}, changed: make(chan struct{})}
}

// Follow folds the pairing events as they are stored, from where the
// Reader is, until ctx is done (nil) or the read fails.
func (r *Reader) Follow(ctx context.Context) error {
	r.mu.Lock()
	from := r.next
	r.mu.Unlock()
	err := natsutil.ReadStream(ctx, r.js, natsutil.ReadOptions{
		Stream: events.StreamLog, From: from, Subjects: []string{events.LogSubject(pairing.Conversation)}, Follow: true,
	}, func(raw natsutil.RawRecord) error {
		r.mu.Lock()
		o, ok := r.apply(raw)
		r.mu.Unlock()
		if ok && r.OnOutcome != nil {
			r.OnOutcome(o)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pairinglog: follow the pairing events: %w", err)
	}
	return nil
}

// WaitOutcome waits until the event at seq has been folded (by Follow)
// and returns what it did.
func (r *Reader) WaitOutcome(ctx context.Context, seq uint64) (pairing.Outcome, error) {
	for {
		r.mu.Lock()
		if r.next > seq {
			o, ok := r.outcomes[seq]
			r.mu.Unlock()
			if !ok {
				return pairing.Outcome{}, fmt.Errorf("%w %d", ErrNotFolded, seq)
			}
			return o, nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return pairing.Outcome{}, fmt.Errorf("pairinglog: wait for log seq %d to be folded: %w", seq, ctx.Err())
		case <-ch:
		}
	}
}

// Current calls fn with the fold as far as it has been read, without
// reading (fn must not keep or change it).
func (r *Reader) Current(fn func(f *pairing.Fold)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.fold)
}

// apply folds one raw record, unless it was folded already; r.mu is held.
func (r *Reader) apply(raw natsutil.RawRecord) (pairing.Outcome, bool) {
	if raw.Seq < r.next {
		return pairing.Outcome{}, false
	}
	r.next = raw.Seq + 1
	close(r.changed)
	r.changed = make(chan struct{})
	rec, err := processors.Decode(raw.Seq, raw.Subject, raw.Data)
	if err != nil {
		return pairing.Outcome{}, false
	}
	o := r.fold.Apply(&rec)
	r.outcomes[raw.Seq] = o
	r.order = append(r.order, raw.Seq)
	if len(r.order) > keepOutcomes {
		delete(r.outcomes, r.order[0])
		r.order = r.order[1:]
	}
	return o, true
}

// Sync folds every pairing event stored since the last Sync.
func (r *Reader) Sync(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sync(ctx)
}

// sync reads what was stored since the last read; r.mu is held (OnOutcome
// runs under it here).
func (r *Reader) sync(ctx context.Context) error {
	err := natsutil.ReadStream(ctx, r.js, natsutil.ReadOptions{
		Stream: events.StreamLog, From: r.next, Subjects: []string{events.LogSubject(pairing.Conversation)},
	}, func(raw natsutil.RawRecord) error {
		if o, ok := r.apply(raw); ok && r.OnOutcome != nil {
			r.OnOutcome(o)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pairinglog: read the pairing events: %w", err)
	}
	return nil
}

// OutcomeAt syncs and returns what the pairing event stored at seq did
// (seq as the ingest service's reply gave it).
func (r *Reader) OutcomeAt(ctx context.Context, seq uint64) (pairing.Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.sync(ctx); err != nil {
		return pairing.Outcome{}, err
	}
	o, ok := r.outcomes[seq]
	if !ok {
		return pairing.Outcome{}, fmt.Errorf("%w %d", ErrNotFolded, seq)
	}
	return o, nil
}

// View syncs, then calls fn with the fold (which fn must not keep or
// change) while no other Sync runs.
func (r *Reader) View(ctx context.Context, fn func(f *pairing.Fold)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.sync(ctx); err != nil {
		return err
	}
	fn(r.fold)
	return nil
}
