package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// GateResult is the gate's decision on one action, as `vigil gate` prints it.
type GateResult struct {
	ID      string           `json:"id"`
	Seq     uint64           `json:"seq"`
	Outcome events.Outcome   `json:"outcome"`
	By      events.DecidedBy `json:"by"`
	Level   events.Risk      `json:"level"`
	Reasons []events.Reason  `json:"reasons"`
	// Approver and Reason are set when a person decided.
	Approver string         `json:"approver,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Verdict  events.Verdict `json:"verdict,omitempty"`
	// Waited is true when the action waited for a person (gate.requested).
	Waited bool `json:"waited,omitempty"`
	// AskSecurityRisk says whether the config in force wants the agent's
	// tools to ask the LLM for security_risk (events.SecurityRiskSchema).
	AskSecurityRisk bool `json:"ask_security_risk,omitempty"`
	// DecisionSeq is the log sequence of the event that decided.
	DecisionSeq uint64 `json:"decision_seq,omitempty"`
}

// ErrNoDecision means the context ended before the gate decided: the
// caller must treat the action as denied (fail closed). GateAndWait wraps
// it with the context's error.
var ErrNoDecision = errors.New("no decision before the deadline (denied)")

// GateOptions tune GateAndWait. The zero value is valid.
type GateOptions struct {
	// OnAppended is called once the action is stored, with its log position.
	OnAppended func(Result)
	// OnRequested is called once if the action waits for a person, with
	// the gate's request (level, reasons, shape, timeout).
	OnRequested func(events.GateRequested)
	// Withdraw: when ctx ends before a decision, append an observation that
	// withdraws the action (status "withdrawn"), so the log records it
	// denied by timeout at once instead of when the approval expires.
	Withdraw bool
	// WithdrawReason is the observation's content; a default names the wait.
	WithdrawReason string
}

// GateAndWait appends an action and waits for the gate's decision on it.
//
// It subscribes to the conversation's gate subject first (agents may
// subscribe to vigil.gate.>), then appends through the ingest service, then
// waits for the gate.decided of this action at this log position. If the
// append says the id was stored before (a retry), the decision may already
// have been published, so it also looks it up in VIGIL_DERIVED (that needs
// read access to the stream: approver, admin or service credentials; with
// agent credentials only decisions made from now on are seen).
//
// When ctx ends first it returns a result with outcome deny, by timeout,
// and an error wrapping ErrNoDecision: the action must not run.
func (c *Client) GateAndWait(ctx context.Context, ev events.Event, o *GateOptions) (GateResult, error) {
	if o == nil {
		o = &GateOptions{}
	}
	if ev.Kind == "" {
		ev.Kind = events.KindAction
	}
	if ev.Kind != events.KindAction {
		return GateResult{}, fmt.Errorf("gate: event %s is a %s; only actions are gated", ev.ID, ev.Kind)
	}
	if ev.ID == "" || ev.Conversation == "" {
		return GateResult{}, errors.New("gate: the action needs an id and a conversation (the gate subject is per conversation)")
	}
	w, err := c.gates().wait(ev.Conversation, ev.ID)
	if err != nil {
		return GateResult{}, err
	}
	defer c.gates().done(ev.Conversation, ev.ID, w)
	res, err := c.Append(ctx, ev)
	if err != nil {
		return GateResult{ID: ev.ID, Outcome: events.OutcomeDeny, By: events.ByTimeout}, fmt.Errorf("gate: append %s: %w", ev.ID, err)
	}
	if o.OnAppended != nil {
		o.OnAppended(res)
	}
	if res.Duplicate {
		go c.lookupDecision(ctx, ev.Conversation, ev.ID, res.Seq, w)
	}
	requested := false
	for {
		select {
		case d := <-w.ch:
			switch d.Kind {
			case events.KindGateRequested:
				r, err := events.DerivedDataAs[events.GateRequested](&d)
				if err != nil || r.LogSeq != res.Seq || requested {
					continue
				}
				requested = true
				if o.OnRequested != nil {
					o.OnRequested(r)
				}
			case events.KindGateDecided:
				gd, err := events.DerivedDataAs[events.GateDecided](&d)
				if err != nil || gd.LogSeq != res.Seq {
					continue
				}
				return GateResult{
					ID: ev.ID, Seq: res.Seq, Outcome: gd.Outcome, By: gd.By, Level: gd.Level,
					Reasons: gd.Reasons, Approver: gd.Approver, Reason: gd.Reason, Verdict: gd.Verdict,
					Waited: requested || gd.DecisionSeq != gd.LogSeq, AskSecurityRisk: gd.AskSecurityRisk,
					DecisionSeq: gd.DecisionSeq,
				}, nil
			}
		case <-ctx.Done():
			out := GateResult{ID: ev.ID, Seq: res.Seq, Outcome: events.OutcomeDeny, By: events.ByTimeout, Waited: requested}
			if o.Withdraw {
				c.withdraw(ev, o.WithdrawReason)
			}
			return out, fmt.Errorf("gate: action %s: %w: %w", ev.ID, ErrNoDecision, ctx.Err())
		}
	}
}

// Withdraw appends an observation withdrawing action ev: a pending action
// is then denied, by timeout. The agent's own client may always do this.
func (c *Client) Withdraw(ctx context.Context, ev events.Event, reason string) error {
	if reason == "" {
		reason = "the agent stopped waiting for a decision (fail closed)"
	}
	obs := events.Event{
		V: events.CurrentVersion, ID: withdrawID(ev.ID), Kind: events.KindObservation,
		Conversation: ev.Conversation, Agent: ev.Agent, Time: time.Now().UTC(),
		Data: map[string]any{"action_id": ev.ID, "status": "withdrawn", "content": reason},
	}
	_, err := c.Append(ctx, obs)
	return err
}

func (c *Client) withdraw(ev events.Event, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.Withdraw(ctx, ev, reason) // best effort: the expiry timer denies it anyway
}

// withdrawID is the id of the observation withdrawing action id, fixed so
// a repeated withdrawal is stored once.
func withdrawID(id string) string {
	const suffix = ":withdrawn"
	if len(id)+len(suffix) > events.MaxIDLen {
		id = id[:events.MaxIDLen-len(suffix)]
	}
	return id + suffix
}

// lookupDecision reads the conversation's gate outputs from VIGIL_DERIVED
// for a decision (or request) already published about action id at seq,
// and hands them to w. Errors (agent credentials cannot read streams) are
// ignored: the live subscription keeps waiting.
func (c *Client) lookupDecision(ctx context.Context, conv, id string, seq uint64, w *gateWaiter) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	errFound := errors.New("found")
	natsutil.ReadStream(ctx, c.js, natsutil.ReadOptions{
		Stream: events.StreamDerived, Subjects: []string{events.GateSubject(conv)},
	}, func(r natsutil.RawRecord) error {
		d, err := events.DecodeDerived(r.Data)
		if err != nil || !matches(&d, id) {
			return nil
		}
		w.deliver(d)
		if d.Kind == events.KindGateDecided {
			return errFound
		}
		return nil
	})
}

// matches reports whether derived event d is about action id.
func matches(d *events.Derived, id string) bool {
	m, ok := d.Data.(map[string]any)
	return ok && m["action_id"] == id
}

// gateMux shares one subscription per conversation gate subject among all
// the waits of a client, and routes each output to the waits of its action.
type gateMux struct {
	c     *Client
	mu    sync.Mutex
	convs map[string]*convSub
}

type convSub struct {
	sub     *nats.Subscription
	waiters map[string][]*gateWaiter
}

type gateWaiter struct {
	ch chan events.Derived
}

// deliver hands d to the waiter without ever blocking the subscription.
func (w *gateWaiter) deliver(d events.Derived) {
	select {
	case w.ch <- d:
	default:
		// A waiter holds at most a request and a decision of its own
		// action, plus stale outputs of an earlier use of the same id;
		// the buffer is far larger than that.
	}
}

func (c *Client) gates() *gateMux {
	c.gateOnce.Do(func() { c.gmux = &gateMux{c: c, convs: map[string]*convSub{}} })
	return c.gmux
}

func (m *gateMux) wait(conv, id string) (*gateWaiter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cs, ok := m.convs[conv]
	if !ok {
		cs = &convSub{waiters: map[string][]*gateWaiter{}}
		subj := events.GateSubject(conv)
		sub, err := m.c.nc.Subscribe(subj, func(msg *nats.Msg) { m.route(conv, msg) })
		if err != nil {
			return nil, fmt.Errorf("gate: subscribe %s: %w", subj, err)
		}
		sub.SetPendingLimits(-1, -1)
		cs.sub = sub
		m.convs[conv] = cs
	}
	w := &gateWaiter{ch: make(chan events.Derived, 64)}
	cs.waiters[id] = append(cs.waiters[id], w)
	return w, nil
}

func (m *gateMux) done(conv, id string, w *gateWaiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cs, ok := m.convs[conv]
	if !ok {
		return
	}
	ws := cs.waiters[id]
	for i := range ws {
		if ws[i] == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(cs.waiters, id)
	} else {
		cs.waiters[id] = ws
	}
	if len(cs.waiters) == 0 {
		cs.sub.Unsubscribe()
		delete(m.convs, conv)
	}
}

func (m *gateMux) route(conv string, msg *nats.Msg) {
	d, err := events.DecodeDerived(msg.Data)
	if err != nil {
		return
	}
	data, ok := d.Data.(map[string]any)
	if !ok {
		return
	}
	id, _ := data["action_id"].(string)
	m.mu.Lock()
	cs := m.convs[conv]
	var ws []*gateWaiter
	if cs != nil {
		ws = append(ws, cs.waiters[id]...)
	}
	m.mu.Unlock()
	for _, w := range ws {
		w.deliver(d)
	}
}
