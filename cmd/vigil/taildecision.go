package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// tailDecisions reads the gate's outputs (in one conversation, or all) and
// returns, per action log seq, what `vigil tail --decisions` prints: the
// outcome and who decided ("allow by mode", "deny by human"), or "pending".
// It reads VIGIL_DERIVED once: with --follow, actions appended later show
// "-" (the gate had not decided yet when tail started).
func tailDecisions(ctx context.Context, js jetstream.JetStream, conversation string) (map[uint64]string, error) {
	subject := events.GatePrefix + ">"
	if conversation != "" {
		subject = events.GateSubject(conversation)
	}
	out := map[uint64]string{}
	err := transport.ReadStream(ctx, js, transport.ReadOptions{Stream: events.StreamDerived, Subjects: []string{subject}},
		func(r transport.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return nil
			}
			switch d.Kind {
			case events.KindGateRequested:
				if req, err := events.DerivedDataAs[events.GateRequested](&d); err == nil {
					if _, done := out[req.LogSeq]; !done {
						out[req.LogSeq] = "pending"
					}
				}
			case events.KindGateDecided:
				if gd, err := events.DerivedDataAs[events.GateDecided](&d); err == nil {
					out[gd.LogSeq] = fmt.Sprintf("%s by %s", gd.Outcome, gd.By)
				}
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read gate decisions: %w", err)
	}
	return out, nil
}

// decisionColumn is the --decisions column for record r.
func decisionColumn(decisions map[uint64]string, r events.Record) string {
	if decisions == nil || r.Event.Kind != events.KindAction {
		return ""
	}
	if d, ok := decisions[r.Seq]; ok {
		return "[" + d + "] "
	}
	return "[-] "
}
