package ingest

import (
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
)

// TestFolded: gate outputs handed over by the node's own driver reach a
// wait registered before or after them, decoded as the stream stores
// them; the same output arriving again on its subject (as published) is
// not delivered twice; outputs on other subjects are ignored.
func TestFolded(t *testing.T) {
	ns, err := natsutil.StartServer(natsutil.ServerConfig{StoreDir: t.TempDir(), Durability: natsutil.DurabilityInterval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	nc, err := natsutil.ConnectInProcess(ns, "", "gatewait-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w, err := newDecisionWatcher(nc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.stop)
	s := &Service{decisions: w}
	outputs := func(seq uint64) []processors.Output {
		rec := events.Record{Seq: seq, Event: events.Event{ID: "a", Kind: events.KindAction, Conversation: "c", Time: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)}}
		return []processors.Output{
			processors.NewOutput("risk", &rec, 0, events.RiskSubject("c"), events.KindRiskAssessed, events.RiskAssessed{ActionID: "a", LogSeq: seq, Level: events.RiskLow}),
			processors.NewOutput("gate", &rec, 0, events.GateSubject("c"), events.KindGateDecided,
				events.GateDecided{ActionID: "a", LogSeq: seq, Outcome: events.OutcomeAllow, By: events.ByRule, Level: events.RiskLow, DecisionSeq: seq}),
		}
	}
	received := func(ch chan events.Derived) []events.Derived {
		var got []events.Derived
		for {
			select {
			case d := <-ch:
				got = append(got, d)
			case <-time.After(200 * time.Millisecond):
				return got
			}
		}
	}
	check := func(got []events.Derived, seq uint64) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("seq %d: %d outputs delivered, want the decision once: %+v", seq, len(got), got)
		}
		gd, err := events.DerivedDataAs[events.GateDecided](&got[0])
		if err != nil || gd.LogSeq != seq || gd.Outcome != events.OutcomeAllow || got[0].ID != processors.OutputID("gate", seq, 0) {
			t.Fatalf("seq %d: delivered %+v (%v)", seq, got[0], err)
		}
	}

	// A request that asked for its decision is in flight (handle takes
	// this interest before the action is stored).
	w.interest.Add(1)

	// A wait registered first; then the driver's outputs, then the same
	// decision as published.
	ch, err := w.wait(7)
	if err != nil {
		t.Fatal(err)
	}
	outs := outputs(7)
	s.Folded(7, outs)
	body, err := outs[1].Event.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(outs[1].Subject, body); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	check(received(ch), 7)
	w.done(7, ch)

	// The driver's outputs first, the wait after (the append's reply raced
	// the fold).
	s.Folded(8, outputs(8))
	ch, err = w.wait(8)
	if err != nil {
		t.Fatal(err)
	}
	check(received(ch), 8)
	w.done(8, ch)

	// Not started: nothing to hand to.
	(&Service{}).Folded(9, outputs(9))

	// Nobody asked for a decision: outputs are not decoded nor remembered.
	w.interest.Add(-1)
	s.Folded(10, outputs(10))
	w.mu.Lock()
	_, kept := w.recent[10]
	w.mu.Unlock()
	if kept {
		t.Error("an output was remembered with no request waiting for a decision")
	}
}

// TestWatcherForgetsOldest: the watcher remembers the outputs of the last
// recentDecisions actions, encoded; the oldest action's are forgotten (its
// ids too, so the table of ids never outgrows the ring), and what it
// remembers reaches a wait registered afterwards, decoded.
func TestWatcherForgetsOldest(t *testing.T) {
	w := &decisionWatcher{waits: map[uint64][]chan events.Derived{}, recent: map[uint64][][]byte{},
		ids: map[string]struct{}{}, ring: make([]uint64, recentDecisions)}
	w.interest.Add(1)
	body := func(seq uint64) []byte {
		rec := events.Record{Seq: seq, Event: events.Event{ID: "a", Kind: events.KindAction, Conversation: "c", Time: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)}}
		out := processors.NewOutput("gate", &rec, 0, events.GateSubject("c"), events.KindGateDecided,
			events.GateDecided{ActionID: "a", LogSeq: seq, Outcome: events.OutcomeAllow, By: events.ByRule, Level: events.RiskLow, DecisionSeq: seq})
		b, err := out.Event.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for seq := uint64(1); seq <= recentDecisions+2; seq++ {
		w.add(body(seq))
	}
	if len(w.recent) != recentDecisions || len(w.ids) != recentDecisions {
		t.Fatalf("%d actions and %d ids remembered, want %d of each", len(w.recent), len(w.ids), recentDecisions)
	}
	for _, seq := range []uint64{1, 2} {
		if _, ok := w.recent[seq]; ok {
			t.Errorf("seq %d still remembered", seq)
		}
	}
	ch, err := w.wait(recentDecisions + 2)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-ch:
		if gd, err := events.DerivedDataAs[events.GateDecided](&d); err != nil || gd.LogSeq != recentDecisions+2 {
			t.Fatalf("a wait got %+v (%v)", d, err)
		}
	default:
		t.Fatal("a wait registered after its decision got nothing")
	}
	// A forgotten output is remembered again when it comes back.
	w.add(body(1))
	if _, ok := w.recent[1]; !ok {
		t.Error("a forgotten output that came again was not remembered")
	}
}
