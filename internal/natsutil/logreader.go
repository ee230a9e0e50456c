package natsutil

import (
	"context"
	"errors"
	"fmt"

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
		return fmt.Errorf("natsutil: stream %s: %w", o.Stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("natsutil: stream %s info: %w", o.Stream, err)
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
	cfg := jetstream.OrderedConsumerConfig{
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
		FilterSubjects: o.Subjects,
	}
	cons, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("natsutil: read %s: %w", o.Stream, err)
	}
	if !o.Follow {
		ci, err := cons.Info(ctx)
		if err == nil && ci.NumPending == 0 {
			return nil
		}
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return fmt.Errorf("natsutil: read %s: %w", o.Stream, err)
	}
	defer it.Stop()
	stopOnDone := context.AfterFunc(ctx, it.Stop)
	defer stopOnDone()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				if o.Follow {
					return nil
				}
				return ctx.Err()
			}
			return fmt.Errorf("natsutil: read %s: %w", o.Stream, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("natsutil: read %s: metadata: %w", o.Stream, err)
		}
		seq := meta.Sequence.Stream
		if to != 0 && seq > to {
			return nil
		}
		if err := fn(RawRecord{Seq: seq, Subject: msg.Subject(), Data: msg.Data()}); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
		if !o.Follow && (seq >= to || meta.NumPending == 0) {
			return nil
		}
	}
}
