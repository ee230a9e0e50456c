package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden")

var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func testIDs() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("01JDHOOKTEST%014d", n)
	}
}

// outcomeGater answers every gate with a fixed outcome; it stands in for a
// server in the golden tests, which test the mapping and the answers (the
// end-to-end test runs the real thing).
type outcomeGater struct {
	outcome  string // allow, deny, pending
	appended []events.Event
	// level and by, when set, replace an allow's LOW and "mode".
	level events.Risk
	by    events.DecidedBy
}

func (g *outcomeGater) GateAndWait(ctx context.Context, ev events.Event, o *client.GateOptions) (client.GateResult, error) {
	g.appended = append(g.appended, ev)
	reasons := []events.Reason{{Analyzer: "shell", Rule: "recursive-delete", Detail: "rm -rf on /", Level: events.RiskHigh}}
	switch g.outcome {
	case "allow":
		res := client.GateResult{ID: ev.ID, Seq: 7, Outcome: events.OutcomeAllow, By: events.ByMode, Level: events.RiskLow}
		if g.level != "" {
			res.Level = g.level
		}
		if g.by != "" {
			res.By = g.by
		}
		return res, nil
	case "deny":
		return client.GateResult{ID: ev.ID, Seq: 7, Outcome: events.OutcomeDeny, By: events.ByRule, Level: events.RiskHigh,
			Reasons: reasons, Reason: "deny rule no-root: never delete the root"}, nil
	}
	// Pending: the gate asks a person (as client.GateAndWait reports it),
	// and the wait runs out; the timed-out result carries no level, as
	// the real client's does not.
	if o.OnRequested != nil {
		o.OnRequested(events.GateRequested{ActionID: ev.ID, LogSeq: 7, Level: events.RiskHigh, Reasons: reasons})
	}
	<-ctx.Done()
	if o.Withdraw {
		g.appended = append(g.appended, events.Event{ID: ev.ID + ":withdrawn", Kind: events.KindObservation,
			Data: map[string]any{"action_id": ev.ID, "status": "withdrawn"}})
	}
	return client.GateResult{ID: ev.ID, Seq: 7, Outcome: events.OutcomeDeny, By: events.ByTimeout, Waited: true},
		fmt.Errorf("wrapped: %w: %w", client.ErrNoDecision, ctx.Err())
}

func (g *outcomeGater) Append(ctx context.Context, ev events.Event) (client.Result, error) {
	g.appended = append(g.appended, ev)
	return client.Result{ID: ev.ID, Seq: 8}, nil
}

// runWith runs the hook on payload with a gater answering outcome ("" for
// Vigil unreachable).
func runWith(t *testing.T, clientName string, payload []byte, outcome string, o Options) (string, int, *outcomeGater) {
	t.Helper()
	g := &outcomeGater{outcome: outcome}
	o.Now = func() time.Time { return testNow }
	o.NewID = testIDs()
	if o.Budget == 0 {
		o.Budget = 20 * time.Millisecond
	}
	o.Connect = func(ctx context.Context) (Gater, func(), error) {
		if outcome == "" {
			return nil, nil, errors.New("no Vigil server: no /tmp/vigil/serve.json")
		}
		return g, func() {}, nil
	}
	var out bytes.Buffer
	code := Run(context.Background(), clientName, bytes.NewReader(payload), &out, o)
	return out.String(), code, g
}

func TestGolden(t *testing.T) {
	for _, cl := range Clients {
		paths, _ := filepath.Glob(filepath.Join("testdata", cl, "*.json"))
		if len(paths) == 0 {
			t.Fatalf("no payloads for %s", cl)
		}
		for _, path := range paths {
			name := cl + "/" + strings.TrimSuffix(filepath.Base(path), ".json")
			t.Run(name, func(t *testing.T) {
				payload, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				call, err := Parse(cl, payload, Env{Now: testNow, NewID: testIDs()})
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				var b strings.Builder
				fmt.Fprintf(&b, "client %s, event %s, phase %s, tool %q, conversation %s\n", call.Client, call.EventName, phaseName(call.Phase), call.ToolName, call.Conversation)
				if call.Phase != PhaseOther {
					js, err := json.MarshalIndent(call.Event, "", "  ")
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&b, "vigil event:\n%s\n", js)
				}
				outcomes := []string{"allow", "deny", "pending", ""}
				if call.Phase != PhaseBefore {
					outcomes = []string{"allow", ""}
				}
				for _, oc := range outcomes {
					label := oc
					if oc == "" {
						label = "unreachable"
					}
					out, code, g := runWith(t, cl, payload, oc, Options{})
					fmt.Fprintf(&b, "answer when %s (exit %d): %s", label, code, out)
					if call.Phase != PhaseBefore {
						continue
					}
					var kinds []string
					for _, ev := range g.appended[min(1, len(g.appended)):] {
						kinds = append(kinds, fmt.Sprintf("%s %s", ev.Kind, ev.Data["status"]))
					}
					if len(kinds) > 0 {
						fmt.Fprintf(&b, "  then appended: %s\n", strings.Join(kinds, "; "))
					}
				}
				golden := strings.TrimSuffix(path, ".json") + ".golden"
				if *update {
					if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/hook -update)", err)
				}
				if b.String() != string(want) {
					t.Errorf("%s differs (run with -update if intended):\n%s", golden, b.String())
				}
			})
		}
	}
}

func phaseName(p Phase) string {
	return [...]string{"other", "before", "after", "start", "end"}[p]
}

// TestFailClosed: whatever goes wrong before an answer, a before-hook
// answers deny (or exits 2), never allow.
func TestFailClosed(t *testing.T) {
	for _, cl := range Clients {
		for _, bad := range []string{"", "not json", "[1,2]", `"PreToolUse"`, "{\"hook_event_name\":\"PreToolUse\"\x00"} {
			out, code, _ := runWith(t, cl, []byte(bad), "", Options{})
			if code == 2 {
				continue
			}
			if strings.Contains(out, `"allow"`) || !strings.Contains(out, "deny") {
				t.Errorf("%s, payload %q: answer %s (exit %d) is not a deny", cl, bad, out, code)
			}
		}
	}
	// A panic inside the gater is caught and denied.
	o := Options{Now: func() time.Time { return testNow }, NewID: testIDs(), Budget: time.Second,
		Connect: func(ctx context.Context) (Gater, func(), error) { panic("boom") }}
	var out bytes.Buffer
	payload, _ := os.ReadFile(filepath.Join("testdata", ClaudeCode, "pre_bash.json"))
	code := Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, o)
	if code != 0 || !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
		t.Fatalf("panic: exit %d, answer %s", code, out.String())
	}
}

// TestOnUnreachable: the operator may choose ask or allow when Vigil is down.
func TestOnUnreachable(t *testing.T) {
	payload, _ := os.ReadFile(filepath.Join("testdata", ClaudeCode, "pre_bash.json"))
	for _, tc := range []struct{ opt, want string }{{Deny, "deny"}, {Ask, "ask"}, {Allow, "allow"}} {
		out, _, _ := runWith(t, ClaudeCode, payload, "", Options{OnUnreachable: tc.opt})
		if !strings.Contains(out, `"permissionDecision":"`+tc.want+`"`) {
			t.Errorf("--on-unreachable %s: %s", tc.opt, out)
		}
	}
	// Gemini cannot ask: ask falls back to deny.
	payload, _ = os.ReadFile(filepath.Join("testdata", Gemini, "before_shell.json"))
	out, _, _ := runWith(t, Gemini, payload, "", Options{OnUnreachable: Ask})
	if !strings.Contains(out, `"decision":"deny"`) {
		t.Errorf("gemini, --on-unreachable ask: %s", out)
	}
}

// TestOnPendingAndOnAllow covers the pending fallback and deferring allows.
func TestOnPendingAndOnAllow(t *testing.T) {
	payload, _ := os.ReadFile(filepath.Join("testdata", ClaudeCode, "pre_bash.json"))
	out, _, g := runWith(t, ClaudeCode, payload, "pending", Options{OnPending: Deny})
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("--on-pending deny: %s", out)
	}
	if last := g.appended[len(g.appended)-1]; last.Kind != events.KindObservation || !strings.HasSuffix(last.ID, ":withdrawn") {
		t.Fatalf("--on-pending deny did not withdraw: %+v", g.appended)
	}
	out, _, _ = runWith(t, ClaudeCode, payload, "allow", Options{OnAllow: Defer})
	if strings.TrimSpace(out) != "{}" {
		t.Fatalf("--on-allow client: %s", out)
	}
}

// TestAllowBelow: Vigil's allow skips the client's own prompt only below
// AllowBelow (default MEDIUM) or when a person decided in Vigil; the rest
// is left to the client's rules, so the hook never supervises less than
// the client alone.
func TestAllowBelow(t *testing.T) {
	payload, _ := os.ReadFile(filepath.Join("testdata", ClaudeCode, "pre_bash.json"))
	for _, tc := range []struct {
		level      events.Risk
		by         events.DecidedBy
		allowBelow events.Risk
		want       string // allow, or "" for the client's own rules
	}{
		{events.RiskLow, events.ByRule, "", "allow"},
		{events.RiskMedium, events.ByRule, "", ""},
		{events.RiskHigh, events.ByMode, "", ""},
		{events.RiskUnknown, events.ByRule, "", ""},
		{events.RiskMedium, events.ByRule, events.RiskHigh, "allow"},
		{events.RiskLow, events.ByRule, events.RiskLow, ""},
		{events.RiskHigh, events.ByHuman, "", "allow"},
		{events.RiskMedium, events.ByAllowlist, "", "allow"},
		{events.RiskHigh, events.BySession, events.RiskLow, "allow"},
	} {
		g := &outcomeGater{outcome: "allow", level: tc.level, by: tc.by}
		o := Options{Now: func() time.Time { return testNow }, NewID: testIDs(), Budget: time.Minute, AllowBelow: tc.allowBelow,
			Connect: func(ctx context.Context) (Gater, func(), error) { return g, func() {}, nil }}
		var out bytes.Buffer
		Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, o)
		got := ""
		if strings.Contains(out.String(), `"permissionDecision":"allow"`) {
			got = "allow"
		} else if strings.TrimSpace(out.String()) != "{}" {
			t.Errorf("%s by %s: answer %s is neither allow nor the client's own rules", tc.level, tc.by, out.String())
		}
		if got != tc.want {
			t.Errorf("%s by %s, allow below %q: answer %s, want %q", tc.level, tc.by, tc.allowBelow, out.String(), tc.want)
		}
	}
}

// TestLinkAfterToBefore: for clients without call ids, the after hook
// finds its action through the state directory.
func TestLinkAfterToBefore(t *testing.T) {
	dir := t.TempDir()
	before, _ := os.ReadFile(filepath.Join("testdata", Gemini, "before_shell.json"))
	after, _ := os.ReadFile(filepath.Join("testdata", Gemini, "after_shell.json"))
	_, _, g1 := runWith(t, Gemini, before, "allow", Options{StateDir: dir})
	_, _, g2 := runWith(t, Gemini, after, "allow", Options{StateDir: dir})
	if len(g1.appended) != 1 || len(g2.appended) != 1 {
		t.Fatalf("appended %d and %d events", len(g1.appended), len(g2.appended))
	}
	if got, want := g2.appended[0].Data["action_id"], g1.appended[0].ID; got != want {
		t.Fatalf("after hook linked to %v, want %v", got, want)
	}
}
