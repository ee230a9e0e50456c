// Package auditlog is the audit pipeline over the streams: it reads the
// signed checkpoints in VIGIL_DERIVED and VIGIL_LOG, checks the log against
// them (VerifyLog), writes and checks a verifiable export (Export,
// VerifyExport), seals the log (Seal) and proves a record's inclusion
// (Prover, Prove). `vigil audit verify|export|prove` and the HTTP API's
// audit routes call these functions; the commands only parse flags, print
// and choose the exit status. The tree, the proofs and the checks
// themselves are processors/audit's, which does no I/O; this package does
// the reading.
//
// On the data path: out of the log: it reads what the folds derived and
// checks the log against it.
package auditlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/audit"
)

// Sentinel errors callers branch on.
var (
	// ErrNoCheckpoint: no checkpoint (valid under the keys given) covers
	// the sequence asked for yet.
	ErrNoCheckpoint = errors.New("auditlog: no checkpoint yet")
	// ErrMissing: the record is not in VIGIL_LOG (deleted).
	ErrMissing = errors.New("auditlog: no record at that log sequence")
	// ErrMismatch: the log does not match the checkpoint (tampered).
	ErrMismatch = errors.New("auditlog: the log does not match the checkpoint")
)

// ReadCheckpoints calls fn for every message on vigil.audit.checkpoint,
// with its stream sequence (err set when it does not decode).
func ReadCheckpoints(ctx context.Context, js jetstream.JetStream, fn func(at uint64, cp events.AuditCheckpoint, err error)) error {
	return readCheckpoints(ctx, js, 0, fn)
}

// readCheckpoints is ReadCheckpoints from stream sequence from on.
func readCheckpoints(ctx context.Context, js jetstream.JetStream, from uint64, fn func(at uint64, cp events.AuditCheckpoint, err error)) error {
	return transport.ReadStream(ctx, js, transport.ReadOptions{Stream: events.StreamDerived, From: from, Subjects: []string{events.SubjectCheckpoint}},
		func(r transport.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err == nil && d.Kind != events.KindAuditCheckpoint {
				err = fmt.Errorf("kind %q, want %s", d.Kind, events.KindAuditCheckpoint)
			}
			var cp events.AuditCheckpoint
			if err == nil {
				cp, err = events.DerivedDataAs[events.AuditCheckpoint](&d)
			}
			fn(r.Seq, cp, err)
			return nil
		})
}

// ChooseCheckpoint returns the checkpoint to prove against: the largest
// one whose signature vs verifies with size >= atLeast, or with vs nil
// the largest one at all, unverified.
func ChooseCheckpoint(cps []events.AuditCheckpoint, vs note.Verifiers, atLeast uint64) (audit.Checkpoint, bool) {
	var best audit.Checkpoint
	found := false
	for _, cp := range cps {
		var c audit.Checkpoint
		var err error
		if vs != nil {
			c, err = audit.OpenCheckpoint(cp.Note, vs)
		} else {
			c, err = audit.PeekCheckpoint(cp.Note)
		}
		if err != nil || c.Size < atLeast {
			continue
		}
		if !found || c.Size > best.Size {
			best, found = c, true
		}
	}
	return best, found
}

// Latest returns the newest checkpoint of at least size atLeast (see
// ChooseCheckpoint), or ErrNoCheckpoint.
func Latest(ctx context.Context, js jetstream.JetStream, vs note.Verifiers, atLeast uint64) (audit.Checkpoint, error) {
	var cps []events.AuditCheckpoint
	if err := ReadCheckpoints(ctx, js, func(_ uint64, cp events.AuditCheckpoint, err error) {
		if err == nil {
			cps = append(cps, cp)
		}
	}); err != nil {
		return audit.Checkpoint{}, err
	}
	cp, ok := ChooseCheckpoint(cps, vs, atLeast)
	if !ok {
		last, _ := ChooseCheckpoint(cps, vs, 0)
		return audit.Checkpoint{}, fmt.Errorf("%w: seq %d is not covered by a valid checkpoint yet (the last one has tree size %d); wait for the next one", ErrNoCheckpoint, atLeast, last.Size)
	}
	return cp, nil
}

// LogTree reads VIGIL_LOG 1..end into a proof tree (gaps get
// audit.MissingLeaf, as the audit fold gives them), feeding v and keep
// (either may be nil) and progress (may be nil) each record.
func LogTree(ctx context.Context, js jetstream.JetStream, end uint64, v *audit.LogVerifier, keep func(transport.RawRecord), progress func(seq, end uint64)) (*audit.Tree, error) {
	tree := &audit.Tree{}
	if end == 0 {
		return tree, nil
	}
	err := transport.ReadStream(ctx, js, transport.ReadOptions{Stream: events.StreamLog, From: 1, To: end},
		func(r transport.RawRecord) error {
			if progress != nil {
				progress(r.Seq, end)
			}
			for tree.Size()+1 < r.Seq {
				if err := tree.Append(audit.MissingLeaf); err != nil {
					return err
				}
			}
			if err := tree.Append(audit.LeafHash(r.Data)); err != nil {
				return err
			}
			if v != nil {
				if err := v.AddRecord(r.Seq, r.Data); err != nil {
					return err
				}
			}
			if keep != nil {
				keep(r)
			}
			return nil
		})
	return tree, err
}

// PadTree extends tree with MissingLeaf to size (records deleted at the
// end), so a proof can still be built: it will not verify, as it must not.
func PadTree(tree *audit.Tree, size uint64) error {
	for tree.Size() < size {
		if err := tree.Append(audit.MissingLeaf); err != nil {
			return err
		}
	}
	return nil
}

// Proof is the inclusion proof of one log record in a checkpoint's tree,
// checked before it is returned.
type Proof struct {
	Seq        uint64
	Checkpoint audit.Checkpoint
	// Raw is the record as stored (msgpack).
	Raw  []byte
	Leaf audit.Hash
	// Path is the audit path, leaf upwards.
	Path []audit.Hash
}

// Prove builds the proof of the record at seq in the tree of the newest
// checkpoint that covers it (signature checked with vs; unchecked when vs
// is nil). It reads the log up to that checkpoint. Errors: ErrNoCheckpoint,
// ErrMissing, ErrMismatch, or a read error.
func Prove(ctx context.Context, js jetstream.JetStream, vs note.Verifiers, seq uint64, progress func(seq, end uint64)) (Proof, error) {
	if seq == 0 {
		return Proof{}, fmt.Errorf("%w: log sequences start at 1", ErrMissing)
	}
	cp, err := Latest(ctx, js, vs, seq)
	if err != nil {
		return Proof{}, err
	}
	var raw []byte
	tree, err := LogTree(ctx, js, cp.Size, nil, func(r transport.RawRecord) {
		if r.Seq == seq {
			raw = r.Data
		}
	}, progress)
	if err != nil {
		return Proof{}, err
	}
	if raw == nil {
		return Proof{}, fmt.Errorf("%w: seq %d is not in VIGIL_LOG (deleted); run vigil audit verify", ErrMissing, seq)
	}
	if err := PadTree(tree, cp.Size); err != nil {
		return Proof{}, err
	}
	path, err := tree.Prove(seq, cp.Size)
	if err != nil {
		return Proof{}, err
	}
	leaf := audit.LeafHash(raw)
	if err := audit.VerifyInclusion(seq, cp.Size, leaf, path, cp.Root); err != nil {
		return Proof{}, fmt.Errorf("%w: seq %d, checkpoint of tree size %d (%v); run vigil audit verify", ErrMismatch, seq, cp.Size, err)
	}
	return Proof{Seq: seq, Checkpoint: cp, Raw: raw, Leaf: leaf, Path: path}, nil
}
