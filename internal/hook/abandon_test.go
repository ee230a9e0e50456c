package hook

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// pendingIDs lists what vigil pending shows, as a person would see it.
func pendingIDs(t *testing.T, dir string) []string {
	t.Helper()
	cl, err := client.Connect(context.Background(), client.Options{DataDir: dir, Role: natsutil.RoleApprover, Name: "person"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ps, err := cl.Pending(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	return ids
}

func waitPending(t *testing.T, dir, id string, want bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		has := strings.Contains(strings.Join(pendingIDs(t, dir), " "), id)
		if has == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("action %s pending=%v, want %v", id, has, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	stop := []byte(`{"session_id":"3e8a1b2c-9d0f-4e5a-8b7c-6d5e4f3a2b1c","hook_event_name":"Stop","cwd":"/tmp"}`)
	if !strings.Contains(string(payload), `"3e8a1b2c-9d0f-4e5a-8b7c-6d5e4f3a2b1c"`) {
		t.Skip("fixture's session id changed")
	}
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
