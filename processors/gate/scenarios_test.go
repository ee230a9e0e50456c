package gate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// The three failure scenarios of the agent-sdk report (seeds/001_…), run
// through the gate with the real risk scorer. In each: no record fails to
// fold, every action gets exactly one decision (no loop, nothing stuck),
// every decision is the one the config in force at its position says, and
// the security_risk read model follows the switch.

type logBuilder struct {
	t    *testing.T
	p    *Processor
	seq  uint64
	outs []processors.Output
	raws [][]byte
	subs []string
}

func newLog(t *testing.T) *logBuilder {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &logBuilder{t: t, p: p}
}

// add folds ev as the next log record and returns the gate's outputs.
func (l *logBuilder) add(ev events.Event) []events.Derived {
	l.t.Helper()
	if ev.V == 0 {
		ev.V = 1
	}
	if ev.Time.IsZero() {
		ev.Time = time.Date(2026, 11, 22, 10, 0, int(l.seq), 0, time.UTC)
	}
	if err := ev.Validate(); err != nil {
		l.t.Fatalf("event %s: %v", ev.ID, err)
	}
	raw, err := ev.MarshalMsgpack()
	if err != nil {
		l.t.Fatal(err)
	}
	l.seq++
	l.raws = append(l.raws, raw)
	l.subs = append(l.subs, events.LogSubject(ev.Conversation))
	_, outs := processors.Feed(l.p, l.seq, events.LogSubject(ev.Conversation), raw)
	l.outs = append(l.outs, outs...)
	var ds []events.Derived
	for _, o := range outs {
		b, err := o.Event.Marshal()
		if err != nil {
			l.t.Fatal(err)
		}
		d, err := events.DecodeDerived(b)
		if err != nil {
			l.t.Fatal(err)
		}
		if d.Kind == events.KindAlert {
			l.t.Errorf("unexpected alert after %s: %v", ev.ID, d.Data)
		}
		ds = append(ds, d)
	}
	return ds
}

func cfgEvent(id string, c events.Config) events.Event {
	data, err := events.ToData(c)
	if err != nil {
		panic(err)
	}
	return events.Event{ID: id, Kind: events.KindConfig, Data: data}
}

func bashAction(id, conv, cmd string, risk any) events.Event {
	data := map[string]any{"tool": "execute_bash", "args": map[string]any{"command": cmd}}
	if risk != nil {
		data["args"].(map[string]any)["security_risk"] = risk
	}
	return events.Event{ID: id, Kind: events.KindAction, Conversation: conv, Agent: "openhands", Data: data}
}

// expectOne checks that ds holds exactly one gate output about action id
// (a decision or a request) and returns it.
func expectOne(t *testing.T, ds []events.Derived, id string) events.Derived {
	t.Helper()
	if len(ds) != 1 {
		t.Fatalf("action %s: %d outputs, want exactly 1: %v", id, len(ds), ds)
	}
	d := ds[0]
	if m, _ := d.Data.(map[string]any); m["action_id"] != id {
		t.Fatalf("output about %v, want %s", m["action_id"], id)
	}
	return d
}

func decidedOf(t *testing.T, d events.Derived) events.GateDecided {
	t.Helper()
	if d.Kind != events.KindGateDecided {
		t.Fatalf("%s: %s, want gate.decided", d.ID, d.Kind)
	}
	gd, err := events.DerivedDataAs[events.GateDecided](&d)
	if err != nil {
		t.Fatal(err)
	}
	return gd
}

func hasReason(rs []events.Reason, analyzer, rule string) bool {
	for _, r := range rs {
		if r.Analyzer == analyzer && r.Rule == rule {
			return true
		}
	}
	return false
}

var (
	withHint = events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true, LLMHint: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh}}
	withoutHint = events.Config{Version: 2, Analyzers: events.Analyzers{Rules: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh}}
)

// Scenario 1: the analyzer exists at the start, the system prompt asks for
// security_risk, the analyzer is removed mid-conversation, and the LLM keeps
// sending the field. It must not crash anything: the field is recorded as
// ignored and the decision is the new config's.
func TestScenario1AnalyzerRemoved(t *testing.T) {
	l := newLog(t)
	l.add(cfgEvent("cfg-1", withHint))
	if h := l.p.Hint("c1"); !h.Ask || len(h.Schema) == 0 {
		t.Fatalf("hint under v1 = %+v, want ask with the schema fragment", h)
	}
	d := decidedOf(t, expectOne(t, l.add(bashAction("a1", "c1", "ls -la", "LOW")), "a1"))
	if d.Outcome != events.OutcomeAllow || d.By != events.ByMode || !d.AskSecurityRisk {
		t.Fatalf("a1 = %+v", d)
	}
	l.add(cfgEvent("cfg-2", withoutHint))
	if h := l.p.Hint("c1"); h.Ask || len(h.Schema) != 0 {
		t.Fatalf("hint under v2 = %+v, want no ask", h)
	}
	// The LLM still passes security_risk, in the arguments as OpenHands does.
	d = decidedOf(t, expectOne(t, l.add(bashAction("a2", "c1", "ls -al ~/.openhands", "LOW")), "a2"))
	if d.Outcome != events.OutcomeAllow || d.AskSecurityRisk || d.ConfigVersion != 2 {
		t.Fatalf("a2 = %+v", d)
	}
	if !hasReason(d.Reasons, "llm_hint", "ignored") {
		t.Errorf("a2 reasons %v: the ignored hint must be recorded", d.Reasons)
	}
	// ... and even claims HIGH: ignored, so it does not ask either.
	d = decidedOf(t, expectOne(t, l.add(bashAction("a3", "c1", "cat README.md", "HIGH")), "a3"))
	if d.Outcome != events.OutcomeAllow || d.Level == events.RiskHigh {
		t.Fatalf("a3 = %+v: a hint under a config without the LLM analyzer must not count", d)
	}
	// A dangerous command still waits, whatever the agent says.
	r := expectOne(t, l.add(bashAction("a4", "c1", "rm -rf /", "LOW")), "a4")
	if r.Kind != events.KindGateRequested {
		t.Fatalf("a4: %s, want a request", r.Kind)
	}
}

// Scenario 2: no analyzer at the start, so the system prompt never asked for
// security_risk; it is added mid-conversation. The LLM does not know and
// sends none: nothing fails (the field is optional), the decision is made
// on the rules, and each decision now tells the runtime to start asking.
func TestScenario2AnalyzerAdded(t *testing.T) {
	l := newLog(t)
	noHint := withoutHint
	noHint.Version = 1
	l.add(cfgEvent("cfg-1", noHint))
	d := decidedOf(t, expectOne(t, l.add(bashAction("b1", "c2", "cat README.md", nil)), "b1"))
	if d.Outcome != events.OutcomeAllow || d.AskSecurityRisk {
		t.Fatalf("b1 = %+v", d)
	}
	added := withHint
	added.Version = 2
	l.add(cfgEvent("cfg-2", added))
	if h := l.p.Hint("c2"); !h.Ask {
		t.Fatalf("hint under v2 = %+v, want ask", h)
	}
	d = decidedOf(t, expectOne(t, l.add(bashAction("b2", "c2", "cat README.md", nil)), "b2"))
	if d.Outcome != events.OutcomeAllow || !d.AskSecurityRisk || d.ConfigVersion != 2 {
		t.Fatalf("b2 = %+v: a missing security_risk must not fail, and the decision must say to ask from now on", d)
	}
	// The runtime follows: the LLM now rates its actions, and a HIGH
	// rating raises a LOW command to HIGH, so it waits.
	r := expectOne(t, l.add(bashAction("b3", "c2", "cat README.md", "HIGH")), "b3")
	if r.Kind != events.KindGateRequested {
		t.Fatalf("b3: %s, want a request (the hint raises)", r.Kind)
	}
}

// openHandsAction is an ActionEvent as OpenHands stores it in history: the
// tool call's arguments are a JSON string that carries security_risk.
func openHandsAction(id, conv, cmd, risk string) events.Event {
	js := fmt.Sprintf(`{"kind":"ActionEvent","id":%q,"conversation":%q,"timestamp":"2026-11-22T10:00:00.123456","source":"agent",
		"thought":[{"type":"text","text":"look around"}],"tool_name":"execute_bash","tool_call_id":"call_%s",
		"security_risk":%q,"tool_call":{"id":"call_%s","name":"execute_bash","arguments":"{\"command\": \"%s\", \"security_risk\": \"%s\"}"},
		"action":{"command":%q,"kind":"ExecuteBashAction"}}`, id, conv, id, risk, id, cmd, risk, cmd)
	ev, err := events.DecodeJSON([]byte(js))
	if err != nil {
		panic(err)
	}
	return ev
}

// Scenario 3: as 1, then the conversation is fully reloaded: its history,
// old ActionEvents with their security_risk included, comes back. In the
// SDK validation failed and the agent looped; here every re-sent action is
// folded once, decided once under the config in force now, and the fold
// and its replay agree byte for byte. A re-sent action reuses the id of one
// already decided, so it is denied, by rule, and never inherits the old
// decision (an id is the producer's claim; see ids.txt): it is history, not
// a new request to run anything.
func TestScenario3ReloadWithOldRisk(t *testing.T) {
	l := newLog(t)
	l.add(cfgEvent("cfg-1", withHint))
	l.add(events.Event{ID: "start-1", Kind: events.KindConversationStarted, Conversation: "c3", Data: map[string]any{"backend": "local"}})
	history := []events.Event{
		openHandsAction("h1", "c3", "ls -al ~/.openhands", "LOW"),
		openHandsAction("h2", "c3", "git status", "LOW"),
		openHandsAction("h3", "c3", "cat /etc/hostname", "MEDIUM"),
	}
	for _, ev := range history {
		d := decidedOf(t, expectOne(t, l.add(ev), ev.ID))
		if d.Outcome != events.OutcomeAllow || !d.AskSecurityRisk {
			t.Fatalf("%s under v1 = %+v", ev.ID, d)
		}
	}
	l.add(cfgEvent("cfg-2", withoutHint))
	// The reload: the conversation starts again, and the history is
	// re-sent (after the dedup window, so it is stored again).
	l.add(events.Event{ID: "start-2", Kind: events.KindConversationStarted, Conversation: "c3", Data: map[string]any{"backend": "local"}})
	before := len(l.outs)
	for i, ev := range history {
		d := decidedOf(t, expectOne(t, l.add(ev), ev.ID))
		want := fmt.Sprintf("action id %s was already used at log seq %d", ev.ID, i+3)
		if d.Outcome != events.OutcomeDeny || d.By != events.ByRule || !strings.Contains(d.Reason, want) || d.AskSecurityRisk || d.ConfigVersion != 2 {
			t.Fatalf("reloaded %s under v2 = %+v, want deny by rule: %s", ev.ID, d, want)
		}
		if !hasReason(d.Reasons, "llm_hint", "ignored") {
			t.Errorf("reloaded %s: the old security_risk must be recorded as ignored: %v", ev.ID, d.Reasons)
		}
	}
	if got := len(l.outs) - before; got != len(history) {
		t.Fatalf("the reload produced %d outputs for %d actions", got, len(history))
	}
	// New actions after the reload follow v2 too; the LLM may keep rating.
	d := decidedOf(t, expectOne(t, l.add(openHandsAction("h4", "c3", "ls", "HIGH")), "h4"))
	if d.Outcome != events.OutcomeAllow || d.Level == events.RiskHigh {
		t.Fatalf("h4 = %+v", d)
	}
	// Replay: the same log folded from scratch gives the same bytes.
	l2 := replayOutputs(t, l)
	if len(l2) != len(l.outs) {
		t.Fatalf("replay: %d outputs, live %d", len(l2), len(l.outs))
	}
	for i := range l2 {
		a, _ := l2[i].Event.Marshal()
		b, _ := l.outs[i].Event.Marshal()
		if string(a) != string(b) {
			t.Fatalf("replay output %d differs", i)
		}
	}
}

// replayOutputs re-folds the records l folded through a new gate.
func replayOutputs(t *testing.T, l *logBuilder) []processors.Output {
	t.Helper()
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []processors.Output
	for i, raw := range l.raws {
		_, o := processors.Feed(p, uint64(i+1), l.subs[i], raw)
		out = append(out, o...)
	}
	return out
}
