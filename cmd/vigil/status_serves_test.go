package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

// TestStatusServes: `vigil status` says up only once the node answering
// serves (its own driver reads the log), and in a fleet a node without a
// consumer of its own while the others have theirs is starting.
func TestStatusServes(t *testing.T) {
	fleet := &streamStatus{Cluster: "c", Leader: "n1"}
	for _, tc := range []struct {
		name string
		st   serverStatus
		want bool
	}{
		{"consumers not readable", serverStatus{Node: "n0"}, true},
		{"consumers not listed in time", serverStatus{Node: "n0", Log: fleet, FoldsError: "context deadline exceeded"}, false},
		{"consumers not listed in time, own fold live", serverStatus{Node: "n0", Log: fleet, FoldsError: "context deadline exceeded",
			Folds: []foldStatus{{Node: "n0", Live: true}}}, true},
		{"consumers not listed in time, own fold not live", serverStatus{Node: "n0", Log: fleet, FoldsError: "context deadline exceeded",
			Folds: []foldStatus{{Node: "n0"}}}, false},
		{"consumers not listed in time, own consumer absent", serverStatus{Node: "n0", Log: fleet, FoldsError: "context deadline exceeded",
			ownAbsent: true}, false},
		{"consumers not listable by the role", serverStatus{Node: "n0", Log: fleet, FoldsError: "context deadline exceeded", foldsDenied: true}, true},
		{"no driver anywhere", serverStatus{Node: "n0", foldsKnown: true}, true},
		{"own fold live", serverStatus{Node: "n0", foldsKnown: true, Log: fleet,
			Folds: []foldStatus{{Node: "n0", Live: true}, {Node: "n1"}}}, true},
		{"own fold warming up, others live", serverStatus{Node: "n0", foldsKnown: true, Log: fleet,
			Folds: []foldStatus{{Node: "n0"}, {Node: "n1", Live: true}}}, false},
		{"fleet node without its consumer yet", serverStatus{Node: "n0", foldsKnown: true, Log: fleet,
			Folds: []foldStatus{{Node: "n1", Live: true}}}, false},
		{"single host, another driver live", serverStatus{Node: "local", foldsKnown: true, Log: &streamStatus{Leader: "local"},
			Folds: []foldStatus{{Node: "other", Live: true}}}, true},
		{"nobody reads the log", serverStatus{foldsKnown: true, Folds: []foldStatus{{Node: "n1"}, {Node: "n2"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := tc.st.serves(); got != tc.want {
				t.Fatalf("serves() = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

// TestStatusMarksDown: a node whose fold does not read the log and whose
// replicas are not current is shown down, on its fold and its replicas.
func TestStatusMarksDown(t *testing.T) {
	log := &streamStatus{Replicas: []replicaStatus{{Name: "n1", Current: false, Lag: 300}, {Name: "n2", Current: true}}}
	der := &streamStatus{Replicas: []replicaStatus{{Name: "n1", Current: true}}}
	if _, ok := laggingReplica("n2", log, der); ok {
		t.Fatal("a current replica called lagging")
	}
	if _, ok := laggingReplica("n1", log, der); !ok {
		t.Fatal("a replica behind by 300 not called lagging")
	}
	markDown("n1", "2026-12-01T21:00:00Z", log, der)
	for _, r := range append(log.Replicas, der.Replicas...) {
		if (r.Name == "n1") != r.Down || (r.Down && r.DownSince != "2026-12-01T21:00:00Z") {
			t.Fatalf("replica %+v", r)
		}
	}
}

// heldProcessor is stats whose Step blocks while held: a node restarted
// with it stays in its driver's warm-up (folding the log prefix) until
// the test lets it go.
type heldProcessor struct {
	processors.Processor
	entered chan struct{} // closed at the first Step
	once    sync.Once
	release chan struct{}
}

func (p *heldProcessor) Step(rec events.Record) ([]processors.Output, error) {
	p.once.Do(func() { close(p.entered) })
	<-p.release
	return p.Processor.Step(rec)
}

// TestStatusWaitNotBeforeServing: `vigil status --wait` on a fleet node
// that restarts does not answer up while the node's driver is still
// warming up (its NATS and JetStream answer all along), and answers up
// once the driver reads the log, with the node's own fold live.
func TestStatusWaitNotBeforeServing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	creds := t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	freePort := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	}
	var routes, ports []string
	for range 3 {
		p := freePort()
		ports = append(ports, p)
		routes = append(routes, "nats-route://127.0.0.1:"+p)
	}
	cfgs := make([]node.Config, 3)
	nodes := make([]*node.Node, 3)
	for i := range 3 {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("n%d", i))
		cfgs[i] = node.Config{
			DataDir: dir, CredsDir: creds, NATSListen: "127.0.0.1:" + freePort(), Durability: natsutil.DurabilityInterval,
			NodeName: fmt.Sprintf("n%d", i), Replicas: 3, NoExpiry: true,
			Cluster:    natsutil.ClusterConfig{Name: "vigil-serves", Listen: "127.0.0.1:" + ports[i], Routes: routes},
			Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil },
		}
	}
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = node.Start(t.Context(), cfgs[i])
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
	// Records for n2's driver to fold and checkpoint, so that its restart
	// warms up on them.
	c, err := nodes[0].Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var last uint64
	for i := range 20 {
		r, err := c.Append(t.Context(), events.Event{V: 1, ID: fmt.Sprintf("m%d", i), Kind: events.KindMessage, Conversation: "c1",
			Time: time.Now().UTC(), Data: map[string]any{"role": "user", "content": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		last = r.Seq
	}
	waitFor(t, "n2's checkpoint", func() bool { return nodes[2].Driver().Checkpointed() >= last })
	if err := nodes[2].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	nodes[2] = nil

	held := &heldProcessor{Processor: stats.New(), entered: make(chan struct{}), release: make(chan struct{})}
	cfg := cfgs[2]
	cfg.Processors = func() ([]processors.Processor, error) { return []processors.Processor{held}, nil }
	started := make(chan error, 1)
	var restarted *node.Node
	go func() {
		var err error
		restarted, err = node.Start(t.Context(), cfg)
		started <- err
	}()
	released := false
	defer func() {
		if !released {
			close(held.release)
		}
		if err := <-started; err == nil {
			restarted.Close(context.Background())
		}
	}()
	select {
	case <-held.entered:
	case err := <-started:
		t.Fatalf("the restart did not warm up: %v", err)
	}
	admin := datadir.CredsAt(creds).Seed(natsutil.RoleAdmin)
	url := "nats://" + cfg.NATSListen
	out, stderr, code := runCLI(t, "", "status", "--wait", "2s", "--nats", url, "--creds", admin, "--json")
	var st serverStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v: %s%s", err, out, stderr)
	}
	if code == 0 || st.Up {
		t.Fatalf("status --wait answered up while n2's driver warms up: exit %d\n%s", code, out)
	}
	if st.Node != "n2" || st.LogEvents == nil {
		t.Fatalf("status did not reach n2's JetStream: %s", out)
	}
	close(held.release)
	released = true
	out, stderr, code = runCLI(t, "", "status", "--wait", "60s", "--nats", url, "--creds", admin, "--json")
	st = serverStatus{}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Up {
		t.Fatalf("status --wait after the warm-up: exit %d: %s%s", code, out, stderr)
	}
	live := false
	for _, f := range st.Folds {
		live = live || (f.Node == "n2" && f.Live)
	}
	if !live {
		t.Fatalf("status --wait answered up without n2's fold live:\n%s", out)
	}
}

// violations counts the permissions violations a server logs.
type violations struct{ n atomic.Int64 }

func (v *violations) Enabled(context.Context, slog.Level) bool { return true }
func (v *violations) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "Violation") {
		v.n.Add(1)
	}
	return nil
}
func (v *violations) WithAttrs([]slog.Attr) slog.Handler { return v }
func (v *violations) WithGroup(string) slog.Handler      { return v }

// TestStatusApproverUp: an approver's credentials, which may not read
// the drivers' consumers, see a serving node up, and status asks the
// server for nothing the role may not (the server logs no permissions
// violation).
func TestStatusApproverUp(t *testing.T) {
	creds := t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	v := &violations{}
	s, err := node.Start(t.Context(), node.Config{DataDir: t.TempDir(), CredsDir: creds, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval, NoExpiry: true,
		Logger:     slog.New(v),
		Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	out, stderr, code := runCLI(t, "", "status", "--nats", s.Info().NATSURL, "--creds", datadir.CredsAt(creds).Seed(natsutil.RoleApprover), "--json")
	var st serverStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Up {
		t.Fatalf("status with an approver's credentials: exit %d: %s%s", code, out, stderr)
	}
	// The server logs a violation as it refuses the request; one made
	// by status was made before status returned.
	if n := v.n.Load(); n != 0 {
		t.Fatalf("status with an approver's credentials made %d requests the role may not", n)
	}
}
