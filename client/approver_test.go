package client_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors/gate"
)

// violations counts the permissions violations a server logs.
type violations struct {
	n    atomic.Int64
	last atomic.Value
}

func (v *violations) Enabled(context.Context, slog.Level) bool { return true }
func (v *violations) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "Violation") {
		v.n.Add(1)
		v.last.Store(r.Message)
	}
	return nil
}
func (v *violations) WithAttrs([]slog.Attr) slog.Handler { return v }
func (v *violations) WithGroup(string) slog.Handler      { return v }

// TestApproverAsksNothingItMayNot: what an approver's client does — list
// the pending actions (a read of VIGIL_DERIVED), find one, decide it,
// tail the log — asks the server for nothing the approver role may not
// (no consumer deletion, no durable consumer): the node logs no
// permissions violation.
func TestApproverAsksNothingItMayNot(t *testing.T) {
	v := &violations{}
	s := testnode.StartNode(t, testnode.Options{Processors: testnode.Gate(gate.Options{}),
		Configure: func(c *node.Config) { c.Logger = slog.New(v) }})
	admin := testnode.Client(t, s, natsutil.RoleAdmin)
	agent := testnode.Client(t, s, natsutil.RoleAgent)
	approver := testnode.Client(t, s, natsutil.RoleApprover)
	cfg := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh}, ApprovalTimeout: "1m"}
	data, err := events.ToData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Append(t.Context(), events.Event{V: 1, ID: "cfg", Kind: events.KindConfig, Time: time.Now().UTC(), Data: data}); err != nil {
		t.Fatal(err)
	}
	gated := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		_, err := agent.GateAndWait(ctx, events.Event{V: 1, ID: "a1", Kind: events.KindAction, Conversation: "c1", Agent: "coder-1",
			Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf /"}}}, nil)
		gated <- err
	}()
	var p client.PendingAction
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		pending, err := approver.Pending(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 1 {
			p = pending[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the action never waited for a person")
		}
	}
	if _, err := approver.FindPending(t.Context(), "a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := approver.Decide(t.Context(), p, events.VerdictOnce, client.DecideOptions{Approver: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := <-gated; err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := approver.Tail(t.Context(), client.TailOptions{}, func(events.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("the approver read nothing of the log")
	}
	// Refused requests are logged as the server refuses them, before the
	// call that made them returns.
	if got := v.n.Load(); got != 0 {
		t.Fatalf("the approver's client made %d requests its role may not; the last: %v", got, v.last.Load())
	}
}
