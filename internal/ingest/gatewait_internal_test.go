package ingest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

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
	received := func(ch chan WaitReply) []WaitReply {
		var got []WaitReply
		for {
			select {
			case d := <-ch:
				got = append(got, d)
			case <-time.After(200 * time.Millisecond):
				return got
			}
		}
	}
	check := func(got []WaitReply, seq uint64) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("seq %d: %d outputs delivered, want the decision once: %+v", seq, len(got), got)
		}
		gd := got[0].Decided
		if gd == nil || gd.LogSeq != seq || gd.Outcome != events.OutcomeAllow || got[0].Requested != nil {
			t.Fatalf("seq %d: delivered %+v", seq, got[0])
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
// remembers reaches a wait registered afterwards, decoded (kept decoded
// for the newest freshDecisions actions, decoded again for older ones).
func TestWatcherForgetsOldest(t *testing.T) {
	w := &decisionWatcher{waits: map[uint64][]chan WaitReply{}, recent: map[uint64][][]byte{},
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
	case r := <-ch:
		if r.Decided == nil || r.Decided.LogSeq != recentDecisions+2 {
			t.Fatalf("a wait got %+v", r)
		}
	default:
		t.Fatal("a wait registered after its decision got nothing")
	}
	// An action older than the decoded ones (fresh) is decoded from
	// what recent holds.
	if _, ok := w.fresh[3]; ok || len(w.recent[3]) != 1 {
		t.Fatalf("seq 3: fresh %v, recent %d; want it only in recent", ok, len(w.recent[3]))
	}
	ch, err = w.wait(3)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		if r.Decided == nil || r.Decided.LogSeq != 3 {
			t.Fatalf("a wait for seq 3 got %+v", r)
		}
	default:
		t.Fatal("a wait for an action past the decoded ones got nothing")
	}
	// A forgotten output is remembered again when it comes back.
	w.add(body(1))
	if _, ok := w.recent[1]; !ok {
		t.Error("a forgotten output that came again was not remembered")
	}
}

// TestDecodeGateOut: a wait's reply read straight from a stored gate
// output is the one events.DecodeDerived and events.DerivedDataAs give,
// for requests and decisions with every field set; other kinds and
// broken bodies give none.
func TestDecodeGateOut(t *testing.T) {
	rec := events.Record{Seq: 42, Event: events.Event{ID: "a", Kind: events.KindAction, Conversation: "c", Time: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)}}
	reasons := []events.Reason{{Analyzer: "shell", Rule: "rm-rf", Detail: "deletes \u00e9 files", Level: events.RiskHigh, Span: []int{0, 5}}, {Analyzer: "policy", Rule: "r"}}
	outs := []processors.Output{
		processors.NewOutput("gate", &rec, 0, events.GateSubject("c"), events.KindGateRequested, events.GateRequested{
			ActionID: "a", LogSeq: 42, Level: events.RiskHigh, Reasons: reasons, Tool: "bash", Command: "rm -rf /",
			Shape: "rm -rf <path>", Timeout: "5m0s", ConfigVersion: 3, Agent: "claude", Backend: "local",
			BackendClaimed: "sandbox", Digest: "sha256:00"}),
		processors.NewOutput("gate", &rec, 1, events.GateSubject("c"), events.KindGateDecided, events.GateDecided{
			ActionID: "a", LogSeq: 42, Outcome: events.OutcomeDeny, By: events.ByHuman, Level: events.RiskHigh, Reasons: reasons,
			Approver: "ann", Reason: "no", DecisionSeq: 50, Shape: "rm -rf <path>", ConfigVersion: 3, Verdict: events.Verdict("deny"),
			EntryID: "e1", Would: "ask", AskSecurityRisk: true, Digest: "sha256:00"}),
		processors.NewOutput("gate", &rec, 2, events.GateSubject("c"), events.KindGateDecided, events.GateDecided{ActionID: "a", LogSeq: 42}),
		processors.NewOutput("gate", &rec, 3, events.GateSubject("c"), events.KindGateDecided, events.GateDecided{ActionID: "a", LogSeq: 1 << 40,
			Reasons: []events.Reason{}, ConfigVersion: -1 << 40, DecisionSeq: 1<<64 - 1}),
		processors.NewOutput("gate", &rec, 4, events.GateSubject("c"), events.KindGateRequested, events.GateRequested{ActionID: "a", LogSeq: 300,
			Reasons: []events.Reason{{Span: []int{}}, {Span: []int{-1, 1 << 33}}}, Command: strings.Repeat("x", 70000)}),
	}
	for i, out := range outs {
		body, err := out.Event.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := fastGateOut(body); !ok {
			t.Errorf("output %d: not read by the fast path", i)
		}
		id, got, ok := decodeGateOut(body)
		d, err := events.DecodeDerived(body)
		if err != nil {
			t.Fatal(err)
		}
		want, wok := waitReplyOf(&d)
		if !ok || !wok || id != d.ID || !reflect.DeepEqual(got, want) {
			t.Errorf("output %d: got %q %+v %v, want %q %+v %v", i, id, got, ok, d.ID, want, wok)
		}
		sameGateOut(t, body)
	}
	other := processors.NewOutput("risk", &rec, 0, events.RiskSubject("c"), events.KindRiskAssessed, events.RiskAssessed{ActionID: "a", LogSeq: 42})
	body, err := other.Event.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{body, nil, {0x81}, []byte("not msgpack"), body[:len(body)/2]} {
		if _, r, ok := decodeGateOut(b); ok {
			t.Errorf("%q decoded as %+v", b, r)
		}
	}
	// Spellings Marshal does not write: the fast path reads them as the
	// msgpack package does, or leaves them to it.
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	decided := string(events.KindGateDecided)
	for _, v := range []any{
		map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": 5, "reasons": nil, "extra": []any{1, "x", map[string]any{"y": 1.5}}}},
		map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": -5}},
		map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": uint64(5), "config_version": uint64(1 << 63)}},
		map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": int8(5), "outcome": []byte("allow")}},
		map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": 5, "outcome": nil, "ask_security_risk": nil}},
		map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": 5, "reasons": []any{map[string]any{"span": nil, "rule": 3}}}},
		map[string]any{"id": "g", "kind": decided, "data": nil},
		map[string]any{"id": "g", "kind": decided},
		map[string]any{"id": "g", "kind": decided, "data": []any{1, 2}},
		map[string]any{"id": []byte("g"), "kind": decided, "data": map[string]any{"log_seq": 5}},
		map[string]any{"kind": decided, "data": map[string]any{"log_seq": 5}},
		map[string]any{"id": "g", "kind": "risk.assessed", "data": map[string]any{"log_seq": 5}},
	} {
		sameGateOut(t, mp(v))
	}
	sameGateOut(t, append(mp(map[string]any{"id": "g", "kind": decided, "data": map[string]any{"log_seq": 5}}), 0xc0))
}

// sameGateOut checks that fastGateOut, when it reads b, agrees with the
// msgpack package (reflectGateOut).
func sameGateOut(t *testing.T, b []byte) {
	t.Helper()
	id, got, ok := fastGateOut(b)
	if !ok {
		return
	}
	wid, want, wok := reflectGateOut(b)
	if !wok || id != wid || !reflect.DeepEqual(got, want) {
		t.Errorf("%x:\n fast %q %#v\n slow %q %#v %v", b, id, got, wid, want, wok)
	}
}

// FuzzFastGateOut: on any body fastGateOut reads, it reads what the
// msgpack package's path reads; it never panics.
func FuzzFastGateOut(f *testing.F) {
	rec := events.Record{Seq: 42, Event: events.Event{ID: "a", Kind: events.KindAction, Conversation: "c", Time: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)}}
	for i, data := range []any{
		events.GateRequested{ActionID: "a", LogSeq: 42, Level: events.RiskHigh, Reasons: []events.Reason{{Analyzer: "shell", Rule: "r", Span: []int{0, 5}}},
			Tool: "bash", Command: "rm -rf /", Shape: "rm -rf <path>", Timeout: "5m0s", ConfigVersion: 3},
		events.GateDecided{ActionID: "a", LogSeq: 42, Outcome: events.OutcomeDeny, By: events.ByHuman, Level: events.RiskHigh,
			Approver: "ann", DecisionSeq: 50, AskSecurityRisk: true, Reasons: []events.Reason{}},
	} {
		kind := events.KindGateRequested
		if i == 1 {
			kind = events.KindGateDecided
		}
		out := processors.NewOutput("gate", &rec, i, events.GateSubject("c"), kind, data)
		if b, err := out.Event.Marshal(); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{0x81})
	f.Add([]byte{0x83, 0xa2, 'i', 'd', 0xa1, 'g', 0xa4, 'k', 'i', 'n', 'd', 0xac, 'g', 'a', 't', 'e', '.', 'd', 'e', 'c', 'i', 'd', 'e', 'd', 0xa4, 'd', 'a', 't', 'a', 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		sameGateOut(t, b)
		_, _, _ = decodeGateOut(b)
	})
}
