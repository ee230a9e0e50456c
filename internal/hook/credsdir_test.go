package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// TestCredsDirOutsideDataIsProtected: a node whose credentials directory
// is not DATA/creds (`vigil serve --creds-dir`, here a directory whose
// name says nothing of Vigil) names it in serve.json; the hook reads it
// there (Self.AddServe), and an agent's `cat DIR/approver.token`, a Read
// tool call of it and a write into it are HIGH self-protection findings:
// asked in Claude Code's default mode, denied with --on-pending deny. The
// agent's own agent.creds there stays as it was.
func TestCredsDirOutsideDataIsProtected(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(t.TempDir(), "fleet-keys")
	n, err := node.Start(context.Background(), node.Config{
		DataDir: dir, CredsDir: keys, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	if _, err := os.Stat(filepath.Join(keys, "approver.nk")); err != nil {
		t.Fatalf("the node keeps no approver seed in --creds-dir: %v", err)
	}
	var self Self
	self.AddServe(dir)
	if len(self.Creds) != 1 || self.Creds[0] != keys {
		t.Fatalf("Self.Creds = %q, want [%s] (from serve.json)", self.Creds, keys)
	}
	call := func(t *testing.T, id, tool string, input map[string]any, onPending string) string {
		t.Helper()
		payload, err := json.Marshal(map[string]any{"session_id": "creds-dir", "cwd": t.TempDir(), "permission_mode": "default",
			"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": id})
		if err != nil {
			t.Fatal(err)
		}
		o := liveOptions(dir, &recordingGater{}, time.Second, time.Now())
		o.Self, o.OnPending = self, onPending
		var out bytes.Buffer
		if code := Run(context.Background(), ClaudeCode, bytes.NewReader(payload), &out, o); code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
		return out.String()
	}
	token := filepath.Join(keys, "approver.token")
	for _, c := range []struct {
		name, tool string
		input      map[string]any
		rule       string
	}{
		{"cat", "Bash", map[string]any{"command": "cat " + token}, "selfprotect/vigil-credential-access"},
		{"read", "Read", map[string]any{"file_path": token}, "selfprotect/vigil-credential-access"},
		{"seed", "Bash", map[string]any{"command": "base64 -w0 " + filepath.Join(keys, "admin.nk")}, "selfprotect/vigil-credential-access"},
		{"write", "Bash", map[string]any{"command": "echo x > " + token}, "selfprotect/vigil-tamper"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ans := call(t, "toolu_01CREDSDIRASK"+strings.ToUpper(c.name), c.tool, c.input, "")
			if !strings.Contains(ans, `"permissionDecision":"ask"`) || !strings.Contains(ans, "HIGH-risk action") || !strings.Contains(ans, c.rule) {
				t.Errorf("default mode: %s", ans)
			}
			ans = call(t, "toolu_01CREDSDIRDENY"+strings.ToUpper(c.name), c.tool, c.input, Deny)
			if !strings.Contains(ans, `"permissionDecision":"deny"`) || !strings.Contains(ans, c.rule) || strings.Contains(ans, "vigil approve") {
				t.Errorf("--on-pending deny: %s", ans)
			}
		})
	}
	// The agent's own credential in the same directory is not a person's
	// (the HTTP tokens are written when the API starts; the names are
	// judged, the files need not exist).
	ans := call(t, "toolu_01CREDSDIRAGENT", "Bash", map[string]any{"command": "cat " + filepath.Join(keys, "agent.token")}, Deny)
	if strings.Contains(ans, "selfprotect/") {
		t.Errorf("cat agent.creds: %s", ans)
	}
}
