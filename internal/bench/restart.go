package bench

// The restart benchmark (`vigil bench restart`): how long a node
// takes from its start to the first new decision, and its memory then, as
// the log grows. The node is a child process running `vigil serve`, so its
// RSS is the restarted node's alone, read from /proc/PID/status.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// RestartConfig configures the restart benchmark.
type RestartConfig struct {
	// Events is how many events the log holds before the restart.
	Events int
	// Conversations the events are spread over; 0 means 2,000.
	Conversations int
	// Binary is the vigil executable run as `Binary serve …`; Env is added
	// to its environment.
	Binary string
	Env    []string
	// ServeArgs are added to the restarted node's `vigil serve` command
	// line (not the build's), e.g. --dedup-window 1m.
	ServeArgs []string
	// Dir is the node's data directory, kept afterwards; empty means a
	// temporary directory, removed. With Reuse, a log built there by an
	// earlier run of the same Events is restarted without building it again.
	Dir   string
	Reuse bool
	// Durability of the node; empty means interval (the build is then not
	// limited by the disk; a restart reads the same files either way).
	Durability natsutil.Durability
	// Producers append concurrently, Batch events per request; 0 means 4 and 100.
	Producers int
	Batch     int
	// ViaIngest builds the log through the ingest service (agents'
	// requests: validation, redaction, atomic batches), as agents write
	// it; otherwise the events are published straight into VIGIL_LOG with
	// the admin credentials (as an import of history could be), several
	// times faster. The sample events hold nothing to redact, so the log
	// is the same either way.
	ViaIngest bool
	// Runs is how many times the node is restarted and measured; 0 means 1.
	Runs int
	// Timeout bounds the wait for the first decision; 0 means 15 minutes.
	Timeout time.Duration
	// Settle, when positive, keeps the node running that long after the
	// first decision and samples its RSS and CPU again: what the work the
	// node does in the background after a start (the read models'
	// verification, the continuity check) adds.
	Settle time.Duration
	// Progress, when set, is told what the benchmark is doing.
	Progress func(format string, args ...any)
}

// RestartRun is one restart.
type RestartRun struct {
	// DecisionSeconds runs from starting `vigil serve` until a new action's
	// decision reaches the agent that sent it.
	DecisionSeconds float64 `json:"decision_seconds"`
	// ServeInfoSeconds runs until the node wrote serve.json (clients can find it).
	ServeInfoSeconds float64 `json:"serve_info_seconds"`
	// RSSMB and HWMMB are the child's VmRSS and VmHWM (peak) at the decision.
	RSSMB float64 `json:"rss_mb"`
	HWMMB float64 `json:"hwm_mb"`
	// CPUSeconds is the child's user + system CPU time until the decision.
	CPUSeconds float64 `json:"cpu_seconds"`
	// Restored is the log seq of the snapshot the driver started from (0:
	// none) and Refolded the records it folded at warm-up after it, from
	// the node's log line "driver warmed up" (-1: not found).
	Restored int64 `json:"restored"`
	Refolded int64 `json:"refolded"`
	// IndexRecords and IndexSeconds are what the ingest service's id index
	// read of the log before the node answered, from its log line "id
	// index caught up with the log" (0: it was at the log's end already;
	// the first start on a log without an index reads it whole).
	IndexRecords int64   `json:"index_records"`
	IndexSeconds float64 `json:"index_seconds"`
	// Load1 is the machine's 1-minute load average at the decision.
	Load1 float64 `json:"load1"`
	// SettledRSSMB, SettledHWMMB and SettledCPUSeconds are the same
	// figures RestartConfig.Settle after the decision (0: not sampled).
	SettledRSSMB      float64 `json:"settled_rss_mb,omitempty"`
	SettledHWMMB      float64 `json:"settled_hwm_mb,omitempty"`
	SettledCPUSeconds float64 `json:"settled_cpu_seconds,omitempty"`
}

// RestartResult is what `vigil bench restart --json` prints.
type RestartResult struct {
	Events        int          `json:"events"`
	Conversations int          `json:"conversations"`
	ServeArgs     []string     `json:"serve_args,omitempty"`
	LogRecords    uint64       `json:"log_records"`
	Durability    string       `json:"durability"`
	BuildSeconds  float64      `json:"build_seconds"` // 0 when the log was reused
	LogMB         float64      `json:"log_mb"`        // the data directory's size
	Runs          []RestartRun `json:"runs"`
	CPUs          int          `json:"cpus"`
	GoVersion     string       `json:"go_version"`
}

// restartMarker records, in the data directory, the log a run built.
const restartMarker = "bench-restart.json"

// RunRestart builds a log of cfg.Events events with a `vigil serve` child,
// stops it (SIGTERM: it stores its snapshot at stop), then starts it again
// cfg.Runs times and measures each start until a new action's decision.
func RunRestart(ctx context.Context, cfg RestartConfig) (RestartResult, error) {
	if cfg.Events <= 0 {
		return RestartResult{}, errors.New("bench restart: events must be positive")
	}
	if cfg.Binary == "" {
		return RestartResult{}, errors.New("bench restart: no vigil binary")
	}
	if cfg.Conversations <= 0 {
		cfg.Conversations = 2000
	}
	if cfg.Durability == "" {
		cfg.Durability = natsutil.DurabilityInterval
	}
	if cfg.Producers <= 0 {
		cfg.Producers = 4
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Minute
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string, ...any) {}
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "vigil-bench-restart-*")
		if err != nil {
			return RestartResult{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return RestartResult{}, err
	}
	res := RestartResult{Events: cfg.Events, Conversations: cfg.Conversations, ServeArgs: cfg.ServeArgs, Durability: string(cfg.Durability),
		CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}

	var marker struct {
		Events        int    `json:"events"`
		Conversations int    `json:"conversations"`
		LastSeq       uint64 `json:"last_seq"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, restartMarker)); cfg.Reuse && err == nil &&
		json.Unmarshal(b, &marker) == nil && marker.Events == cfg.Events && marker.Conversations == cfg.Conversations {
		cfg.Progress("reusing the log of %d events in %s; a first start lets the node fold it all", cfg.Events, dir)
		last, err := primeNode(ctx, cfg, dir)
		if err != nil {
			return res, err
		}
		res.LogRecords = last
	} else {
		if _, err := os.Stat(datadir.New(dir).JetStream()); err == nil {
			return res, fmt.Errorf("bench restart: %s holds a log already (not one of %d events built by this bench): give an empty --dir", dir, cfg.Events)
		}
		start := time.Now()
		last, err := buildRestartLog(ctx, cfg, dir)
		if err != nil {
			return res, err
		}
		res.BuildSeconds = time.Since(start).Seconds()
		res.LogRecords = last
		marker.Events, marker.Conversations, marker.LastSeq = cfg.Events, cfg.Conversations, last
		b, _ := json.Marshal(marker)
		if err := os.WriteFile(filepath.Join(dir, restartMarker), b, 0o600); err != nil {
			return res, err
		}
	}
	res.LogMB = float64(dirSize(datadir.New(dir).JetStream())) / (1 << 20)
	for i := range cfg.Runs {
		cfg.Progress("restart %d of %d (%d events in the log)", i+1, cfg.Runs, cfg.Events)
		r, err := measureRestart(ctx, cfg, dir, i)
		if err != nil {
			return res, err
		}
		res.Runs = append(res.Runs, r)
	}
	return res, nil
}

// serveChild is a running `vigil serve`.
type serveChild struct {
	cmd     *exec.Cmd
	logPath string
	done    chan error
	// stopOnce makes stop idempotent; stopErr is its result.
	stopOnce sync.Once
	stopErr  error
}

func startServe(cfg RestartConfig, dir, logName string, extra ...string) (*serveChild, error) {
	// A serve.json left by the last child names its old port.
	if err := os.Remove(datadir.New(dir).ServeInfo()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	logPath := filepath.Join(dir, logName)
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	args := append([]string{"serve", "--data", dir, "--nats-listen", "127.0.0.1:0", "--http-listen", "",
		"--durability", string(cfg.Durability), "--log-level", "info"}, extra...)
	cmd := exec.Command(cfg.Binary, args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench restart: start %s serve: %w", cfg.Binary, err)
	}
	c := &serveChild{cmd: cmd, logPath: logPath, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	return c, nil
}

// stop sends SIGTERM and waits for the child to exit (it stores its
// snapshot at stop), killing it after a minute.
func (c *serveChild) stop() error {
	c.stopOnce.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-c.done:
			if err != nil {
				c.stopErr = fmt.Errorf("bench restart: vigil serve exited with %w (log in %s)", err, c.logPath)
			}
		case <-time.After(time.Minute):
			_ = c.cmd.Process.Kill()
			<-c.done
			c.stopErr = fmt.Errorf("bench restart: vigil serve did not stop within a minute of SIGTERM (log in %s)", c.logPath)
		}
	})
	return c.stopErr
}

// connect waits for the child's serve.json and connects as role.
func (c *serveChild) connect(ctx context.Context, dir string, role natsutil.Role) (*client.Client, time.Time, error) {
	for {
		si, err := client.ReadServeInfo(dir)
		if err == nil && si.PID == c.cmd.Process.Pid {
			at := time.Now()
			cl, err := client.Connect(ctx, client.Options{DataDir: dir, Role: role, Name: "vigil-bench", Timeout: time.Minute})
			if err == nil {
				return cl, at, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case err := <-c.done:
			c.done <- err
			return nil, time.Time{}, fmt.Errorf("bench restart: vigil serve exited (%v) before it served; log in %s", err, c.logPath)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// RestartEvent is event i of the benchmark's log: SampleEvent over
// conversations conversations.
func RestartEvent(i, conversations int) events.Event {
	ev := SampleEvent(i)
	ev.ID = fmt.Sprintf("restart-%09d", i)
	if i%3 == 1 {
		ev.Data["action_id"] = fmt.Sprintf("restart-%09d", i-1)
	}
	ev.Conversation = fmt.Sprintf("conv-%04d", i%conversations)
	return ev
}

// buildRestartLog appends cfg.Events events to a fresh node on dir, waits
// until its driver has checkpointed them all, and stops it. It returns the
// log's last seq.
func buildRestartLog(ctx context.Context, cfg RestartConfig, dir string) (uint64, error) {
	c, err := startServe(cfg, dir, "serve-build.log")
	if err != nil {
		return 0, err
	}
	defer c.stop()
	admin, _, err := c.connect(ctx, dir, natsutil.RoleAdmin)
	if err != nil {
		return 0, err
	}
	defer admin.Close()
	cfg.Progress("building a log of %d events (%d conversations) in %s", cfg.Events, cfg.Conversations, dir)
	if !cfg.ViaIngest {
		if err := publishDirect(ctx, cfg, admin); err != nil {
			return 0, err
		}
	} else if err := appendViaIngest(ctx, cfg, dir); err != nil {
		return 0, err
	}
	return waitFoldedAndStop(ctx, cfg, c, admin)
}

// publishDirect publishes the events straight into VIGIL_LOG, with
// asynchronous publishes, checking every acknowledgement.
func publishDirect(ctx context.Context, cfg RestartConfig, admin *client.Client) error {
	js, err := jetstream.New(admin.Conn(), jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return err
	}
	// Wait for the acks of every window of publishes, under the
	// client's pending limit so a publish never stalls.
	const window = 2048
	futs := make([]jetstream.PubAckFuture, 0, window)
	check := func() error {
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Minute):
			return errors.New("bench restart: publishes unacknowledged for 5 minutes")
		}
		for _, f := range futs {
			select {
			case err := <-f.Err():
				return fmt.Errorf("bench restart: publish: %w", err)
			default:
			}
		}
		futs = futs[:0]
		return nil
	}
	for i := range cfg.Events {
		ev := RestartEvent(i, cfg.Conversations)
		b, err := ev.MarshalMsgpack()
		if err != nil {
			return err
		}
		msg := &nats.Msg{Subject: events.LogSubject(ev.Conversation), Data: b, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, ev.ID)
		f, err := js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute))
		if err != nil {
			return fmt.Errorf("bench restart: publish: %w", err)
		}
		futs = append(futs, f)
		if len(futs) == window {
			if err := check(); err != nil {
				return err
			}
			if (i+1)%(50*window) == 0 {
				cfg.Progress("published %d of %d events", i+1, cfg.Events)
			}
		}
	}
	return check()
}

// primeNode starts the node on a log built earlier, waits until its
// driver has folded all of it (an earlier build may have stopped before),
// and stops it, so the measured starts begin from a snapshot at its end.
func primeNode(ctx context.Context, cfg RestartConfig, dir string) (uint64, error) {
	c, err := startServe(cfg, dir, "serve-prime.log")
	if err != nil {
		return 0, err
	}
	defer c.stop()
	admin, _, err := c.connect(ctx, dir, natsutil.RoleAdmin)
	if err != nil {
		return 0, err
	}
	defer admin.Close()
	return waitFoldedAndStop(ctx, cfg, c, admin)
}

// appendViaIngest appends the events as agents do, Producers at a time.
func appendViaIngest(ctx context.Context, cfg RestartConfig, dir string) error {
	var (
		wg   sync.WaitGroup
		sent atomicCounter
		errs = make(chan error, cfg.Producers)
	)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for p := range cfg.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := client.Connect(pctx, client.Options{DataDir: dir, Role: natsutil.RoleAgent, Name: "vigil-bench", Timeout: time.Minute})
			if err != nil {
				errs <- err
				cancel()
				return
			}
			defer cl.Close()
			batch := make([]events.Event, 0, cfg.Batch)
			// Producer p sends batches p, p+Producers, …: the log's order
			// stays close to the events' order.
			for lo := p * cfg.Batch; lo < cfg.Events; lo += cfg.Producers * cfg.Batch {
				batch = batch[:0]
				for i := lo; i < min(lo+cfg.Batch, cfg.Events); i++ {
					batch = append(batch, RestartEvent(i, cfg.Conversations))
				}
				if _, err := cl.AppendBatch(pctx, batch); err != nil {
					errs <- fmt.Errorf("bench restart: append: %w", err)
					cancel()
					return
				}
				if n := sent.add(len(batch)); n%(100*cfg.Batch) < cfg.Batch {
					cfg.Progress("appended %d of %d events", n, cfg.Events)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	return nil
}

// waitFoldedAndStop waits until the node's driver has checkpointed the
// whole log, then stops the node; it returns the log's last seq.
func waitFoldedAndStop(ctx context.Context, cfg RestartConfig, c *serveChild, admin *client.Client) (uint64, error) {
	// Wait for the driver to checkpoint everything appended.
	// JetStream API calls time out on a node busy folding: retry them.
	js := admin.JetStream()
	var last uint64
	for last == 0 {
		st, err := js.Stream(ctx, events.StreamLog)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = st.Info(ctx); err == nil {
				last = info.State.LastSeq
				break
			}
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		cfg.Progress("reading VIGIL_LOG's length: %v; again", err)
		time.Sleep(time.Second)
	}
	cfg.Progress("waiting for the driver to fold %d records", last)
	for {
		st, err := js.Stream(ctx, events.StreamLog)
		var floor uint64
		if err == nil {
			floor, err = driverFloor(ctx, st)
		}
		if err != nil {
			cfg.Progress("reading the driver's checkpoint: %v; again", err)
		} else if floor >= last {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case err := <-c.done:
			c.done <- err
			return 0, fmt.Errorf("bench restart: vigil serve exited (%v) while folding; log in %s", err, c.logPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
	admin.Close()
	cfg.Progress("stopping the node (it stores its snapshot at stop)")
	if err := c.stop(); err != nil {
		return 0, err
	}
	return last, nil
}

// driverFloor is the lowest ack floor of the node's driver consumers
// ("vigil-…" durables) on VIGIL_LOG.
func driverFloor(ctx context.Context, st jetstream.Stream) (uint64, error) {
	lister := st.ListConsumers(ctx)
	floor, found := uint64(0), false
	for ci := range lister.Info() {
		if !strings.HasPrefix(ci.Name, "vigil-") {
			continue
		}
		if !found || ci.AckFloor.Stream < floor {
			floor, found = ci.AckFloor.Stream, true
		}
	}
	if err := lister.Err(); err != nil {
		return 0, err
	}
	return floor, nil
}

// measureRestart starts the node on dir and measures it until a new
// action's decision, then stops it.
func measureRestart(ctx context.Context, cfg RestartConfig, dir string, run int) (RestartRun, error) {
	var r RestartRun
	start := time.Now()
	c, err := startServe(cfg, dir, fmt.Sprintf("serve-restart-%d.log", run), cfg.ServeArgs...)
	if err != nil {
		return r, err
	}
	defer c.stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cl, at, err := c.connect(ctx, dir, natsutil.RoleAgent)
	if err != nil {
		return r, err
	}
	defer cl.Close()
	r.ServeInfoSeconds = at.Sub(start).Seconds()
	ev := events.Event{V: 1, ID: fmt.Sprintf("restart-probe-%d-%d", run, start.UnixNano()), Kind: events.KindAction,
		Conversation: fmt.Sprintf("restart-probe-%d", run), Agent: "coder-1", Time: time.Now().UTC(),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "ls -la"}}}
	for {
		// The same id is answered with the same decision: retrying after
		// an attempt that timed out (a long warm-up) stores nothing twice.
		actx, acancel := context.WithTimeout(ctx, 2*time.Minute)
		_, err := cl.GateAndWait(actx, ev, nil)
		acancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return r, fmt.Errorf("bench restart: no decision within %s of the start: %w (log in %s)", cfg.Timeout, err, c.logPath)
		}
	}
	r.DecisionSeconds = time.Since(start).Seconds()
	pid := c.cmd.Process.Pid
	r.RSSMB, r.HWMMB = procStatusMB(pid, "VmRSS"), procStatusMB(pid, "VmHWM")
	r.CPUSeconds = procCPUSeconds(pid)
	r.Load1 = load1()
	cl.Close()
	if cfg.Settle > 0 {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case err := <-c.done:
			c.done <- err
			return r, fmt.Errorf("bench restart: vigil serve exited (%v) after its first decision; log in %s", err, c.logPath)
		case <-time.After(cfg.Settle):
		}
		r.SettledRSSMB, r.SettledHWMMB = procStatusMB(pid, "VmRSS"), procStatusMB(pid, "VmHWM")
		r.SettledCPUSeconds = procCPUSeconds(pid)
	}
	if err := c.stop(); err != nil {
		return r, err
	}
	r.Restored, r.Refolded = warmUpFromLog(c.logPath)
	r.IndexRecords, r.IndexSeconds = indexFromLog(c.logPath)
	return r, nil
}

// indexFromLog reads the records the id index read at start, and how long
// it took, from the node's "id index caught up with the log" line.
func indexFromLog(path string) (records int64, seconds float64) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="ingest: id index caught up with the log"`) {
			continue
		}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "records":
				records, _ = strconv.ParseInt(v, 10, 64)
			case "seconds":
				seconds, _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return records, seconds
}

// warmUpFromLog reads the snapshot seq and the records refolded from the
// node's "driver warmed up" log line; -1 when it is not there.
func warmUpFromLog(path string) (restored, refolded int64) {
	restored, refolded = -1, -1
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="driver warmed up"`) {
			continue
		}
		for _, kv := range strings.Fields(line) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "snapshot":
				restored = n
			case "refolded":
				refolded = n
			}
		}
	}
	return restored, refolded
}

// procStatusMB returns a size field of /proc/PID/status in MB (0 if unreadable).
func procStatusMB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// procCPUSeconds returns the user + system CPU time of pid (clock ticks of
// 1/100 s, as on every Linux this runs on).
func procCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// load1 is the 1-minute load average (0 if unreadable).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// dirSize is the total size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

type atomicCounter struct {
	mu sync.Mutex
	n  int
}

func (c *atomicCounter) add(k int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += k
	return c.n
}
