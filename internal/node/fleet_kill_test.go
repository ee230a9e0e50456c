package node

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// envFleetKill runs TestFleetKillEachLeader, which builds the vigil binary
// and takes a few minutes: VIGIL_FLEET_KILL=1 go test ./internal/node -run TestFleetKillEachLeader -v
const envFleetKill = "VIGIL_FLEET_KILL"

// fleetWindow is every duplicate window of the fleet under test
// (--dedup-window: VIGIL_LOG's, and VIGIL_DERIVED's, never longer); each
// killed node stays down longer than it.
const fleetWindow = 8 * time.Second

// fleetStall is how long after a kill the agents may go without a
// decision before the test calls it a stall: well beyond an election
// (1.0–1.5 s) on a loaded machine, well short of a lost timeout.
const fleetStall = 10 * time.Second

// vigilNode is one `vigil serve` child process.
type vigilNode struct {
	name, dir, port string
	args            []string
	mu              sync.Mutex
	cmd             *exec.Cmd
	exited          chan struct{}
	log             *bytes.Buffer
	starts          int
}

func (n *vigilNode) start(t *testing.T, bin string) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	os.Remove(filepath.Join(n.dir, client.ServeInfoFile)) // left by a kill -9
	cmd := exec.Command(bin, n.args...)
	if n.log == nil {
		n.log = &bytes.Buffer{}
	}
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: n.log}, &lockedWriter{w: n.log}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	n.starts++
	exited := n.exited
	go func() { cmd.Wait(); close(exited) }()
}

// caughtUp waits (up to within) for the node's current life to log that
// its fold caught up, and says how long after the start it did.
func (n *vigilNode) caughtUp(within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		n.mu.Lock()
		out := n.log.String()
		n.mu.Unlock()
		lives := strings.Split(out, `msg="Starting nats-server"`)
		life := lives[len(lives)-1]
		started := lineTime(lives[len(lives)-2][strings.LastIndexByte(lives[len(lives)-2], '\n')+1:])
		if i := strings.Index(life, "caught up:"); i >= 0 {
			line := life[strings.LastIndexByte(life[:i], '\n')+1:]
			return fmt.Sprintf("fold caught up %v after the start", lineTime(line).Sub(started).Round(100*time.Millisecond))
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("fold NOT caught up %v after the start", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lineTime is the time of a log line (time=... as slog's text handler
// writes it).
func lineTime(line string) time.Time {
	_, rest, ok := strings.Cut(line, "time=")
	if !ok {
		return time.Time{}
	}
	ts, _, _ := strings.Cut(rest, " ")
	t, _ := time.Parse(time.RFC3339Nano, ts)
	return t
}

// kill sends SIGKILL and waits for the process to be gone.
func (n *vigilNode) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// buildVigil builds cmd/vigil from this module into a temp dir.
func buildVigil(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vigil")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/vigil")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build vigil: %v\n%s", err, out)
	}
	return bin
}

// TestFleetKillEachLeader is issue 15's "done when": three `vigil serve`
// processes clustered on loopback (every processor, one audit key, one
// creds dir), agents gating actions through all three; kill -9 in turn the
// node leading VIGIL_LOG, the node leading VIGIL_DERIVED, the node leading
// both (made so by a leader step-down) and a node leading neither, each
// restarted after a pause longer than every duplicate window. Then: every
// acknowledged event in the log exactly once, no derived output twice,
// exactly one gate.decided per action, and `vigil audit verify` (with the
// one key) and `vigil replay` clean. Logged per kill (BENCHMARKS.md): the
// time to the next decision, the longest any agent waited for one (the
// target is 3 s; a stall past fleetStall fails), and the restarted node's
// time to caught-up.
//
// Throughout, `vigil replay` runs in a loop, each time on another node
// first, under load and through every kill, then VIGIL_FLEET_REPLAYS
// (default 2) times on each node after each restart: any DIFFERENT fails
// the test. After each kill `vigil status` on the survivors must call the
// killed node down, and `vigil status --wait` on the restarted node must
// answer up only once its own fold is live.
func TestFleetKillEachLeader(t *testing.T) {
	if os.Getenv(envFleetKill) == "" {
		t.Skip("long (a few minutes): set " + envFleetKill + "=1")
	}
	bin := buildVigil(t)
	root := t.TempDir()
	// The fleet's credentials and its one audit key, made as docs/fleet.md
	// says, before the first start; the key is copied into every data
	// directory.
	creds := filepath.Join(root, "creds")
	keyFile := filepath.Join(root, "fleet.key")
	for _, args := range [][]string{
		{"creds", "create", "--role", "admin", "--creds-dir", creds},
		{"audit", "key", "create", "--out", keyFile},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("vigil %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	keySrc := filepath.Join(root, "key")
	if err := os.MkdirAll(datadir.New(keySrc).Audit(), 0o700); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(keyFile); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(datadir.New(keySrc).Signer(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := auditkey.Load(keySrc); err != nil { // writes verifier.key
		t.Fatal(err)
	}
	verifier := datadir.New(keySrc).Verifier()
	const n = 3
	nodes := make([]*vigilNode, n)
	routes := make([]string, n)
	clusterPorts := make([]string, n)
	for i := range n {
		clusterPorts[i] = freePort(t)
		routes[i] = "nats-route://127.0.0.1:" + clusterPorts[i]
	}
	var urls []string
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("n%d", i))
		copyDir(t, datadir.New(keySrc).Audit(), datadir.New(dir).Audit())
		port := freePort(t)
		urls = append(urls, "nats://127.0.0.1:"+port)
		nodes[i] = &vigilNode{name: fmt.Sprintf("n%d", i), dir: dir, port: port, args: []string{
			"serve", "--data", dir, "--node", fmt.Sprintf("n%d", i),
			"--cluster", "vigil-kill", "--cluster-listen", "127.0.0.1:" + clusterPorts[i],
			"--routes", strings.Join(routes, ","), "--replicas", "3", "--creds-dir", creds,
			"--nats-listen", "127.0.0.1:" + port, "--http-listen", "127.0.0.1:" + freePort(t),
			"--durability", "interval", "--dedup-window", fleetWindow.String(), "--seal-interval", "2s",
		}}
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.kill()
		}
		if dir := os.Getenv("VIGIL_FLEET_LOGS"); dir != "" {
			for _, nd := range nodes {
				os.WriteFile(filepath.Join(dir, nd.name+".log"), nd.log.Bytes(), 0o644)
			}
		}
		if t.Failed() {
			for _, nd := range nodes {
				t.Logf("--- %s log (tail) ---\n%s", nd.name, tail(nd.log.String(), 4000))
			}
		}
	})
	for _, nd := range nodes {
		nd.start(t, bin)
	}
	for _, nd := range nodes {
		waitFile(t, filepath.Join(nd.dir, client.ServeInfoFile), 90*time.Second)
	}
	all := strings.Join(urls, ",")
	admin, err := client.Connect(t.Context(), client.Options{URL: all, CredsFile: datadir.CredsAt(creds).Seed(natsutil.RoleAdmin), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// The fleet speaks TLS (the CA `vigil creds create` made, beside the seeds).
	nc, err := nats.Connect(all, mustCreds(t, datadir.CredsAt(creds).Seed(natsutil.RoleAdmin)), nats.RootCAs(datadir.CredsAt(creds).FleetCA()),
		nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}

	// Agents: one per node, each gating actions through its node first,
	// retrying with the same id until decided.
	ctx, stopLoad := context.WithCancel(t.Context())
	defer stopLoad()
	var (
		mu        sync.Mutex
		decided   = map[string]client.GateResult{}
		lastDone  atomic.Int64 // unix nanos of the latest decision
		gaveUp    atomic.Int64
		waits     []actionWait // every action's wait, decided or given up
		wg        sync.WaitGroup
		agentErrs = make(chan error, n)
	)
	for a := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			order := append([]string{urls[a]}, urls...)
			c, err := client.Connect(ctx, client.Options{URL: strings.Join(order, ","), CredsFile: datadir.CredsAt(creds).Seed(natsutil.RoleAgent), Timeout: 2 * time.Second})
			if err != nil {
				agentErrs <- err
				return
			}
			defer c.Close()
			for i := 0; ctx.Err() == nil; i++ {
				ev := events.Event{V: 1, ID: fmt.Sprintf("act-%d-%05d", a, i), Kind: events.KindAction, Conversation: fmt.Sprintf("kill-%d", a),
					Agent: "agent", Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": fmt.Sprintf("ls -la /tmp/%d", i)}}}
				start := time.Now()
				var (
					tries    int
					stored   time.Duration // from start to the first stored reply
					firstErr string        // the first failed attempt's error
				)
				opts := &client.GateOptions{OnAppended: func(client.Result) {
					if stored == 0 {
						stored = time.Since(start)
					}
				}}
				for ctx.Err() == nil {
					tries++
					gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					r, err := c.GateAndWait(gctx, ev, opts)
					cancel()
					if err != nil && firstErr == "" {
						firstErr = err.Error()
					}
					if err == nil {
						mu.Lock()
						decided[ev.ID] = r
						waits = append(waits, actionWait{agent: a, id: ev.ID, start: start, end: time.Now(), tries: tries, stored: stored, firstErr: firstErr})
						mu.Unlock()
						lastDone.Store(time.Now().UnixNano())
						break
					}
					if time.Since(start) > fleetWindow/2 {
						// Past half the log's window a retry could be stored
						// twice: give this one up (unacknowledged) and go on.
						gaveUp.Add(1)
						mu.Lock()
						waits = append(waits, actionWait{agent: a, id: ev.ID, start: start, end: time.Now(), gaveUp: true, tries: tries, stored: stored, firstErr: firstErr})
						mu.Unlock()
						t.Logf("agent %d: %s undecided for %v, given up: %v", a, ev.ID, time.Since(start).Round(time.Millisecond), err)
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	leaderOf := func(stream string) string {
		for {
			st, err := js.Stream(t.Context(), stream)
			if err == nil {
				info, err := st.Info(t.Context())
				if err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
					return info.Cluster.Leader
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	nodeNamed := func(name string) *vigilNode {
		for _, nd := range nodes {
			if nd.name == name {
				return nd
			}
		}
		t.Fatalf("no node %q", name)
		return nil
	}
	type kill struct {
		what   string
		target func() *vigilNode
	}
	kills := []kill{
		{"log leader", func() *vigilNode { return nodeNamed(leaderOf(events.StreamLog)) }},
		{"derived leader", func() *vigilNode { return nodeNamed(leaderOf(events.StreamDerived)) }},
		{"both leaders", func() *vigilNode {
			// The node leading VIGIL_LOG is made to lead VIGIL_DERIVED too
			// (a leader step-down with a preferred peer), as when a fold
			// once stalled for 30 s after this kill and the restart.
			l := leaderOf(events.StreamLog)
			for deadline := time.Now().Add(30 * time.Second); leaderOf(events.StreamDerived) != l && time.Now().Before(deadline); {
				req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, l)
				nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+events.StreamDerived, []byte(req), 2*time.Second)
				time.Sleep(500 * time.Millisecond)
			}
			return nodeNamed(l)
		}},
		{"neither", func() *vigilNode {
			l, d := leaderOf(events.StreamLog), leaderOf(events.StreamDerived)
			for _, nd := range nodes {
				if nd.name != l && nd.name != d {
					return nd
				}
			}
			return nodes[0]
		}},
	}
	// Replays in a loop while the load runs and through every kill, each
	// on another node first: on a live fleet under load a replay compares
	// up to the drivers' checkpoint and is identical every time.
	adminCreds := filepath.Join(creds, "admin.creds")
	rl := &replayLoop{t: t, bin: bin, creds: adminCreds, data: nodes[0].dir, urls: urls}
	replayCtx, stopReplays := context.WithCancel(t.Context())
	replaysDone := make(chan struct{})
	go func() {
		defer close(replaysDone)
		for i := 0; replayCtx.Err() == nil; i++ {
			rl.run(i%n, "under load")
		}
	}()
	time.Sleep(3 * time.Second) // load running
	var killTimes []killTime
	for _, k := range kills {
		nd := k.target()
		l, d := leaderOf(events.StreamLog), leaderOf(events.StreamDerived)
		before := lastDone.Load()
		killed := time.Now()
		nd.kill()
		// A new action gated from the moment of the kill (the killed node last).
		probe := probeGate(t, urls, creds, nd, k.what)
		for lastDone.Load() == before || lastDone.Load() < killed.UnixNano() {
			if time.Since(killed) > 60*time.Second {
				t.Fatalf("kill %s (%s): no agent decision within 60s", k.what, nd.name)
			}
			time.Sleep(5 * time.Millisecond)
		}
		next := time.Unix(0, lastDone.Load()).Sub(killed)
		t.Logf("FLEET kill %-14s node %s (log leader %s, derived leader %s): an agent's next decision %v after the kill; a new action gated at the kill decided after %v",
			k.what, nd.name, l, d, next.Round(time.Millisecond), probe.Round(time.Millisecond))
		// The 3 s target (issue 27) is a figure in BENCHMARKS.md, measured
		// here and logged above; what fails the test is a stall, which no
		// machine load explains.
		if next > fleetStall {
			t.Errorf("kill %s (%s): the agents' next decision came %v after the kill: gating stalled (more than %v)", k.what, nd.name, next.Round(time.Millisecond), fleetStall)
		}
		statusShowsDown(t, bin, adminCreds, urls, nd)
		time.Sleep(fleetWindow + 2*time.Second) // down longer than every duplicate window
		killTimes = append(killTimes, killTime{what: k.what, node: nd.name, at: killed, restart: time.Now()})
		nd.start(t, bin)
		statusServes(t, bin, adminCreds, nd)
		waitFile(t, filepath.Join(nd.dir, client.ServeInfoFile), 120*time.Second)
		t.Logf("FLEET restart of %s after the kill of the %s: %s", nd.name, k.what, nd.caughtUp(120*time.Second))
		for i := range n * rl.afterKill() {
			rl.run(i%n, "after the kill of "+nd.name)
		}
	}
	stopLoad()
	stopReplays()
	<-replaysDone
	wg.Wait()
	mu.Lock()
	logLongestWaits(t, killTimes, waits)
	mu.Unlock()
	close(agentErrs)
	for err := range agentErrs {
		if !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}

	// Every node folds the whole log.
	logSt, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	li, err := logSt.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	last := li.State.LastSeq
	for _, nd := range nodes {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			c, err := logSt.Consumer(t.Context(), "vigil-"+nd.name)
			if err == nil {
				if ci, err := c.Info(t.Context()); err == nil && ci.AckFloor.Stream >= last {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s has not folded up to %d", nd.name, last)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// The log: every decided action exactly once.
	seen := map[string]int{}
	if err := admin.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		seen[r.Event.ID]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	actions := len(decided)
	for id := range decided {
		if seen[id] != 1 {
			t.Errorf("acknowledged action %s in the log %d times", id, seen[id])
		}
	}
	mu.Unlock()
	for id, c := range seen {
		if c != 1 {
			t.Errorf("log holds %s %d times", id, c)
		}
	}
	// VIGIL_DERIVED: no id twice, one gate.decided per action, no alert.
	derived, doubled, decisions := checkDerivedOnce(t, js)
	for id := range seen {
		if strings.HasPrefix(id, "act-") && decisions[id] != 1 {
			t.Errorf("action %s has %d gate.decided", id, decisions[id])
		}
	}
	t.Logf("FLEET %d actions decided (%d given up unacknowledged), %d log records, %d derived messages, %d doubled", actions, gaveUp.Load(), last, derived, doubled)

	// The audit trail and replay, as an operator runs them. --data names
	// a node's data directory for its audit key: replay then signs the
	// checkpoints it reproduces with the fleet's key and compares them
	// byte for byte, and neither depends on what the environment's
	// default data directory ($VIGIL_DATA, ~/.local/share/vigil) holds.
	rl.log()
	for _, args := range [][]string{
		{"audit", "verify", "--nats", all, "--creds", adminCreds, "--pubkey", verifier, "--data", nodes[0].dir},
		{"replay", "--nats", all, "--creds", adminCreds, "--data", nodes[0].dir},
	} {
		name := strings.Join(args[:2], " ")
		stdout, stderr, code, err := runVigil(t, bin, args...)
		t.Logf("vigil %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, tail(stdout, 3000), tail(stderr, 2000))
		if err != nil || code != 0 {
			t.Errorf("vigil %s: exit %d: %v", name, code, err)
			if args[0] == "replay" {
				// Every difference, for the record.
				stdout, stderr, code, _ := runVigil(t, bin, append(args, "--json", "--max", "0")...)
				t.Logf("vigil replay --json --max 0: exit %d\n%s\n%s", code, tail(stdout, 20000), tail(stderr, 2000))
			}
		}
	}
	// The logs say what an operator must act on, once: no line per
	// duplicate-in-process retry or per failed route attempt, and one
	// "caught up" per start.
	for _, nd := range nodes {
		nd.mu.Lock()
		out, starts := nd.log.String(), nd.starts
		nd.mu.Unlock()
		if n := strings.Count(out, "duplicate message id is in process"); n > 0 {
			t.Errorf("node %s logged %d duplicate-in-process retries", nd.name, n)
		}
		if n := strings.Count(out, "Error trying to connect to route"); n > 0 {
			t.Errorf("node %s logged %d failed route attempts", nd.name, n)
		}
		// A node killed soon after a restart may not have caught up yet;
		// its last life (long) must have, and no life says it twice.
		lives := strings.Split(out, `msg="Starting nats-server"`)[1:]
		for i, life := range lives {
			n := strings.Count(life, "caught up:")
			if n > 1 || (i == len(lives)-1 && n != 1) {
				t.Errorf("node %s logged \"caught up\" %d times in its start %d of %d", nd.name, n, i+1, len(lives))
			}
		}
		t.Logf("FLEET node %s: %d log lines in %d starts, %d about unreachable peers", nd.name, strings.Count(out, "\n"), starts,
			strings.Count(out, "cluster peer at"))
	}
	t.Logf("FLEET on %d CPUs", runtime.NumCPU())
}

// actionWait is how long an agent waited for one action's decision:
// from its first request to the decision, across its retries.
type actionWait struct {
	agent      int
	id         string
	start, end time.Time
	gaveUp     bool
	tries      int           // GateAndWait calls (each bounded by 2 s)
	stored     time.Duration // from start to the first stored reply; 0 if none
	firstErr   string        // the first failed call's error, if any
}

// killTime is when a node was killed and when it was started again.
type killTime struct {
	what, node  string
	at, restart time.Time
}

// logLongestWaits logs, per kill, the longest an agent waited for a
// decision on an action in flight at the kill or gated while the node
// was down, and how many waited longer than fleetDecisionTarget.
func logLongestWaits(t *testing.T, kills []killTime, waits []actionWait) {
	t.Helper()
	for _, k := range kills {
		var longest actionWait
		over, n := 0, 0
		var slow []actionWait
		for _, w := range waits {
			if w.end.Before(k.at) || w.start.After(k.restart) {
				continue
			}
			n++
			if w.end.Sub(w.start) > time.Second {
				slow = append(slow, w)
			}
			d := w.end.Sub(w.start)
			if w.gaveUp || d > fleetDecisionTarget {
				over++
			}
			if d > longest.end.Sub(longest.start) {
				longest = w
			}
		}
		t.Logf("FLEET kill %-14s node %s: %d actions in flight or gated while it was down; longest wait %v (agent %d, %s, started %v after the kill, given up %v); %d over %v",
			k.what, k.node, n, longest.end.Sub(longest.start).Round(time.Millisecond), longest.agent, longest.id,
			longest.start.Sub(k.at).Round(time.Millisecond), longest.gaveUp, over, fleetDecisionTarget)
		slices.SortFunc(slow, func(a, b actionWait) int { return cmp.Compare(b.end.Sub(b.start), a.end.Sub(a.start)) })
		for _, w := range slow[:min(len(slow), 6)] {
			t.Logf("FLEET   slow: agent %d %s started %v after the kill: waited %v, %d calls, stored after %v; first error: %s",
				w.agent, w.id, w.start.Sub(k.at).Round(time.Millisecond), w.end.Sub(w.start).Round(time.Millisecond),
				w.tries, w.stored.Round(time.Millisecond), w.firstErr)
		}
	}
}

// fleetDecisionTarget is the longest an agent should wait for a decision
// after a kill (issue 27); measured and logged, not asserted.
const fleetDecisionTarget = 3 * time.Second

// runVigil runs the binary with a deadline and returns what it printed
// on each stream and its exit status (-1 when it did not exit by itself).
func runVigil(t *testing.T, bin string, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	code = -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && code >= 0 {
		err = nil // the exit status says it
	}
	return o.String(), e.String(), code, err
}

// probeGate gates a fresh action through the fleet (the killed node last)
// until it is decided, and returns how long that took.
func probeGate(t *testing.T, urls []string, creds string, killed *vigilNode, what string) time.Duration {
	t.Helper()
	start := time.Now()
	var order []string
	for _, u := range urls {
		if !strings.HasSuffix(u, ":"+killed.port) {
			order = append(order, u)
		}
	}
	c, err := client.Connect(t.Context(), client.Options{URL: strings.Join(order, ","), CredsFile: datadir.CredsAt(creds).Seed(natsutil.RoleAgent), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for n := 0; ; n++ {
		// A retry with the same id only within half the log's duplicate
		// window; then a new action.
		ev := events.Event{V: 1, ID: fmt.Sprintf("probe-%s-%d", strings.ReplaceAll(what, " ", "-"), n), Kind: events.KindAction, Conversation: "kill-probe",
			Agent: "agent", Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "true"}}}
		first := time.Now()
		for time.Since(first) < fleetWindow/2 {
			gctx, cancel := context.WithTimeout(t.Context(), time.Second)
			_, err := c.GateAndWait(gctx, ev, nil)
			cancel()
			if err == nil {
				return time.Since(start)
			}
			if time.Since(start) > 60*time.Second {
				t.Fatalf("probe %s: %v", ev.ID, err)
			}
		}
	}
}

func mustCreds(t *testing.T, path string) nats.Option {
	t.Helper()
	o, err := natsutil.CredsOption(path)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func waitFile(t *testing.T, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written within %v", path, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// envFleetReplays sets how many replays run on each node after each kill
// (default 2; issue 27's "done when" is 50).
const envFleetReplays = "VIGIL_FLEET_REPLAYS"

// replayLoop runs `vigil replay` against the fleet, one node first, and
// fails the test on any DIFFERENT (exit 1). A replay that cannot run
// (exit 2: its node killed under it) is counted, not failed: it verified
// nothing, and said so.
type replayLoop struct {
	t                 *testing.T
	bin, creds, data  string
	urls              []string
	mu                sync.Mutex
	runs, identical   int
	unverified, worst int
	slowest           time.Duration
}

func (r *replayLoop) afterKill() int {
	if v := os.Getenv(envFleetReplays); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n >= 0 {
			return n
		}
	}
	return 2
}

func (r *replayLoop) run(first int, when string) {
	order := append([]string{r.urls[first]}, r.urls...)
	start := time.Now()
	stdout, stderr, code, err := runVigil(r.t, r.bin, "replay", "--nats", strings.Join(order, ","), "--creds", r.creds, "--data", r.data)
	took := time.Since(start)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	r.slowest = max(r.slowest, took)
	switch {
	case err == nil && code == 0:
		r.identical++
	case code == 1:
		r.worst++
		r.t.Errorf("vigil replay (%s, node %d first) DIFFERENT:\n%s\n%s", when, first, tail(stdout, 6000), tail(stderr, 2000))
	default:
		r.unverified++
		r.t.Logf("vigil replay (%s, node %d first): exit %d, nothing verified: %v\n%s", when, first, code, err, tail(stderr, 1000))
	}
}

func (r *replayLoop) log() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t.Logf("FLEET replays during load and after each kill: %d runs, %d identical, %d different, %d could not run (a node killed under them); slowest %v",
		r.runs, r.identical, r.worst, r.unverified, r.slowest.Round(time.Millisecond))
	if r.identical == 0 {
		r.t.Errorf("no replay ran to the end")
	}
}

// statusShowsDown checks that `vigil status` on the survivors calls the
// killed node down, with since when, within a few Raft heartbeats.
func statusShowsDown(t *testing.T, bin, creds string, urls []string, killed *vigilNode) {
	t.Helper()
	var order []string
	for _, u := range urls {
		if !strings.HasSuffix(u, ":"+killed.port) {
			order = append(order, u)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		stdout, _, _, _ := runVigil(t, bin, "status", "--nats", strings.Join(order, ","), "--creds", creds)
		out = stdout
		if strings.Contains(stdout, "node "+killed.name+": down since ") {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("status does not show the killed node %s down within 20 s:\n%s", killed.name, out)
}

// statusServes checks that `vigil status --wait` on a restarted node
// answers up only once the node serves: its fold is live and serve.json
// (written once the node serves) exists.
func statusServes(t *testing.T, bin, creds string, nd *vigilNode) {
	t.Helper()
	stdout, stderr, code, err := runVigil(t, bin, "status", "--wait", "120s", "--nats", "nats://127.0.0.1:"+nd.port, "--creds", creds, "--json")
	if err != nil || code != 0 {
		t.Errorf("status --wait on the restarted node %s: exit %d: %v\n%s%s", nd.name, code, err, stdout, stderr)
		return
	}
	var st struct {
		Node  string `json:"node"`
		Folds []struct {
			Node string `json:"node"`
			Live bool   `json:"live"`
		} `json:"folds"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdout)
	}
	live := false
	for _, f := range st.Folds {
		live = live || (f.Node == nd.name && f.Live)
	}
	if st.Node != nd.name || !live {
		t.Errorf("status --wait on %s answered up before its fold was live:\n%s", nd.name, stdout)
	}
}

// checkDerivedOnce reads VIGIL_DERIVED whole and fails the test for an id
// stored twice (the first 20 named) or an alert other than a driver's. It
// returns how many messages it read, how many ids were doubled, and the
// number of gate.decided per action id.
func checkDerivedOnce(t *testing.T, js jetstream.JetStream) (messages, doubled int, decisions map[string]int) {
	t.Helper()
	ids := map[string]int{}
	decisions = map[string]int{}
	err := natsutil.ReadStream(t.Context(), js, natsutil.ReadOptions{Stream: events.StreamDerived}, func(r natsutil.RawRecord) error {
		d, err := events.DecodeDerived(r.Data)
		if err != nil {
			return err
		}
		ids[d.ID]++
		if d.Kind == events.KindAlert && !strings.HasPrefix(d.ID, "driver:") {
			// A node's own alarm (a stream replaced, the continuity check)
			// or a fold's: nothing in a fleet test warrants one. (replay
			// ignores the nodes' own, so it is checked here.)
			t.Errorf("alert %s stored: %s", d.ID, r.Data)
		}
		if d.Kind == events.KindGateDecided {
			g, err := events.DerivedDataAs[events.GateDecided](&d)
			if err != nil {
				return err
			}
			decisions[g.ActionID]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, c := range ids {
		if c != 1 {
			doubled++
			if doubled <= 20 {
				t.Errorf("derived %s stored %d times", id, c)
			}
		}
	}
	return len(ids), doubled, decisions
}
