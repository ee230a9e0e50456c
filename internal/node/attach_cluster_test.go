package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// attachStall is how long after the kill of a nats-server the agents may
// go without a decision before TestAttachOperatorClusterKill calls it a
// stall. A stock nats-server elects a new Raft leader 4–9 s after the old
// one's last heartbeat (Vigil's embedded servers elect in 1.0–1.5 s; that
// setting is not a nats-server option), so this is twice the slowest
// election, well short of a lost timeout.
const attachStall = 20 * time.Second

// operatorAccounts is the decentralized auth of a NATS in operator mode:
// an operator, its system account and an application account (VIGIL)
// with JetStream enabled, each account's JWT signed by the operator.
type operatorAccounts struct {
	opJWT          string
	sysPub, sysJWT string
	accPub, accJWT string
	accKP          nkeys.KeyPair
}

func newOperatorAccounts(t *testing.T) *operatorAccounts {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	o := &operatorAccounts{}
	opKP, err := nkeys.CreateOperator()
	must(err)
	opPub, err := opKP.PublicKey()
	must(err)
	sysKP, err := nkeys.CreateAccount()
	must(err)
	o.sysPub, err = sysKP.PublicKey()
	must(err)
	op := jwt.NewOperatorClaims(opPub)
	op.Name = "corp"
	op.SystemAccount = o.sysPub
	o.opJWT, err = op.Encode(opKP)
	must(err)
	sys := jwt.NewAccountClaims(o.sysPub)
	sys.Name = "SYS"
	o.sysJWT, err = sys.Encode(opKP)
	must(err)
	o.accKP, err = nkeys.CreateAccount()
	must(err)
	o.accPub, err = o.accKP.PublicKey()
	must(err)
	acc := jwt.NewAccountClaims(o.accPub)
	acc.Name = "VIGIL"
	acc.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	o.accJWT, err = acc.Encode(opKP)
	must(err)
	return o
}

// userCreds writes a .creds file (user JWT and seed) of a user of the
// VIGIL account with perms into dir and returns its path.
func (o *operatorAccounts) userCreds(t *testing.T, dir, name string, perms jwt.Permissions) string {
	t.Helper()
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.Permissions = perms
	ujwt, err := uc.Encode(o.accKP)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := ukp.Seed()
	b, err := jwt.FormatUserConfig(ujwt, seed)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".creds")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildNATSServer builds the nats-server of go.mod's version (the module
// Vigil embeds) into a temp dir of the test; the Go build cache makes
// every build after the first a link.
func buildNATSServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nats-server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build nats-server: %v\n%s", err, out)
	}
	return bin
}

// natsProc is one nats-server child process, started from its config
// file; kill sends SIGKILL.
type natsProc struct {
	name, conf       string
	clientURL, httpz string
	mu               sync.Mutex
	cmd              *exec.Cmd
	exited           chan struct{}
	log              *bytes.Buffer
	starts           int
}

func (p *natsProc) start(t *testing.T, bin string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(bin, "-c", p.conf)
	if p.log == nil {
		p.log = &bytes.Buffer{}
	}
	fmt.Fprintf(p.log, "--- start %d ---\n", p.starts+1)
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: p.log}, &lockedWriter{w: p.log}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	p.starts++
	exited := p.exited
	go func() { cmd.Wait(); close(exited) }()
}

func (p *natsProc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

func (p *natsProc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log == nil {
		return ""
	}
	return p.log.String()
}

// monitor GETs a path of the server's monitoring port; a server too
// busy to answer within 2 s is an error (the callers ask again).
func (p *natsProc) monitor(url string) (*http.Response, error) {
	return (&http.Client{Timeout: 2 * time.Second}).Get(url)
}

// healthy reports whether the server's /healthz answers ok: it serves
// clients and its JetStream (the meta group and every stream and
// consumer replica it holds) is current.
func (p *natsProc) healthy() bool {
	resp, err := p.monitor(p.httpz + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// streamState is this server's own replica of stream in account acc
// (/jsz): its message count and last sequence.
func (p *natsProc) streamState(acc, stream string) (msgs, last uint64, err error) {
	resp, err := p.monitor(p.httpz + "/jsz?accounts=true&streams=true")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var jsz struct {
		Accounts []struct {
			Name    string `json:"name"`
			ID      string `json:"id"`
			Streams []struct {
				Name  string `json:"name"`
				State struct {
					Msgs    uint64 `json:"messages"`
					LastSeq uint64 `json:"last_seq"`
				} `json:"state"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jsz); err != nil {
		return 0, 0, err
	}
	for _, a := range jsz.Accounts {
		if a.Name != acc && a.ID != acc {
			continue
		}
		for _, s := range a.Streams {
			if s.Name == stream {
				return s.State.Msgs, s.State.LastSeq, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("%s holds no replica of %s", p.name, stream)
}

// The account resolvers startOperatorCluster configures: accounts held
// in memory, or nats-server's full resolver (accounts stored in a
// directory of each server and synchronised between the servers). Both
// are preloaded with the operator's accounts.
const (
	resolverMemory = "memory"
	resolverFull   = "full"
)

// operatorCluster is n nats-server processes on loopback clustered in
// operator mode: the accounts preloaded in the resolver, TLS on the
// client port with a certificate of a test CA, and mutual TLS on the
// routes (verify: a server without a certificate of that CA cannot
// route). Every port is fixed in the config files, so a killed server
// comes back on its own.
type operatorCluster struct {
	procs []*natsProc
	ca    string
	dir   string
	acc   *operatorAccounts
	bin   string
}

func startOperatorCluster(t *testing.T, n int, resolver string) *operatorCluster {
	t.Helper()
	oc := &operatorCluster{dir: t.TempDir(), acc: newOperatorAccounts(t), bin: buildNATSServer(t)}
	if _, err := natsutil.EnsureFleetCA(oc.dir); err != nil {
		t.Fatal(err)
	}
	oc.ca = datadir.CredsAt(oc.dir).FleetCA()
	opFile := filepath.Join(oc.dir, "operator.jwt")
	if err := os.WriteFile(opFile, []byte(oc.acc.opJWT), 0o600); err != nil {
		t.Fatal(err)
	}
	clusterPorts := make([]string, n)
	var routes []string
	for i := range n {
		clusterPorts[i] = freePort(t)
		routes = append(routes, fmt.Sprintf("%q", "nats-route://127.0.0.1:"+clusterPorts[i]))
	}
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		sdir := filepath.Join(oc.dir, name)
		if err := os.MkdirAll(sdir, 0o700); err != nil {
			t.Fatal(err)
		}
		cert, key := filepath.Join(sdir, "server.pem"), filepath.Join(sdir, "server.key")
		if _, err := natsutil.EnsureNodeCert(oc.dir, name, natsutil.NodeHosts(nil, nil), cert, key); err != nil {
			t.Fatal(err)
		}
		port, httpPort := freePort(t), freePort(t)
		res := "MEMORY"
		if resolver == resolverFull {
			res = fmt.Sprintf("{ type: full, dir: %q, allow_delete: false, interval: \"2m\" }", filepath.Join(sdir, "accounts"))
		}
		conf := fmt.Sprintf(`server_name: %q
host: "127.0.0.1"
port: %s
http: "127.0.0.1:%s"
operator: %q
system_account: %q
resolver: %s
resolver_preload: {
  %q: %q
  %q: %q
}
jetstream: {
  store_dir: %q
  max_memory_store: 268435456
  max_file_store: 1073741824
}
tls: {
  cert_file: %q
  key_file: %q
  timeout: 5
}
cluster: {
  name: "corp"
  host: "127.0.0.1"
  port: %s
  routes: [%s]
  tls: {
    cert_file: %q
    key_file: %q
    ca_file: %q
    verify: true
    timeout: 5
  }
}
`, name, port, httpPort, opFile, oc.acc.sysPub, res,
			oc.acc.sysPub, oc.acc.sysJWT, oc.acc.accPub, oc.acc.accJWT,
			filepath.Join(sdir, "js"), cert, key,
			clusterPorts[i], strings.Join(routes, ", "), cert, key, oc.ca)
		p := &natsProc{name: name, conf: filepath.Join(sdir, "nats.conf"),
			clientURL: "tls://127.0.0.1:" + port, httpz: "http://127.0.0.1:" + httpPort}
		if err := os.WriteFile(p.conf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		oc.procs = append(oc.procs, p)
	}
	t.Cleanup(func() {
		for _, p := range oc.procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range oc.procs {
				t.Logf("--- nats-server %s log (tail) ---\n%s", p.name, tail(p.logText(), 4000))
			}
		}
	})
	for _, p := range oc.procs {
		p.start(t, oc.bin)
	}
	for _, p := range oc.procs {
		oc.waitHealthy(t, p, 60*time.Second)
	}
	return oc
}

func (oc *operatorCluster) waitHealthy(t *testing.T, p *natsProc, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !p.healthy() {
		select {
		case <-p.exited:
			t.Fatalf("nats-server %s exited:\n%s", p.name, tail(p.logText(), 4000))
		default:
		}
		if time.Since(start) > within {
			t.Fatalf("nats-server %s not healthy within %v", p.name, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// urls lists every server's client URL, first's first.
func (oc *operatorCluster) urls(first int) string {
	var us []string
	for i := range oc.procs {
		us = append(us, oc.procs[(first+i)%len(oc.procs)].clientURL)
	}
	return strings.Join(us, ",")
}

func (oc *operatorCluster) named(t *testing.T, name string) *natsProc {
	t.Helper()
	for _, p := range oc.procs {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no nats-server %q", name)
	return nil
}

// TestAttachOperatorClusterKill: three Vigil nodes attached (as `vigil
// serve --nats tls://… --creds FILE --tls-ca CA --replicas 3` attaches)
// to a three-server nats-server cluster they do not run, in operator
// mode, each node through another server first, with a service user JWT;
// agents whose user JWTs carry only the agent role's permissions gate
// actions through every server. The nats-server process leading
// VIGIL_LOG is killed with SIGKILL under that load and restarted once
// gating has resumed. Then: the longest time without a decision after
// the kill, and how long a new action gated at the kill waited (logged;
// more than attachStall fails), every acknowledged event in the
// log exactly once, no derived output twice, exactly one gate.decided
// per action in the log, no alert, every node's fold at the end of the
// log, and the restarted server's own replicas of both streams equal to
// the leaders'.
func TestAttachOperatorClusterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("short: a nats-server cluster of processes")
	}
	if os.Getenv(envFleetKill) == "" {
		t.Skip("long (about 25 s, builds nats-server): set " + envFleetKill + "=1")
	}
	began := time.Now()
	oc := startOperatorCluster(t, 3, resolverMemory)
	t.Logf("ATTACH cluster of 3 operator-mode nats-servers healthy after %v (with the build)", time.Since(began).Round(time.Millisecond))
	credsDir := t.TempDir()
	service := oc.acc.userCreds(t, credsDir, "vigil-service", natsutil.JWTPermissions(natsutil.RoleService))
	agent := oc.acc.userCreds(t, credsDir, "vigil-agent", natsutil.JWTPermissions(natsutil.RoleAgent))
	admin := oc.acc.userCreds(t, credsDir, "vigil-admin", natsutil.JWTPermissions(natsutil.RoleAdmin))

	const n = 3
	nodes := make([]*Node, n)
	logs := make([]*bytes.Buffer, n)
	t.Cleanup(func() {
		for _, s := range nodes {
			if s != nil {
				s.Close(context.Background())
			}
		}
		if t.Failed() {
			for i, l := range logs {
				if l != nil {
					t.Logf("--- vigil node n%d log (tail) ---\n%s", i, tail(l.String(), 4000))
				}
			}
		}
	})
	for i := range n {
		logs[i] = &bytes.Buffer{}
		s, err := Start(t.Context(), Config{
			DataDir: filepath.Join(t.TempDir(), fmt.Sprintf("n%d", i)), NodeName: fmt.Sprintf("n%d", i),
			NATSURL: oc.urls(i), ServiceCreds: service, TLSCA: oc.ca, Replicas: 3,
			Durability: natsutil.DurabilityInterval,
			Logger:     slog.New(slog.NewTextHandler(&lockedWriter{w: logs[i]}, &slog.HandlerOptions{Level: slog.LevelInfo})),
			Processors: func() ([]processors.Processor, error) {
				g, err := gate.New(gate.Options{})
				if err != nil {
					return nil, err
				}
				return []processors.Processor{g}, nil
			},
		})
		if err != nil {
			t.Fatalf("node n%d: %v", i, err)
		}
		nodes[i] = s
	}
	t.Logf("ATTACH 3 vigil nodes attached after %v", time.Since(began).Round(time.Millisecond))

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
	streamInfo := func(stream string) (*jetstream.StreamInfo, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return nil, err
		}
		return st.Info(ctx)
	}
	leaderOf := func(stream string) string {
		deadline := time.Now().Add(60 * time.Second)
		for {
			if info, err := streamInfo(stream); err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
				return info.Cluster.Leader
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s has no leader", stream)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The streams are replicated on every server of the cluster.
	for _, stream := range []string{events.StreamLog, events.StreamDerived} {
		info, err := streamInfo(stream)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			t.Fatalf("%s: %d replicas, cluster %+v", stream, info.Config.Replicas, info.Cluster)
		}
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
				ev := events.Event{V: 1, ID: fmt.Sprintf("act-%d-%05d", a, i), Kind: events.KindAction, Conversation: fmt.Sprintf("attach-%d", a),
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
	waitDecisions := func(more int, within time.Duration, what string) {
		t.Helper()
		want := count() + more
		deadline := time.Now().Add(within)
		for count() < want {
			for i, s := range nodes {
				select {
				case err := <-s.Err():
					t.Fatalf("node n%d driver: %v", i, err)
				default:
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d decisions, want %d within %v", what, count(), want, within)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitDecisions(60, 60*time.Second, "load before the kill")

	logLeader, derivedLeader := leaderOf(events.StreamLog), leaderOf(events.StreamDerived)
	victim := oc.named(t, logLeader)
	before := count()
	killed := time.Now()
	victim.kill()
	// A new action gated from the moment of the kill, by an agent that
	// connects afresh (the killed server last in its list).
	probed := make(chan time.Duration, 1)
	go func() { probed <- probeAttached(t, oc, victim, agent) }()
	t.Logf("ATTACH killed nats-server %s (VIGIL_LOG leader; VIGIL_DERIVED leader %s) after %d decisions", victim.name, derivedLeader, before)
	waitDecisions(30, 90*time.Second, "gating after the kill")
	probe := <-probed
	// The longest time without a decision from the kill until 30 more.
	mu.Lock()
	var stall time.Duration
	prev, k := killed, 0
	for _, tm := range times {
		if tm.After(killed) && k < 30 {
			stall, prev, k = max(stall, tm.Sub(prev)), tm, k+1
		}
	}
	mu.Unlock()
	newLog, newDerived := leaderOf(events.StreamLog), leaderOf(events.StreamDerived)
	t.Logf("ATTACH kill -9 of %s: longest time without a decision after the kill %v; a new action gated at the kill decided after %v (new VIGIL_LOG leader %s, VIGIL_DERIVED leader %s)",
		victim.name, stall.Round(time.Millisecond), probe.Round(time.Millisecond), newLog, newDerived)
	if stall > attachStall || probe > attachStall {
		t.Errorf("after the kill of %s the agents went %v without a decision, a new action waited %v: gating stalled (more than %v)",
			victim.name, stall.Round(time.Millisecond), probe.Round(time.Millisecond), attachStall)
	}

	restarted := time.Now()
	victim.start(t, oc.bin)
	healthyIn := oc.waitHealthy(t, victim, 90*time.Second)
	t.Logf("ATTACH %s restarted: healthy (JetStream current) %v later", victim.name, healthyIn.Round(time.Millisecond))
	waitDecisions(30, 90*time.Second, "gating after the restart")
	stopLoad()
	wg.Wait()
	close(agentErrs)
	for err := range agentErrs {
		t.Error(err)
	}
	loadEnd := time.Now()

	// The restarted server caught up: its own replica of each stream is
	// the leader's, message for message.
	for _, stream := range []string{events.StreamLog, events.StreamDerived} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			info, err := streamInfo(stream)
			if err == nil {
				msgs, lastSeq, err := victim.streamState(oc.acc.accPub, stream)
				if err == nil && msgs == info.State.Msgs && lastSeq == info.State.LastSeq {
					t.Logf("ATTACH %s's replica of %s: %d messages, last %d, as the leader's (%v after the restart)",
						victim.name, stream, msgs, lastSeq, time.Since(restarted).Round(time.Millisecond))
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s's replica of %s: %d messages, last %d (%v); the leader's: %d, last %d",
						victim.name, stream, msgs, lastSeq, err, info.State.Msgs, info.State.LastSeq)
				}
			} else if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

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
	// Every node folds the whole log (an action sent as the load stopped
	// may have been stored after it: the log read above is the end).
	logSt, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		deadline := time.Now().Add(60 * time.Second)
		for {
			c, err := logSt.Consumer(t.Context(), fmt.Sprintf("vigil-n%d", i))
			if err == nil {
				if ci, err := c.Info(t.Context()); err == nil && ci.AckFloor.Stream >= last {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("node n%d has not folded up to %d", i, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	mu.Lock()
	actions := len(decided)
	outcomes := map[events.Outcome]int{}
	for id, r := range decided {
		outcomes[r.Outcome]++
		if seen[id] != 1 {
			t.Errorf("acknowledged action %s in the log %d times", id, seen[id])
		}
	}
	var worst time.Duration
	for i := 1; i < len(times); i++ {
		worst = max(worst, times[i].Sub(times[i-1]))
	}
	mu.Unlock()
	if seen["probe-at-kill"] != 1 {
		t.Errorf("the probe's action in the log %d times", seen["probe-at-kill"])
	}
	lost := 0
	for id := range decided {
		if seen[id] == 0 {
			lost++
		}
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
	for i, s := range nodes {
		select {
		case err := <-s.Err():
			t.Errorf("node n%d driver: %v", i, err)
		default:
		}
	}
	t.Logf("ATTACH %d actions decided (%d retries with the same id; outcomes %v), %d actions in the log, %d log records, %d derived messages; %d acknowledged lost, %d doubled; longest gap between two decisions %v",
		actions, retries.Load(), outcomes, inLog, last, derived, lost, doubled, worst.Round(time.Millisecond))
	t.Logf("ATTACH load from the kill to its end %v; whole test %v; load %s; %d CPUs",
		loadEnd.Sub(killed).Round(time.Millisecond), time.Since(began).Round(time.Millisecond), loadavg(), runtime.NumCPU())
}

// probeAttached gates a fresh action through the cluster (the killed
// server last; nil when every server is up), retrying with the same id
// until it is decided, and returns how long that took.
func probeAttached(t *testing.T, oc *operatorCluster, killed *natsProc, creds string) time.Duration {
	start := time.Now()
	var order []string
	for _, p := range oc.procs {
		if p != killed {
			order = append(order, p.clientURL)
		}
	}
	if killed != nil {
		order = append(order, killed.clientURL)
	}
	ctx := t.Context() // ended with the test: then nothing is reported
	c, err := client.Connect(ctx, client.Options{URL: strings.Join(order, ","), CredsFile: creds, TLSCA: oc.ca, Timeout: 3 * time.Second})
	if err != nil {
		if ctx.Err() == nil {
			t.Errorf("probe: %v", err)
		}
		return time.Since(start)
	}
	defer c.Close()
	ev := events.Event{V: 1, ID: "probe-at-kill", Kind: events.KindAction, Conversation: "attach-probe",
		Agent: "agent", Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "true"}}}
	for time.Since(start) < 90*time.Second && ctx.Err() == nil {
		gctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := c.GateAndWait(gctx, ev, nil)
		cancel()
		if err == nil {
			return time.Since(start)
		}
	}
	if ctx.Err() == nil {
		t.Errorf("probe %s undecided after 90s", ev.ID)
	}
	return time.Since(start)
}

// loadavg is /proc/loadavg's first three figures, or "unknown".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
