package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/bench"
	"github.com/vigil-dev/vigil/internal/configlog"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors/gate"
)

// runGate runs the CLI as run does, with this commands.
func runGate(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}
	root := newRootCmd(c)
	root.SetArgs(args)
	root.SetIn(c.stdin)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(t.Context())
	code := 0
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil {
				errb.WriteString("vigil: " + ee.err.Error() + "\n")
			}
			code = ee.code
		} else {
			errb.WriteString("vigil: " + err.Error() + "\n")
			code = 1
		}
	}
	return out.String(), errb.String(), code
}

// startGateNode starts a node with the gate and the expiry timer.
func startGateNode(t *testing.T) (*node.Node, string) {
	t.Helper()
	dir := t.TempDir()
	s := testnode.StartNode(t, testnode.Options{Dir: dir, Processors: testnode.Gate(gate.Options{}), Expiry: true})
	return s, dir
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigSetShow(t *testing.T) {
	_, dir := startGateNode(t)
	// With no config event, the default is in force, and show says so.
	out, stderr, code := runGate(t, "", "config", "show", "--data", dir)
	if code != 0 || !strings.Contains(out, "built-in default: no config event was ever appended") ||
		!strings.Contains(out, "mode: risky") || !strings.Contains(out, "threshold: HIGH") {
		t.Fatalf("show (default): exit %d\n%s%s", code, out, stderr)
	}
	// An incoherent config is refused, naming every field; nothing is appended.
	bad := writeFile(t, dir, "bad.yaml", `
confirmation:
  mode: never
  threshold: HIGH
analyzers:
  llm_hint: true
deny_rules:
  - name: prod
    expr: command.contains("prod")
    action: ask
`)
	out, stderr, code = runGate(t, "", "config", "set", bad, "--data", dir)
	if code != 1 || !strings.Contains(stderr, "confirmation.mode") || !strings.Contains(stderr, "confirmation.threshold") ||
		!strings.Contains(stderr, "deny_rules[0].action") || !strings.Contains(stderr, "nothing appended") {
		t.Fatalf("set (bad): exit %d\n%s%s", code, out, stderr)
	}
	// A misspelt field is an error, not silently dropped.
	typo := writeFile(t, dir, "typo.yaml", "confirmation:\n  mode: risky\nanalysers:\n  rules: true\n")
	if _, stderr, code = runGate(t, "", "config", "set", typo, "--data", dir); code != 1 || !strings.Contains(stderr, "analysers") {
		t.Fatalf("set (typo): exit %d %s", code, stderr)
	}
	// A policy rule that does not compile is refused.
	cel := writeFile(t, dir, "cel.json", `{"analyzers":{"rules":true,"policy":true},"confirmation":{"mode":"risky"},"policy_rules":[{"name":"x","expr":"commands.exists(c, c ==","level":"HIGH"}]}`)
	if _, stderr, code = runGate(t, "", "config", "set", cel, "--data", dir); code != 1 || !strings.Contains(stderr, `"x"`) {
		t.Fatalf("set (cel): exit %d %s", code, stderr)
	}
	// A good one is appended; the version is filled in.
	good := writeFile(t, dir, "good.yaml", `
analyzers: {rules: true, llm_hint: true}
confirmation: {mode: risky, threshold: MEDIUM}
approval_timeout: 2m
`)
	out, stderr, code = runGate(t, "", "config", "set", good, "--data", dir, "--json")
	var res configSetResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Appended || res.Version != 1 {
		t.Fatalf("set (good): exit %d\n%s%s", code, out, stderr)
	}
	out, _, _ = runGate(t, "", "config", "show", "--data", dir, "--json")
	var shown configlog.Shown
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Source != "global" || shown.Config.Confirmation.Threshold != events.RiskMedium || !shown.SecurityRisk.Ask || shown.Seq != res.Seq {
		t.Fatalf("show = %+v", shown)
	}
	// At a position before it, the default was in force.
	out, _, _ = runGate(t, "", "config", "show", "--data", dir, "--at", "0")
	if !strings.Contains(out, "threshold: MEDIUM") {
		t.Fatalf("show --at 0 (now): %s", out)
	}
	// A version that does not increase is refused.
	old := writeFile(t, dir, "old.yaml", "version: 1\nanalyzers: {rules: true}\nconfirmation: {mode: always}\n")
	if _, stderr, code = runGate(t, "", "config", "set", old, "--data", dir); code != 1 || !strings.Contains(stderr, "does not increase") {
		t.Fatalf("set (old version): exit %d %s", code, stderr)
	}
	// serve --config appends only a config that differs from the one in force.
	admin, err := client.Connect(t.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var w bytes.Buffer
	if err := applyConfigFile(t.Context(), admin, good, &w); err != nil || !strings.Contains(w.String(), "already matches") {
		t.Fatalf("serve --config (same): %v %s", err, w.String())
	}
	w.Reset()
	if err := applyConfigFile(t.Context(), admin, old, &w); err == nil {
		t.Fatalf("serve --config with a stale version was accepted: %s", w.String())
	}
	newer := writeFile(t, dir, "newer.yaml", "analyzers: {rules: true}\nconfirmation: {mode: always}\n")
	w.Reset()
	if err := applyConfigFile(t.Context(), admin, newer, &w); err != nil || !strings.Contains(w.String(), "config v2") {
		t.Fatalf("serve --config (new): %v %s", err, w.String())
	}
	out, _, _ = runGate(t, "", "config", "show", "--data", dir, "--at", "1")
	if !strings.Contains(out, "version: 1") {
		t.Fatalf("show --at 1: %s", out)
	}
	// A conversation config overrides the global one for it only.
	conv := writeFile(t, dir, "conv.yaml", "scope: conversation\nconversation: c-9\nanalyzers: {rules: true}\nconfirmation: {mode: risky, threshold: HIGH}\n")
	if _, stderr, code = runGate(t, "", "config", "set", conv, "--data", dir); code != 0 {
		t.Fatalf("set (conversation): %s", stderr)
	}
	out, _, _ = runGate(t, "", "config", "show", "--data", dir, "--conversation", "c-9")
	if !strings.Contains(out, "scope: conversation") || !strings.Contains(out, "mode: risky") {
		t.Fatalf("show --conversation: %s", out)
	}
	out, _, _ = runGate(t, "", "config", "show", "--data", dir)
	if !strings.Contains(out, "mode: always") {
		t.Fatalf("show (global after a conversation config): %s", out)
	}
}

func TestGateCLI(t *testing.T) {
	_, dir := startGateNode(t)
	cfg := writeFile(t, dir, "cfg.yaml", "analyzers: {rules: true}\nconfirmation: {mode: risky, threshold: HIGH}\ndeny_rules:\n  - {name: no-prod, expr: 'command.contains(\"prod-db\")', reason: production}\n")
	if _, stderr, code := runGate(t, "", "config", "set", cfg, "--data", dir); code != 0 {
		t.Fatal(stderr)
	}
	// Allowed: exit 0, JSON on stdout.
	out, stderr, code := runGate(t, `{"conversation":"c1","data":{"tool":"bash","args":{"command":"ls -la"}}}`, "gate", "--data", dir)
	var res client.GateResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Outcome != events.OutcomeAllow || res.ID == "" || res.Level == "" {
		t.Fatalf("gate ls: exit %d\n%s%s", code, out, stderr)
	}
	// Denied by a rule: exit 2.
	out, _, code = runGate(t, `{"id":"d1","conversation":"c1","data":{"tool":"bash","args":{"command":"psql prod-db"}}}`, "gate", "--data", dir)
	if code != 2 || !strings.Contains(out, `"by": "rule"`) {
		t.Fatalf("gate deny: exit %d %s", code, out)
	}
	// No decision within --timeout: exit 3, denied, and withdrawn.
	out, stderr, code = runGate(t, `{"id":"t1","conversation":"c1","data":{"tool":"bash","args":{"command":"rm -rf /"}}}`, "gate", "--data", dir, "--timeout", "300ms")
	if code != 3 || !strings.Contains(out, `"outcome": "deny"`) || !strings.Contains(stderr, "waiting for a person") {
		t.Fatalf("gate timeout: exit %d\n%s%s", code, out, stderr)
	}
	// Waiting: listed by pending, decided by approve.
	type gateRun struct {
		out  string
		code int
	}
	done := make(chan gateRun, 1)
	go func() {
		out, _, code := runGate(t, `{"id":"w1","conversation":"c1","data":{"tool":"bash","args":{"command":"rm -rf /"}}}`, "gate", "--data", dir)
		done <- gateRun{out, code}
	}()
	var ps []client.PendingAction
	testnode.Eventually(t, 10*time.Second, func() string {
		out, _, _ = runGate(t, "", "pending", "--data", dir, "--json")
		if ps = parsePendingLines(t, out); !slices.ContainsFunc(ps, func(p client.PendingAction) bool { return p.ID == "w1" }) {
			return fmt.Sprintf("w1 not pending: %+v", ps)
		}
		return ""
	})
	if len(ps) != 1 || ps[0].ID != "w1" || ps[0].Conversation != "c1" || ps[0].Command != "rm -rf /" || ps[0].Level != events.RiskHigh || len(ps[0].Reasons) == 0 {
		t.Fatalf("pending = %+v (t1 must not be listed: it was withdrawn)", ps)
	}
	if _, stderr, code := runGate(t, "", "approve", "nope", "--data", dir); code != 1 || !strings.Contains(stderr, "vigil pending") {
		t.Fatalf("approve unknown: exit %d %s", code, stderr)
	}
	out, stderr, code = runGate(t, "", "approve", "w1", "--scope", "always", "--reason", "maintenance", "--data", dir)
	if code != 0 || !strings.Contains(out, "always → allow (by human), allowlist entry al-") {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	g := <-done
	if g.code != 0 || !strings.Contains(g.out, `"verdict": "always"`) {
		t.Fatalf("waiting gate: exit %d %s", g.code, g.out)
	}
	// The allowlist entry allows the same shape anywhere, at once.
	out, _, code = runGate(t, `{"conversation":"c7","data":{"tool":"bash","args":{"command":"rm -rf /"}}}`, "gate", "--data", dir)
	if code != 0 || !strings.Contains(out, `"by": "allowlist"`) {
		t.Fatalf("gate after always: exit %d %s", code, out)
	}
	out, _, _ = runGate(t, "", "allowlist", "list", "--data", dir, "--json")
	var es []gate.Entry
	if err := json.Unmarshal([]byte(out), &es); err != nil || len(es) != 1 || es[0].ActionID != "w1" || es[0].Reason != "maintenance" {
		t.Fatalf("allowlist list: %s", out)
	}
	if out, stderr, code = runGate(t, "", "allowlist", "revoke", es[0].ID, "--data", dir); code != 0 {
		t.Fatalf("revoke: %s%s", out, stderr)
	}
	if _, stderr, code = runGate(t, "", "allowlist", "revoke", es[0].ID, "--data", dir); code != 1 || !strings.Contains(stderr, "no allowlist entry") {
		t.Fatalf("revoke again: exit %d %s", code, stderr)
	}
	// Revoked: it waits again. Walk the queue interactively: "d" denies.
	go func() {
		out, _, code := runGate(t, `{"id":"w2","conversation":"c1","data":{"tool":"bash","args":{"command":"rm -rf /"}}}`, "gate", "--data", dir)
		done <- gateRun{out, code}
	}()
	testnode.Eventually(t, 10*time.Second, func() string {
		out, _, _ = runGate(t, "", "pending", "--data", dir, "--json")
		if ps = parsePendingLines(t, out); len(ps) == 0 {
			return "w2 not pending"
		}
		return ""
	})
	out, stderr, code = runGate(t, "x\n\n", "approve", "--interactive", "--data", dir)
	if code != 0 || !strings.Contains(out, "answer o, s, a, d or q") || !strings.Contains(out, "w2: deny → deny (by human)") || !strings.Contains(out, "no more actions") {
		t.Fatalf("interactive approve: exit %d\n%s%s", code, out, stderr)
	}
	if g = <-done; g.code != 2 {
		t.Fatalf("denied gate: exit %d %s", g.code, g.out)
	}
	// Without a terminal and without an ID, approve says what to do.
	if _, stderr, code = runGate(t, "", "approve", "--data", dir); code != 1 || !strings.Contains(stderr, "give an action ID") {
		t.Fatalf("approve without ID: exit %d %s", code, stderr)
	}
}

// TestHookEndToEnd pipes Claude Code payloads through `vigil hook
// claude-code` against a real embedded node.
func TestHookEndToEnd(t *testing.T) {
	s, dir := startGateNode(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "internal", "hook", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// A harmless command: allowed.
	pre := strings.Replace(read("claude-code/pre_bash.json"), "rm -rf / --no-preserve-root", "git status", 1)
	pre = strings.Replace(pre, "toolu_01ABCDEF23456789abcdefGH", "toolu_01GITSTATUS", 1)
	out, stderr, code := runGate(t, pre, "hook", "claude-code", "--data", dir, "--budget", "5s")
	if code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("hook (git status): exit %d\n%s%s", code, out, stderr)
	}
	// rm -rf /: nobody answers within the budget, so Claude Code asks its
	// user; the user allows, the tool runs, and PostToolUse records it.
	pre = read("claude-code/pre_bash.json")
	out, stderr, code = runGate(t, pre, "hook", "claude-code", "--data", dir, "--budget", "500ms")
	if code != 0 || !strings.Contains(out, `"permissionDecision":"ask"`) || !strings.Contains(out, "cc-toolu_01ABCDEF23456789abcdefGH") || strings.Contains(out, "vigil approve") {
		t.Fatalf("hook (rm -rf /): exit %d\n%s%s", code, out, stderr)
	}
	post := strings.Replace(read("claude-code/post_bash.json"), "toolu_01PB000000000000000000pb", "toolu_01ABCDEF23456789abcdefGH", 1)
	out, stderr, code = runGate(t, post, "hook", "claude-code", "--data", dir)
	if code != 0 || strings.TrimSpace(out) != "{}" {
		t.Fatalf("hook (post): exit %d\n%s%s", code, out, stderr)
	}
	admin, err := s.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var gd events.GateDecided
	var secrets bool
	testnode.Eventually(t, 10*time.Second, func() string {
		natsutil.ReadStream(t.Context(), admin.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{events.GatePrefix + ">"}},
			func(r natsutil.RawRecord) error {
				d, _ := events.DecodeDerived(r.Data)
				if x, err := events.DerivedDataAs[events.GateDecided](&d); err == nil && d.Kind == events.KindGateDecided && x.ActionID == "cc-toolu_01ABCDEF23456789abcdefGH" {
					gd = x
				}
				return nil
			})
		if gd.ActionID == "" {
			return "no decision recorded for the hook's ask"
		}
		return ""
	})
	if gd.Outcome != events.OutcomeAllow || gd.By != events.ByClient || gd.Approver != "client:claude-code" {
		t.Fatalf("decision recorded for the hook's ask = %+v", gd)
	}
	admin.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		if r.Event.Kind == events.KindObservation && strings.Contains(r.Event.StringField("action_id"), "cc-toolu_01ABCDEF") {
			secrets = secrets || bytes.Contains(r.Raw, []byte("AWS_REGION"))
		}
		return nil
	})
	if !secrets {
		t.Fatal("the PostToolUse output was not recorded")
	}
	// Vigil down: deny (fail closed).
	out, _, code = runGate(t, pre, "hook", "claude-code", "--data", t.TempDir())
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "unreachable") {
		t.Fatalf("hook (no server): exit %d %s", code, out)
	}
	// A mistake in the hook's settings still denies.
	out, _, code = runGate(t, pre, "hook", "claude-code", "--data", dir, "--bugdet", "5s")
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("hook (bad flag): exit %d %s", code, out)
	}
	// Gemini: a dangerous command with no decision is denied and withdrawn.
	out, _, code = runGate(t, read("gemini/before_shell.json"), "hook", "gemini", "--data", dir, "--budget", "300ms")
	if code != 0 || !strings.Contains(out, `"decision":"deny"`) {
		t.Fatalf("hook gemini: exit %d %s", code, out)
	}
}

// TestBenchGateSmoke runs vigil bench gate briefly (a smoke test, never a
// timed assertion). VIGIL_BENCH_GATE="--rate 1000 --duration 10s" runs the
// real measurement through the same path and logs the JSON.
func TestBenchGateSmoke(t *testing.T) {
	args := []string{"bench", "gate", "--rate", "200", "--duration", "1s", "--warmup", "200ms", "--durability", "interval", "--json"}
	if extra := os.Getenv("VIGIL_BENCH_GATE"); extra != "" {
		args = append([]string{"bench", "gate", "--json"}, strings.Fields(extra)...)
	}
	out, stderr, code := runGate(t, "", args...)
	if code != 0 {
		t.Fatalf("bench gate: exit %d\n%s%s", code, out, stderr)
	}
	var res bench.GateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Actions == 0 || res.Errors != 0 || res.P50Ms <= 0 || res.AchievedRate <= 0 || res.Denied == 0 || res.Allowed == 0 {
		t.Fatalf("bench gate = %+v", res)
	}
	t.Logf("%s", out)
}

// parsePendingLines reads `vigil pending --json`: one JSON object per line.
func parsePendingLines(t *testing.T, out string) []client.PendingAction {
	t.Helper()
	var ps []client.PendingAction
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var p client.PendingAction
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("pending --json line %q: %v", line, err)
		}
		ps = append(ps, p)
	}
	return ps
}
