package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
)

// TestCredsCreate: `vigil creds create --role R` makes a fleet's seeds
// before any server runs, writes R's .creds file (0600, never
// overwritten), and a server started on that creds directory accepts it
// with R's permissions.
func TestCredsCreate(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	out, stderr, code := runCLI(t, "", "creds", "create", "--role", "agent", "--creds-dir", creds, "--json")
	if code != 0 {
		t.Fatalf("creds create: exit %d: %s", code, stderr)
	}
	var res map[string]string
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	file := filepath.Join(creds, "agent.creds")
	if res["file"] != file || !strings.HasPrefix(res["public_key"], "U") || res["role"] != "agent" {
		t.Fatalf("creds create printed %v", res)
	}
	for _, r := range natsutil.Roles {
		if _, err := os.Stat(datadir.CredsAt(creds).Seed(r)); err != nil {
			t.Errorf("seed of %s not made: %v", r, err)
		}
		if _, err := os.Stat(datadir.CredsAt(creds).Token(r)); err != nil && r != natsutil.RoleService {
			t.Errorf("token of %s not made: %v", r, err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v", file, fi.Mode().Perm())
	}
	if !strings.Contains(string(b), "-----BEGIN USER NKEY SEED-----\nSU") || strings.Contains(string(b), "JWT") {
		t.Fatalf("not a seed-only .creds file:\n%s", b)
	}
	if _, stderr, code := runCLI(t, "", "creds", "create", "--role", "agent", "--creds-dir", creds); code == 0 || !strings.Contains(stderr, "not overwritten") {
		t.Fatalf("second create: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "creds", "create", "--role", "root", "--creds-dir", creds); code == 0 || !strings.Contains(stderr, "agent, runtime") {
		t.Fatalf("unknown role: exit %d: %s", code, stderr)
	}
	admin, _, code := runCLI(t, "", "creds", "create", "--role", "admin", "--creds-dir", creds, "--out", "-")
	if code != 0 || !strings.Contains(admin, "USER NKEY SEED") {
		t.Fatalf("--out -: exit %d: %s", code, admin)
	}
	adminFile := filepath.Join(t.TempDir(), "admin.creds")
	if err := os.WriteFile(adminFile, []byte(admin), 0o600); err != nil {
		t.Fatal(err)
	}

	// A server on that creds directory: the files authenticate, each with
	// its role's permissions.
	s := testnode.StartNode(t, testnode.Options{Configure: func(c *node.Config) { c.CredsDir = creds }})
	url := s.Info().NATSURL
	agent, err := client.Connect(t.Context(), client.Options{URL: url, CredsFile: file})
	if err != nil {
		t.Fatalf("connect with agent.creds: %v", err)
	}
	defer agent.Close()
	if _, err := agent.Append(t.Context(), events.Event{V: 1, ID: "cc-1", Kind: events.KindMessage, Conversation: "c-creds",
		Data: map[string]any{"role": "user", "content": "hi"}}); err != nil {
		t.Fatalf("agent append: %v", err)
	}
	if _, err := agent.JetStream().Stream(t.Context(), events.StreamLog); err == nil {
		t.Fatal("the agent's credentials read the log")
	}
	ad, err := client.Connect(t.Context(), client.Options{URL: url, CredsFile: adminFile})
	if err != nil {
		t.Fatalf("connect with admin creds: %v", err)
	}
	defer ad.Close()
	if _, err := ad.JetStream().Stream(t.Context(), events.StreamLog); err != nil {
		t.Fatalf("admin reads the log: %v", err)
	}
}

// TestAuditKeyCreate: `vigil audit key create` writes a key where serve
// looks for it, prints its verifier key, and never overwrites a key.
func TestAuditKeyCreate(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := runCLI(t, "", "audit", "key", "create", "--data", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	vkey := strings.TrimSpace(out)
	if _, got, err := auditkey.Load(dir); err != nil || got != vkey {
		t.Fatalf("the key serve loads: %q, %v; printed %q", got, err, vkey)
	}
	if !strings.Contains(stderr, auditkey.KeyID(vkey)) || !strings.Contains(stderr, datadir.New(dir).Signer()) {
		t.Fatalf("stderr does not name the key id and file: %s", stderr)
	}
	if printed, _, _ := runCLI(t, "", "audit", "key", "--data", dir); strings.TrimSpace(printed) != vkey {
		t.Fatalf("vigil audit key prints %q, want %q", printed, vkey)
	}
	before, _ := os.ReadFile(datadir.New(dir).Signer())
	if _, stderr, code := runCLI(t, "", "audit", "key", "create", "--data", dir); code != 2 || !strings.Contains(stderr, "exists already") {
		t.Fatalf("second create: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(datadir.New(dir).Signer()); string(after) != string(before) {
		t.Fatal("the key was overwritten")
	}
	file := filepath.Join(t.TempDir(), "fleet.key")
	out, stderr, code = runCLI(t, "", "audit", "key", "create", "--out", file, "--json")
	if code != 0 {
		t.Fatalf("--out: exit %d: %s", code, stderr)
	}
	var res map[string]string
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res["signer_file"] != file || res["key_id"] != auditkey.KeyID(res["verifier_key"]) || res["verifier_key"] == vkey {
		t.Fatalf("--out --json: %v", res)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v", file, err)
	}
}
