package gate

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata/scripts")

// scriptScorer is a deterministic stand-in for the risk scorer in the
// decision-table scripts, so that they state levels exactly and test the
// gate's logic alone. (The scenario and end-to-end tests use the real
// scorer.) Levels by command:
//
//	contains "rm -rf /" (at the end)  HIGH    shape rm:root
//	starts with "sudo "               HIGH    shape sudo:privilege
//	starts with "rm "                 MEDIUM  shape rm:delete
//	starts with "curl "               MEDIUM  shape curl:network
//	"??"                              UNKNOWN no shape
//	anything else                     LOW     shape <first word>
//
// With the LLM hint on, the action's security_risk raises the level. Deny
// rules are `contains:<text>` on the command.
type scriptScorer struct{ cfg events.Config }

func newScriptScorer(cfg events.Config) (Scorer, error) {
	for _, r := range cfg.DenyRules {
		if !strings.HasPrefix(r.Expr, "contains:") {
			return nil, fmt.Errorf("deny rule %s: script scorer knows only contains:<text>", r.Name)
		}
	}
	return &scriptScorer{cfg}, nil
}

func (s *scriptScorer) Assess(ev *events.Event, env Env) Assessment {
	cmd, _ := ev.Args()["command"].(string)
	var a Assessment
	switch {
	case strings.HasSuffix(cmd, "rm -rf /"):
		a = Assessment{Level: events.RiskHigh, Shape: "rm:root", Reasons: []events.Reason{{Analyzer: "shell", Rule: "root", Level: events.RiskHigh}}}
	case strings.HasPrefix(cmd, "sudo "):
		a = Assessment{Level: events.RiskHigh, Shape: "sudo:privilege", Reasons: []events.Reason{{Analyzer: "shell", Rule: "privilege", Level: events.RiskHigh}}}
	case strings.HasPrefix(cmd, "rm "):
		a = Assessment{Level: events.RiskMedium, Shape: "rm:delete", Reasons: []events.Reason{{Analyzer: "shell", Rule: "delete", Level: events.RiskMedium}}}
	case strings.HasPrefix(cmd, "curl "):
		a = Assessment{Level: events.RiskMedium, Shape: "curl:network", Reasons: []events.Reason{{Analyzer: "shell", Rule: "network", Level: events.RiskMedium}}}
	case cmd == "??":
		a = Assessment{Level: events.RiskUnknown}
	default:
		a = Assessment{Level: events.RiskLow, Shape: strings.Fields(cmd + " x")[0]}
	}
	if lvl, _, found := ev.SecurityRisk(); found && s.cfg.Analyzers.LLMHint && lvl.Rank() > a.Level.Rank() {
		a.Level = lvl
		a.Reasons = append(a.Reasons, events.Reason{Analyzer: "llm_hint", Rule: "security_risk", Level: lvl})
	}
	for _, r := range s.cfg.DenyRules {
		if strings.Contains(cmd, strings.TrimPrefix(r.Expr, "contains:")) {
			a.Deny = append(a.Deny, DenyHit{Rule: r.Name, Action: r.Action, Reason: r.Reason})
		}
	}
	return a
}

// script runs a gate over a log written as a script, one event per line,
// and prints every output. Commands:
//
//	config {JSON}                 a global config event (its data)
//	config@CONV {JSON}            a config event on CONV's subject
//	start CONV BACKEND            conversation.started
//	action CONV ID COMMAND…       a bash action
//	action+risk CONV ID LEVEL CMD… an action carrying security_risk
//	approve ID VERDICT [CONV] [REASON…] an approval.decision
//	expire ID                     approval.expired
//	allowlist add ENTRY SHAPE [ACTION] | allowlist revoke ENTRY
//	observe CONV ID [STATUS]      an observation of action ID
//	pending | entries | hint CONV print the read models
//
// Each event carries the origin its credential would give it: admin for
// config and expire, approver for approve and allowlist, agent for the
// rest. Words of the form key=value, anywhere after the command, set:
//
//	origin=ORIGIN                 the event's origin (agent, runtime, approver, admin)
//	client=NAME                   an observation's client (default claude-code)
//	seq=N                         an approval's log_seq
//	digest=ok|other               an approval's digest: the waiting action's, or another
type script struct {
	t    *testing.T
	p    *Processor
	seq  uint64
	out  strings.Builder
	all  []processors.Output
	raws [][]byte // the log: record seq n is raws[n-1]
	base time.Time
	// lines are the script lines run so far, to replay them.
	lines []string
}

func newScript(t *testing.T, opts Options) *script {
	if opts.NewScorer == nil {
		opts.NewScorer = newScriptScorer
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &script{t: t, p: p, base: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func (s *script) event(kind events.Kind, id, conv string, data map[string]any) events.Event {
	return events.Event{V: 1, ID: id, Kind: kind, Conversation: conv, Agent: "coder-1",
		Time: s.base.Add(time.Duration(s.seq) * time.Second), Data: data}
}

// feed appends ev to the log and folds it through processors.Feed, as the
// drivers do (encode, decode, step).
func (s *script) feed(ev events.Event) []processors.Output {
	s.t.Helper()
	if err := ev.Validate(); err != nil {
		s.t.Fatalf("script event %s does not validate: %v", ev.ID, err)
	}
	raw, err := ev.MarshalMsgpack()
	if err != nil {
		s.t.Fatal(err)
	}
	s.seq++
	s.raws = append(s.raws, raw)
	_, outs := processors.Feed(s.p, s.seq, events.LogSubject(ev.Conversation), raw)
	s.all = append(s.all, outs...)
	return outs
}

// defaultOrigin is the origin the credential that sends kind would give.
func defaultOrigin(kind events.Kind) events.Origin {
	switch kind {
	case events.KindConfig, events.KindApprovalExpired:
		return events.OriginAdmin
	case events.KindApprovalDecision, events.KindAllowlistChanged:
		return events.OriginApprover
	}
	return events.OriginAgent
}

func (s *script) run(line string) {
	s.t.Helper()
	var f []string
	opts := map[string]string{}
	for i, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, "="); ok && i > 0 && !strings.HasPrefix(line, "config") && !strings.ContainsAny(k, "{\"") {
			opts[k] = v
			continue
		}
		f = append(f, w)
	}
	var ev events.Event
	id := fmt.Sprintf("e%d", s.seq+1)
	switch cmd := f[0]; {
	case cmd == "config" || strings.HasPrefix(cmd, "config@"):
		conv := strings.TrimPrefix(strings.TrimPrefix(cmd, "config"), "@")
		var data map[string]any
		js := strings.TrimSpace(strings.TrimPrefix(line, cmd))
		v, err := events.DecodeJSONValue([]byte(js))
		if err != nil {
			s.t.Fatalf("%s: %v", line, err)
		}
		data = v.(map[string]any)
		ev = s.event(events.KindConfig, id, conv, data)
	case cmd == "start":
		ev = s.event(events.KindConversationStarted, id, f[1], map[string]any{"backend": f[2]})
	case cmd == "action":
		ev = s.event(events.KindAction, f[2], f[1], map[string]any{"tool": "bash", "args": map[string]any{"command": strings.Join(f[3:], " ")}})
	case cmd == "action+risk":
		ev = s.event(events.KindAction, f[2], f[1], map[string]any{"tool": "bash", "security_risk": f[3], "args": map[string]any{"command": strings.Join(f[4:], " ")}})
	case cmd == "approve":
		data := map[string]any{"action_id": f[1], "verdict": f[2], "approver": "alice"}
		conv := ""
		if len(f) > 3 && f[3] != "-" {
			conv = f[3]
		}
		if len(f) > 4 {
			data["reason"] = strings.Join(f[4:], " ")
		}
		if n, ok := opts["seq"]; ok {
			var seq uint64
			fmt.Sscan(n, &seq)
			data["log_seq"] = seq
		}
		switch opts["digest"] {
		case "ok":
			for _, r := range s.p.Pending() {
				if r.ActionID == f[1] {
					data["digest"] = r.Digest
				}
			}
		case "other":
			data["digest"] = events.Digest([]byte("what the person saw"))
		}
		ev = s.event(events.KindApprovalDecision, id, conv, data)
	case cmd == "expire":
		ev = s.event(events.KindApprovalExpired, id, "", map[string]any{"action_id": f[1]})
	case cmd == "allowlist" && f[1] == "add":
		data := map[string]any{"op": "add", "entry_id": f[2], "shape": f[3], "by": "alice"}
		if len(f) > 4 {
			data["action_id"] = f[4]
		}
		ev = s.event(events.KindAllowlistChanged, id, "", data)
	case cmd == "allowlist" && f[1] == "revoke":
		ev = s.event(events.KindAllowlistChanged, id, "", map[string]any{"op": "revoke", "entry_id": f[2]})
	case cmd == "observe":
		data := map[string]any{"action_id": f[2], "content": "ok"}
		if len(f) > 3 {
			data["status"] = f[3]
			data["client"] = "claude-code"
			data["content"] = "stopped waiting"
		}
		if c, ok := opts["client"]; ok {
			data["client"] = c
		}
		ev = s.event(events.KindObservation, id, f[1], data)
	case cmd == "pending":
		for _, r := range s.p.Pending() {
			fmt.Fprintf(&s.out, "  pending %s level=%s shape=%s command=%q\n", r.ActionID, r.Level, r.Shape, r.Command)
		}
		return
	case cmd == "entries":
		for _, e := range s.p.Allowlist() {
			fmt.Fprintf(&s.out, "  entry %s shape=%s action=%s by=%s seq=%d\n", e.ID, e.Shape, e.ActionID, e.By, e.Seq)
		}
		return
	case cmd == "hint":
		h := s.p.Hint(f[1])
		fmt.Fprintf(&s.out, "  hint %s ask=%t config_version=%d schema=%t\n", f[1], h.Ask, h.ConfigVersion, len(h.Schema) > 0)
		return
	default:
		s.t.Fatalf("unknown script command %q", line)
	}
	ev.Origin = defaultOrigin(ev.Kind)
	if o, ok := opts["origin"]; ok {
		ev.Origin = events.Origin(o)
	}
	for _, o := range s.feed(ev) {
		fmt.Fprintf(&s.out, "  %s\n", render(o))
	}
}

// render is a one-line, stable description of an output.
func render(o processors.Output) string {
	b, err := o.Event.Marshal()
	if err != nil {
		return "ERROR " + err.Error()
	}
	d, err := events.DecodeDerived(b)
	if err != nil {
		return "ERROR " + err.Error()
	}
	m, _ := d.Data.(map[string]any)
	get := func(k string) string {
		v, ok := m[k]
		if !ok || v == nil || v == "" || v == false {
			return ""
		}
		if s, ok := v.(string); ok {
			return s
		}
		j, _ := json.Marshal(v)
		return string(j)
	}
	var parts []string
	add := func(k string) {
		if v := get(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	switch d.Kind {
	case events.KindGateDecided:
		parts = append(parts, "decided", get("action_id"), get("outcome"))
		for _, k := range []string{"by", "level", "shape", "verdict", "approver", "entry_id", "would", "reason", "ask_security_risk", "log_seq", "decision_seq"} {
			add(k)
		}
	case events.KindGateRequested:
		parts = append(parts, "requested", get("action_id"))
		for _, k := range []string{"level", "shape", "timeout", "backend", "backend_claimed", "command"} {
			add(k)
		}
		// The gate's own reasons for asking (not the scorer's).
		rs, _ := m["reasons"].([]any)
		for _, r := range rs {
			if r, _ := r.(map[string]any); r["analyzer"] == "sandbox" {
				parts = append(parts, fmt.Sprintf("why=%s/%s", r["analyzer"], r["rule"]))
			}
		}
	case events.KindAlert:
		parts = append(parts, "ALERT", get("reason"))
	default:
		parts = append(parts, string(d.Kind))
	}
	return fmt.Sprintf("%s [%s %s]", strings.Join(parts, " "), o.Subject, d.ID)
}

// runScript runs the datadriven file at path: each directive is one script
// line (the directive, then its input: a config's JSON, an action's
// command, an approval's reason) and its expected output is what the gate
// emits for it. -update (or datadriven's -rewrite) rewrites the file.
func runScript(t *testing.T, path string, opts Options) *script {
	t.Helper()
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
	s := newScript(t, opts)
	datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
		line := scriptLine(td)
		s.lines = append(s.lines, line)
		s.out.Reset()
		s.run(line)
		var out strings.Builder
		for _, l := range strings.SplitAfter(s.out.String(), "\n") {
			out.WriteString(strings.TrimPrefix(l, "  "))
		}
		return out.String()
	})
	return s
}

// scriptLine is the script line a directive stands for.
func scriptLine(td *datadriven.TestData) string {
	parts := []string{td.Cmd}
	for _, a := range td.CmdArgs {
		parts = append(parts, a.String())
	}
	if in := strings.Join(strings.Fields(td.Input), " "); in != "" {
		parts = append(parts, in)
	}
	return strings.Join(parts, " ")
}

func TestScripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "scripts", "*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := runScript(t, path, Options{})
			checkInvariants(t, s.all, s.raws)
			// Replaying the same log from scratch gives the same bytes.
			again := newScript(t, Options{})
			for _, line := range s.lines {
				again.run(line)
			}
			if len(again.all) != len(s.all) {
				t.Fatalf("replay gave %d outputs, first run %d", len(again.all), len(s.all))
			}
			for i := range again.all {
				a, _ := again.all[i].Event.Marshal()
				b, _ := s.all[i].Event.Marshal()
				if string(a) != string(b) || again.all[i].Subject != s.all[i].Subject {
					t.Fatalf("replay output %d differs:\n%s\n%s", i, render(again.all[i]), render(s.all[i]))
				}
			}
		})
	}
}

// checkInvariants: every action is decided at most once; every output
// validates as its kind; ids are unique; every request and decision names
// the digest of the action record it is about (raws[n-1] is record n).
func checkInvariants(t *testing.T, outs []processors.Output, raws [][]byte) {
	t.Helper()
	ids := map[string]bool{}
	decided := map[string]bool{}
	for _, o := range outs {
		if ids[o.Event.ID] {
			t.Errorf("output id %s twice", o.Event.ID)
		}
		ids[o.Event.ID] = true
		b, err := o.Event.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		d, err := events.DecodeDerived(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("output %s does not validate: %v", d.ID, err)
		}
		if d.Kind == events.KindGateRequested {
			gr, _ := events.DerivedDataAs[events.GateRequested](&d)
			if want := events.Digest(raws[gr.LogSeq-1]); gr.Digest != want {
				t.Errorf("%s: request for %s names digest %s, the record at log seq %d is %s", d.ID, gr.ActionID, gr.Digest, gr.LogSeq, want)
			}
		}
		if d.Kind == events.KindGateDecided {
			gd, _ := events.DerivedDataAs[events.GateDecided](&d)
			if want := events.Digest(raws[gd.LogSeq-1]); gd.Digest != want {
				t.Errorf("%s: decision on %s names digest %s, the record at log seq %d is %s", d.ID, gd.ActionID, gd.Digest, gd.LogSeq, want)
			}
			key := fmt.Sprintf("%s@%d", gd.ActionID, gd.LogSeq)
			if decided[key] {
				t.Errorf("action %s decided twice", key)
			}
			decided[key] = true
		}
	}
}
