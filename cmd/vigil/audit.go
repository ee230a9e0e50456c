package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/auditlog"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors/audit"
	"github.com/vigil-dev/vigil/replay"
)

// Exit statuses of the audit commands (docs/audit.md).
const (
	auditExitOK       = 0 // verified: no finding
	auditExitTampered = 1 // tampering found (or a proof does not verify)
	auditExitUsage    = 2 // usage, key, connection or I/O error: nothing was verified
)

// auditUsageErr makes err exit with auditExitUsage.
func auditUsageErr(err error) error {
	var ee *exitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &exitError{code: auditExitUsage, err: err}
}

func newAuditCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify, export and prove the tamper-evident audit trail",
		Long: `The audit processor folds VIGIL_LOG into an RFC 6962 Merkle tree (leaf i is
the stored bytes of log seq i+1) and publishes a signed checkpoint (a C2SP
tlog-checkpoint in a signed note, Ed25519) every N records on
vigil.audit.checkpoint, listing the leaf hashes since the previous one.
These commands re-derive the tree from the log and check it against the
checkpoints. See docs/audit.md.

Exit status: 0 verified, nothing found; 1 tampering found (every finding
names the log sequence); 2 usage, key or connection error (nothing verified).`,
	}
	for _, sub := range []*cobra.Command{newAuditVerifyCmd(c), newAuditExportCmd(c), newAuditProveCmd(c), newAuditKeyCmd(c)} {
		sub.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return auditUsageErr(err) })
		cmd.AddCommand(sub)
	}
	return cmd
}

// args wraps a cobra argument check so that its error exits with 2.
func auditArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error { return auditUsageErr(check(cmd, a)) }
}

// --- keys ---

// auditKeys returns the verifier keys to trust: --pubkey values (a key,
// or a file holding one), else DIR/audit/verifier.key of the data
// directory. required=false returns nil instead of an error when none.
func (c *cli) auditKeys(pubkeys []string, required bool) (note.Verifiers, []string, error) {
	var keys []string
	for _, k := range pubkeys {
		if _, err := note.NewVerifier(strings.TrimSpace(k)); err == nil {
			keys = append(keys, strings.TrimSpace(k))
			continue
		}
		b, err := os.ReadFile(k)
		if err != nil {
			return nil, nil, fmt.Errorf("--pubkey %q is neither a verifier key (name+hash+base64) nor a readable file", k)
		}
		keys = append(keys, strings.TrimSpace(string(b)))
	}
	if len(keys) == 0 {
		k, err := auditkey.VerifierKey(c.data())
		if err != nil {
			if !required {
				return nil, nil, nil
			}
			return nil, nil, err
		}
		keys = []string{k}
	}
	vs, err := audit.NewVerifiers(keys...)
	if err != nil {
		return nil, nil, err
	}
	return vs, keys, nil
}

func newAuditKeyCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "key",
		Short: "Print the audit verifier key of the data directory",
		Long: `Print the public verifier key (name+hash+base64, golang.org/x/mod/sumdb/note)
that checks this server's checkpoints. Give it to auditors: they pass it
to 'vigil audit verify --pubkey'. No server is needed.`,
		Args: auditArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := auditkey.VerifierKey(c.data())
			if err != nil {
				return auditUsageErr(err)
			}
			fmt.Fprintln(c.stdout, k)
			return nil
		},
	}
}

// --- reading the streams ---

// openAuditStreams connects as admin and returns the client whose streams
// the audit functions (internal/auditlog) read.
func (c *cli) openAuditStreams(ctx context.Context) (*client.Client, error) {
	cl, err := c.connect(ctx, natsutil.RoleAdmin)
	if err != nil {
		return nil, auditUsageErr(err)
	}
	return cl, nil
}

// auditProgress shows long reads on a terminal.
type auditProgress struct {
	w     io.Writer
	on    bool
	last  time.Time
	shown bool
}

func newAuditProgress(w io.Writer) *auditProgress { return &auditProgress{w: w, on: isTerminal(w)} }

// Show is auditlog.Progress's.
func (p *auditProgress) Show(what string, seq, to uint64) {
	if !p.on || seq%4096 != 0 || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.w, "\r%s: seq %d of %d (%d%%)   ", what, seq, to, seq*100/max(to, 1))
}

// Done is auditlog.Progress's.
func (p *auditProgress) Done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// --- verify ---

type auditVerifyFlags struct {
	pubkeys    []string
	export     string
	checkpoint []string
	interval   uint64
	json       bool
}

func newAuditVerifyCmd(c *cli) *cobra.Command {
	var f auditVerifyFlags
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Re-derive the audit tree from VIGIL_LOG and check it against the checkpoints",
		Long: `Read VIGIL_LOG and every checkpoint on vigil.audit.checkpoint, recompute the
Merkle tree, and report every deleted, altered, inserted or reordered record
by its log sequence. Records after the last checkpoint are not signed yet:
they are counted, and gaps among them reported, but a change to them cannot
be detected until the next checkpoint.

With --export FILE, verify an export offline instead (no server needed):
each record's bytes, its JSON view, its inclusion proof and the signed
checkpoint, and for a complete export that no line is missing or moved.

Keys: --pubkey K (repeatable; a key or a file with one), else the data
directory's DIR/audit/verifier.key. --checkpoint FILE adds a checkpoint kept
elsewhere (a signed note, or an export or 'prove --json' output): the log
must still match it even if VIGIL_DERIVED was rewritten.

Exit status: 0 nothing found; 1 tampering found; 2 usage or connection error.`,
		Args: auditArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.export != "" {
				return c.auditVerifyExport(cmd.Context(), f)
			}
			return c.auditVerifyLog(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.pubkeys, "pubkey", nil, "verifier key to trust (name+hash+base64, or a file holding it); repeatable")
	fl.StringVar(&f.export, "export", "", "verify this export file offline (- for standard input)")
	fl.StringArrayVar(&f.checkpoint, "checkpoint", nil, "a checkpoint kept outside the server that the log must still match; repeatable")
	fl.Uint64Var(&f.interval, "interval", audit.DefaultInterval, "the audit processor's checkpoint interval: a log this long with no valid checkpoint is tampering (0: do not check)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	return cmd
}

func (c *cli) auditVerifyLog(ctx context.Context, f auditVerifyFlags) error {
	vs, keys, err := c.auditKeys(f.pubkeys, true)
	if err != nil {
		return auditUsageErr(err)
	}
	cfg := auditlog.VerifyConfig{Verifiers: vs, Interval: f.interval, Progress: newAuditProgress(c.stderr)}
	for _, path := range f.checkpoint {
		n, err := readAuditCheckpointFile(path)
		if err != nil {
			return auditUsageErr(err)
		}
		cfg.Witnesses = append(cfg.Witnesses, auditlog.Witness{Name: "--checkpoint " + path, Note: n})
	}
	check, err := auditlog.NewLogCheck(cfg)
	if err != nil {
		return auditUsageErr(err)
	}
	cl, err := c.openAuditStreams(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	rep, err := check.Run(ctx, cl.JetStream())
	if err != nil {
		return auditUsageErr(err)
	}
	if f.json {
		if err := writeAuditJSON(c.stdout, struct {
			OK bool `json:"ok"`
			*audit.Report
			Keys []string `json:"trusted_keys"`
		}{rep.Clean(), rep.Report, keys}); err != nil {
			return auditUsageErr(err)
		}
	} else {
		c.printAuditReport(rep.Report, keys, rep.Elapsed)
	}
	return auditTamperExit(rep.Findings)
}

func (c *cli) printAuditReport(rep *audit.Report, keys []string, elapsed time.Duration) {
	w := c.stdout
	rate := ""
	if s := elapsed.Seconds(); s > 0 && rep.Records > 0 {
		rate = fmt.Sprintf(" in %s (%.0f records/s)", elapsed.Round(time.Millisecond), float64(rep.Records)/s)
	}
	fmt.Fprintf(w, "VIGIL_LOG: %s, last seq %d%s\n", auditPlural(rep.Records, "record"), rep.LogEnd, rate)
	fmt.Fprintf(w, "checkpoints: %d, %d verify with %s\n", rep.Checkpoints, rep.ValidCheckpoints, strings.Join(auditKeyNames(keys), ", "))
	if rep.Witnesses > 0 {
		fmt.Fprintf(w, "witnesses: %d trusted checkpoint(s) given with --checkpoint\n", rep.Witnesses)
	}
	if rep.SignedSize > 0 {
		fmt.Fprintf(w, "signed: seqs 1..%d", rep.SignedSize)
		if rep.Unsigned > 0 {
			fmt.Fprintf(w, "; %s after the last checkpoint not signed yet", auditPlural(rep.Unsigned, "record"))
		}
		fmt.Fprintln(w)
	}
	for _, k := range rep.UnknownKeys {
		fmt.Fprintf(w, "untrusted key: checkpoints signed by %s\n", k)
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	printAuditFindings(w, rep.Findings)
}

func printAuditFindings(w io.Writer, fs []audit.Finding) {
	if len(fs) == 0 {
		fmt.Fprintln(w, "OK: no tampering found")
		return
	}
	fmt.Fprintf(w, "TAMPERING: %s\n", auditPlural(uint64(len(fs)), "finding"))
	const maxShown = 200
	for i, f := range fs {
		if i == maxShown {
			fmt.Fprintf(w, "  … %d more (use --json for all)\n", len(fs)-maxShown)
			break
		}
		fmt.Fprintf(w, "  %s\n", f)
	}
}

func auditPlural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatUint(n, 10) + " " + noun + "s"
}

func auditKeyNames(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		name, rest, _ := strings.Cut(k, "+")
		hash, _, _ := strings.Cut(rest, "+")
		out[i] = name + "+" + hash
	}
	return out
}

// auditTamperExit is nil without findings, else exit 1 naming the sequences.
func auditTamperExit(fs []audit.Finding) error {
	if len(fs) == 0 {
		return nil
	}
	var seqs []string
	for _, f := range fs {
		switch {
		case f.Seq == 0:
			continue
		case f.Last > f.Seq:
			seqs = append(seqs, fmt.Sprintf("%d..%d", f.Seq, f.Last))
		default:
			seqs = append(seqs, strconv.FormatUint(f.Seq, 10))
		}
		if len(seqs) == 20 {
			seqs = append(seqs, "…")
			break
		}
	}
	msg := fmt.Sprintf("audit: tampering found (%s)", auditPlural(uint64(len(fs)), "finding"))
	if len(seqs) > 0 {
		msg += " at seq " + strings.Join(seqs, ", ")
	}
	return &exitError{code: auditExitTampered, err: errors.New(msg)}
}

func writeAuditJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// readAuditCheckpointFile reads a signed checkpoint note, or the checkpoint
// line of an export (or of 'prove --json' output).
func readAuditCheckpointFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--checkpoint: %w", err)
	}
	n, err := auditlog.WitnessNote(b)
	if err != nil {
		return "", fmt.Errorf("--checkpoint %s: %w", path, err)
	}
	return n, nil
}

func (c *cli) auditVerifyExport(ctx context.Context, f auditVerifyFlags) error {
	var vs note.Verifiers
	var keys []string
	if len(f.pubkeys) > 0 {
		var err error
		if vs, keys, err = c.auditKeys(f.pubkeys, true); err != nil {
			return auditUsageErr(err)
		}
	}
	var r io.Reader
	if f.export == "-" {
		r = c.stdin
	} else {
		fh, err := os.Open(f.export)
		if err != nil {
			return auditUsageErr(fmt.Errorf("--export: %w", err))
		}
		defer fh.Close()
		r = fh
	}
	rep, err := auditlog.VerifyExport(ctx, r, auditlog.ExportVerifyConfig{Verifiers: vs, Name: f.export})
	if err != nil {
		return auditUsageErr(err)
	}
	if f.json {
		if err := writeAuditJSON(c.stdout, struct {
			OK bool `json:"ok"`
			*audit.ExportReport
		}{rep.Clean(), rep}); err != nil {
			return auditUsageErr(err)
		}
		return auditTamperExit(rep.Findings)
	}
	w := c.stdout
	fmt.Fprintf(w, "export %s: %s", f.export, auditPlural(uint64(rep.Events), "record"))
	if rep.Conversation != "" {
		fmt.Fprintf(w, " of conversation %s", rep.Conversation)
	}
	if rep.Complete {
		fmt.Fprintf(w, ", complete from seq %d", rep.From)
	}
	fmt.Fprintln(w)
	if rep.SignedSize > 0 {
		who := strings.Join(auditKeyNames(keys), ", ")
		if rep.KeyFromExport {
			who = "the key written in the export"
		}
		fmt.Fprintf(w, "checkpoint: tree size %d, signature verified with %s\n", rep.SignedSize, who)
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	printAuditFindings(w, rep.Findings)
	return auditTamperExit(rep.Findings)
}

// --- export ---

type auditExportFlags struct {
	conversation string
	from         uint64
	out          string
	pubkeys      []string
	noSeal       bool
}

func newAuditExportCmd(c *cli) *cobra.Command {
	var f auditExportFlags
	cmd := &cobra.Command{
		Use:   "export --out FILE",
		Short: "Write a verifiable JSONL trace: events, risk, decisions, proofs, checkpoint",
		Long: `Write a JSON-lines trace an auditor can verify offline with
'vigil audit verify --export FILE --pubkey K': a header line; one line per
record with its log seq, its JSON envelope, its stored bytes (base64), its
leaf hash and inclusion proof, and the risk assessment, gate decision and
approver found for it in VIGIL_DERIVED; and last the signed checkpoint
every proof leads to, with the verifier key.

Before reading, export appends an audit.seal event and waits for the
signed checkpoint that covers it, so every record exported has a proof
(--no-seal skips this: records after the last checkpoint are then
exported without a proof, e.g. when reading a stopped node). The log is
verified while it is read: if tampering is found the export is still
written, the findings are printed, and the exit status is 1.`,
		Args: auditArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.out == "" {
				return auditUsageErr(errors.New("--out FILE is required (- for standard output)"))
			}
			if f.conversation != "" && !events.ValidToken(f.conversation) {
				return auditUsageErr(fmt.Errorf("--conversation %q is not a conversation id", f.conversation))
			}
			if !f.noSeal {
				if err := c.auditSeal(cmd.Context()); err != nil {
					fmt.Fprintf(c.stderr, "warning: %v; exporting without it\n", err)
				}
			}
			return c.auditExport(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.noSeal, "no-seal", false, "do not ask for a checkpoint covering the whole log first")
	fl.StringVar(&f.conversation, "conversation", "", "only this conversation's records")
	fl.Uint64Var(&f.from, "from", 1, "first log sequence to export")
	fl.StringVar(&f.out, "out", "", "file to write (- for standard output)")
	fl.StringArrayVar(&f.pubkeys, "pubkey", nil, "verifier key to check the checkpoints with (default: the data directory's)")
	return cmd
}

// auditSeal appends an audit.seal event and waits until the audit
// processor has published the checkpoint that covers it.
func (c *cli) auditSeal(ctx context.Context) error {
	cl, err := c.connect(ctx, natsutil.RoleAdmin)
	if err != nil {
		return fmt.Errorf("no seal (cannot reach a server: %v)", err)
	}
	defer cl.Close()
	return auditlog.Seal(ctx, cl.JetStream(), cl, operatorName(), "vigil audit export", 15*time.Second)
}

func (c *cli) auditExport(ctx context.Context, f auditExportFlags) (err error) {
	vs, keys, err := c.auditKeys(f.pubkeys, false)
	if err != nil {
		return auditUsageErr(err)
	}
	cl, err := c.openAuditStreams(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	cfg := auditlog.ExportConfig{Conversation: f.conversation, From: f.from, Verifiers: vs, Progress: newAuditProgress(c.stderr),
		Processed: func(ctx context.Context) (uint64, string, error) {
			cp, ok, err := replay.LiveCheckpoint(ctx, cl.JetStream())
			if err != nil {
				fmt.Fprintf(c.stderr, "warning: %v; exporting without it\n", err)
			}
			if err != nil || !ok {
				return 0, "", nil
			}
			return cp.Seq, cp.Durable, nil
		}}
	if len(keys) > 0 {
		cfg.VerifierKey = keys[0]
	}

	// Write to a temporary file renamed over --out when complete.
	var w io.Writer
	var fh *os.File
	if f.out == "-" {
		w = c.stdout
	} else {
		fh, err = os.CreateTemp(filepath.Dir(f.out), ".vigil-export-*")
		if err != nil {
			return auditUsageErr(fmt.Errorf("--out: %w", err))
		}
		defer func() {
			if fh != nil {
				fh.Close()
				os.Remove(fh.Name())
			}
		}()
		w = fh
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	res, err := auditlog.Export(ctx, cl.JetStream(), bw, cfg)
	if err != nil {
		return auditUsageErr(err)
	}
	if err := bw.Flush(); err != nil {
		return auditUsageErr(fmt.Errorf("write %s: %w", f.out, err))
	}
	if fh != nil {
		if err := fh.Sync(); err != nil {
			return auditUsageErr(err)
		}
		if err := fh.Close(); err != nil {
			return auditUsageErr(err)
		}
		if err := os.Rename(fh.Name(), f.out); err != nil {
			return auditUsageErr(err)
		}
		fh = nil
	}

	// Report on standard error (standard output may be the export).
	rw := c.stderr
	switch {
	case res.Records == 0:
		fmt.Fprintf(rw, "exported no records (nothing selected) to %s\n", f.out)
	default:
		fmt.Fprintf(rw, "exported %s (seqs %d..%d) to %s\n", auditPlural(res.Records, "record"), res.First, res.Last, f.out)
	}
	cp := res.Checkpoint
	switch {
	case !res.Signed:
		fmt.Fprintln(rw, "warning: no checkpoint yet: nothing in the export is signed (it cannot be verified offline)")
	case vs == nil:
		fmt.Fprintf(rw, "warning: no verifier key (pass --pubkey): checkpoint of tree size %d included unverified\n", cp.Size)
	default:
		fmt.Fprintf(rw, "checkpoint: tree size %d, signed by %s\n", cp.Size, strings.Join(auditKeyNames(keys), ", "))
	}
	if res.HasProcessed && res.Last > res.Processed {
		fmt.Fprintf(rw, "note: the live drivers had processed the log up to seq %d (checkpoint of %s): records after it may carry no risk or gate data yet\n", res.Processed, res.ProcessedBy)
	}
	if res.Signed && res.Last > cp.Size {
		fmt.Fprintf(rw, "note: records after seq %d have no proof yet (after the last checkpoint)\n", cp.Size)
	}
	if res.Report == nil {
		return nil
	}
	if !res.Report.Clean() {
		printAuditFindings(rw, res.Report.Findings)
	}
	return auditTamperExit(res.Report.Findings)
}

// --- prove ---

func newAuditProveCmd(c *cli) *cobra.Command {
	var (
		pubkeys []string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "prove SEQ",
		Short: "Print an inclusion proof of the record at a log sequence",
		Long: `Print the RFC 6962 inclusion proof of the record at log sequence SEQ in the
tree of the latest checkpoint, with the signed checkpoint. The proof is
checked before it is printed. With --json the output is a small export
(header, record, checkpoint) that 'vigil audit verify --export' checks
offline.

Exit status: 0 proof printed; 1 the record is missing or the log does not
match the checkpoint; 2 usage or connection error, or SEQ is not covered by
a checkpoint yet.`,
		Args: auditArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			seq, err := strconv.ParseUint(a[0], 10, 64)
			if err != nil || seq == 0 {
				return auditUsageErr(fmt.Errorf("SEQ %q: give a log sequence (1, 2, …)", a[0]))
			}
			return c.auditProve(cmd.Context(), seq, pubkeys, asJSON)
		},
	}
	cmd.Flags().StringArrayVar(&pubkeys, "pubkey", nil, "verifier key to check the checkpoint with (default: the data directory's)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a verifiable mini export (JSON lines)")
	return cmd
}

func (c *cli) auditProve(ctx context.Context, seq uint64, pubkeys []string, asJSON bool) error {
	vs, keys, err := c.auditKeys(pubkeys, false)
	if err != nil {
		return auditUsageErr(err)
	}
	cl, err := c.openAuditStreams(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	// The HTTP API's proof route answers with the same Prover.
	prover := auditlog.NewProver(cl.JetStream(), vs, 0)
	progress := newAuditProgress(c.stderr)
	prover.SetProgress(func(at, to uint64) { progress.Show("prove", at, to) })
	pr, err := prover.Prove(ctx, seq)
	progress.Done()
	switch {
	case errors.Is(err, auditlog.ErrMissing), errors.Is(err, auditlog.ErrMismatch):
		return &exitError{code: auditExitTampered, err: err}
	case err != nil:
		return auditUsageErr(err)
	}
	if asJSON {
		vkey := ""
		if len(keys) > 0 {
			vkey = keys[0]
		}
		end, _ := auditlog.LogEnd(ctx, cl.JetStream())
		lines, err := auditlog.ProofLines(pr, end, vkey)
		if err != nil {
			return auditUsageErr(err)
		}
		for _, l := range lines {
			b, err := l.Marshal()
			if err != nil {
				return auditUsageErr(err)
			}
			fmt.Fprintf(c.stdout, "%s\n", b)
		}
		return nil
	}
	cp := pr.Checkpoint
	w := c.stdout
	fmt.Fprintf(w, "seq %d is leaf %d of the tree of size %d\n", seq, seq-1, cp.Size)
	fmt.Fprintf(w, "leaf hash: %s\n", pr.Leaf)
	fmt.Fprintf(w, "root hash: %s\n", cp.Root)
	fmt.Fprintf(w, "proof (%d hashes, leaf upwards):\n", len(pr.Path))
	for _, h := range pr.Path {
		fmt.Fprintf(w, "  %s\n", h)
	}
	if vs == nil {
		fmt.Fprintln(w, "checkpoint (signature NOT verified: no key; pass --pubkey):")
	} else {
		fmt.Fprintf(w, "checkpoint (signature verified with %s):\n", strings.Join(auditKeyNames(keys), ", "))
	}
	for _, l := range strings.Split(strings.TrimRight(cp.Note, "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return nil
}
