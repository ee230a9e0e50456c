package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/bench"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func newBenchGateCmd(c *cli) *cobra.Command {
	var (
		cpuProfile string
		memProfile string
		cfg        bench.GateConfig
		durability string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Latency from appending an action to its decision, at a fixed rate",
		Long: `Starts an embedded server in a temporary directory running the serve
processors (the gate among them) under a config with the pattern (rules)
and policy analyzers on, then agents on TCP connections append actions at
--rate per second, spread over --conversations, each waiting for its
decision as an agent would (GateAndWait). Latency runs from the moment an
action is sent to its decision's arrival. Each action is sent from its own
goroutine, so a slow server cannot hold back later sends (no coordinated
omission); the load generator's own pacing lag is reported apart.
The commands are ones the gate decides at once (allowed, or denied by a deny
rule); none waits for a person. Prints p50/p90/p99/max and the rate reached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := natsutil.ParseDurability(durability)
			if err != nil {
				return fmt.Errorf("--durability: %w", err)
			}
			if cfg.Rate <= 0 || cfg.Duration <= 0 || cfg.Conversations <= 0 {
				return errors.New("--rate, --duration and --conversations must be positive")
			}
			cfg.Durability = d
			keyDir, err := os.MkdirTemp("", "vigil-bench-key-*")
			if err != nil {
				return err
			}
			defer os.RemoveAll(keyDir)
			cfg.Processors = serveProcessors(keyDir)
			if isTerminal(c.stderr) {
				fmt.Fprintf(c.stderr, "gating %.0f actions/s for %s (durability %s)…\n", cfg.Rate, cfg.Duration, d)
			}
			if cpuProfile != "" || memProfile != "" {
				cfg.Profile = func() (func(), error) { return startProfiles(cpuProfile, memProfile) }
			}
			res, err := bench.RunGate(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return gateJSON(c.stdout, res)
			}
			fmt.Fprintf(c.stdout, "actions     %d over %.1fs (%d errors), %d conversations, %s, durability %s, %d CPUs\n",
				res.Actions, res.Seconds, res.Errors, res.Conversations, res.Transport, res.Durability, res.CPUs)
			fmt.Fprintf(c.stdout, "rate        %.0f/s achieved (target %.0f/s)\n", res.AchievedRate, res.TargetRate)
			fmt.Fprintf(c.stdout, "latency     p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms  (target p50 ≤ 1 ms, p99 ≤ 5 ms)\n",
				res.P50Ms, res.P90Ms, res.P99Ms, res.MaxMs)
			fmt.Fprintf(c.stdout, "  of which   stored in the log: p50 %.3f ms  p99 %.3f ms\n", res.AppendP50Ms, res.AppendP99Ms)
			fmt.Fprintf(c.stdout, "  (latency runs from each send; the load generator's own pacing lag, not counted: p50 %.3f ms  p99 %.3f ms)\n", res.PacingP50Ms, res.PacingP99Ms)
			fmt.Fprintf(c.stdout, "bare publish p50 %.3f ms  p99 %.3f ms (same server, rate, durability); gate p50 / bare p50 = %.2f\n", res.BareP50Ms, res.BareP99Ms, res.RatioP50)
			if res.CPUMicrosPerAction > 0 {
				fmt.Fprintf(c.stdout, "CPU         %.0f µs an action (the process, server included), %.2f cores used\n", res.CPUMicrosPerAction, res.CoresUsed)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&cfg.Rate, "rate", 1000, "actions per second")
	fl.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to measure")
	fl.DurationVar(&cfg.Warmup, "warmup", time.Second, "how long to run before measuring")
	fl.IntVar(&cfg.Conversations, "conversations", 16, "agents, one conversation and one connection each")
	fl.StringVar(&durability, "durability", string(natsutil.DurabilityFsync), "fsync policy: fsync (every write) or interval")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	fl.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the actions' sends to `FILE` (go tool pprof)")
	fl.StringVar(&memProfile, "memprofile", "", "write an allocation profile to `FILE` when the actions' sends end (go tool pprof -sample_index=alloc_space; the warm-up's and the bare publishes' allocations are in it too)")
	return cmd
}
