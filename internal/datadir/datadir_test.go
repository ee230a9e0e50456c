package datadir_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
)

// TestLayout pins every path of the layout: the names are an on-disk
// contract with existing data directories, clients and operators.
func TestLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l := datadir.New(dir)
	creds := l.Creds()
	tests := []struct {
		name, got, want string
	}{
		{"Dir", l.Dir(), ""},
		{"ServeInfo", l.ServeInfo(), "serve.json"},
		{"LockPath", l.LockPath(), "serve.lock"},
		{"JetStream", l.JetStream(), "jetstream"},
		{"JetStreamMeta", l.JetStreamMeta(), "jetstream/jetstream/$SYS/_js_/_meta_"},
		{"Projections", l.Projections(), "projections"},
		{"ProjectionsLock", l.ProjectionsLock(), "projections.lock"},
		{"Snapshots", l.Snapshots(), "snapshots"},
		{"IngestIndex", l.IngestIndex(), "ingest-ids"},
		{"Streams", l.Streams(), "streams.json"},
		{"RedactionSeen", l.RedactionSeen(), "redaction-seen"},
		{"Continuity", l.Continuity(), "continuity.json"},
		{"TLS", l.TLS(), "tls"},
		{"NodeCert", l.NodeCert(), "tls/node.pem"},
		{"NodeKey", l.NodeKey(), "tls/node.key"},
		{"Audit", l.Audit(), "audit"},
		{"Signer", l.Signer(), "audit/signer.key"},
		{"Verifier", l.Verifier(), "audit/verifier.key"},
		{"Creds", creds.Dir(), "creds"},
		{"Creds.Seed", creds.Seed(events.RoleAdmin), "creds/admin.nk"},
		{"Creds.Token", creds.Token(events.RoleApprover), "creds/approver.token"},
		{"Creds.NATSCreds", creds.NATSCreds(events.RoleAgent), "creds/agent.creds"},
		{"Creds.PairingKey", creds.PairingKey(), "creds/pairing.key"},
		{"Creds.FleetCA", creds.FleetCA(), "creds/fleet-ca.pem"},
		{"Creds.FleetCAKey", creds.FleetCAKey(), "creds/fleet-ca.key"},
		{"Creds.NodeCert", creds.NodeCert("n2"), "creds/tls/n2.pem"},
		{"Creds.NodeKey", creds.NodeKey("n2"), "creds/tls/n2.key"},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		want := filepath.Join(dir, filepath.FromSlash(tt.want))
		if tt.got != want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, want)
		}
		if rel, err := filepath.Rel(dir, tt.got); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s = %q is not under %s", tt.name, tt.got, dir)
		}
		if other, ok := seen[tt.got]; ok {
			t.Errorf("%s and %s are both %q", tt.name, other, tt.got)
		}
		seen[tt.got] = tt.name
	}
}

// TestCredsAt: a credentials directory elsewhere (--creds-dir) has the
// same layout as DATA/creds.
func TestCredsAt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet-creds")
	c := datadir.CredsAt(dir)
	if got, want := c.Seed(events.RoleService), filepath.Join(dir, "service.nk"); got != want {
		t.Errorf("Seed = %q, want %q", got, want)
	}
	if got, want := c.FleetCA(), filepath.Join(dir, "fleet-ca.pem"); got != want {
		t.Errorf("FleetCA = %q, want %q", got, want)
	}
}
