package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/audit"
	"github.com/vigil-dev/vigil/replay"
)

// Exit statuses of vigil replay (docs/replay.md), as vigil audit's.
const (
	replayExitOK      = 0 // replayed; everything compared was identical
	replayExitDiffers = 1 // replay and record differ: a bug in a fold, or tampering
	replayExitUsage   = 2 // usage, connection or I/O error: nothing was verified
)

func replayUsageErr(err error) error {
	var ee *exitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &exitError{code: replayExitUsage, err: err}
}

// replayBuild returns the processor builder of a replay of the node whose
// data directory is dataDir. Without that node's audit key (a remote
// stream, an export from elsewhere) checkpoints are signed with a
// throwaway key, and unsigned is true: compare them without signatures.
func replayBuild(dataDir string) (build func(processors.Options) ([]processors.Processor, error), unsigned bool, err error) {
	signer, _, err := auditkey.Load(dataDir)
	if errors.Is(err, auditkey.ErrNoKey) {
		skey, _, gerr := note.GenerateKey(nil, "vigil-replay")
		if gerr != nil {
			return nil, false, gerr
		}
		signer, err = note.NewSigner(skey)
		unsigned = true
	}
	if err != nil {
		return nil, false, err
	}
	return func(o processors.Options) ([]processors.Processor, error) { return node.Processors(o, signer) }, unsigned, nil
}

type replayFlags struct {
	from, to     uint64
	conversation string
	export       string
	whatIf       string
	asJSON       bool
	noVerify     bool
	max          int
}

func newReplayCmd(c *cli) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Re-run every processor over the log and check it reproduces what was recorded",
		Long: `Replay feeds the log (VIGIL_LOG, or with --export a file written by
'vigil audit export') through the same processors and the same folds as the
live system, from the first record, and compares every output it derives
with what was recorded in VIGIL_DERIVED, byte for byte (with --export: the
risk and gate data in the file). Any difference is a bug in a fold or
tampering with the derived stream; each names its output id and log sequence.

--from SEQ compares from SEQ on (earlier records are still folded: decisions
depend on them). --to SEQ stops there; by default replay stops at the live
driver's checkpoint, since later records may not be processed yet.
--conversation C folds only C's records and the global ones (config,
allowlist, pairing): see docs/replay.md for what that changes.

--what-if CONFIG replays a second time, in the same pass, with CONFIG (YAML
or JSON, as for 'vigil config set') in place of every config event, and
prints per action where the gate's decision would have differed, then a
summary table: what would this policy have stopped?

Reads the server of --data (or --nats). With no server running, it opens the
data directory itself (stop 'vigil serve' first, or run it elsewhere).

Exit status: 0 identical; 1 differences found; 2 usage, connection or I/O
error (nothing verified). What-if changes are findings, not errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.replay(cmd.Context(), f)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return replayUsageErr(err) })
	fl := cmd.Flags()
	fl.Uint64Var(&f.from, "from", 0, "compare from this log sequence (earlier records are folded, not compared)")
	fl.Uint64Var(&f.to, "to", 0, "stop after this log sequence (default: the live checkpoint, or the end of the export)")
	fl.StringVar(&f.conversation, "conversation", "", "only this conversation (and global events)")
	fl.StringVar(&f.export, "export", "", "replay an export file from 'vigil audit export' (- for standard input) instead of the stream")
	fl.StringVar(&f.whatIf, "what-if", "", "also replay under this config file and report changed decisions")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&f.noVerify, "no-verify", false, "do not compare with the recorded outputs (what-if or timing only)")
	fl.IntVar(&f.max, "max", 20, "list at most N differences (0: all); with --json, also at most N changed actions")
	return cmd
}

func (c *cli) replay(ctx context.Context, f replayFlags) error {
	if f.to != 0 && f.from > f.to {
		return replayUsageErr(fmt.Errorf("--from %d is after --to %d", f.from, f.to))
	}
	if f.conversation != "" && !events.ValidToken(f.conversation) {
		return replayUsageErr(fmt.Errorf("--conversation %q: a conversation id is 1-128 letters, digits, - _ : @", f.conversation))
	}
	build, unsigned, err := replayBuild(c.data())
	if err != nil {
		return replayUsageErr(err)
	}
	cfg := replay.Config{Build: build, From: f.from, To: f.to, Conversation: f.conversation, UnsignedCheckpoints: unsigned,
		MaxListed: f.max}
	if f.max <= 0 {
		cfg.MaxListed = math.MaxInt
	}
	var whatIfName string
	if f.whatIf != "" {
		b, err := os.ReadFile(f.whatIf)
		if err != nil {
			return replayUsageErr(fmt.Errorf("--what-if: %w", err))
		}
		wcfg, err := parseConfigFile(f.whatIf, b)
		if err != nil {
			return replayUsageErr(err)
		}
		if err := events.ValidateConfig(wcfg); err != nil {
			return replayUsageErr(configError(f.whatIf, wcfg.Version, err))
		}
		cfg.WhatIf, whatIfName = &wcfg, f.whatIf
	}
	var target uint64
	scopeNote := ""
	if f.export != "" {
		var r io.Reader = c.stdin
		name := "standard input"
		if f.export != "-" {
			fh, err := os.Open(f.export)
			if err != nil {
				return replayUsageErr(fmt.Errorf("--export: %w", err))
			}
			defer fh.Close()
			r, name = fh, f.export
		}
		src := &replay.Export{R: r, Name: name}
		cfg.Source = src
		if !f.noVerify {
			src.Checks = replay.NewExportChecks()
			cfg.ExportChecks = src.Checks
		}
		target = f.to
	} else {
		js, closeLog, err := c.openLog(ctx)
		if err != nil {
			return replayUsageErr(err)
		}
		defer closeLog()
		src := replay.Stream{JS: js}
		cfg.Source = src
		if f.noVerify {
			last, err := src.LastSeq(ctx)
			if err != nil {
				return replayUsageErr(err)
			}
			cfg.To = cmp.Or(f.to, last)
			target = cfg.To
		} else {
			fr, err := replay.LiveFrontier(ctx, js, f.to)
			if err != nil {
				return replayUsageErr(err)
			}
			cfg.Frontier, cfg.To, target = fr, fr.Seq, fr.Seq
			cfg.Recorded = replay.DerivedStream{JS: js}
			switch {
			case fr.By == replay.FrontierCheckpoint && fr.Seq == 0 && fr.LogEnd > 0:
				fmt.Fprintf(c.stdout, "the log holds %d records; the live drivers have processed none yet (checkpoint of %s at 0): nothing to compare\n",
					fr.LogEnd, strings.TrimPrefix(fr.Detail, "durable "))
				return nil
			case fr.By == replay.FrontierCheckpoint && fr.Seq < fr.LogEnd:
				scopeNote = fmt.Sprintf("the log holds %d records; the live drivers have processed %d (checkpoint of %s), so replay compares up to there (pass --to to change)",
					fr.LogEnd, fr.Seq, strings.TrimPrefix(fr.Detail, "durable "))
			case fr.By == replay.FrontierDerived && fr.Seq < fr.LogEnd:
				scopeNote = fmt.Sprintf("the log holds %d records; %s holds outputs up to log seq %d, so replay compares up to there (pass --to to change)",
					fr.LogEnd, events.StreamDerived, fr.Seq)
			}
		}
	}
	defer replay.BatchGC()()
	meter := newReplayMeter(c.stderr, target)
	cfg.Progress = meter.show
	changesShown := 0
	if cfg.WhatIf != nil && !f.asJSON {
		cfg.OnChange = func(ch replay.ActionChange) {
			meter.clear()
			if changesShown == 0 {
				fmt.Fprintf(c.stdout, "decisions that differ under %s (config v%d):\n", whatIfName, cfg.WhatIf.Version)
			}
			changesShown++
			printChange(c.stdout, ch)
		}
	}
	rep, err := replay.Run(ctx, cfg)
	meter.clear()
	if err != nil {
		return replayUsageErr(err)
	}
	if ex, ok := cfg.Source.(*replay.Export); ok && rep.Verified {
		rep.Frontier = exportFrontier(ex.Header, rep)
	}
	if f.asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReplayReport(c.stdout, rep, scopeNote, whatIfName, changesShown)
	}
	if !rep.Identical() {
		return &exitError{code: replayExitDiffers}
	}
	return nil
}

// exportFrontier says what a replay of an export compared: the export's
// risk and gate data, where a line carries them, up to the last record
// replayed; and up to where they are known complete (the live drivers'
// checkpoint when the export was written, if it was known). A line
// without data is never reported missing.
func exportFrontier(h audit.ExportHeader, rep *replay.Report) *replay.Frontier {
	fr := &replay.Frontier{Seq: rep.Last, By: replay.FrontierLogEnd, LogEnd: h.LogEnd,
		Detail: "the export's last record; the data each line carries is compared"}
	if h.ProcessedBy != "" {
		p := h.Processed
		fr.Published, fr.PublishedBy = &p, replay.FrontierCheckpoint
		if rep.Last > p {
			fr.Detail += fmt.Sprintf("; records after log seq %d (the live drivers' checkpoint when it was written, durable %s) may carry none yet", p, h.ProcessedBy)
		}
	}
	return fr
}

// openLog reaches the server of the global flags or, with none running
// on the data directory, opens it in this process (in-process NATS only).
func (c *cli) openLog(ctx context.Context) (jetstream.JetStream, func(), error) {
	cl, err := c.connect(ctx, natsutil.RoleAdmin)
	if err == nil {
		return cl.JetStream(), cl.Close, nil
	}
	if c.natsURL != "" || !errors.Is(err, client.ErrNoServer) {
		return nil, nil, err
	}
	s, err := c.startLocal(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s.JetStream(), func() { s.Close(context.Background()) }, nil
}

// startLocal opens the data directory's log in this process, with no
// processors and no network listener.
func (c *cli) startLocal(ctx context.Context) (*node.Node, error) {
	dir := c.data()
	if fi, err := os.Stat(datadir.New(dir).JetStream()); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("no Vigil log in %s (no running server either): pass --data DIR of a node, or --nats URL", dir)
	}
	log, err := c.logger()
	if err != nil {
		return nil, err
	}
	s, err := node.Start(ctx, node.Config{DataDir: dir, Durability: natsutil.DurabilityInterval, Logger: log.With("component", "local-log"), NoProcessors: true})
	if err != nil {
		return nil, fmt.Errorf("open the log in %s: %w", dir, err)
	}
	return s, nil
}

// replayMeter shows a long replay's progress on a terminal.
type replayMeter struct {
	w      io.Writer
	on     bool
	target uint64
	last   time.Time
	shown  bool
}

func newReplayMeter(w io.Writer, target uint64) *replayMeter {
	return &replayMeter{w: w, on: isTerminal(w), target: target}
}

func (m *replayMeter) show(p replay.Progress) {
	if !m.on || p.Done || time.Since(m.last) < 250*time.Millisecond {
		return
	}
	m.last, m.shown = time.Now(), true
	rate := float64(p.Records) / max(p.Elapsed.Seconds(), 1e-9)
	line := fmt.Sprintf("replay: %s records, seq %d", groupDigits(p.Records), p.Seq)
	if m.target > 0 && p.Seq <= m.target {
		left := time.Duration(float64(m.target-p.Seq) / max(rate, 1) * float64(time.Second))
		line += fmt.Sprintf(" of %d (%d%%), ETA %s", m.target, p.Seq*100/m.target, left.Round(time.Second))
	}
	fmt.Fprintf(m.w, "\r%s, %s/s\033[K", line, groupDigits(uint64(rate)))
}

func (m *replayMeter) clear() {
	if m.shown {
		fmt.Fprint(m.w, "\r\033[K")
		m.shown = false
	}
}

func printReplayReport(w io.Writer, rep *replay.Report, note, whatIfName string, changesShown int) {
	rng := fmt.Sprintf("log seq %d..%d", rep.First, rep.Last)
	if rep.Records == 0 {
		rng = "no records"
	}
	if changesShown > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "replayed %s: %s (%s records) through %s in %s, %s records/s\n", rep.Source, rng, groupDigits(rep.Records),
		strings.Join(rep.Processors, ", "), rep.Elapsed.Round(time.Millisecond), groupDigits(uint64(rep.Rate())))
	if rep.First > 1 && rep.Conversation == "" {
		fmt.Fprintf(w, "NOTE: the source starts at log seq %d, not 1: the folds did not see the records before it, so outputs that depend on them can differ (replay a source that starts at 1 to check exactly)\n", rep.First)
	}
	if rep.Conversation != "" {
		fmt.Fprintf(w, "conversation %s only, with global events (outputs of whole-log processors not compared)\n", rep.Conversation)
	}
	if rep.From > 1 {
		fmt.Fprintf(w, "compared from log seq %d (%s records); earlier ones only folded\n", rep.From, groupDigits(rep.Compared))
	}
	if note != "" {
		fmt.Fprintln(w, note)
	}
	if fr := rep.Frontier; fr != nil && rep.Verified {
		by := map[string]string{replay.FrontierCheckpoint: "the live drivers' checkpoint", replay.FrontierTo: "--to",
			replay.FrontierLogEnd: "the end of the log", replay.FrontierDerived: "the derived stream's frontier"}[fr.By]
		fmt.Fprintf(w, "compared up to log seq %d: %s", fr.Seq, by)
		if fr.Detail != "" {
			fmt.Fprintf(w, " (%s)", fr.Detail)
		}
		fmt.Fprintln(w)
	}
	if rep.Verified {
		if rep.Identical() {
			fmt.Fprintf(w, "identical: %s outputs reproduced byte for byte", groupDigits(rep.Matched))
		} else {
			fmt.Fprintf(w, "DIFFERENT: %s identical, %d changed, %d missing from the record, %d unexpected in the record, %d malformed",
				groupDigits(rep.Matched), rep.Changed, rep.Missing, rep.Unexpected, rep.Malformed)
		}
		if rep.Duplicates > 0 {
			fmt.Fprintf(w, "; %d stored twice, identically", rep.Duplicates)
		}
		fmt.Fprintln(w)
		if fr := rep.Frontier; rep.Unpublished > 0 && fr != nil && fr.Published != nil {
			fmt.Fprintf(w, "not published yet: %s outputs of records after log seq %d (up to which outputs are known stored); not differences\n",
				groupDigits(rep.Unpublished), *fr.Published)
		}
		if !rep.Identical() {
			fmt.Fprintln(w, "a difference is a bug in a fold (not deterministic, or changed since the log was written) or tampering with the record:")
			for _, d := range rep.Differences {
				fmt.Fprintf(w, "  %-10s %s (log seq %d, %s)", d.Kind, d.ID, d.Seq, d.Subject)
				if d.Detail != "" {
					fmt.Fprintf(w, ": %s", d.Detail)
				}
				fmt.Fprintln(w)
				if len(d.ReplayedJSON) > 0 {
					fmt.Fprintf(w, "      replayed: %s\n", d.ReplayedJSON)
				}
				if len(d.RecordedJSON) > 0 {
					fmt.Fprintf(w, "      recorded: %s\n", d.RecordedJSON)
				}
			}
			if n := rep.Changed + rep.Missing + rep.Unexpected + rep.Malformed; n > uint64(len(rep.Differences)) {
				fmt.Fprintf(w, "  … and %d more (--max 0 lists all, --json for machines)\n", n-uint64(len(rep.Differences)))
			}
		}
	} else {
		fmt.Fprintln(w, "not verified (--no-verify)")
	}
	if wi := rep.WhatIf; wi != nil {
		printWhatIf(w, wi, whatIfName, changesShown)
	}
}

func printWhatIf(w io.Writer, wi *replay.WhatIfReport, name string, changesShown int) {
	fmt.Fprintf(w, "\nwhat if %s (config v%d) had been in force: %s actions, %s decided differently",
		name, wi.ConfigVersion, groupDigits(wi.Actions), groupDigits(wi.Changed))
	if wi.LevelOnly > 0 {
		fmt.Fprintf(w, ", %s more at another risk level only", groupDigits(wi.LevelOnly))
	}
	fmt.Fprintln(w)
	if changesShown == 0 && wi.Changed > 0 {
		for _, ch := range wi.Changes {
			printChange(w, ch)
		}
	}
	dispositions := []string{replay.Allow, replay.Ask, replay.Deny}
	label := map[string]string{replay.Allow: "allowed", replay.Ask: "asked", replay.Deny: "denied"}
	fmt.Fprintf(w, "\n  %-14s %12s %12s %12s\n", "", "would allow", "would ask", "would deny")
	for _, was := range dispositions {
		row := wi.Matrix[was]
		fmt.Fprintf(w, "  %-14s %12s %12s %12s\n", "was "+label[was], groupDigits(row[replay.Allow]), groupDigits(row[replay.Ask]), groupDigits(row[replay.Deny]))
	}
	fmt.Fprintf(w, "\nwould have stopped %s actions that ran (%s by asking a person, %s denied outright);\n",
		groupDigits(wi.Stopped), groupDigits(wi.StoppedAsk), groupDigits(wi.StoppedDeny))
	fmt.Fprintf(w, "would have let through without a person %s actions that were held or denied.\n", groupDigits(wi.Loosened))
	if wi.Matrix[replay.Ask][replay.Ask] > 0 || wi.Matrix[replay.Allow][replay.Ask] > 0 {
		fmt.Fprintln(w, "(an action that would ask but was never asked ends \"still pending\": the log has no answer for it)")
	}
}

// printChange prints one action whose decision differs.
func printChange(w io.Writer, ch replay.ActionChange) {
	mark := ""
	switch {
	case ch.Stopped:
		mark = "  STOPPED"
	case ch.Loosened:
		mark = "  LOOSENED"
	}
	fmt.Fprintf(w, "  seq %d  %s  (%s, %s)%s\n      %s\n", ch.Seq, ch.ActionID, ch.Conversation, ch.Time, mark, clipCell(commandOf(ch), 200))
	fmt.Fprintf(w, "      was:   %s\n      would: %s\n", outcomeDetail(ch.Was), outcomeDetail(ch.Would))
}

func commandOf(ch replay.ActionChange) string {
	if ch.Command != "" {
		return ch.Command
	}
	return ch.Tool
}

// outcomeDetail is an outcome with the rules behind it.
func outcomeDetail(o replay.Outcome) string {
	s := o.String()
	if o.Final == replay.Deny && o.Reason != "" && o.By != "human" {
		s += ": " + o.Reason
	}
	if len(o.Rules) > 0 {
		s += " [" + string(o.Level) + ": " + strings.Join(o.Rules, ", ") + "]"
	} else if o.Level != "" {
		s += " [" + string(o.Level) + "]"
	}
	return s
}

func clipCell(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// groupDigits writes n with thousands separators.
func groupDigits(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
