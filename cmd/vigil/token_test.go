package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// TestTokenCommands: vigil token create prints a token once, list never
// shows it, the token has its role's rights, revoke makes the node refuse
// it at once, and only an admin token manages tokens.
func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	n, err := node.Start(t.Context(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", HTTPListen: "127.0.0.1:0", Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	get := func(tok, path string) int {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", n.Info().HTTPURL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	out, stderr, code := runCLI(t, "", "token", "create", "--data", dir, "--role", "approver", "--name", "alice's phone", "--json")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	var created struct {
		ID, Role, Name, Hint, Token string
		Applied                     bool
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || !natsutil.ValidToken(created.Token) || !created.Applied || created.Role != "approver" {
		t.Fatalf("create printed %s (%v)", out, err)
	}
	if got := get(created.Token, "/v1/pending"); got != http.StatusOK {
		t.Fatalf("pending with the new token: %d", got)
	}
	if got := get(created.Token, "/v1/tokens"); got != http.StatusForbidden {
		t.Fatalf("an approver token lists tokens: %d", got)
	}

	out, stderr, code = runCLI(t, "", "token", "list", "--data", dir)
	if code != 0 || !strings.Contains(out, created.ID) || !strings.Contains(out, `"hint": "`+created.Hint+`"`) || strings.Contains(out, created.Token[len(natsutil.TokenPrefix):]) {
		t.Fatalf("list: exit %d %s %s", code, out, stderr)
	}
	out, _, _ = runCLI(t, "", "token", "list", "--data", dir, "--role", "agent")
	if strings.Contains(out, created.ID) {
		t.Fatalf("list --role agent shows an approver token: %s", out)
	}

	// Only an admin token manages tokens.
	approverFile := filepath.Join(t.TempDir(), "approver.token")
	os.WriteFile(approverFile, []byte(created.Token+"\n"), 0o600)
	_, stderr, code = runCLI(t, "", "token", "create", "--data", dir, "--role", "admin", "--token-file", approverFile)
	if code != 1 || !strings.Contains(stderr, "admin") {
		t.Fatalf("create with an approver token: exit %d %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "token", "create", "--data", dir)
	if code != 1 || !strings.Contains(stderr, "--role") {
		t.Fatalf("create without --role: exit %d %s", code, stderr)
	}

	out, stderr, code = runCLI(t, "", "token", "revoke", "--data", dir, created.ID, "--reason", "phone lost")
	if code != 0 || !strings.Contains(out, `"applied": true`) {
		t.Fatalf("revoke: exit %d %s %s", code, out, stderr)
	}
	if got := get(created.Token, "/v1/pending"); got != http.StatusUnauthorized {
		t.Fatalf("pending with the revoked token: %d, want 401", got)
	}
	_, stderr, code = runCLI(t, "", "token", "revoke", "--data", dir, created.ID)
	if code != 1 || !strings.Contains(stderr, "revoked") {
		t.Fatalf("revoke twice: exit %d %s", code, stderr)
	}
	out, _, _ = runCLI(t, "", "token", "list", "--data", dir, "--all")
	if !strings.Contains(out, `"revoked_by": "http:admin"`) {
		t.Fatalf("list --all: %s", out)
	}
}
