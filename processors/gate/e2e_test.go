package gate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors/gate"
)

func rmAction(id, conv string) events.Event {
	return events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: conv, Agent: "coder-1",
		Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf /"}}}
}

func approval(id, actionID, conv string, v events.Verdict) events.Event {
	return events.Event{V: 1, ID: id, Kind: events.KindApprovalDecision, Conversation: conv, Agent: "alice",
		Time: time.Now().UTC(), Data: map[string]any{"action_id": actionID, "verdict": string(v), "approver": "alice"}}
}

type gated struct {
	res client.GateResult
	err error
}

// gateAsync gates ev and reports when the gate asks a person.
func gateAsync(t *testing.T, cl *client.Client, ev events.Event, timeout time.Duration) (<-chan gated, <-chan events.GateRequested) {
	out := make(chan gated, 1)
	req := make(chan events.GateRequested, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		r, err := cl.GateAndWait(ctx, ev, &client.GateOptions{OnRequested: func(r events.GateRequested) { req <- r }})
		out <- gated{r, err}
	}()
	return out, req
}

func waitRequested(t *testing.T, req <-chan events.GateRequested, id string) events.GateRequested {
	t.Helper()
	select {
	case r := <-req:
		if r.ActionID != id {
			t.Fatalf("request for %s, want %s", r.ActionID, id)
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no gate.requested", id)
	}
	return events.GateRequested{}
}

func waitDecided(t *testing.T, ch <-chan gated) client.GateResult {
	t.Helper()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatalf("gate: %v", g.err)
		}
		return g.res
	case <-time.After(15 * time.Second):
		t.Fatal("no decision")
	}
	return client.GateResult{}
}

func TestEndToEnd(t *testing.T) {
	// A real embedded node running the gate, and the expiry timer, as
	// vigil serve does.
	s := testnode.StartNode(t, testnode.Options{Processors: testnode.Gate(gate.Options{}), Expiry: true})
	admin := testnode.Client(t, s, natsutil.RoleAdmin)
	agent := testnode.Client(t, s, natsutil.RoleAgent)
	approver := testnode.Client(t, s, natsutil.RoleApprover)

	// Risky mode, threshold HIGH; in conversation c2, approvals expire
	// after 1s.
	cfg := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh}, ApprovalTimeout: "1m"}
	c2 := cfg
	c2.Scope, c2.Conversation, c2.ApprovalTimeout = events.ScopeConversation, "c2", "1s"
	for i, c := range []events.Config{cfg, c2} {
		data, err := events.ToData(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Append(t.Context(), events.Event{V: 1, ID: fmt.Sprintf("cfg-%d", i), Kind: events.KindConfig,
			Conversation: c.Conversation, Time: time.Now().UTC(), Data: data}); err != nil {
			t.Fatalf("config: %v", err)
		}
	}

	// A harmless command is allowed at once.
	ls := rmAction("ls-1", "c1")
	ls.Data["args"] = map[string]any{"command": "ls -la"}
	res, err := agent.GateAndWait(t.Context(), ls, nil)
	if err != nil || res.Outcome != events.OutcomeAllow || res.By != events.ByMode || res.Waited {
		t.Fatalf("ls: %+v, %v", res, err)
	}

	// rm -rf / waits for a person.
	ch, req := gateAsync(t, agent, rmAction("a1", "c1"), 30*time.Second)
	r := waitRequested(t, req, "a1")
	if r.Level != events.RiskHigh || r.Timeout != "1m0s" || r.Shape == "" {
		t.Fatalf("request = %+v", r)
	}

	// The agent approving its own action is refused, and raises an alert:
	// on the control subject NATS refuses the publish outright; on its own
	// (agent) subject the ingest service refuses the control kind.
	self := approval("self-approve", "a1", "c1", events.VerdictOnce)
	body, err := self.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Conn().Request(events.IngestControlSubject("c1"), body, 300*time.Millisecond); err == nil {
		t.Fatal("an agent published on a control subject")
	}
	resp, err := agent.Conn().Request(events.IngestAgentSubject("c1"), body, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.ParseReply(resp.Data, 1)
	var re *client.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "control kind") {
		t.Fatalf("agent approval: err = %v, want a refusal", err)
	}
	// (the alert names the refused event by its digest: an id is the
	// producer's text and may hold anything)
	waitAlert(t, admin, ingest.ValueDigest("self-approve"), "no alert for the approval sent with agent credentials")
	select {
	case g := <-ch:
		t.Fatalf("a1 decided after a refused approval: %+v", g)
	case <-time.After(200 * time.Millisecond):
	}
	// An approval for an action that does not exist is refused with an alert.
	if _, err := approver.Append(t.Context(), approval("ghost-approve", "nope", "c1", events.VerdictOnce)); err != nil {
		t.Fatal(err)
	}
	// The approver's "once" allows it.
	if _, err := approver.Append(t.Context(), approval("ap-1", "a1", "c1", events.VerdictOnce)); err != nil {
		t.Fatal(err)
	}
	res = waitDecided(t, ch)
	if res.Outcome != events.OutcomeAllow || res.By != events.ByHuman || res.Verdict != events.VerdictOnce || res.Approver != "alice" {
		t.Fatalf("a1 = %+v", res)
	}
	waitAlert(t, admin, "ghost-approve", "no alert for an approval of an action that does not exist")
	// Approving it again: already decided, refused with an alert.
	if _, err := approver.Append(t.Context(), approval("ap-again", "a1", "c1", events.VerdictOnce)); err != nil {
		t.Fatal(err)
	}

	// The same command again waits again; "session" allows it ...
	ch, req = gateAsync(t, agent, rmAction("a2", "c1"), 30*time.Second)
	waitRequested(t, req, "a2")
	if _, err := approver.Append(t.Context(), approval("ap-2", "a2", "c1", events.VerdictSession)); err != nil {
		t.Fatal(err)
	}
	if res = waitDecided(t, ch); res.Outcome != events.OutcomeAllow || res.Verdict != events.VerdictSession {
		t.Fatalf("a2 = %+v", res)
	}
	// ... and every later one of that shape in that conversation, at once ...
	res, err = agent.GateAndWait(t.Context(), rmAction("a3", "c1"), nil)
	if err != nil || res.Outcome != events.OutcomeAllow || res.By != events.BySession {
		t.Fatalf("a3 = %+v, %v", res, err)
	}
	waitAlert(t, admin, "ap-again", "no alert for approving an action already decided")
	// ... but not in another conversation, where nobody answers: expiry
	// denies it (fail closed).
	ch, req = gateAsync(t, agent, rmAction("a4", "c2"), 30*time.Second)
	waitRequested(t, req, "a4")
	res = waitDecided(t, ch)
	if res.Outcome != events.OutcomeDeny || res.By != events.ByTimeout {
		t.Fatalf("a4 = %+v", res)
	}

	// A retry of a decided action (same id) finds its decision in
	// VIGIL_DERIVED (with credentials that may read it).
	res, err = admin.GateAndWait(t.Context(), rmAction("a4", "c2"), nil)
	if err != nil || res.Outcome != events.OutcomeDeny || res.By != events.ByTimeout {
		t.Fatalf("retry of a4 = %+v, %v", res, err)
	}
}

// waitAlert waits for an alert about event id in VIGIL_DERIVED, failing
// the test with why it is expected.
func waitAlert(t *testing.T, cl *client.Client, id, why string) {
	t.Helper()
	testnode.Eventually(t, 10*time.Second, func() string {
		found := false
		natsutil.ReadStream(t.Context(), cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{events.SubjectAlert}},
			func(r natsutil.RawRecord) error {
				d, err := events.DecodeDerived(r.Data)
				if err != nil {
					return nil
				}
				if a, err := events.DerivedDataAs[events.Alert](&d); err == nil && a.EventID == id {
					found = true
				}
				return nil
			})
		if !found {
			return why
		}
		return ""
	})
}
