package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// ReadStream calls fn for every message selected by o, in stream order,
// through an ordered consumer. It returns fn's first error.
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
	// An ordered consumer is placed on any replica of a clustered stream,
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

// readOrdered reads from..to (to 0: forever, with o.Follow) on one
// ordered consumer until the consumer has nothing pending, and returns the
// last sequence delivered (0 if none).
func readOrdered(ctx context.Context, st jetstream.Stream, o ReadOptions, from, to uint64, fn func(RawRecord) error) (uint64, error) {
	cfg := jetstream.OrderedConsumerConfig{
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
		FilterSubjects: o.Subjects,
	}
	cons, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("transport: read %s: %w", o.Stream, err)
	}
	if !o.Follow {
		ci, err := cons.Info(ctx)
		if err == nil && ci.NumPending == 0 {
			return 0, nil
		}
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return 0, fmt.Errorf("transport: read %s: %w", o.Stream, err)
	}
	defer it.Stop()
	stopOnDone := context.AfterFunc(ctx, it.Stop)
	defer stopOnDone()
	var last uint64
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				if o.Follow {
					return last, nil
				}
				return last, ctx.Err()
			}
			return last, fmt.Errorf("transport: read %s: %w", o.Stream, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return last, fmt.Errorf("transport: read %s: metadata: %w", o.Stream, err)
		}
		seq := meta.Sequence.Stream
		if to != 0 && seq > to {
			return to, nil
		}
		last = seq
		if err := fn(RawRecord{Seq: seq, Subject: msg.Subject(), Data: msg.Data()}); err != nil {
			if errors.Is(err, errStop) {
				return to, nil
			}
			return last, err
		}
		if !o.Follow && (seq >= to || meta.NumPending == 0) {
			return last, nil
		}
	}
}
