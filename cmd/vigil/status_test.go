package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatus: down without a server (exit 1, saying what to do), up with
// one (exit 0, its URL and log length), --json.
func TestStatus(t *testing.T) {
	empty := t.TempDir()
	out, stderr, code := runGate(t, "", "status", "--data", empty)
	if code != 1 || !strings.Contains(stderr, "Vigil is not up") || !strings.Contains(stderr, "vigil serve --data "+empty) {
		t.Fatalf("status (none): exit %d\n%s%s", code, out, stderr)
	}
	_, dir := startGateNode(t)
	out, stderr, code = runGate(t, "", "status", "--data", dir, "--wait", "30s")
	if code != 0 || !strings.Contains(out, "Vigil is up on nats://127.0.0.1:") || !strings.Contains(out, "log: 0 events") {
		t.Fatalf("status (up): exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = runGate(t, "", "status", "--data", dir, "--json")
	var st serverStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Up || st.PID == 0 || st.LogEvents == nil {
		t.Fatalf("status --json: exit %d %s", code, out)
	}
}

// TestGateTimeoutShowsLevel: `vigil gate`'s timeout output carries the
// level and reasons of the gate's request.
func TestGateTimeoutShowsLevel(t *testing.T) {
	_, dir := startGateNode(t)
	out, stderr, code := runGate(t, `{"id":"t-level","conversation":"c1","data":{"tool":"bash","args":{"command":"rm -rf /"}}}`, "gate", "--data", dir, "--timeout", "1s")
	var res struct {
		Outcome string            `json:"outcome"`
		Level   string            `json:"level"`
		Reasons []json.RawMessage `json:"reasons"`
	}
	if code != 3 || json.Unmarshal([]byte(out), &res) != nil || res.Outcome != "deny" || res.Level != "HIGH" || len(res.Reasons) == 0 {
		t.Fatalf("gate timeout: exit %d\n%s%s", code, out, stderr)
	}
}

// TestScoreExitCodes: 3 for HIGH, 0 below, 1 on an error, as --help says.
func TestScoreExitCodes(t *testing.T) {
	if _, _, code := runGate(t, "", "score", "rm -rf /"); code != 3 {
		t.Fatalf("score HIGH: exit %d", code)
	}
	if _, _, code := runGate(t, "", "score", "ls -la"); code != 0 {
		t.Fatalf("score LOW: exit %d", code)
	}
	if _, _, code := runGate(t, "", "score"); code != 1 {
		t.Fatalf("score without a command: exit %d", code)
	}
	out, _, _ := runGate(t, "", "score", "--help")
	if !strings.Contains(out, "Exit status: 0 when a COMMAND scores LOW, MEDIUM or UNKNOWN; 3 when it scores HIGH") {
		t.Fatalf("score --help does not document its exit status:\n%s", out)
	}
}

// TestHelpTexts: the hook's and deny's help say what they do.
func TestHelpTexts(t *testing.T) {
	out, _, code := runGate(t, "", "hook", "--help")
	if code != 0 || strings.Count(out, "\n") < 30 || !strings.Contains(out, "vigil hook install") || !strings.Contains(out, "--allow-below") {
		t.Fatalf("hook --help (exit %d):\n%s", code, out)
	}
	var b strings.Builder
	code = run(t.Context(), []string{"hook", "claude-code", "--help"}, strings.NewReader(""), &b, &b)
	if code != 0 || !strings.Contains(b.String(), "--max-output") {
		t.Fatalf("hook claude-code --help (the fast path; exit %d):\n%s", code, b.String())
	}
	out, _, _ = runGate(t, "", "deny", "--help")
	if !strings.Contains(out, "vigil pending") || !strings.Contains(out, "Exit status") || !strings.Contains(out, "deny rule") {
		t.Fatalf("deny --help:\n%s", out)
	}
}
