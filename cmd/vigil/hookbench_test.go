package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// helloWorld is the baseline: the smallest Go program, built with the
// same toolchain on the same machine.
const helloWorld = `package main

import "fmt"

func main() { fmt.Println("hello, world") }
`

// buildHookBinaries builds vigil (this package, as `go build` does) and a
// hello-world Go program into dir.
func buildHookBinaries(tb testing.TB, dir string) (vigil, hello string) {
	tb.Helper()
	vigil = filepath.Join(dir, "vigil")
	hello = filepath.Join(dir, "hello")
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte(helloWorld), 0o600); err != nil {
		tb.Fatal(err)
	}
	for _, args := range [][]string{{"build", "-o", vigil, "."}, {"build", "-o", hello, src}} {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
		if args[len(args)-1] == src {
			cmd.Dir = dir // outside any module: a plain file
			cmd.Env = append(os.Environ(), "GO111MODULE=auto", "GOFLAGS=")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return vigil, hello
}

// startHookNode starts a node as `vigil serve` does, for the hook to reach.
func startHookNode(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	n, err := node.Start(context.Background(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	return dir
}

// claudePreToolUse is a benign Bash PreToolUse as Claude Code sends it.
func claudePreToolUse(useID string) string {
	return fmt.Sprintf(`{"session_id":"bench-session","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"Show the working tree status"},"tool_use_id":%q}`, useID)
}

// procTime is what one process cost: wall time from start to its answer
// read, CPU time (user + system), which a busy machine inflates less, and
// minor page faults, which it does not inflate at all (on this project's
// virtual machines a page fault costs tens of microseconds: most of a
// short process's start).
type procTime struct {
	wall, cpu time.Duration
	faults    int64
}

// runProc runs one process to its end.
func runProc(tb testing.TB, path string, env []string, stdin string, args ...string) (procTime, string) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := procTime{wall: time.Since(start)}
	if err != nil {
		tb.Fatalf("%s %v: %v\n%s%s", path, args, err, out.String(), errb.String())
	}
	d.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		d.faults = ru.Minflt + ru.Majflt
	}
	return d, out.String()
}

// BenchmarkHookProcess measures `vigil hook claude-code` end to end, as
// a client pays it on every tool call: process start to answer, for an
// allowed action, against a running node. In the same loop it starts a
// hello-world Go binary (the baseline) and `vigil version` (the binary's
// start alone). Each iteration runs all of them, interleaved, so a noisy
// machine slows them alike; the metrics are medians in milliseconds, the
// hook's ratio to hello-world (target: ≤ 4) as the ratio of the medians and
// as the median of each iteration's own ratio (which a load that drifts
// during the run moves less), and page faults per process, which load does
// not change. The machine's load average is logged before and after.
//
//	go test ./cmd/vigil -run '^$' -bench HookProcess -benchtime 200x
//
// VIGIL_HOOK_BENCH_BIN=/path/to/vigil measures that binary instead of
// this tree's. VIGIL_HOOK_BENCH_BASE=/path/to/other/vigil also runs that
// binary's hook in the same loop, interleaved (a before/after figure on the
// same machine at the same moment); add VIGIL_HOOK_BENCH_EVICT=1 so both
// start from the same page-cache state.
func BenchmarkHookProcess(b *testing.B) {
	dir := b.TempDir()
	vigil, hello := buildHookBinaries(b, dir)
	if p := os.Getenv("VIGIL_HOOK_BENCH_BIN"); p != "" {
		vigil = p
	}
	base := os.Getenv("VIGIL_HOOK_BENCH_BASE")
	data := startHookNode(b)
	env := append(os.Environ(), "VIGIL_DATA="+data, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	// VIGIL_HOOK_BENCH_EVICT=1: the same page-cache state for every binary
	// compared (see evictPageCache; use it with VIGIL_HOOK_BENCH_BASE).
	// Without it each binary starts as its writer left it in the cache: as
	// built, for this tree's vigil and hello-world.
	if os.Getenv("VIGIL_HOOK_BENCH_EVICT") == "1" {
		for _, bin := range []string{hello, vigil, base} {
			if bin != "" {
				if err := evictPageCache(bin); err != nil {
					b.Logf("page cache of %s: %v", bin, err)
				}
			}
		}
	}
	// Warm the page cache and the node once.
	runProc(b, hello, env, "")
	runProc(b, vigil, env, claudePreToolUse("toolu_warm"), "hook", "claude-code")
	if base != "" {
		runProc(b, base, env, claudePreToolUse("toolu_warmbase"), "hook", "claude-code")
	}
	hook := func(bin, id string) procTime {
		d, out := runProc(b, bin, env, claudePreToolUse(id), "hook", "claude-code")
		if !strings.Contains(out, `"permissionDecision":"allow"`) {
			b.Fatalf("%s hook answered %s", bin, out)
		}
		return d
	}
	loadBefore := loadAvg()
	var helloT, versionT, hookT, baseT []procTime
	var ratios, baseRatios []float64
	b.ResetTimer()
	for i := range b.N {
		h, _ := runProc(b, hello, env, "")
		helloT = append(helloT, h)
		d, _ := runProc(b, vigil, env, "", "version")
		versionT = append(versionT, d)
		// Alternate which hook goes first, so neither always follows the
		// same process.
		first, second := vigil, base
		if i%2 == 1 && base != "" {
			first, second = base, vigil
		}
		for _, bin := range []string{first, second} {
			if bin == "" {
				continue
			}
			d := hook(bin, fmt.Sprintf("toolu_bench%08d_%d", i, len(hookT)+len(baseT)))
			if bin == vigil {
				hookT = append(hookT, d)
				ratios = append(ratios, float64(d.wall)/float64(h.wall))
			} else {
				baseT = append(baseT, d)
				baseRatios = append(baseRatios, float64(d.wall)/float64(h.wall))
			}
		}
	}
	b.StopTimer()
	loadAfter := loadAvg()
	// q is the q-quantile of ts, wall or CPU, in milliseconds.
	q := func(ts []procTime, cpu bool, q float64) float64 {
		s := make([]time.Duration, len(ts))
		for i, t := range ts {
			s[i] = t.wall
			if cpu {
				s[i] = t.cpu
			}
		}
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))]) / 1e6
	}
	median := func(fs []float64) float64 {
		s := slices.Clone(fs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	faults := func(ts []procTime) float64 {
		fs := make([]float64, len(ts))
		for i, t := range ts {
			fs[i] = float64(t.faults)
		}
		return median(fs)
	}
	b.ReportMetric(q(helloT, false, .5), "hello-ms")
	b.ReportMetric(q(versionT, false, .5), "version-ms")
	b.ReportMetric(q(hookT, false, .5), "hook-ms")
	b.ReportMetric(q(hookT, false, .5)/q(helloT, false, .5), "hook/hello")
	b.ReportMetric(median(ratios), "hook/hello-per-run")
	b.ReportMetric(q(hookT, true, .5)/q(helloT, true, .5), "hook/hello-cpu")
	b.ReportMetric(faults(hookT)/faults(helloT), "hook/hello-faults")
	if base != "" {
		b.ReportMetric(q(baseT, false, .5)/q(helloT, false, .5), "base/hello")
		b.ReportMetric(median(baseRatios), "base/hello-per-run")
		b.ReportMetric(q(baseT, true, .5)/q(helloT, true, .5), "base/hello-cpu")
		b.ReportMetric(faults(baseT)/faults(helloT), "base/hello-faults")
	}
	b.ReportMetric(0, "ns/op")
	rows := []struct {
		name string
		ts   []procTime
	}{{"hello-world", helloT}, {"vigil version", versionT}, {"vigil hook (allow)", hookT}}
	if base != "" {
		rows = append(rows, struct {
			name string
			ts   []procTime
		}{"base hook (allow)", baseT})
	}
	for _, r := range rows {
		b.Logf("%-20s wall p25 %6.2f p50 %6.2f p90 %6.2f ms; cpu p50 %6.2f ms; faults p50 %5.0f (%d runs, GOMAXPROCS %d)", r.name,
			q(r.ts, false, .25), q(r.ts, false, .5), q(r.ts, false, .9), q(r.ts, true, .5), faults(r.ts), len(r.ts), runtime.GOMAXPROCS(0))
	}
	b.Logf("load average before: %s; after: %s", loadBefore, loadAfter)
}

// loadAvg is the machine's load average (1, 5 and 15 minutes), for the
// benchmark's log: its wall times mean little without it.
func loadAvg() string {
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
