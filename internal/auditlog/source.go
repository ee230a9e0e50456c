package auditlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// Progress is told how far a long read of VIGIL_LOG has got, for a
// terminal to show. Show is called for every record read (what names the
// step, end is the last sequence the read goes to); Done when the read
// ends. A nil Progress shows nothing.
type Progress interface {
	Show(what string, seq, end uint64)
	Done()
}

// LogEnd returns VIGIL_LOG's last sequence.
func LogEnd(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	st, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", events.StreamLog, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", events.StreamLog, err)
	}
	return info.State.LastSeq, nil
}

// readLog calls fn for the records from..to (to inclusive) of VIGIL_LOG on
// subjects (all with none), telling p.
func readLog(ctx context.Context, js jetstream.JetStream, p Progress, what string, from, to uint64, subjects []string, fn func(transport.RawRecord) error) error {
	if to == 0 {
		return nil
	}
	if p != nil {
		defer p.Done()
	}
	return ReadStream(ctx, js, transport.ReadOptions{Stream: events.StreamLog, From: from, To: to, Subjects: subjects},
		func(r transport.RawRecord) error {
			if p != nil {
				p.Show(what, r.Seq, to)
			}
			return fn(r)
		})
}

// progressFunc adapts p to LogTree's progress callback (nil for nil).
func progressFunc(p Progress, what string) func(seq, end uint64) {
	if p == nil {
		return nil
	}
	return func(seq, end uint64) { p.Show(what, seq, end) }
}

// Derived is what VIGIL_DERIVED says about the actions of the log: the
// risk.assessed and gate.decided data (decoded JSON objects) by the log
// sequence of the action they are about (their data's log_seq).
type Derived struct {
	Risk map[uint64]any
	Gate map[uint64]any
}

// ReadDerived reads the risk assessments and gate decisions of one
// conversation, or of all with conversation "". Records that do not
// decode are skipped: the processors' own checks report them.
func ReadDerived(ctx context.Context, js jetstream.JetStream, conversation string) (Derived, error) {
	subjects := []string{events.RiskPrefix + ">", events.GatePrefix + ">"}
	if conversation != "" {
		subjects = []string{events.RiskSubject(conversation), events.GateSubject(conversation)}
	}
	out := Derived{Risk: map[uint64]any{}, Gate: map[uint64]any{}}
	err := ReadStream(ctx, js, transport.ReadOptions{Stream: events.StreamDerived, Subjects: subjects},
		func(r transport.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return nil
			}
			m, ok := d.Data.(map[string]any)
			if !ok {
				return nil
			}
			seq := uintOf(m["log_seq"])
			if seq == 0 {
				seq = d.Seq
			}
			switch d.Kind {
			case events.KindRiskAssessed:
				out.Risk[seq] = m
			case events.KindGateDecided:
				out.Gate[seq] = m
			}
			return nil
		})
	return out, err
}

// uintOf is a decoded JSON or msgpack number as a positive integer, else 0.
func uintOf(v any) uint64 {
	switch x := v.(type) {
	case int64:
		if x > 0 {
			return uint64(x)
		}
	case uint64:
		return x
	case float64:
		if x > 0 {
			return uint64(x)
		}
	}
	return 0
}

// ReadStream reads as transport.ReadStream does, and holds on through
// what a live fleet goes through:
//
//   - a stream's info or a read that does not answer (its leader killed,
//     an election under way) is asked again, resuming after the last
//     message delivered, for at most ReadPatience;
//   - a replica's "nothing pending" is not taken for the end of a filtered
//     read either (the transport checks with the stream's leader only for
//     unfiltered reads): an ordered consumer may sit on a replica behind
//     the leader, so after a filtered read it asks the leader for the next
//     selected message after the last delivered and, while there is one
//     within the read, reads on from there.
//
// fn's errors end the read at once. o.Follow is not supported (it is
// passed to the transport as is).
func ReadStream(ctx context.Context, js jetstream.JetStream, o transport.ReadOptions, fn func(transport.RawRecord) error) error {
	if o.Follow {
		return transport.ReadStream(ctx, js, o, fn)
	}
	var got uint64
	var fnErr error
	deliver := func(r transport.RawRecord) error {
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
		if err == nil || fnErr != nil || ctx.Err() != nil || time.Now().After(deadline) || !transient(err) {
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
func readSelected(ctx context.Context, js jetstream.JetStream, o transport.ReadOptions, got uint64, fn func(transport.RawRecord) error) error {
	if got > 0 {
		o.From = max(o.From, got+1)
	}
	if len(o.Subjects) == 0 {
		if o.To != 0 && o.From > o.To {
			return nil
		}
		return transport.ReadStream(ctx, js, o, fn)
	}
	ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
	st, err := js.Stream(ictx, o.Stream)
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = st.Info(ictx)
	}
	cancel()
	if err != nil {
		return fmt.Errorf("auditlog: stream %s: %w", o.Stream, err)
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
		err := transport.ReadStream(ctx, js, o, func(r transport.RawRecord) error {
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
			return fmt.Errorf("auditlog: read %s: stopped before seq %d of %d: %w", o.Stream, from, o.To, err)
		}
		o.From = from
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// transient reports whether err may pass with an election.
func transient(err error) bool {
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
