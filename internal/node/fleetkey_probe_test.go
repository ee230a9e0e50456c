package node

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/vigil-dev/vigil/internal/auditkey"
)

// TestFleetKeyCheckedBeforeJoining: a new node with another audit key
// than the fleet's refuses before it joins the cluster: the fleet's
// JetStream meta group never counts it as a peer (it would stay one,
// offline, and count in the quorum), and the refusal says it was found
// before joining. A node with the fleet's key joins as before.
func TestFleetKeyCheckedBeforeJoining(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	keyA, keyB := newVerifierKey(t), newVerifierKey(t)
	var (
		mu   sync.Mutex
		base Config
	)
	nodes := startFleetWith(t, 3, func(c *Config) {
		c.AuditKey = keyA
		mu.Lock()
		base = *c
		mu.Unlock()
	})
	metaSize := func() int {
		t.Helper()
		for _, s := range nodes {
			info, err := s.NATS().Jsz(&natsserver.JSzOptions{})
			if err == nil && info.Meta != nil && info.Meta.Leader == s.cfg.NodeName {
				return info.Meta.Size
			}
		}
		return 0
	}
	if n := metaSize(); n != 3 {
		t.Fatalf("meta group of %d, want 3", n)
	}
	// A fourth node, with its own key (made at first start, not copied).
	cfg := base
	cfg.NodeName, cfg.DataDir = "n9", filepath.Join(t.TempDir(), "n9")
	cfg.Cluster.Listen = "127.0.0.1:" + freePort(t)
	cfg.AuditKey = keyB
	start := time.Now()
	s, err := Start(t.Context(), cfg)
	if err == nil {
		s.Close(context.Background())
		t.Fatal("a node with another audit key than the fleet's started")
	}
	if !errors.Is(err, ErrAuditKeyMismatch) || !strings.Contains(err.Error(), "before joining the cluster") {
		t.Fatalf("err = %v, want ErrAuditKeyMismatch found before joining", err)
	}
	for _, want := range []string{auditkey.KeyID(keyA), auditkey.KeyID(keyB), "signer.key", "--accept-audit-key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
	t.Logf("refused in %v", time.Since(start).Round(time.Millisecond))
	// Give a joined peer time to be counted, as it would have been.
	time.Sleep(2 * time.Second)
	if n := metaSize(); n != 3 {
		t.Errorf("meta group of %d after the refusal, want 3: the refused node joined", n)
	}
	// With the fleet's key it joins, and its start-up line names the key.
	cfg.AuditKey = keyA
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	if s, err = Start(t.Context(), cfg); err != nil {
		t.Fatalf("with the fleet's key: %v", err)
	}
	defer s.Close(context.Background())
	if !strings.Contains(logs.String(), "audit_key="+auditkey.KeyID(keyA)) {
		t.Errorf("the start-up line does not name the audit key:\n%s", logs.String())
	}
	nodes = append(nodes, s)
	deadline := time.Now().Add(30 * time.Second)
	for metaSize() != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("meta group of %d with the fourth node up, want 4", metaSize())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
