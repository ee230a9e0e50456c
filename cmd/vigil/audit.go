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

	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/auditlog"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors/audit"
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

// auditSource reads what the audit commands need from a server.
type auditSource struct {
	js       jetstream.JetStream
	progress *auditProgress
}

func (c *cli) openAuditSource(ctx context.Context) (*auditSource, func(), error) {
	cl, err := c.connect(ctx, natsutil.RoleAdmin)
	if err != nil {
		return nil, nil, auditUsageErr(err)
	}
	return &auditSource{js: cl.JetStream(), progress: newAuditProgress(c.stderr)}, cl.Close, nil
}

// logEnd is VIGIL_LOG's last sequence.
func (s *auditSource) logEnd(ctx context.Context) (uint64, error) {
	st, err := s.js.Stream(ctx, events.StreamLog)
	if err != nil {
		return 0, auditUsageErr(fmt.Errorf("stream %s: %w", events.StreamLog, err))
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, auditUsageErr(fmt.Errorf("stream %s: %w", events.StreamLog, err))
	}
	return info.State.LastSeq, nil
}

// checkpoints calls fn for every message on vigil.audit.checkpoint.
func (s *auditSource) checkpoints(ctx context.Context, fn func(at uint64, cp events.AuditCheckpoint, err error)) error {
	return auditUsageErr(auditlog.ReadCheckpoints(ctx, s.js, fn))
}

// log calls fn for the records from..to (to inclusive) on subjects.
func (s *auditSource) log(ctx context.Context, what string, from, to uint64, subjects []string, fn func(natsutil.RawRecord) error) error {
	if to == 0 {
		return nil
	}
	defer s.progress.done()
	err := natsutil.ReadStream(ctx, s.js, natsutil.ReadOptions{Stream: events.StreamLog, From: from, To: to, Subjects: subjects},
		func(r natsutil.RawRecord) error {
			s.progress.show(what, r.Seq, to)
			return fn(r)
		})
	return auditUsageErr(err)
}

// derived returns the risk.assessed and gate.decided data by the log
// sequence of the action they are about (their data's log_seq).
func (s *auditSource) derived(ctx context.Context, conversation string) (risk, gate map[uint64]any, err error) {
	subjects := []string{events.RiskPrefix + ">", events.GatePrefix + ">"}
	if conversation != "" {
		subjects = []string{events.RiskSubject(conversation), events.GateSubject(conversation)}
	}
	risk, gate = map[uint64]any{}, map[uint64]any{}
	err = natsutil.ReadStream(ctx, s.js, natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: subjects},
		func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return nil // not ours to judge here; the processors' own checks report it
			}
			m, ok := d.Data.(map[string]any)
			if !ok {
				return nil
			}
			seq := auditUint(m["log_seq"])
			if seq == 0 {
				seq = d.Seq
			}
			switch d.Kind {
			case events.KindRiskAssessed:
				risk[seq] = m
			case events.KindGateDecided:
				gate[seq] = m
			}
			return nil
		})
	return risk, gate, auditUsageErr(err)
}

func auditUint(v any) uint64 {
	switch x := v.(type) {
	case int64:
		if x > 0 {
			return uint64(x)
		}
	case uint64:
		return x
	case float64:
		if x > 0 {
			return uint64(x)
		}
	}
	return 0
}

// auditProgress shows long reads on a terminal.
type auditProgress struct {
	w     io.Writer
	on    bool
	last  time.Time
	shown bool
}

func newAuditProgress(w io.Writer) *auditProgress { return &auditProgress{w: w, on: isTerminal(w)} }

func (p *auditProgress) show(what string, seq, to uint64) {
	if !p.on || seq%4096 != 0 || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.w, "\r%s: seq %d of %d (%d%%)   ", what, seq, to, seq*100/max(to, 1))
}

func (p *auditProgress) done() {
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
				return c.auditVerifyExport(f)
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
	v := audit.NewLogVerifier(vs)
	v.ExpectInterval(f.interval)
	for _, path := range f.checkpoint {
		n, err := readAuditCheckpointFile(path)
		if err != nil {
			return auditUsageErr(err)
		}
		if err := v.AddTrusted(n); err != nil {
			return auditUsageErr(fmt.Errorf("--checkpoint %s: %w", path, err))
		}
	}
	src, closeFn, err := c.openAuditSource(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	// Checkpoints first: each is published after the records it covers,
	// so the log read afterwards holds everything they sign.
	if err := src.checkpoints(ctx, func(at uint64, cp events.AuditCheckpoint, err error) {
		if err != nil {
			v.AddBadCheckpoint(at, err)
			return
		}
		v.AddCheckpoint(at, cp)
	}); err != nil {
		return err
	}
	end, err := src.logEnd(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := src.log(ctx, "verify", 1, end, nil, func(r natsutil.RawRecord) error {
		return v.AddRecord(r.Seq, r.Data)
	}); err != nil {
		return err
	}
	v.SetLogEnd(end)
	rep := v.Finish()
	elapsed := time.Since(start)
	if f.json {
		if err := writeAuditJSON(c.stdout, struct {
			OK bool `json:"ok"`
			*audit.Report
			Keys []string `json:"trusted_keys"`
		}{rep.Clean(), rep, keys}); err != nil {
			return auditUsageErr(err)
		}
	} else {
		c.printAuditReport(rep, keys, elapsed)
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
	if !strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		return string(b), nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		l, err := audit.DecodeExportLine([]byte(line))
		if err == nil && l.Checkpoint != nil {
			return l.Checkpoint.Note, nil
		}
	}
	return "", fmt.Errorf("--checkpoint %s: no checkpoint line in this JSON file", path)
}

func (c *cli) auditVerifyExport(f auditVerifyFlags) error {
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
	v := audit.NewExportVerifier(vs)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), audit.MaxLineBytes+1)
	for sc.Scan() {
		v.AddLine(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return auditUsageErr(fmt.Errorf("read %s: %w (is it an export? lines are at most %d bytes)", f.export, err, audit.MaxLineBytes))
	}
	rep, err := v.Finish()
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

// --- the tree as a reader of the log builds it ---

// auditLogTree reads VIGIL_LOG 1..end into a proof tree (auditlog.LogTree),
// showing progress.
func auditLogTree(ctx context.Context, src *auditSource, what string, end uint64, v *audit.LogVerifier, keep func(natsutil.RawRecord)) (*audit.Tree, error) {
	defer src.progress.done()
	tree, err := auditlog.LogTree(ctx, src.js, end, v, keep, func(seq, to uint64) { src.progress.show(what, seq, to) })
	return tree, auditUsageErr(err)
}

// auditPadTree is auditlog.PadTree.
func auditPadTree(tree *audit.Tree, size uint64) error { return auditlog.PadTree(tree, size) }

// auditChooseCheckpoint is auditlog.ChooseCheckpoint.
func auditChooseCheckpoint(cps []events.AuditCheckpoint, vs note.Verifiers, atLeast uint64) (audit.Checkpoint, bool) {
	return auditlog.ChooseCheckpoint(cps, vs, atLeast)
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
	id := "seal-export-" + ulid.Make().String()
	r, err := cl.Append(ctx, events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindAuditSeal, Time: time.Now().UTC(),
		Data: map[string]any{"by": operatorName(), "reason": "vigil audit export"}})
	if err != nil {
		return fmt.Errorf("no seal: %w", err)
	}
	st, err := cl.JetStream().Stream(ctx, events.StreamDerived)
	if err != nil {
		return fmt.Errorf("no seal: %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m, err := st.GetLastMsgForSubject(ctx, events.SubjectCheckpoint); err == nil {
			if d, err := events.DecodeDerived(m.Data); err == nil {
				if cp, ok := d.Data.(map[string]any); ok {
					if size, _ := cp["tree_size"].(int64); uint64(size) >= r.Seq {
						return nil
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no checkpoint covering the seal (log seq %d) within 15s: is the audit processor running?", r.Seq)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *cli) auditExport(ctx context.Context, f auditExportFlags) (err error) {
	vs, keys, err := c.auditKeys(f.pubkeys, false)
	if err != nil {
		return auditUsageErr(err)
	}
	src, closeFn, err := c.openAuditSource(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	var cps []events.AuditCheckpoint
	var v *audit.LogVerifier
	if vs != nil {
		v = audit.NewLogVerifier(vs)
	}
	if err := src.checkpoints(ctx, func(at uint64, cp events.AuditCheckpoint, err error) {
		if err == nil {
			cps = append(cps, cp)
		}
		if v != nil {
			if err != nil {
				v.AddBadCheckpoint(at, err)
			} else {
				v.AddCheckpoint(at, cp)
			}
		}
	}); err != nil {
		return err
	}
	end, err := src.logEnd(ctx)
	if err != nil {
		return err
	}
	tree, err := auditLogTree(ctx, src, "export: hashing", end, v, nil)
	if err != nil {
		return auditUsageErr(err)
	}
	cp, haveCP := auditChooseCheckpoint(cps, vs, 0)
	if haveCP {
		if err := auditPadTree(tree, cp.Size); err != nil {
			return auditUsageErr(err)
		}
	}
	risk, gate, err := src.derived(ctx, f.conversation)
	if err != nil {
		return err
	}

	// Write.
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
	writeLine := func(l audit.ExportLine) error {
		b, err := l.Marshal()
		if err != nil {
			return err
		}
		bw.Write(b)
		return bw.WriteByte('\n')
	}
	from := max(f.from, 1)
	if err := writeLine(audit.ExportLine{Header: &audit.ExportHeader{Format: audit.ExportFormat, Conversation: f.conversation,
		From: from, Complete: f.conversation == "", LogEnd: end}}); err != nil {
		return auditUsageErr(err)
	}
	var subjects []string
	if f.conversation != "" {
		subjects = []string{events.LogSubject(f.conversation)}
	}
	var n, first, last uint64
	err = src.log(ctx, "export: writing", from, end, subjects, func(r natsutil.RawRecord) error {
		ev, err := events.DecodeMsgpack(r.Data)
		if err != nil {
			ev = events.Event{Kind: "undecodable", Extra: map[string]any{"error": err.Error()}}
		}
		var proof []audit.Hash
		var size uint64
		if haveCP && r.Seq <= cp.Size {
			if proof, err = tree.Prove(r.Seq, cp.Size); err != nil {
				return err
			}
			size = cp.Size
		}
		var rk, gt any
		if x, ok := risk[r.Seq]; ok {
			rk = x
		}
		if x, ok := gate[r.Seq]; ok {
			gt = x
		}
		line, err := audit.NewExportEvent(r.Seq, r.Data, &ev, size, proof, rk, gt)
		if err != nil {
			return err
		}
		if first == 0 {
			first = r.Seq
		}
		n, last = n+1, r.Seq
		return writeLine(audit.ExportLine{Event: &line})
	})
	if err != nil {
		return auditUsageErr(err)
	}
	if haveCP {
		vkey := ""
		if len(keys) > 0 {
			vkey = keys[0]
		}
		if err := writeLine(audit.ExportLine{Checkpoint: &audit.ExportCheckpoint{TreeSize: cp.Size, RootHash: cp.Root.String(), Note: cp.Note, VerifierKey: vkey}}); err != nil {
			return auditUsageErr(err)
		}
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
	case n == 0:
		fmt.Fprintf(rw, "exported no records (nothing selected) to %s\n", f.out)
	default:
		fmt.Fprintf(rw, "exported %s (seqs %d..%d) to %s\n", auditPlural(n, "record"), first, last, f.out)
	}
	switch {
	case !haveCP:
		fmt.Fprintln(rw, "warning: no checkpoint yet: nothing in the export is signed (it cannot be verified offline)")
	case vs == nil:
		fmt.Fprintf(rw, "warning: no verifier key (pass --pubkey): checkpoint of tree size %d included unverified\n", cp.Size)
	default:
		fmt.Fprintf(rw, "checkpoint: tree size %d, signed by %s\n", cp.Size, strings.Join(auditKeyNames(keys), ", "))
	}
	if haveCP && last > cp.Size {
		fmt.Fprintf(rw, "note: records after seq %d have no proof yet (after the last checkpoint)\n", cp.Size)
	}
	if v == nil {
		return nil
	}
	v.SetLogEnd(end)
	rep := v.Finish()
	if !rep.Clean() {
		printAuditFindings(rw, rep.Findings)
	}
	return auditTamperExit(rep.Findings)
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
	src, closeFn, err := c.openAuditSource(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	pr, err := auditlog.Prove(ctx, src.js, vs, seq, func(at, to uint64) { src.progress.show("prove", at, to) })
	src.progress.done()
	switch {
	case errors.Is(err, auditlog.ErrMissing), errors.Is(err, auditlog.ErrMismatch):
		return &exitError{code: auditExitTampered, err: err}
	case err != nil:
		return auditUsageErr(err)
	}
	cp, raw, proof, leaf := pr.Checkpoint, pr.Raw, pr.Path, pr.Leaf
	if asJSON {
		ev, err := events.DecodeMsgpack(raw)
		if err != nil {
			return auditUsageErr(fmt.Errorf("seq %d does not decode: %w", seq, err))
		}
		line, err := audit.NewExportEvent(seq, raw, &ev, cp.Size, proof, nil, nil)
		if err != nil {
			return auditUsageErr(err)
		}
		vkey := ""
		if len(keys) > 0 {
			vkey = keys[0]
		}
		end, _ := src.logEnd(ctx)
		for _, l := range []audit.ExportLine{
			{Header: &audit.ExportHeader{Format: audit.ExportFormat, From: seq, LogEnd: end}},
			{Event: &line},
			{Checkpoint: &audit.ExportCheckpoint{TreeSize: cp.Size, RootHash: cp.Root.String(), Note: cp.Note, VerifierKey: vkey}},
		} {
			b, err := l.Marshal()
			if err != nil {
				return auditUsageErr(err)
			}
			fmt.Fprintf(c.stdout, "%s\n", b)
		}
		return nil
	}
	w := c.stdout
	fmt.Fprintf(w, "seq %d is leaf %d of the tree of size %d\n", seq, seq-1, cp.Size)
	fmt.Fprintf(w, "leaf hash: %s\n", leaf)
	fmt.Fprintf(w, "root hash: %s\n", cp.Root)
	fmt.Fprintf(w, "proof (%d hashes, leaf upwards):\n", len(proof))
	for _, h := range proof {
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
