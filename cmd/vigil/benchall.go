package main

import (
	"bytes"
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
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/bench"
)

func newBenchAllCmd(c *cli) *cobra.Command {
	var (
		asJSON        bool
		quick         bool
		restartEvents int
		skip          []string
		src           string
	)
	cmd := &cobra.Command{
		Use:   "all",
		Short: "Measure every headline figure in one run and print them against their targets",
		Long: `Runs, one after the other, each in its own process so none inherits
another's heap:
  pipeline:  vigil bench pipeline --durability interval, then fsync
  gate:      vigil bench gate --durability interval, then fsync, at 1,000 actions/s
  restart:   vigil bench restart at --restart-events (default 1,000,000)
  replay:    go test -bench 'Replay$' -benchtime 1000000x ./replay/
  hook:      go test -bench HookProcess -benchtime 21x ./cmd/vigil/
  redaction: go test -bench 'Redact$|RedactAdversarial' ./processors/redact/
and prints one table: each figure, its target, what was measured and
whether it is met, with the commit and the machine's load before and
after (a loaded machine makes every figure worse: measure on a quiet one).
The replay, hook and redaction figures are Go benchmarks: they need the Go
toolchain and Vigil's source tree (--src, default the current directory);
without them they are reported as not measured. --quick shortens every
bench (fewer events, shorter runs, restart at 100,000 events) to check
that they run; its figures are not the page's. Exit status 1 when a
target is not met or a figure could not be measured.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench all: finding this binary: %w", err)
			}
			skipped := map[string]bool{}
			for _, s := range skip {
				switch s {
				case "pipeline", "gate", "restart", "replay", "hook", "redaction":
					skipped[s] = true
				default:
					return fmt.Errorf("--skip %q: give one of pipeline, gate, restart, replay, hook, redaction", s)
				}
			}
			r := &benchAll{ctx: cmd.Context(), self: self, src: src, quick: quick, stderr: c.stderr}
			rep := r.run(restartEvents, skipped)
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else if err := rep.WriteTable(c.stdout); err != nil {
				return err
			}
			if rep.Unmeasured > 0 || rep.NotMet > 0 {
				return &exitError{code: 1, err: fmt.Errorf("bench all: %d figures not met, %d not measured", rep.NotMet, rep.Unmeasured)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print one JSON object (the figures and each bench's own JSON)")
	fl.BoolVar(&quick, "quick", false, "shorter runs, to check the benches run (not the page's figures)")
	fl.IntVar(&restartEvents, "restart-events", 1000000, "log length of the restart bench")
	fl.StringSliceVar(&skip, "skip", nil, "benches to leave out: pipeline, gate, restart, replay, hook, redaction (repeat or comma-separate)")
	fl.StringVar(&src, "src", ".", "Vigil's source tree, for the Go benchmarks")
	return cmd
}

// benchAll runs the benches of `vigil bench all`.
type benchAll struct {
	ctx    context.Context
	self   string
	src    string
	quick  bool
	stderr interface{ Write([]byte) (int, error) }
}

func (b *benchAll) run(restartEvents int, skip map[string]bool) *bench.AllReport {
	start := time.Now()
	rep := &bench.AllReport{Date: start.UTC().Format(time.DateOnly), CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		LoadBefore: loadAverage(), Commit: b.commit()}
	pipeEvents, gateDur, replayN, hookN := "100000", "20s", "1000000x", "21x"
	if b.quick {
		pipeEvents, gateDur, replayN, hookN, restartEvents = "20000", "3s", "100000x", "5x", min(restartEvents, 100000)
	}
	if !skip["pipeline"] {
		for _, d := range []string{"interval", "fsync"} {
			events := pipeEvents
			if d == "fsync" {
				events = strconv.Itoa(max(10000, atoiOr(pipeEvents, 100000)/3))
			}
			args := []string{"bench", "pipeline", "--durability", d, "--events", events, "--json"}
			out := b.vigil(rep, args)
			rep.Figures = append(rep.Figures, bench.PipelineFigure(out, d, "vigil "+strings.Join(args, " ")))
		}
	}
	if !skip["gate"] {
		for _, d := range []string{"interval", "fsync"} {
			args := []string{"bench", "gate", "--durability", d, "--rate", "1000", "--duration", gateDur, "--json"}
			out := b.vigil(rep, args)
			rep.Figures = append(rep.Figures, bench.GateFigure(out, d, "vigil "+strings.Join(args, " ")))
		}
	}
	if !skip["restart"] {
		args := []string{"bench", "restart", "--events", strconv.Itoa(restartEvents), "--runs", "2", "--json"}
		out := b.vigil(rep, args)
		rep.Figures = append(rep.Figures, bench.RestartFigure(out, "vigil "+strings.Join(args, " ")))
	}
	bt := "2s"
	if b.quick {
		bt = "200ms"
	}
	for _, g := range []struct {
		name string
		args []string
		read func(out []byte, command string) []bench.Figure
	}{
		{"replay", []string{"test", "-run", "^$", "-bench", "Replay$", "-benchtime", replayN, "./replay/"},
			func(out []byte, c string) []bench.Figure { return []bench.Figure{bench.ReplayFigure(out, c)} }},
		{"hook", []string{"test", "-run", "^$", "-bench", "HookProcess", "-benchtime", hookN, "./cmd/vigil/"},
			func(out []byte, c string) []bench.Figure { return []bench.Figure{bench.HookFigure(out, c)} }},
		{"redaction", []string{"test", "-run", "^$", "-bench", "Redact$|RedactAdversarial", "-benchtime", bt, "./processors/redact/"},
			bench.RedactFigures},
	} {
		if skip[g.name] {
			continue
		}
		out, note := b.goTest(g.args)
		figs := g.read(out, "go "+strings.Join(g.args, " "))
		for i := range figs {
			if note != "" {
				figs[i].Note = note
			}
		}
		rep.Figures = append(rep.Figures, figs...)
	}
	rep.LoadAfter = loadAverage()
	rep.SecondsUsed = time.Since(start).Seconds()
	rep.Count()
	return rep
}

// vigil runs this binary with args and returns its standard output; the
// output is kept in the report when it is JSON.
func (b *benchAll) vigil(rep *bench.AllReport, args []string) []byte {
	fmt.Fprintf(b.stderr, "bench all: vigil %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(b.ctx, b.self, args...)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		// The reason is in its standard error: its last line.
		return bytes.TrimSpace(errBuf.Bytes())
	}
	if json.Valid(out) {
		rep.Raw = append(rep.Raw, bench.RawJSON{Command: "vigil " + strings.Join(args, " "), Output: json.RawMessage(bytes.TrimSpace(out))})
	}
	return out
}

// goTest runs `go args…` in the source tree; note says why it could not.
func (b *benchAll) goTest(args []string) (out []byte, note string) {
	if _, err := exec.LookPath("go"); err != nil {
		return nil, "needs the Go toolchain on PATH"
	}
	if _, err := os.Stat(filepath.Join(b.src, "go.mod")); err != nil {
		return nil, fmt.Sprintf("needs Vigil's source tree (--src; %s has no go.mod)", b.src)
	}
	fmt.Fprintf(b.stderr, "bench all: go %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(b.ctx, "go", args...)
	cmd.Dir = b.src
	var all bytes.Buffer
	cmd.Stdout, cmd.Stderr = &all, &all
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return all.Bytes(), err.Error()
		}
	}
	return all.Bytes(), ""
}

// commit is the source tree's commit, when it is a git checkout.
func (b *benchAll) commit() string {
	out, err := exec.CommandContext(b.ctx, "git", "-C", b.src, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// loadAverage is /proc/loadavg's three averages, or "unknown".
func loadAverage() string {
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

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}
