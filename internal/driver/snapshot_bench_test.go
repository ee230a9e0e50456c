package driver_test

// The restart benchmark of issue 14, behind a flag (never a timed test):
//
//	go test ./internal/driver -run '^TestRestartBench$' -restart-bench 60000,300000 -v -timeout 60m
//
// For each N it builds a log of N events (2,000 conversations, a third of
// them bash actions: internal/bench.SampleEvents) with a real node
// (node.Start, as `vigil serve` runs), stops it, then restarts the node in
// a child process (so its memory is only the restarted node's) and
// measures the time from the start of node.Start until a new action's
// decision arrives, and the child's RSS then. Twice: from the snapshot the
// node stored at stop, and with the snapshot bucket deleted (the warm-up
// refolds the whole log prefix, as before snapshots).

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/bench"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/driver"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

var (
	restartBench = flag.String("restart-bench", "", "run the restart benchmark for these log sizes (comma-separated)")
	restartDir   = flag.String("restart-dir", "", "keep the benchmark's data directories here (default: a temporary directory)")
	restartChild = flag.String("restart-child", "", "internal: restart a node on this data directory and report")
	restartLog   = flag.Bool("restart-log", false, "log the restarted node's start (slog, to stderr)")
	restartHeap  = flag.String("restart-heap", "", "write the restarted node's heap profile here at its first decision")
	restartCPU   = flag.String("restart-cpu", "", "write the restarted node's CPU profile, from its start to its first decision, here")
	restartAfter = flag.String("restart-after", "", "write the restarted node's CPU and heap profiles of the minute after its first decision here (.cpu, .heap)")
	restartReuse = flag.Bool("restart-reuse", false, "reuse a log already built in -restart-dir (a first restart then makes this build's snapshot)")
)

// restartResult is what a child reports.
type restartResult struct {
	Mode            string  `json:"mode"`
	Events          int     `json:"events"`
	StartSeconds    float64 `json:"start_seconds"`    // node.Start until it returned (driver ready)
	DecisionSeconds float64 `json:"decision_seconds"` // node.Start until a new action's decision
	RSSMB           float64 `json:"rss_mb"`           // VmRSS then
	HWMMB           float64 `json:"hwm_mb"`           // VmHWM (peak) then
	HeapMB          float64 `json:"heap_mb"`          // Go heap in use then
	Restored        uint64  `json:"restored"`
	Refolded        uint64  `json:"refolded"`
	SnapshotMB      float64 `json:"snapshot_mb"` // the snapshot restored, as stored
	// CPUSeconds is the process's user+system CPU time until the decision:
	// what the restart costs, whatever else the machine is doing.
	CPUSeconds float64 `json:"cpu_seconds"`
}

func TestRestartBench(t *testing.T) {
	if *restartBench == "" {
		t.Skip("pass -restart-bench N[,N…] to run")
	}
	var out []restartResult
	for _, f := range strings.Split(*restartBench, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("-restart-bench %q: want event counts", *restartBench)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprint(n))
		if *restartDir != "" {
			dir = filepath.Join(*restartDir, fmt.Sprint(n))
		}
		if _, err := os.Stat(filepath.Join(dir, "jetstream")); *restartReuse && err == nil {
			r := runChild(t, dir, "prime", n)
			t.Logf("N=%d: reusing the log in %s; a first restart restored seq %d and refolded %d", n, dir, r.Restored, r.Refolded)
		} else {
			build := time.Now()
			buildLog(t, dir, n)
			t.Logf("N=%d: log built in %s", n, time.Since(build).Round(time.Millisecond))
		}
		for _, mode := range []string{"snapshot", "full-refold"} {
			if mode == "full-refold" {
				dropSnapshots(t, dir)
			}
			r := runChild(t, dir, mode, n)
			t.Logf("N=%d %s: decision %.2f s (node.Start %.2f s, CPU %.2f s), RSS %.0f MB (peak %.0f MB, heap %.0f MB), restored seq %d (%.1f MB), refolded %d",
				n, mode, r.DecisionSeconds, r.StartSeconds, r.CPUSeconds, r.RSSMB, r.HWMMB, r.HeapMB, r.Restored, r.SnapshotMB, r.Refolded)
			out = append(out, r)
		}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(b))
}

func nodeConfig(dir string) node.Config {
	cfg := node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
	}
	if *restartLog {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// buildLog appends n sample events to a node on dir and stops it once
// they are all checkpointed.
func buildLog(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := t.Context()
	s, err := node.Start(ctx, nodeConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	evs := bench.SampleEvents(n)
	for i := range evs {
		evs[i].Conversation = fmt.Sprintf("conv-%04d", i%2000)
	}
	const producers, batch = 4, 100
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	per := (n + producers - 1) / producers
	for p := range producers {
		lo, hi := p*per, min((p+1)*per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(ctx, client.Options{URL: s.Info().NATSURL, CredsFile: datadir.New(dir).Creds().Seed(natsutil.RoleAgent), Timeout: time.Minute})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := lo; i < hi; i += batch {
				if _, err := c.AppendBatch(ctx, evs[i:min(i+batch, hi)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, err := s.JetStream().Stream(ctx, events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for s.Driver().Checkpointed() < info.State.LastSeq {
		select {
		case err := <-s.Err():
			t.Fatal(err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// dropSnapshots deletes the snapshot bucket of the node on dir.
func dropSnapshots(t *testing.T, dir string) {
	t.Helper()
	cfg := nodeConfig(dir)
	cfg.NoProcessors = true
	s, err := node.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.JetStream().DeleteObjectStore(t.Context(), driver.SnapshotBucket); err != nil {
		t.Fatal(err)
	}
}

func runChild(t *testing.T, dir, mode string, n int) restartResult {
	t.Helper()
	args := []string{"-test.run", "^TestRestartBenchChild$", "-restart-child", dir}
	if *restartLog {
		args = append(args, "-restart-log")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var r restartResult
	found := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "RESTART "); ok {
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if !found {
		t.Fatal("the child reported nothing")
	}
	r.Mode, r.Events = mode, n
	return r
}

// TestRestartBenchChild is the restarted node (see TestRestartBench).
func TestRestartBenchChild(t *testing.T) {
	if *restartChild == "" {
		t.Skip("run by TestRestartBench")
	}
	dir := *restartChild
	ctx := t.Context()
	stopCPU := func() {}
	if *restartCPU != "" {
		stopCPU = startCPUProfile(t, *restartCPU)
	}
	start := time.Now()
	s, err := node.Start(ctx, nodeConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	started := time.Since(start)
	c, err := client.Connect(ctx, client.Options{URL: s.Info().NATSURL, CredsFile: datadir.New(dir).Creds().Seed(natsutil.RoleAgent), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ev := events.Event{V: 1, ID: fmt.Sprintf("restart-%d", time.Now().UnixNano()), Kind: events.KindAction,
		Conversation: "restart-probe", Agent: "coder-1", Time: time.Now().UTC(),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "ls -la"}}}
	gctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	res, err := c.GateAndWait(gctx, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	decided := time.Since(start)
	stopCPU()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if *restartHeap != "" {
		f, err := os.Create(*restartHeap)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	rss, hwm := procStatus("VmRSS"), procStatus("VmHWM")
	if *restartAfter != "" {
		profileAfter(t, *restartAfter, time.Minute)
	}
	wu := s.Driver().WarmUp()
	var snapMB float64
	if fi, err := os.Stat(filepath.Join(datadir.New(dir).Snapshots(), wu.RestoredFrom)); err == nil && wu.RestoredFrom != "" {
		snapMB = float64(fi.Size()) / (1 << 20) // a single host's (see driver.SnapshotConfig.Dir)
	} else if wu.RestoredFrom != "" {
		if ob, err := s.JetStream().ObjectStore(ctx, driver.SnapshotBucket); err == nil {
			if info, err := ob.GetInfo(ctx, wu.RestoredFrom); err == nil {
				snapMB = float64(info.Size) / (1 << 20)
			}
		}
	}
	b, _ := json.Marshal(restartResult{StartSeconds: started.Seconds(), DecisionSeconds: decided.Seconds(),
		RSSMB: rss, HWMMB: hwm, HeapMB: float64(ms.HeapInuse) / (1 << 20), Restored: wu.Restored, Refolded: wu.Folded, SnapshotMB: snapMB, CPUSeconds: cpu.Seconds()})
	fmt.Println("RESTART " + string(b))
	t.Logf("decision %s by %s", res.Outcome, res.By)
}

// profileAfter writes a CPU profile of the next d to path.cpu, then a
// heap profile to path.heap.
func profileAfter(t *testing.T, path string, d time.Duration) {
	stopCPU := startCPUProfile(t, path+".cpu")
	time.Sleep(d)
	stopCPU()
	h, err := os.Create(path + ".heap")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := pprof.WriteHeapProfile(h); err != nil {
		t.Fatal(err)
	}
	t.Logf("after the decision: RSS %.0f MB", procStatus("VmRSS"))
}

// startCPUProfile profiles the process's CPU into path until the
// returned function is called.
func startCPUProfile(t *testing.T, path string) (stop func()) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// procStatus returns a /proc/self/status size field in MB.
func procStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
