package auditlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/processors/audit"
)

// ErrBadConversation: the conversation asked for is not a conversation id.
var ErrBadConversation = errors.New("auditlog: not a conversation id")

// ExportConfig selects what Export writes.
type ExportConfig struct {
	// Conversation selects one conversation's records ("" for all: a
	// complete export).
	Conversation string
	// From is the first log sequence to export (0 means 1).
	From uint64
	// Verifiers check the checkpoints, and the log is verified while it
	// is read; nil includes the newest checkpoint unverified and verifies
	// nothing.
	Verifiers note.Verifiers
	// VerifierKey is written with the checkpoint, for an auditor without
	// the key ("" for none).
	VerifierKey string
	// Progress is told how far the reads of the log have got (may be nil).
	Progress Progress
	// Processed, when set, returns the live drivers' checkpoint: every
	// record up to it has its risk and gate data stored. It is read
	// before VIGIL_DERIVED is, and reported as ExportResult.Processed.
	Processed func(ctx context.Context) (seq uint64, by string, err error)
}

// ExportResult says what Export wrote.
type ExportResult struct {
	// LogEnd is VIGIL_LOG's last sequence when the export was made.
	LogEnd uint64
	// Records were written, with sequences First..Last (0 when none).
	Records, First, Last uint64
	// Checkpoint is the checkpoint every proof leads to, when Signed.
	Checkpoint audit.Checkpoint
	Signed     bool
	// Report is the check of the log against the checkpoints (nil
	// without Verifiers). Its findings do not stop the export.
	Report *audit.Report
	// Processed is the live drivers' checkpoint read before the risk and
	// gate data (ExportConfig.Processed; ProcessedBy names it): records
	// after it may carry none yet, only because they were not processed.
	Processed    uint64
	ProcessedBy  string
	HasProcessed bool
}

// Export writes a JSON-lines trace an auditor can verify offline
// (VerifyExport): a header line; one line per record with its log seq,
// its JSON envelope, its stored bytes, its leaf hash and inclusion proof
// in the newest checkpoint's tree, and the risk assessment and gate
// decision VIGIL_DERIVED holds for it; and last the signed checkpoint.
// w is written a line at a time (buffer it). An error means the export is
// incomplete and must be discarded; tampering found while reading is in
// the result's report.
func Export(ctx context.Context, js jetstream.JetStream, w io.Writer, cfg ExportConfig) (*ExportResult, error) {
	if cfg.Conversation != "" && !events.ValidToken(cfg.Conversation) {
		return nil, fmt.Errorf("%w: %q", ErrBadConversation, cfg.Conversation)
	}
	var cps []events.AuditCheckpoint
	var v *audit.LogVerifier
	if cfg.Verifiers != nil {
		v = audit.NewLogVerifier(cfg.Verifiers)
	}
	end, err := checkpointsThenEnd(ctx, js, v, func(cp events.AuditCheckpoint) { cps = append(cps, cp) })
	if err != nil {
		return nil, err
	}
	tree, err := LogTree(ctx, js, end, v, nil, progressFunc(cfg.Progress, "export: hashing"))
	if cfg.Progress != nil {
		cfg.Progress.Done()
	}
	if err != nil {
		return nil, err
	}
	res := &ExportResult{LogEnd: end}
	cp, haveCP := ChooseCheckpoint(cps, cfg.Verifiers, 0)
	if haveCP {
		if err := PadTree(tree, cp.Size); err != nil {
			return nil, err
		}
		res.Checkpoint, res.Signed = cp, true
	}
	if cfg.Processed != nil {
		seq, by, err := cfg.Processed(ctx)
		if err != nil {
			return nil, err
		}
		res.Processed, res.ProcessedBy, res.HasProcessed = seq, by, by != ""
	}
	derived, err := ReadDerived(ctx, js, cfg.Conversation)
	if err != nil {
		return nil, err
	}

	writeLine := func(l audit.ExportLine) error {
		b, err := l.Marshal()
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	from := max(cfg.From, 1)
	if err := writeLine(audit.ExportLine{Header: &audit.ExportHeader{Format: audit.ExportFormat, Conversation: cfg.Conversation,
		From: from, Complete: cfg.Conversation == "", LogEnd: end, Processed: res.Processed, ProcessedBy: res.ProcessedBy}}); err != nil {
		return nil, err
	}
	var subjects []string
	if cfg.Conversation != "" {
		subjects = []string{events.LogSubject(cfg.Conversation)}
	}
	// starts keeps, per conversation, the conversation.started records
	// passed so far that display.PlacementOf reads: the first a trusted
	// credential sent and the first an agent sent.
	starts := map[string][]events.Record{}
	err = readLog(ctx, js, cfg.Progress, "export: writing", from, end, subjects, func(r transport.RawRecord) error {
		ev, err := events.DecodeMsgpack(r.Data)
		undecodable := err != nil
		if undecodable {
			ev = events.Event{Kind: "undecodable", Extra: map[string]any{"error": err.Error()}}
		}
		var placement []byte
		if from == 1 && !undecodable && ev.Conversation != "" {
			recs, upTo := starts[ev.Conversation], r.Seq
			if ev.Kind == events.KindConversationStarted {
				// a trusted start attests itself
				if !slices.ContainsFunc(recs, func(x events.Record) bool { return x.Event.Origin.Trusted() == ev.Origin.Trusted() }) {
					recs = append(recs, events.Record{Seq: r.Seq, Event: ev})
					starts[ev.Conversation] = recs
				}
				upTo++
			}
			if placement, err = json.Marshal(display.PlacementOf(&ev, upTo, recs)); err != nil {
				return err
			}
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
		if x, ok := derived.Risk[r.Seq]; ok {
			rk = x
		}
		if x, ok := derived.Gate[r.Seq]; ok {
			gt = x
		}
		line, err := audit.NewExportEvent(r.Seq, r.Data, &ev, size, proof, rk, gt)
		if err != nil {
			return err
		}
		line.Placement = placement
		if res.First == 0 {
			res.First = r.Seq
		}
		res.Records, res.Last = res.Records+1, r.Seq
		return writeLine(audit.ExportLine{Event: &line})
	})
	if err != nil {
		return nil, err
	}
	if haveCP {
		if err := writeLine(audit.ExportLine{Checkpoint: exportCheckpoint(cp, cfg.VerifierKey)}); err != nil {
			return nil, err
		}
	}
	if v != nil {
		v.SetLogEnd(end)
		res.Report = v.Finish()
	}
	return res, nil
}

func exportCheckpoint(cp audit.Checkpoint, vkey string) *audit.ExportCheckpoint {
	return &audit.ExportCheckpoint{TreeSize: cp.Size, RootHash: cp.Root.String(), Note: cp.Note, VerifierKey: vkey}
}

// ProofLines returns a proof as a small export (header, record,
// checkpoint) that VerifyExport checks offline; logEnd is VIGIL_LOG's last
// sequence for the header, vkey the verifier key to write ("" for none).
func ProofLines(pr Proof, logEnd uint64, vkey string) ([]audit.ExportLine, error) {
	ev, err := events.DecodeMsgpack(pr.Raw)
	if err != nil {
		return nil, fmt.Errorf("seq %d does not decode: %w", pr.Seq, err)
	}
	line, err := audit.NewExportEvent(pr.Seq, pr.Raw, &ev, pr.Checkpoint.Size, pr.Path, nil, nil)
	if err != nil {
		return nil, err
	}
	return []audit.ExportLine{
		{Header: &audit.ExportHeader{Format: audit.ExportFormat, From: pr.Seq, LogEnd: logEnd}},
		{Event: &line},
		{Checkpoint: exportCheckpoint(pr.Checkpoint, vkey)},
	}, nil
}

// Appender appends one event to the log (client.Client is one).
type Appender interface {
	Append(ctx context.Context, ev events.Event) (events.IngestResult, error)
}

// SealID is the prefix of the ids of the audit.seal events Seal appends.
const SealID = "seal-export-"

// Seal appends an audit.seal event (by whom, and why) through app and
// waits up to timeout for the audit processor to publish the checkpoint
// that covers it, so that everything in the log up to now has a proof.
func Seal(ctx context.Context, js jetstream.JetStream, app Appender, by, reason string, timeout time.Duration) error {
	r, err := app.Append(ctx, events.Event{V: events.CurrentVersion, ID: SealID + ulid.Make().String(), Kind: events.KindAuditSeal, Time: time.Now().UTC(),
		Data: map[string]any{"by": by, "reason": reason}})
	if err != nil {
		return fmt.Errorf("no seal: %w", err)
	}
	st, err := js.Stream(ctx, events.StreamDerived)
	if err != nil {
		return fmt.Errorf("no seal: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		if m, err := st.GetLastMsgForSubject(ctx, events.SubjectCheckpoint); err == nil {
			if d, err := events.DecodeDerived(m.Data); err == nil {
				if cp, ok := d.Data.(map[string]any); ok {
					if size, _ := cp["tree_size"].(int64); size > 0 && uint64(size) >= r.Seq {
						return nil
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no checkpoint covering the seal (log seq %d) within %s: is the audit processor running?", r.Seq, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
