package main

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/vigil-dev/vigil/internal/hook/install"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// helloWorld is the baseline: the smallest Go program, built with the
// same toolchain on the same machine.
const helloWorld = `package main

import "fmt"

func main() { fmt.Println("hello, world") }
`

// buildHookBinaries builds vigil and vigil-hook (this package and
// ../vigil-hook, as the README builds them) and a hello-world Go program into dir.
func buildHookBinaries(tb testing.TB, dir string) (vigil, hello string) {
	tb.Helper()
	vigil = filepath.Join(dir, "vigil")
	hello = filepath.Join(dir, "hello")
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte(helloWorld), 0o600); err != nil {
		tb.Fatal(err)
	}
	for _, args := range [][]string{{"build", "-tags", hookBuildTags, "-o", dir + string(filepath.Separator), ".", "../vigil-hook"}, {"build", "-o", hello, src}} {
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

// installedHook runs `vigil hook install claude-code` for a project in
// dir with data directory data, and returns the argument vector of the
// PreToolUse hook it wrote: what Claude Code runs on every tool call.
func installedHook(tb testing.TB, vigil, dir, data string, env []string) []string {
	tb.Helper()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(vigil, "hook", "install", "claude-code", "--dir", proj, "--data", data)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("vigil hook install: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(proj, ".claude", "settings.local.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var st struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Hooks["PreToolUse"]) == 0 || len(st.Hooks["PreToolUse"][0].Hooks) == 0 {
		tb.Fatalf("no PreToolUse hook in the settings install wrote (%v):\n%s", err, b)
	}
	return install.Argv(st.Hooks["PreToolUse"][0].Hooks[0].Command)
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

// BenchmarkHookProcess measures the hook an installed Claude Code runs,
// end to end, as a client pays it on every tool call: process start to
// answer, for an allowed action, against a running node. The command is
// the PreToolUse hook `vigil hook install claude-code` writes (vigil-hook
// beside vigil), run as its words without a shell. In the same loop it
// starts a hello-world Go binary (the baseline), `vigil version` (the
// whole binary's start alone) and `vigil hook claude-code` (the same hook
// in the whole binary, which installs made before vigil-hook run). Each
// iteration runs all of them, interleaved, so a noisy machine slows them
// alike; the metrics are medians in milliseconds, the installed hook's
// ratio to hello-world (target: ≤ 4) as the ratio of the medians and as
// the median of each iteration's own ratio (which a load that drifts
// during the run moves less), CPU and page-fault ratios (load does not
// change page faults), and the same ratios of the whole binary's hook
// (full/…). The machine's load average is logged before and after.
//
//	go test ./cmd/vigil -run '^$' -bench HookProcess -benchtime 21x
//
// VIGIL_HOOK_BENCH_BIN=/path/to/vigil measures that binary instead of
// this tree's (and the vigil-hook beside it, if any, as install finds it).
// VIGIL_HOOK_BENCH_BASE=/path/to/other/vigil also runs that binary's
// `vigil hook` in the same loop, interleaved (a before/after figure on the
// same machine at the same moment); add VIGIL_HOOK_BENCH_EVICT=1 so that
// every binary starts from the same page-cache state.
func BenchmarkHookProcess(b *testing.B) {
	dir := b.TempDir()
	vigil, hello := buildHookBinaries(b, dir)
	if p := os.Getenv("VIGIL_HOOK_BENCH_BIN"); p != "" {
		vigil = p
	}
	base := os.Getenv("VIGIL_HOOK_BENCH_BASE")
	data := startHookNode(b)
	env := append(os.Environ(), "VIGIL_DATA="+data, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	installed := installedHook(b, vigil, dir, data, env)
	b.Logf("installed hook: %s", strings.Join(installed, " "))
	full := []string{vigil, "hook", "claude-code", "--data", data, "--budget", "50s"}
	// VIGIL_HOOK_BENCH_EVICT=1: the same page-cache state for every binary
	// compared (see evictPageCache; use it with VIGIL_HOOK_BENCH_BASE).
	// Without it each binary starts as its writer left it in the cache: as
	// built, for this tree's binaries and hello-world.
	if os.Getenv("VIGIL_HOOK_BENCH_EVICT") == "1" {
		for _, bin := range []string{hello, vigil, installed[0], base} {
			if bin != "" {
				if err := evictPageCache(bin); err != nil {
					b.Logf("page cache of %s: %v", bin, err)
				}
			}
		}
	}
	hook := func(argv []string, id string) procTime {
		d, out := runProc(b, argv[0], env, claudePreToolUse(id), argv[1:]...)
		if !strings.Contains(out, `"permissionDecision":"allow"`) {
			b.Fatalf("%s answered %s", strings.Join(argv, " "), out)
		}
		return d
	}
	type row struct {
		name   string
		argv   []string
		ts     []procTime
		ratios []float64
	}
	rows := []*row{{name: "installed hook", argv: installed}, {name: "vigil hook (full)", argv: full}}
	if base != "" {
		rows = append(rows, &row{name: "base vigil hook", argv: []string{base, "hook", "claude-code", "--data", data}})
	}
	// Warm the page cache and the node once.
	runProc(b, hello, env, "")
	for i, r := range rows {
		hook(r.argv, fmt.Sprintf("toolu_warm%d", i))
	}
	loadBefore := loadAvg()
	var helloT, versionT []procTime
	n := 0
	b.ResetTimer()
	for i := range b.N {
		h, _ := runProc(b, hello, env, "")
		helloT = append(helloT, h)
		d, _ := runProc(b, vigil, env, "", "version")
		versionT = append(versionT, d)
		// Rotate which hook goes first, so none always follows the same
		// process.
		for j := range rows {
			r := rows[(i+j)%len(rows)]
			n++
			d := hook(r.argv, fmt.Sprintf("toolu_bench%08d_%d", i, n))
			r.ts = append(r.ts, d)
			r.ratios = append(r.ratios, float64(d.wall)/float64(h.wall))
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
	for _, r := range rows {
		p := map[string]string{"installed hook": "hook", "vigil hook (full)": "full", "base vigil hook": "base"}[r.name]
		b.ReportMetric(q(r.ts, false, .5), p+"-ms")
		b.ReportMetric(q(r.ts, false, .5)/q(helloT, false, .5), p+"/hello")
		b.ReportMetric(median(r.ratios), p+"/hello-per-run")
		b.ReportMetric(q(r.ts, true, .5)/q(helloT, true, .5), p+"/hello-cpu")
		b.ReportMetric(faults(r.ts)/faults(helloT), p+"/hello-faults")
	}
	b.ReportMetric(0, "ns/op")
	logRow := func(name string, ts []procTime) {
		b.Logf("%-20s wall p25 %6.2f p50 %6.2f p90 %6.2f ms; cpu p50 %6.2f ms; faults p50 %5.0f (%d runs, GOMAXPROCS %d)", name,
			q(ts, false, .25), q(ts, false, .5), q(ts, false, .9), q(ts, true, .5), faults(ts), len(ts), runtime.GOMAXPROCS(0))
	}
	logRow("hello-world", helloT)
	logRow("vigil version", versionT)
	for _, r := range rows {
		logRow(r.name, r.ts)
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
