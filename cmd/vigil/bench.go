package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/bench"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func newBenchCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Vigil on this machine",
		Long:  "Benchmarks that start their own embedded servers in temporary directories.\nThe figures and the machine belong in BENCHMARKS.md.",
	}
	for _, sub := range []func(*cli) *cobra.Command{newBenchPipelineCmd, newBenchGateCmd, newBenchRestartCmd, newBenchAllCmd} {
		cmd.AddCommand(sub(c))
	}
	return cmd
}

func newBenchPipelineCmd(c *cli) *cobra.Command {
	var (
		cfg        bench.PipelineConfig
		durability string
		asJSON     bool
		cpuProfile string
		memProfile string
	)
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Compare Vigil's ingest → log → processors with bare JetStream",
		Long: `Runs, in one process on this machine, with the same storage, fsync setting and
message sizes:
  bare:  async JetStream publishes over TCP + an in-process consumer that acks each;
  vigil: agents appending batches through the ingest service over TCP
         (decode, validate, redact, store, reply) + the live driver folding
         every processor, publishing outputs and checkpointing.
and prints events/s for each and their ratio (target ≥ 0.5).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := natsutil.ParseDurability(durability)
			if err != nil {
				return fmt.Errorf("--durability: %w", err)
			}
			cfg.Durability = d
			keyDir, err := os.MkdirTemp("", "vigil-bench-key-*")
			if err != nil {
				return err
			}
			defer os.RemoveAll(keyDir)
			cfg.Processors = serveProcessors(keyDir)
			red, err := newRedactor()
			if err != nil {
				return err
			}
			// Config events' redactors derive from it, as in serve.
			cfg.Redactor = red
			if isTerminal(c.stderr) {
				cfg.Progress = func(phase string) { fmt.Fprintf(c.stderr, "measuring %s (%d events)…\n", phase, cfg.Events) }
			}
			if cpuProfile != "" || memProfile != "" {
				cfg.Profile = func() (func(), error) { return startProfiles(cpuProfile, memProfile) }
			}
			res, err := bench.RunPipeline(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(c.stdout).Encode(res)
			}
			fmt.Fprintf(c.stdout, "events            %d (mean %d bytes), durability %s, %d CPUs\n", res.Events, res.MeanEventBytes, res.Durability, res.CPUs)
			fmt.Fprintf(c.stdout, "bare JetStream    %10.0f events/s (%.2fs)\n", res.BareEventsPerS, res.BareSeconds)
			fmt.Fprintf(c.stdout, "Vigil pipeline    %10.0f events/s (%.2fs, %d derived outputs)\n", res.VigilEventsPerS, res.VigilSeconds, res.DerivedPublished)
			fmt.Fprintf(c.stdout, "ratio             %10.2f (target ≥ 0.5)\n", res.Ratio)
			if res.BareCPUMicros > 0 {
				fmt.Fprintf(c.stdout, "CPU per event     %10.1f µs bare, %.1f µs Vigil (the process, servers included)\n", res.BareCPUMicros, res.VigilCPUMicros)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", 100000, "events to send")
	fl.StringVar(&durability, "durability", string(natsutil.DurabilityFsync), "fsync policy on both sides: fsync or interval")
	fl.IntVar(&cfg.Producers, "producers", 4, "concurrent producers")
	fl.IntVar(&cfg.Batch, "batch", 100, "events per ingest request")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	fl.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the Vigil phase to `FILE` (go tool pprof)")
	fl.StringVar(&memProfile, "memprofile", "", "write an allocation profile to `FILE` at the end of the Vigil phase (go tool pprof -sample_index=alloc_space; the bare phase's allocations are in it too)")
	return cmd
}

// startProfiles starts a CPU profile into cpu (if set) and returns what
// stops it and writes the allocation profile into mem (if set).
func startProfiles(cpu, mem string) (func(), error) {
	stopCPU := func() {}
	if cpu != "" {
		s, err := startCPUProfile(cpu)
		if err != nil {
			return nil, err
		}
		stopCPU = s
	}
	return func() {
		stopCPU()
		if mem == "" {
			return
		}
		f, err := os.Create(mem)
		if err != nil {
			fmt.Fprintf(os.Stderr, "--memprofile: %v\n", err)
			return
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fmt.Fprintf(os.Stderr, "--memprofile %s: %v\n", mem, err)
		}
	}, nil
}

// startCPUProfile starts a CPU profile into path and returns what stops it.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func newBenchRestartCmd(c *cli) *cobra.Command {
	var (
		cfg        bench.RestartConfig
		durability string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "restart",
		Short: "Measure a node's restart: time to the first new decision and RSS, against the log's length",
		Long: `Builds a log of --events events (over --conversations conversations, a third
of them bash actions) with a "vigil serve" child process on its own data
directory (published straight into VIGIL_LOG with the admin credentials,
or through the ingest service with --via-ingest), waits until the node has
folded them all, stops it with SIGTERM
(it stores its fold snapshot at stop), then starts "vigil serve" again
--runs times and measures each start: from starting the process until a
new action's decision reaches the agent that sent it, and the child's
VmRSS and VmHWM (peak) from /proc then, its CPU time, and the snapshot it
started from (from its log). With --dir the data directory is kept, and
--reuse restarts a log built there by an earlier run with the same
--events instead of building it again (building takes minutes per million
events on a small machine).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := natsutil.ParseDurability(durability)
			if err != nil {
				return fmt.Errorf("--durability: %w", err)
			}
			cfg.Durability = d
			if cfg.Events <= 0 {
				return fmt.Errorf("--events %d: give a positive number of events", cfg.Events)
			}
			if cfg.Binary, err = os.Executable(); err != nil {
				return fmt.Errorf("bench restart: find the vigil executable: %w", err)
			}
			if isTerminal(c.stderr) {
				cfg.Progress = func(format string, args ...any) {
					fmt.Fprintf(c.stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
				}
			}
			res, err := bench.RunRestart(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(c.stdout).Encode(res)
			}
			fmt.Fprintf(c.stdout, "events            %d (%d log records, %.0f MB on disk, %d conversations), durability %s, %d CPUs\n",
				res.Events, res.LogRecords, res.LogMB, res.Conversations, res.Durability, res.CPUs)
			if res.BuildSeconds > 0 {
				fmt.Fprintf(c.stdout, "log built in      %.1f s\n", res.BuildSeconds)
			}
			for i, r := range res.Runs {
				fmt.Fprintf(c.stdout, "restart %d         first decision %.2f s (serve.json %.2f s), RSS %.0f MB (peak %.0f MB), CPU %.2f s, snapshot %d, refolded %d, load %.1f\n",
					i+1, r.DecisionSeconds, r.ServeInfoSeconds, r.RSSMB, r.HWMMB, r.CPUSeconds, r.Restored, r.Refolded, r.Load1)
				if r.IndexRecords > 0 {
					fmt.Fprintf(c.stdout, "  id index read   %d records in %.1f s before serving\n", r.IndexRecords, r.IndexSeconds)
				}
				if cfg.Settle > 0 {
					fmt.Fprintf(c.stdout, "  %s later     RSS %.0f MB (peak %.0f MB), CPU %.2f s\n", cfg.Settle, r.SettledRSSMB, r.SettledHWMMB, r.SettledCPUSeconds)
				}
			}
			fmt.Fprintf(c.stdout, "targets           first decision ≤ 5 s, RSS < 250 MB\n")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", 300000, "events in the log before the restart")
	fl.IntVar(&cfg.Conversations, "conversations", 2000, "conversations the events are spread over")
	fl.StringVar(&durability, "durability", string(natsutil.DurabilityInterval), "fsync policy of the node: fsync or interval")
	fl.StringVar(&cfg.Dir, "dir", "", "data directory of the node, kept (default: a temporary one, removed)")
	fl.BoolVar(&cfg.Reuse, "reuse", false, "with --dir: restart the log an earlier run built there with the same --events")
	fl.BoolVar(&cfg.ViaIngest, "via-ingest", false, "build the log through the ingest service as agents do (slower); default: publish it straight into VIGIL_LOG")
	fl.IntVar(&cfg.Runs, "runs", 1, "restarts to measure")
	fl.StringArrayVar(&cfg.ServeArgs, "serve-arg", nil, "an argument added to the restarted node's vigil serve command line (repeat: --serve-arg=--dedup-window --serve-arg=1m)")
	fl.IntVar(&cfg.Producers, "producers", 4, "concurrent producers while building the log")
	fl.IntVar(&cfg.Batch, "batch", 100, "events per append request while building the log")
	fl.DurationVar(&cfg.Timeout, "timeout", 15*time.Minute, "give up when no decision comes this long after a start")
	fl.DurationVar(&cfg.Settle, "settle", 0, "keep each restarted node this long after its first decision and sample its RSS and CPU again (background work after a start)")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
