package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

// TestNATSURLOrderKept: `--nats a,b` connects to a first, `--nats b,a` to
// b, every time: the list is not shuffled, so a CLI can prefer a node.
func TestNATSURLOrderKept(t *testing.T) {
	creds := t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range 2 {
		s, err := node.Start(t.Context(), node.Config{DataDir: t.TempDir(), CredsDir: creds, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval, NoProcessors: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		urls = append(urls, s.Info().NATSURL)
	}
	admin := datadir.CredsAt(creds).Seed(natsutil.RoleAdmin)
	for _, order := range [][]string{{urls[0], urls[1]}, {urls[1], urls[0]}} {
		for i := range 8 {
			out, stderr, code := runCLI(t, "", "status", "--nats", strings.Join(order, ","), "--creds", admin, "--json")
			var st serverStatus
			if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
				t.Fatalf("status: exit %d: %s%s", code, out, stderr)
			}
			if st.NATSURL != order[0] {
				t.Fatalf("try %d with --nats %s: connected to %s", i, strings.Join(order, ","), st.NATSURL)
			}
		}
	}
}

// startCLIFleet starts three clustered nodes with read models, sharing
// one creds directory outside their data directories.
func startCLIFleet(t *testing.T, auditKey string) ([]*node.Node, string) {
	t.Helper()
	creds := t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	var routes []string
	var ports []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
		ports = append(ports, port)
		routes = append(routes, "nats-route://127.0.0.1:"+port)
	}
	nodes := make([]*node.Node, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := filepath.Join(t.TempDir(), fmt.Sprintf("n%d", i))
			nodes[i], errs[i] = node.Start(t.Context(), node.Config{
				DataDir: dir, CredsDir: creds, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
				NodeName: fmt.Sprintf("n%d", i), Replicas: 3, ProjectionsDir: datadir.New(dir).Projections(), AuditKey: auditKey, NoExpiry: true,
				Cluster:    natsutil.ClusterConfig{Name: "vigil-cli", Listen: "127.0.0.1:" + ports[i], Routes: routes},
				Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil },
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	t.Cleanup(func() {
		for _, s := range nodes {
			s.Close(context.Background())
		}
	})
	return nodes, creds
}

// TestProjectionsOnFleetNode: `vigil projections status` on a fleet
// node's data directory does not boot a standalone server on its
// replicated log (nor create a creds directory there): while the node
// runs it says so, once stopped it reads the read models back; rebuild
// refuses, saying what to do.
func TestProjectionsOnFleetNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	_, vkey, err := auditkey.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nodes, creds := startCLIFleet(t, vkey)
	dir := nodes[0].Info().DataDir
	// vigil status shows the fleet's audit key and the leaders.
	admin := datadir.CredsAt(creds).Seed(natsutil.RoleAdmin)
	// Each node records its consumer, and the first one the fleet's key,
	// as it starts: on a loaded machine status may see them a moment later.
	var (
		out, stderr string
		code        int
		fst         serverStatus
	)
	for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		out, stderr, code = runCLI(t, "", "status", "--nats", nodes[1].Info().NATSURL, "--creds", admin, "--json")
		fst = serverStatus{}
		ok := code == 0 && json.Unmarshal([]byte(out), &fst) == nil && fst.AuditKey == auditkey.KeyID(vkey) && fst.AuditKeyNode != "" &&
			fst.Log != nil && fst.Log.Leader != "" && len(fst.Folds) == 3
		if !ok {
			if time.Now().After(deadline) {
				t.Fatalf("status --json of the fleet: exit %d: %s%s", code, out, stderr)
			}
			continue
		}
		// The text form is a probe of its own: on a loaded machine its
		// stream info or the key's read can run out of their budget too
		// (then it has no audit key line, or an "unknown" one), so it is
		// waited for the same way.
		out, stderr, code = runCLI(t, "", "status", "--nats", nodes[1].Info().NATSURL, "--creds", admin)
		if strings.Contains(out, "audit key: "+auditkey.KeyID(vkey)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status does not show the fleet's audit key: exit %d:\n%s%s", code, out, stderr)
		}
	}
	_, stderr, code = runCLI(t, "", "projections", "status", "--data", dir)
	if code == 0 || !strings.Contains(stderr, "vigil serve is running on "+dir) {
		t.Fatalf("status while the node runs: exit %d: %s", code, stderr)
	}
	if err := nodes[0].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runCLI(t, "", "projections", "status", "--data", dir)
	if code != 0 || !strings.Contains(out, "read models in "+datadir.New(dir).Projections()) || !strings.Contains(out, "fleet node") {
		t.Fatalf("status of a stopped fleet node: exit %d: %s%s", code, out, stderr)
	}
	out, _, code = runCLI(t, "", "projections", "status", "--data", dir, "--json")
	var st struct {
		FleetNode bool `json:"fleet_node"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.FleetNode {
		t.Fatalf("--json: exit %d: %s", code, out)
	}
	_, stderr, code = runCLI(t, "", "projections", "rebuild", "--data", dir)
	if code == 0 || !strings.Contains(stderr, "fleet node's data directory") || !strings.Contains(stderr, "--at-next-start") {
		t.Fatalf("rebuild on a fleet node: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(datadir.New(dir).Creds().Dir()); err == nil {
		t.Fatalf("a creds directory was created in %s", dir)
	}
}
