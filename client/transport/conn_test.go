package transport_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

func TestInboxToken(t *testing.T) {
	a, b := transport.NewInboxToken(), transport.NewInboxToken()
	if a == b || !transport.ValidInboxToken(a) || !transport.ValidInboxToken(b) {
		t.Fatalf("tokens %q %q: want two different valid ones", a, b)
	}
	for _, bad := range []string{"", a[1:], a + "A", strings.ToLower(a), a[:31] + "1", a[:31] + "*", a[:31] + "."} {
		if transport.ValidInboxToken(bad) {
			t.Errorf("ValidInboxToken(%q) = true", bad)
		}
	}
}

func TestCredsOption(t *testing.T) {
	dir := t.TempDir()
	if got, want := transport.CredsFile(dir, events.RoleApprover), filepath.Join(dir, "creds", "approver.nk"); got != want {
		t.Fatalf("CredsFile = %q, want %q", got, want)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	good := filepath.Join(dir, "good.nk")
	bad := filepath.Join(dir, "bad.nk")
	if err := os.WriteFile(good, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a seed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.CredsOption(good); err != nil {
		t.Errorf("seed file: %v", err)
	}
	if _, err := transport.CredsOption(bad); err == nil || !strings.Contains(err.Error(), "not a .creds file or nkey seed") {
		t.Errorf("garbage file: err %v", err)
	}
	if _, err := transport.CredsOption(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "--creds FILE") {
		t.Errorf("missing file: err %v", err)
	}
}
