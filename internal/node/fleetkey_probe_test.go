package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node/integrity"
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
	if !errors.Is(err, integrity.ErrAuditKeyMismatch) || !strings.Contains(err.Error(), "before joining the cluster") {
		t.Fatalf("err = %v, want integrity.ErrAuditKeyMismatch found before joining", err)
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

// levelSink collects the level and text of every record of the nodes it
// is given to.
type levelSink struct {
	mu   sync.Mutex
	recs []levelRec
}

type levelRec struct {
	level slog.Level
	text  string
}

func (l *levelSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *levelSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	l.mu.Lock()
	l.recs = append(l.recs, levelRec{r.Level, b.String()})
	l.mu.Unlock()
	return nil
}
func (l *levelSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levelSink) WithGroup(string) slog.Handler      { return l }

func (l *levelSink) since(i int) []levelRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs[i:])
}

func (l *levelSink) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recs)
}

// TestFleetKeyProbeQuiet: a fleet node restarting (every node lists every
// node in its routes, as docs/fleet.md says) checks the fleet's audit key
// through its throwaway server without making its peers warn: no peer
// dials the probe's random route port (to find it gone and warn that a
// peer is unreachable), and no peer logs a TLS handshake error for the
// check that a peer listens. What the peers warn about in that time is
// the restarting node's own address only (down until it is up).
func TestFleetKeyProbeQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	key := newVerifierKey(t)
	creds := t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	var ports, routes []string
	for range 3 {
		p := freePort(t)
		ports = append(ports, p)
		routes = append(routes, "nats-route://127.0.0.1:"+p)
	}
	sinks := []*levelSink{{}, {}, {}}
	cfgs := make([]Config, 3)
	for i := range 3 {
		cfgs[i] = Config{
			DataDir: filepath.Join(t.TempDir(), fmt.Sprintf("n%d", i)), CredsDir: creds, NATSListen: "127.0.0.1:-1",
			Durability: natsutil.DurabilityInterval, NodeName: fmt.Sprintf("n%d", i), Replicas: 3, NoExpiry: true, AuditKey: key,
			Cluster:      natsutil.ClusterConfig{Name: "vigil-quiet", Listen: "127.0.0.1:" + ports[i], Routes: routes},
			NoProcessors: true, Logger: slog.New(sinks[i]),
		}
	}
	nodes := make([]*Node, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = Start(t.Context(), cfgs[i])
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range nodes {
			if s != nil {
				s.Close(context.Background())
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if nodes[0].TLS() == nil {
		t.Fatal("the fleet runs without TLS")
	}
	if err := nodes[2].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	nodes[2] = nil
	marks := []int{sinks[0].len(), sinks[1].len()}
	var err error
	if nodes[2], err = Start(t.Context(), cfgs[2]); err != nil {
		t.Fatal(err)
	}
	own := "127.0.0.1:" + ports[2]
	probed := false
	for p := range 2 {
		for _, r := range sinks[p].since(marks[p]) {
			if strings.Contains(r.text, "n2-keycheck") {
				probed = true
				t.Logf("peer n%d: %s: %s", p, r.level, r.text)
			}
			if r.level < slog.LevelWarn || strings.Contains(r.text, own) {
				continue
			}
			if strings.Contains(r.text, "keycheck") || strings.Contains(r.text, "TLS route handshake") || strings.Contains(r.text, "cluster peer at") {
				t.Errorf("peer n%d, as n2 checked the fleet's key: %s: %s", p, r.level, r.text)
			}
		}
	}
	if !probed {
		t.Error("no peer saw n2's key check: the test checked nothing")
	}
}
