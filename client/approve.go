package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/oklog/ulid/v2"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// The approval protocol, shared by `vigil pending|approve|deny` and the
// HTTP API: list the actions the gate holds for a person, and record a
// person's verdict on one of them, bound to the action as the person saw
// it (its log sequence and the digest of its stored bytes), then wait for
// the gate to act on it. It needs approver (or admin) credentials.

// PendingAction is one action waiting for a person's decision.
type PendingAction struct {
	ID           string          `json:"id"`
	Conversation string          `json:"conversation"`
	Command      string          `json:"command"`
	Tool         string          `json:"tool,omitempty"`
	Level        events.Risk     `json:"level"`
	Reasons      []events.Reason `json:"reasons"`
	Shape        string          `json:"shape,omitempty"`
	Agent        string          `json:"agent,omitempty"`
	Backend      string          `json:"backend,omitempty"`
	Timeout      string          `json:"timeout,omitempty"`
	// Seq is the log sequence of the action; Time the action's time.
	Seq  uint64 `json:"seq"`
	Time string `json:"time"`
	// Digest is the gate's digest of the action as stored: a verdict names
	// it, with Seq, so that it decides exactly this action.
	Digest string `json:"digest,omitempty"`
}

// PendingFromRequest is the pending action the gate's request describes;
// conversation and time are those of the derived record that carried it.
func PendingFromRequest(conversation, time string, req events.GateRequested) PendingAction {
	return PendingAction{
		ID: req.ActionID, Conversation: conversation, Command: req.Command, Tool: req.Tool,
		Level: req.Level, Reasons: req.Reasons, Shape: req.Shape, Agent: req.Agent,
		Backend: req.Backend, Timeout: req.Timeout, Seq: req.LogSeq, Time: time,
		Digest: req.Digest,
	}
}

// Pending lists the actions waiting for a person (in one conversation, or
// all when conversation is ""), oldest first. It folds the gate's outputs
// in VIGIL_DERIVED, requested minus decided per action and log position,
// so it needs no read model.
func (c *Client) Pending(ctx context.Context, conversation string) ([]PendingAction, error) {
	subject := events.GatePrefix + ">"
	if conversation != "" {
		subject = events.GateSubject(conversation)
	}
	type key struct {
		id  string
		seq uint64
	}
	waiting := map[key]PendingAction{}
	err := transport.ReadStream(ctx, c.js, transport.ReadOptions{Stream: events.StreamDerived, Subjects: []string{subject}},
		func(r transport.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return nil
			}
			switch d.Kind {
			case events.KindGateRequested:
				req, err := events.DerivedDataAs[events.GateRequested](&d)
				if err != nil {
					return nil
				}
				waiting[key{req.ActionID, req.LogSeq}] = PendingFromRequest(d.Conversation, d.Time, req)
			case events.KindGateDecided:
				gd, err := events.DerivedDataAs[events.GateDecided](&d)
				if err != nil {
					return nil
				}
				delete(waiting, key{gd.ActionID, gd.LogSeq})
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read gate outputs: %w", err)
	}
	out := slices.Collect(maps.Values(waiting))
	SortPending(out)
	return out, nil
}

// SortPending sorts pending actions oldest first (by log sequence, then id).
func SortPending(ps []PendingAction) {
	slices.SortFunc(ps, func(a, b PendingAction) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// ErrNotPending means no action with that id waits for a decision.
var ErrNotPending = errors.New("not waiting for a decision")

// FindPending returns the pending action id, or an error wrapping
// ErrNotPending that says what to do.
func (c *Client) FindPending(ctx context.Context, id string) (PendingAction, error) {
	ps, err := c.Pending(ctx, "")
	if err != nil {
		return PendingAction{}, err
	}
	return LookupPending(ps, id)
}

// LookupPending returns the action id among ps, or an error wrapping
// ErrNotPending.
func LookupPending(ps []PendingAction, id string) (PendingAction, error) {
	for _, p := range ps {
		if p.ID == id {
			return p, nil
		}
	}
	return PendingAction{}, fmt.Errorf("no action %s is waiting for a decision (it was decided, expired, or never existed; `vigil pending` lists the ones that are): %w", id, ErrNotPending)
}

// DecideOptions say who decides and how long to wait for the gate.
type DecideOptions struct {
	// Approver names who decides; it is recorded as the decision's
	// approver. Required.
	Approver string
	// Reason is recorded with the decision (and the allowlist entry).
	Reason string
	// Wait bounds the wait for the gate to act on the verdict; default 10s.
	// The verdict is recorded either way: Decision.Confirmed says whether
	// the gate's answer came within it.
	Wait time.Duration
	// Data adds fields to the approval.decision's data (for example where
	// the verdict came from); it never replaces the fields Decide sets.
	Data map[string]any
}

// Decision is what the gate made of a verdict.
type Decision struct {
	ID        string         `json:"id"`
	Verdict   events.Verdict `json:"verdict"`
	Outcome   events.Outcome `json:"outcome,omitempty"`
	By        string         `json:"by,omitempty"`
	EntryID   string         `json:"entry_id,omitempty"`
	Note      string         `json:"note,omitempty"`
	Seq       uint64         `json:"seq"`
	Confirmed bool           `json:"confirmed"`
	// Released lists other waiting actions the verdict let through.
	Released []string `json:"released,omitempty"`
}

// ErrVerdictRefused means the gate refused a verdict (it named another
// action than the one waiting under its id, or the action was no longer
// waiting); the error says why. Nothing was decided by it.
var ErrVerdictRefused = errors.New("the gate refused the verdict")

// ErrNoShape means an "always" verdict was asked on an action with no
// command shape, which cannot be allowlisted.
var ErrNoShape = errors.New("no command shape to allowlist")

// Decide records verdict on the pending action p (after the allowlist
// entry, for always) and waits for the gate to act on it. The verdict
// names p's log sequence and digest: if another action waits under p's
// id, the gate refuses it (an error wrapping ErrVerdictRefused).
func (c *Client) Decide(ctx context.Context, p PendingAction, verdict events.Verdict, o DecideOptions) (Decision, error) {
	switch verdict {
	case events.VerdictOnce, events.VerdictSession, events.VerdictAlways, events.VerdictDeny:
	default:
		return Decision{}, fmt.Errorf("verdict %q: use once, session, always or deny", verdict)
	}
	if o.Approver == "" {
		return Decision{}, errors.New("decide: name the approver")
	}
	now := time.Now().UTC()
	data := map[string]any{}
	maps.Copy(data, o.Data)
	maps.Copy(data, map[string]any{"action_id": p.ID, "verdict": string(verdict), "approver": o.Approver})
	dec := events.Event{V: events.CurrentVersion, ID: ulid.Make().String(), Kind: events.KindApprovalDecision,
		Conversation: p.Conversation, Agent: o.Approver, Time: now, Data: data}
	if o.Reason != "" {
		dec.Data["reason"] = o.Reason
	}
	// Bind the verdict to the action as the person saw it (its log
	// position and stored bytes), not to its id, which the agent chose: if
	// another action waits under that id, the gate refuses the verdict.
	if p.Seq != 0 {
		dec.Data["log_seq"] = p.Seq
	}
	if p.Digest != "" {
		dec.Data["digest"] = p.Digest
	}
	batch := []events.Event{dec}
	if verdict == events.VerdictAlways {
		if p.Shape == "" {
			return Decision{}, fmt.Errorf("%s: %w; approve it once", p.ID, ErrNoShape)
		}
		entryID := "al-" + ulid.Make().String()
		add := events.Event{V: events.CurrentVersion, ID: entryID, Kind: events.KindAllowlistChanged,
			Agent: o.Approver, Time: now,
			Data: map[string]any{"op": events.AllowlistAdd, "entry_id": entryID, "shape": p.Shape, "action_id": p.ID, "by": o.Approver}}
		if o.Reason != "" {
			add.Data["reason"] = o.Reason
		}
		batch = []events.Event{add, dec}
	}
	// Listen before appending: the gate's answer may come at once.
	msgs := make(chan *nats.Msg, 256)
	subG, err := c.nc.ChanSubscribe(events.GateSubject(p.Conversation), msgs)
	if err != nil {
		return Decision{}, err
	}
	defer subG.Unsubscribe()
	subA, err := c.nc.ChanSubscribe(events.SubjectAlert, msgs)
	if err != nil {
		return Decision{}, err
	}
	defer subA.Unsubscribe()
	rs, err := c.AppendBatch(ctx, batch)
	if err != nil {
		return Decision{}, fmt.Errorf("record the %s verdict on %s: %w", verdict, p.ID, err)
	}
	d := Decision{ID: p.ID, Verdict: verdict, Seq: rs[len(rs)-1].Seq}
	wait := o.Wait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m := <-msgs:
			dv, err := events.DecodeDerived(m.Data)
			if err != nil {
				continue
			}
			switch dv.Kind {
			case events.KindAlert:
				a, err := events.DerivedDataAs[events.Alert](&dv)
				if err == nil && a.EventID == dec.ID {
					return d, fmt.Errorf("%w on %s: %s", ErrVerdictRefused, p.ID, a.Reason)
				}
			case events.KindGateDecided:
				gd, err := events.DerivedDataAs[events.GateDecided](&dv)
				if err != nil || gd.DecisionSeq != d.Seq {
					continue
				}
				if gd.ActionID != p.ID {
					d.Released = append(d.Released, gd.ActionID)
					continue
				}
				d.Confirmed, d.Outcome, d.By, d.EntryID, d.Note = true, gd.Outcome, string(gd.By), gd.EntryID, gd.Reason
				if o.Reason != "" {
					d.Note = strings.TrimPrefix(strings.TrimPrefix(d.Note, o.Reason), "; ")
				}
				// Releases of other actions by the same verdict follow in
				// the same log record; give them a moment.
				drain := time.After(50 * time.Millisecond)
				for {
					select {
					case m := <-msgs:
						if dv, err := events.DecodeDerived(m.Data); err == nil && dv.Kind == events.KindGateDecided {
							if gd, err := events.DerivedDataAs[events.GateDecided](&dv); err == nil && gd.DecisionSeq == d.Seq && gd.ActionID != p.ID {
								d.Released = append(d.Released, gd.ActionID)
							}
						}
					case <-drain:
						return d, nil
					case <-ctx.Done():
						return d, nil
					}
				}
			}
		case <-timer.C:
			return d, nil
		case <-ctx.Done():
			return d, ctx.Err()
		}
	}
}
