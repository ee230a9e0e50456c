package node

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/node/integrity"
)

// TestFleetRefusesAnotherAuditKey: a fleet node started with an audit key
// other than the one the fleet recorded at its first start refuses to
// start, naming both keys and what to do; --accept-audit-key makes its key
// the fleet's; a single node is not checked.
func TestFleetRefusesAnotherAuditKey(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	keyA, keyB := newVerifierKey(t), newVerifierKey(t)
	var (
		mu   sync.Mutex
		cfgs = map[string]Config{}
	)
	nodes := startFleetWith(t, 3, func(c *Config) {
		c.AuditKey = keyA
		mu.Lock()
		cfgs[c.NodeName] = *c
		mu.Unlock()
	})
	away := nodes[2]
	if err := away.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := cfgs[away.cfg.NodeName]
	cfg.AuditKey = keyB
	s, err := Start(t.Context(), cfg)
	if err == nil {
		s.Close(context.Background())
		t.Fatal("a node with another audit key than the fleet's started")
	}
	if !errors.Is(err, integrity.ErrAuditKeyMismatch) {
		t.Fatalf("err = %v, want integrity.ErrAuditKeyMismatch", err)
	}
	for _, want := range []string{auditkey.KeyID(keyA), auditkey.KeyID(keyB), "signer.key", "--accept-audit-key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
	// A deliberate change: accepted, and then it is the fleet's; the
	// running nodes' key is now the one refused.
	cfg.AuditKey, cfg.AcceptAuditKey = keyB, true
	if s, err = Start(t.Context(), cfg); err != nil {
		t.Fatalf("--accept-audit-key: %v", err)
	}
	defer s.Close(context.Background())
	if err := s.checkAuditKey(t.Context()); err != nil {
		t.Fatalf("the accepted key: %v", err)
	}
	if err := nodes[0].checkAuditKey(t.Context()); !errors.Is(err, integrity.ErrAuditKeyMismatch) {
		t.Fatalf("the old key after the change: %v, want integrity.ErrAuditKeyMismatch", err)
	}
}

// TestFleetKeyFromNewestCheckpoint: with no key recorded (a fleet older
// than the record), the key that signed the newest checkpoint is the
// fleet's.
func TestFleetKeyFromNewestCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	nodes := startFleet(t, 3)
	s := nodes[0]
	signer, vkey := newSigner(t)
	msg, err := note.Sign(&note.Note{Text: "vigil-audit\n5\nAAAA\n"}, signer)
	if err != nil {
		t.Fatal(err)
	}
	publishCheckpoint(t, s, "audit:5", 5, string(msg))
	s.cfg.AuditKey = newVerifierKey(t)
	if err := s.checkAuditKey(t.Context()); !errors.Is(err, integrity.ErrAuditKeyMismatch) || !strings.Contains(err.Error(), auditkey.KeyID(vkey)) {
		t.Fatalf("another key than the newest checkpoint's: %v", err)
	}
	s.cfg.AuditKey = vkey
	if err := s.checkAuditKey(t.Context()); err != nil {
		t.Fatalf("the newest checkpoint's key: %v", err)
	}
	// Now recorded: another node with another key is refused by the record.
	nodes[1].cfg.AuditKey = newVerifierKey(t)
	if err := nodes[1].checkAuditKey(t.Context()); !errors.Is(err, integrity.ErrAuditKeyMismatch) || !strings.Contains(err.Error(), "recorded by node n0") {
		t.Fatalf("after the record: %v", err)
	}
}

func newSigner(t *testing.T) (note.Signer, string) {
	t.Helper()
	dir := t.TempDir()
	s, vkey, err := auditkey.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

func newVerifierKey(t *testing.T) string {
	t.Helper()
	_, vkey := newSigner(t)
	return vkey
}

// publishCheckpoint stores an audit.checkpoint holding note in VIGIL_DERIVED.
func publishCheckpoint(t *testing.T, s *Node, id string, size uint64, signed string) {
	t.Helper()
	d := events.Derived{V: events.CurrentVersion, ID: id, Kind: events.KindAuditCheckpoint, Seq: size,
		Time: time.Now().UTC().Format(time.RFC3339Nano), Data: events.AuditCheckpoint{TreeSize: size, RootHash: "aGFzaA==", Note: signed}}
	body, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.Publish(t.Context(), events.SubjectCheckpoint, body, jetstream.WithMsgID(id)); err != nil {
		t.Fatal(err)
	}
}
