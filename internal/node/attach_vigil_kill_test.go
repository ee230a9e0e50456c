package node

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestAttachOperatorClusterVigilKill: three `vigil serve --nats tls://…
// --creds FILE --tls-ca CA --replicas 3` processes (one audit key, each
// through another server first, with a service user JWT) attached to a
// three-server nats-server cluster in operator mode whose accounts are
// in nats-server's full resolver; agents whose user JWTs carry only the
// agent role's permissions gate actions through every server. One Vigil
// node is killed with SIGKILL under that load and restarted once gating
// has resumed without it. Then: the time from the kill to the agents'
// next decision and how long a new action gated at the kill waited
// (logged; more than fleetStall fails), every acknowledged event in the
// log exactly once, no derived output twice, exactly one gate.decided per
// action in the log, no alert, and every node's fold (the restarted
// one's too) at the end of the log.
func TestAttachOperatorClusterVigilKill(t *testing.T) {
	if testing.Short() {
		t.Skip("short: a nats-server cluster and vigil serve processes")
	}
	if os.Getenv(envFleetKill) == "" {
		t.Skip("long (builds nats-server and vigil): set " + envFleetKill + "=1")
	}
	began := time.Now()
	bin := buildVigil(t)
	oc := startOperatorCluster(t, 3, resolverFull)
	t.Logf("ATTACH-VIGIL cluster of 3 operator-mode nats-servers (full resolver) healthy after %v (with the builds)", time.Since(began).Round(time.Millisecond))
	root := t.TempDir()
	credsDir := filepath.Join(root, "creds")
	if err := os.MkdirAll(credsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Each role's user JWT in the credentials directory every node is
	// given (--creds-dir): the HTTP API connects as each role with
	// <role>.nk (a .creds file or an nkey seed) and verifies the servers
	// with the fleet-ca.pem beside them, here the operator's CA.
	users := map[natsutil.Role]string{}
	for _, r := range natsutil.Roles {
		users[r] = oc.acc.userCreds(t, credsDir, "vigil-"+string(r), natsutil.JWTPermissions(r))
		b, err := os.ReadFile(users[r])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(datadir.CredsAt(credsDir).Seed(r), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(oc.ca); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(datadir.CredsAt(credsDir).FleetCA(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	service, agent, admin := users[natsutil.RoleService], users[natsutil.RoleAgent], users[natsutil.RoleAdmin]

	// The fleet's one audit key, installed in every data directory before
	// the first start (a node with another key refuses to start).
	keyFile := filepath.Join(root, "fleet.key")
	if out, err := exec.Command(bin, "audit", "key", "create", "--out", keyFile).CombinedOutput(); err != nil {
		t.Fatalf("vigil audit key create: %v\n%s", err, out)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	nodes := make([]*vigilNode, n)
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(datadir.New(dir).Audit(), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(datadir.New(dir).Signer(), key, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := auditkey.Load(dir); err != nil { // writes verifier.key
			t.Fatal(err)
		}
		nodes[i] = &vigilNode{name: name, dir: dir, args: []string{
			"serve", "--data", dir, "--node", name,
			"--nats", oc.urls(i), "--creds", service, "--tls-ca", oc.ca, "--replicas", "3", "--creds-dir", credsDir,
			"--http-listen", "127.0.0.1:" + freePort(t), "--durability", "interval",
		}}
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.kill()
		}
		if t.Failed() {
			for _, nd := range nodes {
				t.Logf("--- vigil node %s log (tail) ---\n%s", nd.name, tail(vigilNodeLog(nd), 4000))
			}
		}
	})
	for _, nd := range nodes {
		nd.start(t, bin)
	}
	for _, nd := range nodes {
		waitFile(t, filepath.Join(nd.dir, client.ServeInfoFile), 90*time.Second)
	}
	t.Logf("ATTACH-VIGIL 3 vigil serve processes attached after %v", time.Since(began).Round(time.Millisecond))

	nc, err := nats.Connect(oc.urls(0), mustCreds(t, admin), nats.RootCAs(oc.ca),
		nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	logSt, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := logSt.Info(t.Context()); err != nil {
		t.Fatal(err)
	} else if info.Config.Replicas != 3 {
		t.Fatalf("%s: %d replicas", events.StreamLog, info.Config.Replicas)
	}

	// Agents: one through each server first, each retrying an action
	// with the same id until decided (the log's duplicate window is the
	// default hour: a retry is stored once).
	ctx, stopLoad := context.WithCancel(t.Context())
	defer stopLoad()
	var (
		mu        sync.Mutex
		decided   = map[string]client.GateResult{}
		times     []time.Time // of every decision, in order
		retries   atomic.Int64
		wg        sync.WaitGroup
		agentErrs = make(chan error, n)
	)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(times)
	}
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(ctx, client.Options{URL: oc.urls(a), CredsFile: agent, TLSCA: oc.ca, Timeout: 3 * time.Second})
			if err != nil {
				agentErrs <- err
				return
			}
			defer c.Close()
			for i := 0; ctx.Err() == nil; i++ {
				ev := events.Event{V: 1, ID: fmt.Sprintf("act-%d-%05d", a, i), Kind: events.KindAction, Conversation: fmt.Sprintf("attach-vigil-%d", a),
					Agent: "agent", Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": fmt.Sprintf("ls -la /tmp/%d", i)}}}
				for attempt := 0; ctx.Err() == nil; attempt++ {
					gctx, cancel := context.WithTimeout(ctx, 3*time.Second)
					r, err := c.GateAndWait(gctx, ev, nil)
					cancel()
					if err == nil {
						mu.Lock()
						decided[ev.ID] = r
						times = append(times, time.Now())
						mu.Unlock()
						break
					}
					if attempt > 0 {
						retries.Add(1)
					}
				}
			}
		}()
	}
	var victim *vigilNode
	alive := func() {
		t.Helper()
		for _, nd := range nodes {
			if nd == victim {
				continue
			}
			select {
			case <-vigilNodeExited(nd):
				t.Fatalf("vigil node %s exited:\n%s", nd.name, tail(vigilNodeLog(nd), 4000))
			default:
			}
		}
	}
	waitDecisions := func(more int, within time.Duration, what string) {
		t.Helper()
		want := count() + more
		deadline := time.Now().Add(within)
		for count() < want {
			alive()
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d decisions, want %d within %v", what, count(), want, within)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitDecisions(60, 60*time.Second, "load before the kill")

	victim = nodes[0]
	before := count()
	killed := time.Now()
	victim.kill()
	probed := make(chan time.Duration, 1)
	go func() { probed <- probeAttached(t, oc, nil, agent) }()
	t.Logf("ATTACH-VIGIL killed vigil node %s (kill -9) after %d decisions", victim.name, before)
	// Down while the others decide 100 actions: the log moves on without it.
	waitDecisions(100, 90*time.Second, "gating after the kill")
	probe := <-probed
	mu.Lock()
	var next time.Duration
	for _, tm := range times {
		if tm.After(killed) {
			next = tm.Sub(killed)
			break
		}
	}
	mu.Unlock()
	t.Logf("ATTACH-VIGIL kill -9 of vigil node %s: the agents' next decision %v after the kill; a new action gated at the kill decided after %v",
		victim.name, next.Round(time.Millisecond), probe.Round(time.Millisecond))
	if next > fleetStall || probe > fleetStall {
		t.Errorf("after the kill of vigil node %s the agents' next decision came %v later, a new action waited %v: gating stalled (more than %v)",
			victim.name, next.Round(time.Millisecond), probe.Round(time.Millisecond), fleetStall)
	}

	restarted := time.Now()
	victim.start(t, bin)
	waitFile(t, filepath.Join(victim.dir, client.ServeInfoFile), 90*time.Second)
	t.Logf("ATTACH-VIGIL vigil node %s restarted: serving %v later", victim.name, time.Since(restarted).Round(time.Millisecond))
	victim = nil // watched again
	waitDecisions(30, 90*time.Second, "gating after the restart")
	stopLoad()
	wg.Wait()
	close(agentErrs)
	for err := range agentErrs {
		t.Error(err)
	}
	loadEnd := time.Now()

	// The log: every decided action exactly once.
	cl, err := client.Connect(t.Context(), client.Options{URL: oc.urls(0), CredsFile: admin, TLSCA: oc.ca, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]int{}
	var last uint64
	if err := cl.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		seen[r.Event.ID]++
		last = max(last, r.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Every node folds the whole log, the restarted one too.
	for _, nd := range nodes {
		deadline := time.Now().Add(60 * time.Second)
		for {
			alive()
			c, err := logSt.Consumer(t.Context(), "vigil-"+nd.name)
			if err == nil {
				if ci, err := c.Info(t.Context()); err == nil && ci.AckFloor.Stream >= last {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("vigil node %s has not folded up to %d", nd.name, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The restarted node folded what it missed before it served, and
	// said so once; every node's HTTP API (its role connections user
	// JWTs over TLS with the operator's CA) answers.
	// (The line is logged once the fold is current; wait for it.)
	caughtUp := regexp.MustCompile(`caught up: .* folded=(\d+)`)
	var lives []string
	wait.Eventually(t, 60*time.Second, func() string {
		lives = strings.Split(vigilNodeLog(nodes[0]), `msg="vigil serving"`)
		if len(lives) == 3 && caughtUp.MatchString(lives[2]) {
			return ""
		}
		return fmt.Sprintf("vigil node %s: %d starts served, the last not caught up yet", nodes[0].name, len(lives)-1)
	})
	if len(lives) != 3 {
		t.Errorf("vigil node %s served %d times, want 2", nodes[0].name, len(lives)-1)
	} else if m := caughtUp.FindStringSubmatch(lives[2]); m == nil || m[1] == "0" {
		t.Errorf("vigil node %s's restart: caught up %q, want a fold of what it missed", nodes[0].name, m)
	} else {
		t.Logf("ATTACH-VIGIL vigil node %s folded %s records at its restart", nodes[0].name, m[1])
	}
	token, err := os.ReadFile(datadir.CredsAt(credsDir).Token(natsutil.RoleAdmin))
	if err != nil {
		t.Fatal(err)
	}
	for _, nd := range nodes {
		si, err := client.ReadServeInfo(nd.dir)
		if err != nil {
			t.Fatal(err)
		}
		get := func(path string) (int, error) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, si.HTTPURL+path, nil)
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			return resp.StatusCode, nil
		}
		// Ready once its read models are current (a restarted node's may
		// still be catching up).
		wait.Eventually(t, 60*time.Second, func() string {
			if code, err := get("/readyz"); err != nil || code != http.StatusOK {
				return fmt.Sprintf("vigil node %s: GET /readyz: %d %v", nd.name, code, err)
			}
			return ""
		})
		if code, err := get("/v1/pending"); err != nil || code != http.StatusOK {
			t.Errorf("vigil node %s: GET /v1/pending: %d %v", nd.name, code, err)
		}
	}

	mu.Lock()
	actions := len(decided)
	outcomes := map[events.Outcome]int{}
	lost := 0
	for id, r := range decided {
		outcomes[r.Outcome]++
		if seen[id] != 1 {
			t.Errorf("acknowledged action %s in the log %d times", id, seen[id])
		}
		if seen[id] == 0 {
			lost++
		}
	}
	mu.Unlock()
	if seen["probe-at-kill"] != 1 {
		t.Errorf("the probe's action in the log %d times", seen["probe-at-kill"])
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("log holds %s %d times", id, c)
		}
	}
	// VIGIL_DERIVED: no id twice, one gate.decided per action, no alert.
	derived, doubled, decisions := checkDerivedOnce(t, js)
	inLog := 0
	for id := range seen {
		if strings.HasPrefix(id, "act-") || strings.HasPrefix(id, "probe-") {
			inLog++
			if decisions[id] != 1 {
				t.Errorf("action %s has %d gate.decided", id, decisions[id])
			}
		}
	}
	t.Logf("ATTACH-VIGIL %d actions decided (%d retries with the same id; outcomes %v), %d actions in the log, %d log records, %d derived messages; %d acknowledged lost, %d doubled",
		actions, retries.Load(), outcomes, inLog, last, derived, lost, doubled)
	t.Logf("ATTACH-VIGIL load from the kill to its end %v; whole test %v; load %s; %d CPUs",
		loadEnd.Sub(killed).Round(time.Millisecond), time.Since(began).Round(time.Millisecond), loadavg(), runtime.NumCPU())
}

// vigilNodeLog is what a vigil serve process printed so far.
func vigilNodeLog(nd *vigilNode) string {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.log == nil {
		return ""
	}
	return nd.log.String()
}

// vigilNodeExited is closed when the process of the node's latest start
// has exited.
func vigilNodeExited(nd *vigilNode) <-chan struct{} {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.exited
}
