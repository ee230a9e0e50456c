package auditlog

import (
	"context"
	"fmt"

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
	return transport.ReadStreamPatient(ctx, js, transport.ReadOptions{Stream: events.StreamLog, From: from, To: to, Subjects: subjects},
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
	err := transport.ReadStreamPatient(ctx, js, transport.ReadOptions{Stream: events.StreamDerived, Subjects: subjects},
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
