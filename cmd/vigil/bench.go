package main

import (
	"encoding/json"
	"fmt"
	"os"

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
	for _, sub := range []func(*cli) *cobra.Command{newBenchPipelineCmd, newBenchGateCmd} {
		cmd.AddCommand(sub(c))
	}
	return cmd
}

func newBenchPipelineCmd(c *cli) *cobra.Command {
	var (
		cfg        bench.PipelineConfig
		durability string
		asJSON     bool
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
			cfg.Redactor = red
			cfg.NewRedactor = redactorFor
			if isTerminal(c.stderr) {
				cfg.Progress = func(phase string) { fmt.Fprintf(c.stderr, "measuring %s (%d events)…\n", phase, cfg.Events) }
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
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Events, "events", 100000, "events to send")
	fl.StringVar(&durability, "durability", string(natsutil.DurabilityFsync), "fsync policy on both sides: fsync or interval")
	fl.IntVar(&cfg.Producers, "producers", 4, "concurrent producers")
	fl.IntVar(&cfg.Batch, "batch", 100, "events per ingest request")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
