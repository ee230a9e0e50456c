package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
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
// It sends the action to the ingest service with a request for its
// decision (transport.HeaderWaitDecision): the service stores it, answers
// with its log position, then sends the gate's request (if a person must
// decide) and decision about the action stored at that position, all to
// this connection's own inbox. No role needs to read the gate subjects,
// and a retry with the same id gets the same decision at once.
//
// When ctx ends first it returns a result with outcome deny, by timeout,
// and an error wrapping ErrNoDecision: the action must not run. A
// decision made in the agent's client (by client: a hand-off) is never an
// allow for a waiter: it is reported as deny with an error, because only
// the client's own prompt, not this waiter, may act on it.
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
		return GateResult{}, errors.New("gate: the action needs an id and a conversation")
	}
	denied := GateResult{ID: ev.ID, Outcome: events.OutcomeDeny, By: events.ByTimeout}
	body, err := ev.MarshalMsgpack()
	if err != nil {
		return denied, err
	}
	inbox := c.nc.NewInbox()
	ch := make(chan *nats.Msg, 8)
	sub, err := c.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return denied, fmt.Errorf("gate: subscribe to the reply inbox: %w", err)
	}
	defer sub.Unsubscribe()
	// A node that dies (or stops) with the request loses it: the request
	// is sent again, with the same action (its id makes it stored once),
	// when the connection moves to another node, when an attempt gets no
	// stored reply in time, or when a stopping node gives up waiting. A
	// repeated request is answered with the stored action's position and
	// the decision made on it, never a second decision.
	reconnected := c.watchReconnects()
	defer c.stopWatching(reconnected)
	subject := c.ingestSubject(ev.Kind, ev.Conversation)
	var waitEnds time.Time // when the wait asked for by the last request ends
	send := func() error {
		wait := transport.MaxDecisionWait
		if dl, ok := ctx.Deadline(); ok {
			wait = min(max(time.Until(dl), time.Millisecond), wait)
		}
		waitEnds = time.Now().Add(wait)
		msg := &nats.Msg{Subject: subject, Reply: inbox, Data: body, Header: nats.Header{}}
		msg.Header.Set(transport.HeaderContentType, transport.ContentTypeMsgpack)
		msg.Header.Set(transport.HeaderWaitDecision, wait.String())
		if err := c.nc.PublishMsg(msg); err != nil {
			return fmt.Errorf("gate: append %s: %w", ev.ID, err)
		}
		return nil
	}
	if err := send(); err != nil {
		return denied, err
	}
	timedOut := func(res GateResult) (GateResult, error) {
		// Withdraw even when the stored reply never came: the action may
		// be stored all the same, and withdrawing one that is not pending
		// changes nothing.
		if o.Withdraw {
			c.withdraw(ev, o.WithdrawReason)
		}
		return res, fmt.Errorf("gate: action %s: %w: %w", ev.ID, ErrNoDecision, context.Cause(ctx))
	}
	// resend fires a repeat of the request; it is stopped when none is due.
	resend := time.NewTimer(time.Hour)
	resend.Stop()
	defer resend.Stop()
	again := func(after time.Duration) { resend.Reset(after) }
	// The stored reply comes first; an append that is never answered is
	// not stored as far as the caller knows.
	appendCtx, cancel := context.WithTimeout(ctx, appendTimeout(c.timeout, len(body)))
	defer cancel()
	var res Result
	// The first attempt is sent again early, once: in a fleet the request
	// may have gone to another node's ingest service (a queue group), and
	// one that died meanwhile loses it without this client's connection
	// noticing anything. A stored reply normally comes within
	// milliseconds; a repeat is stored once (the id) and is answered as
	// the first request would have been.
	early := time.Duration(0)
	if c.attempt > 2*earlyResend {
		early = earlyResend
	}
	again(cmp.Or(early, c.attempt))
	var noResponders time.Time // since when nothing answers
	unanswered := 0            // attempts in a row with no reply from this server
stored:
	for {
		select {
		case m := <-ch:
			if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
				// Nothing answers: a node restarting (ask again for an
				// attempt's time), or no server at all.
				if noResponders.IsZero() {
					noResponders = time.Now()
				} else if time.Since(noResponders) > c.attempt {
					return denied, fmt.Errorf("gate: append %s: %w: nothing answers on %s (is vigil serve running?)", ev.ID, ErrNoServer, subject)
				}
				again(noRespondersPause)
				early = 0
				continue
			}
			r, _, ok := decodeGateReply(m.Data)
			if !ok {
				continue // a later message of an earlier attempt
			}
			rs, err := parseReply(r, 1)
			if err != nil {
				return denied, fmt.Errorf("gate: append %s: %w", ev.ID, err)
			}
			res = rs[0]
			break stored
		case _, ok := <-reconnected:
			if ok {
				if err := send(); err != nil {
					return denied, err
				}
				again(c.attempt)
				early = 0
			}
		case <-resend.C:
			if early > 0 {
				// The early repeat is part of the first attempt.
				if err := send(); err != nil {
					return denied, err
				}
				again(c.attempt - early)
				early = 0
				continue
			}
			if noResponders.IsZero() {
				if unanswered++; unanswered >= moveAfterUnanswered {
					unanswered = 0
					if c.moveOn() {
						again(c.attempt) // the move sends it (reconnected)
						continue
					}
				}
			}
			if err := send(); err != nil {
				return denied, err
			}
			again(c.attempt)
		case <-appendCtx.Done():
			if ctx.Err() != nil {
				return timedOut(denied)
			}
			return denied, fmt.Errorf("gate: append %s: %w: no answer from the ingest service within %s (is vigil serve running?)", ev.ID, ErrNoServer, appendTimeout(c.timeout, len(body)))
		}
	}
	resend.Stop()
	if o.OnAppended != nil {
		o.OnAppended(res)
	}
	out := GateResult{ID: ev.ID, Seq: res.Seq, Outcome: events.OutcomeDeny, By: events.ByTimeout}
	// seqs are the positions the action is stored at as far as this
	// waiter knows: one, unless a repeat came later than the log's
	// duplicate window and was stored again (its decision counts too).
	seqs := []uint64{res.Seq}
	gaveUp := 0
	// The node that answered holds the wait, and one that dies takes it
	// along. A decision is normally folded within milliseconds of the
	// stored reply: without one (or the notice that a person decides)
	// within waitReask, the request is sent again, and the repeat gets
	// the stored reply and a wait wherever it lands; then every attempt,
	// and while a person decides, every personReask.
	reasks := 0
	reask := func() {
		switch {
		case out.Waited:
			again(personReask)
		case reasks == 0 && c.attempt > waitReask:
			again(waitReask)
		default:
			again(c.attempt)
		}
		reasks++
	}
	reask()
	for {
		select {
		case m := <-ch:
			if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
				// A repeat found nothing to answer it (a node restarting
				// after the one that waited died): ask again shortly.
				again(noRespondersPause)
				continue
			}
			r, wr, ok := decodeGateReply(m.Data)
			if ok {
				// A repeat's stored reply.
				if rs, err := parseReply(r, 1); err == nil && !slices.Contains(seqs, rs[0].Seq) {
					seqs = append(seqs, rs[0].Seq)
				}
				continue
			}
			switch {
			case wr.Requested != nil:
				if !slices.Contains(seqs, wr.Requested.LogSeq) || out.Waited {
					continue
				}
				out.Waited = true
				reask()
				if o.OnRequested != nil {
					o.OnRequested(*wr.Requested)
				}
			case wr.Decided != nil:
				gd := wr.Decided
				if !slices.Contains(seqs, gd.LogSeq) {
					continue
				}
				r := GateResult{
					ID: ev.ID, Seq: gd.LogSeq, Outcome: gd.Outcome, By: gd.By, Level: gd.Level,
					Reasons: gd.Reasons, Approver: gd.Approver, Reason: gd.Reason, Verdict: gd.Verdict,
					Waited: out.Waited || gd.DecisionSeq != gd.LogSeq, AskSecurityRisk: gd.AskSecurityRisk,
					DecisionSeq: gd.DecisionSeq,
				}
				if r.By == events.ByClient && r.Outcome == events.OutcomeAllow {
					r.Outcome = events.OutcomeDeny
					return r, fmt.Errorf("gate: action %s was decided in the agent's own client (%s), not by Vigil: this waiter does not act on it", ev.ID, gd.Approver)
				}
				return r, nil
			case wr.WaitError != "":
				if ctx.Err() != nil {
					continue // ctx.Done answers
				}
				// The service gave up before the wait asked for ran out: a
				// node stopping (its waits end with it), or one over its
				// limit of waits. Another node may still wait: ask again,
				// a few times. A wait that ran its course is the answer.
				early := time.Until(waitEnds) > waitRepeatPause
				if gaveUp++; !early || gaveUp > maxWaitRepeats {
					// Giving up here is giving up as at the deadline (the
					// service's wait may end a moment before the caller's
					// ctx): withdraw alike.
					if o.Withdraw {
						c.withdraw(ev, o.WithdrawReason)
					}
					return out, fmt.Errorf("gate: action %s: %w: %s", ev.ID, ErrNoDecision, wr.WaitError)
				}
				again(waitRepeatPause)
			}
		case _, ok := <-reconnected:
			if ok {
				if err := send(); err != nil {
					return out, err
				}
			}
		case <-resend.C:
			if err := send(); err != nil {
				return out, err
			}
			reask()
		case <-ctx.Done():
			return timedOut(out)
		}
	}
}

// Pauses and bounds of GateAndWait's repeated requests.
const (
	// noRespondersPause: nothing answered (a node restarting); do not spin.
	noRespondersPause = 100 * time.Millisecond
	// earlyResend: the first attempt is sent again once after this without
	// a stored reply (a fleet node that took it may have died): well above
	// a stored reply's time, including fsynced, under load.
	earlyResend = 500 * time.Millisecond
	// waitReask, personReask: a stored action's request is sent again
	// after this without its decision (the node that waited for it may
	// have died), or while a person decides (each repeat holds a wait on
	// the node it lands on, for up to transport.MaxDecisionWait: at most
	// ten at once).
	waitReask   = time.Second
	personReask = time.Minute
	// waitRepeatPause, maxWaitRepeats: a service that gave up waiting
	// before the caller is asked again after this, this many times.
	waitRepeatPause = 250 * time.Millisecond
	maxWaitRepeats  = 3
)

// gateReply is any message to a gate's reply inbox: the stored reply
// (events.IngestReply) or one of the messages after it (transport.WaitReply).
type gateReply struct {
	events.IngestReply
	transport.WaitReply
}

// decodeGateReply splits a message to a gate's inbox: stored is true for a
// stored reply (results or a refusal), false for a wait reply (or an
// unreadable message, whose fields are all empty).
func decodeGateReply(data []byte) (r events.IngestReply, wr transport.WaitReply, stored bool) {
	g, ok := fastGateReply(data)
	if !ok {
		if err := json.Unmarshal(data, &g); err != nil {
			return r, wr, false
		}
	}
	if g.Results != nil || g.Error != "" {
		return g.IngestReply, wr, true
	}
	return r, g.WaitReply, false
}

// ingestSubject is the subject c sends events of kind k on.
func (c *Client) ingestSubject(k events.Kind, conv string) string {
	if c.runtime && !k.IsControl() {
		return events.IngestRuntimeSubject(conv)
	}
	return events.IngestSubjectFor(k, conv)
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

// appendTimeout is how long a gate waits for its action to be stored: the
// client's timeout, plus perMiBToStore for each MiB of the request. A large
// action is slow to store by design, not by fault: redaction may spend
// about a second of CPU on a megabyte of secret-dense text (its work
// budget), and more on a loaded machine, before the action is stored; a
// small timeout would then deny it as "no server" (fail closed, but for
// the wrong reason).
func appendTimeout(base time.Duration, size int) time.Duration {
	return base + time.Duration(size)*perMiBToStore/(1<<20)
}

// perMiBToStore is what appendTimeout adds for each MiB of a request.
const perMiBToStore = 5 * time.Second
