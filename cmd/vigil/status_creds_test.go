package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// TestStatusDataDirWithCredsDir: a node started with its credentials
// outside its data directory (`vigil serve --creds-dir`, as every fleet
// node is) is reached with `--data DIR` alone: serve.json names the
// credentials directory, and no stray DIR/creds is made.
func TestStatusDataDirWithCredsDir(t *testing.T) {
	creds, dir := t.TempDir(), t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	s, err := node.Start(t.Context(), node.Config{DataDir: dir, CredsDir: creds, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval, NoProcessors: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	out, stderr, code := runCLI(t, "", "status", "--data", dir, "--json")
	var st serverStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Up || st.LogEvents == nil {
		t.Fatalf("status --data: exit %d: %s%s", code, out, stderr)
	}
	// The other client commands find the seeds the same way.
	out, stderr, code = runCLI(t, `{"id":"e1","kind":"message","conversation":"c1","data":{"role":"user","content":"hi"}}`, "append", "--data", dir)
	if code != 0 {
		t.Fatalf("append --data: exit %d: %s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "creds")); !os.IsNotExist(err) {
		t.Errorf("a creds directory appeared in the data directory: %v", err)
	}
}
