package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// waitPending waits until vigil pending, as a person sees it, lists
// action id (want) or no longer does.
func waitPending(t *testing.T, dir, id string, want bool) {
	t.Helper()
	cl, err := client.Connect(context.Background(), client.Options{DataDir: dir, Role: natsutil.RoleApprover, Name: "person"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Each read of vigil pending leaves a consumer on the server for a
	// minute: look every 200ms, not at the wait's own pace.
	var last time.Time
	why := "not looked yet"
	wait.Eventually(t, 20*time.Second, func() string {
		if time.Since(last) < 200*time.Millisecond {
			return why
		}
		last = time.Now()
		why = pendingWhy(cl, id, want)
		return why
	})
}

// pendingWhy says why vigil pending does not yet show what is wanted.
func pendingWhy(cl *client.Client, id string, want bool) string {
	ps, err := cl.Pending(context.Background(), "")
	if err != nil {
		return "vigil pending: " + err.Error()
	}
	if has := slices.ContainsFunc(ps, func(p client.PendingAction) bool { return p.ID == id }); has != want {
		return fmt.Sprintf("action %s pending=%v, want %v", id, has, want)
	}
	return ""
}

// TestHandOffNotRunIsAbandoned: an action handed off to Claude Code's
// prompt that never ran (refused there or in -p) leaves vigil pending at
// the turn's Stop instead of staying approvable.
func TestHandOffNotRunIsAbandoned(t *testing.T) {
	_, dir := startLiveNode(t)
	state := t.TempDir()
	payload := claudePayload(t, "toolu_01ABANDON00000000000000000", "rm -rf / --no-preserve-root")
	g := &recordingGater{}
	o := liveOptions(dir, g, time.Second, time.Now())
	o.StateDir = state
	var out bytes.Buffer
	Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, o)
	if !strings.Contains(out.String(), `"permissionDecision":"ask"`) {
		t.Fatalf("answer: %s", out.String())
	}
	id := "cc-toolu_01ABANDON00000000000000000"
	waitPending(t, dir, id, true)
	var fixture struct {
		Session string `json:"session_id"`
	}
	if err := json.Unmarshal(payload, &fixture); err != nil || fixture.Session == "" {
		t.Fatalf("fixture has no session_id: %v", err)
	}
	stop := []byte(`{"session_id":"` + fixture.Session + `","hook_event_name":"Stop","cwd":"/tmp"}`)
	out.Reset()
	o2 := liveOptions(dir, &recordingGater{}, time.Second, time.Now())
	o2.StateDir = state
	if code := Run(context.Background(), ClaudeCode, bytes.NewReader(stop), &out, o2); code != 0 || strings.TrimSpace(out.String()) != "{}" {
		t.Fatalf("stop: exit %d %s", code, out.String())
	}
	waitPending(t, dir, id, false)
}

// TestBypassModeSelfApprovalDenied: in bypassPermissions the agent's own
// `vigil approve` is answered deny when nobody decides (an ask would be
// dropped by the client), and its text never names the approve command.
func TestBypassModeSelfApprovalDenied(t *testing.T) {
	_, dir := startLiveNode(t)
	payload := claudePayload(t, "toolu_01SELFAPPROVE000000000000", "vigil --data "+dir+" approve cc-x --scope always")
	payload = bytes.Replace(payload, []byte(`"permission_mode":"default"`), []byte(`"permission_mode":"bypassPermissions"`), 1)
	if !bytes.Contains(payload, []byte("bypassPermissions")) {
		t.Fatalf("fixture has no permission_mode default: %s", payload)
	}
	g := &recordingGater{}
	var out bytes.Buffer
	Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, liveOptions(dir, g, time.Second, time.Now()))
	ans := out.String()
	if !strings.Contains(ans, `"permissionDecision":"deny"`) || strings.Contains(ans, "vigil approve") || !strings.Contains(ans, "selfprotect/") {
		t.Fatalf("answer: %s", ans)
	}
}

// TestCursorHandOffAbandonedAtStop: Cursor with --on-pending ask hands a
// pending action to its own prompt; one that ran (its afterShellExecution
// came) stays as it is, one that did not leaves vigil pending at Cursor's
// stop. Cursor's calls carry no id: the state files link them.
func TestCursorHandOffAbandonedAtStop(t *testing.T) {
	_, dir := startLiveNode(t)
	state := t.TempDir()
	conv := `"conversation_id":"c-abandon","generation_id":"g1","workspace_roots":["/tmp/app"],"cwd":"/tmp/app"`
	ids := testIDs()
	run := func(payload string) string {
		t.Helper()
		o := liveOptions(dir, &recordingGater{}, time.Second, time.Now())
		o.StateDir, o.OnPending, o.NewID = state, Ask, ids
		var out bytes.Buffer
		if code := Run(context.Background(), Cursor, strings.NewReader(payload), &out, o); code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
		return out.String()
	}
	ask := func(cmd string) string {
		t.Helper()
		ans := run(`{` + conv + `,"hook_event_name":"beforeShellExecution","command":"` + cmd + `"}`)
		if !strings.Contains(ans, `"permission":"ask"`) {
			t.Fatalf("%s: %s", cmd, ans)
		}
		return ans
	}
	ask("rm -rf /srv/ran")
	ranID := lastCall(t, state, "rm -rf /srv/ran")
	run(`{` + conv + `,"hook_event_name":"afterShellExecution","command":"rm -rf /srv/ran","output":"","duration":3}`)
	ask("rm -rf /srv/refused")
	refusedID := lastCall(t, state, "rm -rf /srv/refused")
	waitPending(t, dir, refusedID, true)
	if ans := run(`{` + conv + `,"hook_event_name":"stop","status":"completed","loop_count":0}`); strings.TrimSpace(ans) != "{}" {
		t.Fatalf("stop: %s", ans)
	}
	waitPending(t, dir, refusedID, false)
	if ranID == refusedID {
		t.Fatalf("both calls got action %s", ranID)
	}
}

// lastCall is the action id the before hook remembered for a Cursor
// shell command (the state file's last line for it).
func lastCall(t *testing.T, state, cmd string) string {
	t.Helper()
	id, ok := lookupCall(state, Call{Client: Cursor, Conversation: conversationToken(Cursor, "c-abandon"), Digest: digest("shell", cmd)})
	if !ok {
		t.Fatalf("no state line for %q", cmd)
	}
	return id
}
