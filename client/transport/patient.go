package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReadStreamPatient reads as ReadStream does, and holds on through
// what a live fleet goes through:
//
//   - a stream's info or a read that does not answer (its leader killed,
//     an election under way) is asked again, resuming after the last
//     message delivered, for at most ReadPatience;
//   - a replica's "nothing pending" is not taken for the end of a filtered
//     read either (ReadStream checks with the stream's leader only for
//     unfiltered reads): an ordered consumer may sit on a replica behind
//     the leader, so after a filtered read it asks the leader for the next
//     selected message after the last delivered and, while there is one
//     within the read, reads on from there.
//
// fn's errors end the read at once. o.Follow is not supported (it is
// passed to ReadStream as is).
func ReadStreamPatient(ctx context.Context, js jetstream.JetStream, o ReadOptions, fn func(RawRecord) error) error {
	if o.Follow {
		return ReadStream(ctx, js, o, fn)
	}
	var got uint64
	var fnErr error
	deliver := func(r RawRecord) error {
		if err := fn(r); err != nil {
			fnErr = err
			return err
		}
		got = r.Seq
		return nil
	}
	deadline := time.Now().Add(ReadPatience)
	for {
		err := readSelected(ctx, js, o, got, deliver)
		if err == nil || fnErr != nil || ctx.Err() != nil || time.Now().After(deadline) || !transientRead(err) {
			if fnErr != nil {
				return fnErr
			}
			return err
		}
		if got > 0 {
			o.From = max(o.From, got+1)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// readSelected is one attempt of ReadStream, after the message got (0:
// none yet).
func readSelected(ctx context.Context, js jetstream.JetStream, o ReadOptions, got uint64, fn func(RawRecord) error) error {
	if got > 0 {
		o.From = max(o.From, got+1)
	}
	if len(o.Subjects) == 0 {
		if o.To != 0 && o.From > o.To {
			return nil
		}
		return ReadStream(ctx, js, o, fn)
	}
	ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
	st, err := js.Stream(ictx, o.Stream)
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = st.Info(ictx)
	}
	cancel()
	if err != nil {
		return fmt.Errorf("transport: stream %s: %w", o.Stream, err)
	}
	if o.To == 0 || o.To > info.State.LastSeq {
		o.To = info.State.LastSeq
	}
	if info.State.Msgs == 0 || o.To == 0 || o.From > o.To {
		return nil
	}
	last := got
	deadline := time.Now().Add(ReadPatience)
	for {
		err := ReadStream(ctx, js, o, func(r RawRecord) error {
			last = r.Seq
			return fn(r)
		})
		if err != nil || last >= o.To {
			return err
		}
		from := max(o.From, last+1)
		held, err := LeaderHolds(ctx, st, from, o.To, o.Subjects)
		if err == nil && !held {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the stream's leader holds it, but no consumer delivered it")
			}
			return fmt.Errorf("transport: read %s: stopped before seq %d of %d: %w", o.Stream, from, o.To, err)
		}
		o.From = from
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// transientRead reports whether err may pass with an election.
func transientRead(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, jetstream.ErrNoHeartbeat) ||
		(errors.As(err, &apiErr) && apiErr.Code == 503)
}

// ReadPatience bounds how long a read waits for a replica that is behind
// the stream's leader to deliver what the leader holds.
const ReadPatience = 30 * time.Second

// LeaderHolds reports whether the stream's leader holds a message at
// from..to on one of subjects (all, when empty). A message get is answered
// by the leader (Vigil's streams do not allow direct gets from replicas).
// No answer is an error: the caller asks again.
func LeaderHolds(ctx context.Context, st jetstream.Stream, from, to uint64, subjects []string) (bool, error) {
	if from > to {
		return false, nil
	}
	if len(subjects) == 0 {
		subjects = []string{">"}
	}
	gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, subj := range subjects {
		m, err := st.GetMsg(gctx, from, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if m.Sequence <= to {
			return true, nil
		}
	}
	return false, nil
}
