// Package integrity holds a node's integrity guards over its streams:
// the start-time continuity check of VIGIL_LOG against the newest signed
// audit checkpoint (Continuity), and the stream watch's judgements (the
// streams file a node keeps of the streams it ran on, RecordsLost,
// ConfigDrift), and the fleet's audit-key guard (CheckAuditKey: every
// node of a fleet signs with the key recorded in VIGIL_FLEET). It reads
// and reports; the node (internal/node) runs the
// guards, alerts, and stops when a stream changed under it.
//
// On the data path: assembly, beside the read path (it re-reads what
// the log holds and what the audit fold signed).
package integrity

// Continuity check: at start, in the background (it never delays gating),
// the node re-reads VIGIL_LOG and checks it against the newest signed audit
// checkpoint in VIGIL_DERIVED:
//
//   - every sequence from 1 to the log's last one (as it was at start) holds
//     a record: no hole, none reported lost by the server, none removed from
//     the log's start (VIGIL_LOG denies deletes and purges, so a missing
//     record is damage or tampering);
//   - the Merkle root recomputed over records 1..N, with the audit
//     processor's tree (processors/audit.Frontier), equals the root the
//     newest checkpoint signs for tree size N, under the node's audit key.
//
// A record JetStream finds corrupt on disk is skipped by its readers, and a
// damaged block can make it drop every record after the damage when it
// rebuilds its index; both show up here as missing sequences. When the root
// differs with no record missing, the check runs audit.LogVerifier (the
// code of `vigil audit verify`) over 1..N to name the first changed record.
// Any finding is logged at error level and stored as one alert in
// VIGIL_DERIVED, with the first bad sequence in log_seq.
//
// Cost: one sequential read of the log and one SHA-256 per record;
// memory O(log N) (the tree's compact range). The read starts after the
// part an earlier check verified against a signed root (its frontier is
// kept in the continuity file, see state.go), so a restart
// reads what the log grew by since, not its whole history. The naming pass
// (only on a root mismatch) keeps 32 bytes per record and re-reads 1..N.
// docs/durability.md has the figures.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors/audit"
)

// Continuity is the continuity check of one node's streams.
type Continuity struct {
	JS jetstream.JetStream
	// Verifiers verify the checkpoints (the node's audit key); nil: the
	// root is not compared (Report.Skipped says so).
	Verifiers note.Verifiers
	// StateFile keeps what a clean check verified (datadir's
	// Layout.Continuity); empty: every check reads the whole log.
	StateFile string
	// Logger gets a warning when StateFile cannot be written; nil: none.
	Logger *slog.Logger
}

// Report is the outcome of a continuity check.
type Report struct {
	// LogEnd is VIGIL_LOG's last sequence when the check started; Read is
	// the number of records read: those after From, the part of the log an
	// earlier check verified against a signed root (0: none; the check
	// read the whole log).
	LogEnd uint64
	Read   uint64
	From   uint64
	// Checkpoint is the tree size of the newest checkpoint the root was
	// compared with (0: none was, see Skipped).
	Checkpoint uint64
	// RootChecked says the recomputed root was compared with the
	// checkpoint's (and matched unless a problem says otherwise).
	RootChecked bool
	// FirstBad is the first log sequence found missing or changed (0: none).
	FirstBad uint64
	// Problems describe what was found; empty when the log is continuous.
	Problems []string
	// Skipped says why the root was not compared, if it was not.
	Skipped string
	Elapsed time.Duration
}

// OK reports whether nothing was found.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// noteFirstBad keeps the smallest non-zero sequence.
func (r *Report) noteFirstBad(seq uint64) {
	if seq > 0 && (r.FirstBad == 0 || seq < r.FirstBad) {
		r.FirstBad = seq
	}
}

// maxNamedRecords bounds the naming pass (32 bytes a record in memory).
const maxNamedRecords = 4 << 20

// Check reads VIGIL_LOG and the newest checkpoint and reports what it
// found; an error says the check could not run.
func (c Continuity) Check(ctx context.Context) (Report, error) {
	start := time.Now()
	var rep Report
	st, err := c.JS.Stream(ctx, events.StreamLog)
	if err != nil {
		return rep, fmt.Errorf("stream %s: %w", events.StreamLog, err)
	}
	// The newest checkpoint, if one verifies. It is read before the log's
	// state: on a live node (or fleet) records and checkpoints keep coming,
	// and a checkpoint read after the log's end could sign records appended
	// since, which would read as records gone.
	var cp audit.Checkpoint
	var cpAt uint64
	var cpWire events.AuditCheckpoint
	haveCP := false
	switch m, err := c.latestCheckpoint(ctx); {
	case errors.Is(err, jetstream.ErrMsgNotFound) || errors.Is(err, jetstream.ErrStreamNotFound):
		rep.Skipped = "no signed checkpoint yet"
	case err != nil:
		return rep, fmt.Errorf("read the newest checkpoint: %w", err)
	case c.Verifiers == nil:
		rep.Skipped = "no audit verifier key configured"
	default:
		cpAt = m.Sequence
		d, err := events.DecodeDerived(m.Data)
		if err == nil {
			cpWire, err = events.DerivedDataAs[events.AuditCheckpoint](&d)
		}
		if err == nil {
			cp, err = audit.OpenCheckpoint(cpWire.Note, c.Verifiers)
		}
		if err != nil {
			rep.Skipped = "the newest checkpoint does not verify"
			rep.Problems = append(rep.Problems, fmt.Sprintf("the newest checkpoint (VIGIL_DERIVED seq %d) does not verify with the node's audit key: %v", m.Sequence, err))
		} else {
			haveCP = true
			rep.Checkpoint = cp.Size
		}
	}

	info, err := st.Info(ctx, jetstream.WithDeletedDetails(true))
	if err != nil {
		return rep, fmt.Errorf("stream %s: %w", events.StreamLog, err)
	}
	state := info.State
	rep.LogEnd = state.LastSeq
	if state.Msgs > 0 && state.FirstSeq > 1 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("seqs 1..%d are gone from the log's start", state.FirstSeq-1))
		rep.noteFirstBad(1)
	}
	// (An empty stream reports Deleted [0]: only sequences inside the log count.)
	var deleted, firstDeleted uint64
	for _, d := range state.Deleted {
		if d >= 1 && d <= state.LastSeq {
			deleted++
			if firstDeleted == 0 || d < firstDeleted {
				firstDeleted = d
			}
		}
	}
	if deleted > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the server lists %d deleted records (first seq %d)", deleted, firstDeleted))
		rep.noteFirstBad(firstDeleted)
	}
	if state.Lost != nil && len(state.Lost.Msgs) > 0 {
		first := state.Lost.Msgs[0]
		for _, l := range state.Lost.Msgs {
			first = min(first, l)
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("the server reports %d records lost on disk (first seq %d)", len(state.Lost.Msgs), first))
		rep.noteFirstBad(first)
	}

	// One pass: holes, and the root at the checkpoint's size. It starts
	// after the part of the log a previous check verified against a
	// signed root, when there is one (see continuityState).
	to := rep.LogEnd
	tree := audit.NewFrontier()
	if haveCP {
		if done, ok := c.loadState(info.Created, cp.Size, to); ok {
			tree = done
			rep.From = done.Size()
		}
	}
	var holes, firstHole uint64
	prev := tree.Size()
	var root audit.Hash
	var verified []byte // the frontier at the checkpoint's size
	rootAt := false
	if haveCP && cp.Size == tree.Size() {
		root, rootAt, verified = tree.Root(), true, tree.Hashes()
	}
	if to > prev {
		err = natsutil.ReadStream(ctx, c.JS, natsutil.ReadOptions{Stream: events.StreamLog, From: prev + 1, To: to}, func(r natsutil.RawRecord) error {
			rep.Read++
			if r.Seq > prev+1 {
				holes += r.Seq - prev - 1
				if firstHole == 0 {
					firstHole = prev + 1
				}
			}
			prev = r.Seq
			if err := tree.Append(r.Seq, r.Data); err != nil {
				return err
			}
			if haveCP && tree.Size() == cp.Size {
				root, rootAt, verified = tree.Root(), true, tree.Hashes()
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("read %s: %w", events.StreamLog, err)
		}
	}
	if prev < to {
		// The server says the log ends at `to`, but its last records do not read.
		holes += to - prev
		if firstHole == 0 {
			firstHole = prev + 1
		}
	}
	if holes > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d of seqs %d..%d hold no readable record (first missing: seq %d)", holes, rep.From+1, to, firstHole))
		rep.noteFirstBad(firstHole)
	}
	if haveCP {
		switch {
		case cp.Size > to:
			rep.Problems = append(rep.Problems, fmt.Sprintf("the log ends at seq %d, but the newest checkpoint signs %d records: seqs %d..%d are gone", to, cp.Size, to+1, cp.Size))
			rep.noteFirstBad(to + 1)
		case !rootAt:
			// seq cp.Size itself is missing: a hole already names it.
		case root != cp.Root:
			rep.RootChecked = true
			p := fmt.Sprintf("the Merkle root of seqs 1..%d differs from the one the newest checkpoint (VIGIL_DERIVED seq %d) signs", cp.Size, cpAt)
			if firstHole == 0 || firstHole > cp.Size {
				if first, detail, err := c.nameChange(ctx, cpAt, cpWire, cp.Size); err != nil {
					p += fmt.Sprintf(" (the changed record could not be named: %v)", err)
				} else if first > 0 {
					p += ": " + detail
					rep.noteFirstBad(first)
				}
			}
			rep.Problems = append(rep.Problems, p)
		default:
			rep.RootChecked = true
			if rep.OK() {
				c.saveState(info.Created, cp.Size, verified, root)
			}
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// latestCheckpoint reads the newest message on vigil.audit.checkpoint.
func (c Continuity) latestCheckpoint(ctx context.Context) (*jetstream.RawStreamMsg, error) {
	st, err := c.JS.Stream(ctx, events.StreamDerived)
	if err != nil {
		return nil, err
	}
	return st.GetLastMsgForSubject(ctx, events.SubjectCheckpoint)
}

// nameChange runs `vigil audit verify`'s verifier over 1..size against the
// one checkpoint, to name the first changed record.
func (c Continuity) nameChange(ctx context.Context, cpAt uint64, cp events.AuditCheckpoint, size uint64) (uint64, string, error) {
	if size > maxNamedRecords {
		return 0, "", fmt.Errorf("the log is longer than %d records; vigil audit verify names it", maxNamedRecords)
	}
	v := audit.NewLogVerifier(c.Verifiers)
	v.AddCheckpoint(cpAt, cp)
	err := natsutil.ReadStream(ctx, c.JS, natsutil.ReadOptions{Stream: events.StreamLog, From: 1, To: size}, func(r natsutil.RawRecord) error {
		return v.AddRecord(r.Seq, r.Data)
	})
	if err != nil {
		return 0, "", err
	}
	v.SetLogEnd(size)
	rep := v.Finish()
	var first uint64
	var lines []string
	for _, f := range rep.Findings {
		if f.Seq > 0 && (first == 0 || f.Seq < first) {
			first = f.Seq
		}
		if len(lines) < 3 {
			lines = append(lines, f.String())
		}
	}
	if len(rep.Findings) > len(lines) {
		lines = append(lines, fmt.Sprintf("and %d more findings", len(rep.Findings)-len(lines)))
	}
	return first, strings.Join(lines, "; "), nil
}
