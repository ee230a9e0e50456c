package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
)

// RawRecord is one message of a stream, undecoded (events.RawRecord).
type RawRecord = events.RawRecord

// ReadOptions select what ReadStream reads.
type ReadOptions struct {
	Stream string
	// From is the first stream sequence to read (0 and 1 both mean the start).
	From uint64
	// To is the last sequence to read; 0 means the last one stored when the
	// read starts (or never stop, with Follow).
	To uint64
	// Subjects filter the stream; empty means all.
	Subjects []string
	// Follow keeps reading new messages until ctx is done.
	Follow bool
}

// errStop ends a read early without an error.
var errStop = errors.New("stop")

// ReadStream calls fn for every message selected by o, in stream order
// (see readOrdered). It returns fn's first error.
func ReadStream(ctx context.Context, js jetstream.JetStream, o ReadOptions, fn func(RawRecord) error) error {
	st, err := js.Stream(ctx, o.Stream)
	if err != nil {
		return fmt.Errorf("transport: stream %s: %w", o.Stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("transport: stream %s info: %w", o.Stream, err)
	}
	from := o.From
	if from < info.State.FirstSeq {
		from = info.State.FirstSeq
	}
	if from == 0 {
		from = 1
	}
	to := o.To
	if !o.Follow {
		if to == 0 || to > info.State.LastSeq {
			to = info.State.LastSeq
		}
		if info.State.Msgs == 0 || from > to {
			return nil
		}
	}
	// A reader's consumer is placed on any replica of a clustered stream,
	// one behind the leader too (a node just restarted): it then has
	// nothing pending before the read's end. An unfiltered read that ends
	// short of a message the leader holds starts again after the last
	// message delivered, on a new consumer (see shortRead).
	deadline := time.Now().Add(shortReadPatience)
	for {
		last, err := readOrdered(ctx, st, o, from, to, fn)
		if err != nil || o.Follow || last >= to || len(o.Subjects) > 0 {
			return err
		}
		short, err := shortRead(ctx, st, to)
		if !short {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the stream holds it, but no consumer delivered it")
			}
			return fmt.Errorf("transport: read %s: stopped at seq %d of %d: %w", o.Stream, max(last, from-1), to, err)
		}
		if last >= from {
			from = last + 1
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// shortReadPatience bounds how long ReadStream waits for a replica that
// is behind to catch up (or for a consumer placed on another one).
const shortReadPatience = 30 * time.Second

// shortRead reports whether the stream's leader holds message to, which a
// read that ended before it then missed. A message removed (deleted) is
// not missed.
func shortRead(ctx context.Context, st jetstream.Stream, to uint64) (bool, error) {
	gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := st.GetMsg(gctx, to)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	return true, err // unknown (no answer) counts as short: asked again
}

// readOrdered reads from..to (to 0: forever, with o.Follow) in stream
// order until nothing is pending, and returns the last sequence delivered
// (0 if none). It reads on ephemeral consumers it never deletes (the
// client roles may not: an abandoned one is removed by the server after
// ReaderInactive): when one fails (a missed heartbeat, a leader change, the
// consumer gone, a gap in its delivery), the next starts after the last
// message delivered. A read that is not following gives up after
// shortReadPatience without progress.
func readOrdered(ctx context.Context, st jetstream.Stream, o ReadOptions, from, to uint64, fn func(RawRecord) error) (uint64, error) {
	var last uint64
	next := from
	backoff := 50 * time.Millisecond
	stuckSince := time.Now()
	for {
		l, err := readConsumer(ctx, st, o, next, to, fn)
		if l > last {
			last = l
			next = l + 1
			stuckSince = time.Now()
			backoff = 50 * time.Millisecond
		}
		var fnErr callbackError
		switch {
		case err == nil:
			return last, nil
		case errors.As(err, &fnErr):
			return last, fnErr.err
		case ctx.Err() != nil:
			if o.Follow {
				return last, nil
			}
			return last, ctx.Err()
		case !resumable(err), !o.Follow && time.Since(stuckSince) > shortReadPatience:
			return last, fmt.Errorf("transport: read %s: %w", o.Stream, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// ReaderInactive is how long the server keeps a one-shot reader's
// consumer (a read, a replay, an export, a placement look-up) after its
// last pull before it removes it. Short, because such readers are not
// deleted by their owner (a role that reads may not delete consumers):
// run in a loop, readers that linger would pile up toward the stream's
// consumer limit (nats-server's default is 1,000 a stream), and a node
// that restarts could not re-create its own consumer. A reader that
// pauses longer than this between pulls gets a new consumer on resume.
const ReaderInactive = 10 * time.Second

// errGap reports a consumer that skipped a message of its own delivery.
var errGap = errors.New("consumer delivery skipped a message")

// callbackError carries fn's error out of readConsumer unchanged.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// resumable reports whether a read that failed with err may go on on a new
// consumer: not when the stream is gone or the role may not read it.
func resumable(err error) bool {
	return !errors.Is(err, jetstream.ErrStreamNotFound) &&
		!errors.Is(err, nats.ErrPermissionViolation) &&
		!errors.Is(err, nats.ErrAuthorization) &&
		!errors.Is(err, nats.ErrConnectionClosed)
}

// readConsumer reads from..to on one new ephemeral consumer; see
// readOrdered.
func readConsumer(ctx context.Context, st jetstream.Stream, o ReadOptions, from, to uint64, fn func(RawRecord) error) (uint64, error) {
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       from,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: ReaderInactive,
		Replicas:          1,
		MemoryStorage:     true,
	}
	if len(o.Subjects) == 1 {
		cfg.FilterSubject = o.Subjects[0]
	} else {
		cfg.FilterSubjects = o.Subjects
	}
	cons, err := st.CreateConsumer(ctx, cfg)
	if err != nil {
		return 0, err
	}
	if !o.Follow && cons.CachedInfo().NumPending == 0 {
		return 0, nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024),
		jetstream.PullExpiry(5*time.Second), jetstream.PullHeartbeat(time.Second),
		jetstream.WithMessagesErrOnMissingHeartbeat(true))
	if err != nil {
		return 0, err
	}
	defer it.Stop()
	stopOnDone := context.AfterFunc(ctx, it.Stop)
	defer stopOnDone()
	var last, delivered uint64
	for {
		msg, err := it.Next()
		if err != nil {
			return last, err
		}
		meta, err := msg.Metadata()
		if err != nil {
			return last, callbackError{fmt.Errorf("transport: read %s: metadata: %w", o.Stream, err)}
		}
		if delivered != 0 && meta.Sequence.Consumer != delivered+1 {
			return last, errGap
		}
		delivered = meta.Sequence.Consumer
		seq := meta.Sequence.Stream
		if to != 0 && seq > to {
			return to, nil
		}
		last = seq
		if err := fn(RawRecord{Seq: seq, Subject: msg.Subject(), Data: msg.Data()}); err != nil {
			if errors.Is(err, errStop) {
				return to, nil
			}
			return last, callbackError{err}
		}
		if !o.Follow && (seq >= to || meta.NumPending == 0) {
			return last, nil
		}
	}
}
