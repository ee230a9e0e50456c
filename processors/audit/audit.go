package audit

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// Name is the processor's name; it prefixes its output ids.
const Name = "audit"

// DefaultInterval is the default number of records between checkpoints.
const DefaultInterval = 256

// MaxInterval bounds Interval: a checkpoint carries Interval leaf hashes
// (32 bytes each, base64) and must stay well under the NATS payload limit.
const MaxInterval = 16384

// Config configures the audit processor.
type Config struct {
	// Signer signs checkpoints (required). Load it with
	// internal/auditkey; tests build one with note.GenerateKey.
	Signer note.Signer
	// Interval is K: a checkpoint is emitted whenever the tree size reaches
	// a multiple of K. Zero means DefaultInterval. Count-based, never
	// clock-based, so replay emits the same checkpoints.
	Interval uint64
	// Origin is the first line of every checkpoint, naming the log.
	// Empty means the signer's key name.
	Origin string
}

func (c *Config) ensureDefaults() {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Origin == "" && c.Signer != nil {
		c.Origin = c.Signer.Name()
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Signer == nil {
		errs = append(errs, errors.New("audit: Config.Signer is required (load it with auditkey.LoadOrCreate)"))
	}
	if c.Interval > MaxInterval {
		errs = append(errs, fmt.Errorf("audit: Config.Interval %d is above the maximum %d", c.Interval, MaxInterval))
	}
	if c.Origin == "" || len(c.Origin) > 256 {
		errs = append(errs, fmt.Errorf("audit: Config.Origin %q must be 1-256 characters", clip(c.Origin, 40)))
	}
	for _, r := range c.Origin {
		if r < 0x21 || r == 0x7f || r == '+' {
			errs = append(errs, fmt.Errorf("audit: Config.Origin %q must have no spaces, control characters or '+'", clip(c.Origin, 40)))
			break
		}
	}
	return errors.Join(errs...)
}

// Processor folds VIGIL_LOG into an RFC 6962 Merkle tree whose leaf i is
// the raw record at log sequence i+1, and emits a signed checkpoint every
// Interval records. Its state is O(log n) plus one window of leaf hashes.
type Processor struct {
	cfg Config
	// tree is the compact range [0, size).
	tree *compact.Range
	// prefix is the compact range at the last checkpoint, flattened.
	prefix []byte
	// lastCP is the tree size of the last checkpoint (0 before the first).
	lastCP uint64
	// window holds the leaf hashes of records lastCP+1..size.
	window []byte
	hasher leafHasher
}

// New returns an audit processor over an empty tree.
func New(cfg Config) (*Processor, error) {
	cfg.ensureDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Processor{cfg: cfg, tree: factory.NewEmptyRange(0)}, nil
}

// Name returns "audit".
func (p *Processor) Name() string { return Name }

// Size is the number of leaves folded so far (the last log sequence seen).
func (p *Processor) Size() uint64 { return p.tree.End() }

// Root is the current root hash.
func (p *Processor) Root() Hash { return rootOf(p.tree) }

// Step appends rec to the tree. When the tree size reaches a multiple of
// Interval, or rec is an audit.seal event, it returns one audit.checkpoint
// output on vigil.audit.checkpoint, with id "audit:<seq>".
//
// Leaf index = seq-1. A record whose seq skips ahead (earlier records were
// deleted, or did not decode and never reached the fold) first gets
// MissingLeaf for every skipped sequence, plus an alert output
// ("audit:<seq>:alert-gap"), so the tree stays aligned with log sequences
// and the gap is signed into the next checkpoint as evidence.
func (p *Processor) Step(rec events.Record) ([]processors.Output, error) {
	size := p.tree.End()
	if rec.Seq <= size {
		return nil, fmt.Errorf("audit: record seq %d after seq %d: records must come in increasing order", rec.Seq, size)
	}
	var out []processors.Output
	if gap := rec.Seq - size - 1; gap > 0 {
		from, to := size+1, rec.Seq-1
		reason := fmt.Sprintf("audit: log seqs %d..%d were missing when the audit fold reached seq %d (deleted from VIGIL_LOG, or not decodable); the tree holds a missing-record marker for them", from, to, rec.Seq)
		if from == to {
			reason = fmt.Sprintf("audit: log seq %d was missing when the audit fold reached seq %d (deleted from VIGIL_LOG, or not decodable); the tree holds a missing-record marker for it", from, rec.Seq)
		}
		a := processors.NewOutput(Name, &rec, 1, events.SubjectAlert, events.KindAlert, events.Alert{
			Severity: events.SeverityHigh, Reason: reason, LogSeq: from, Subject: events.StreamLog,
		})
		a.Event.ID = processors.OutputID(Name, rec.Seq, 0) + ":alert-gap"
		out = append(out, a)
	}
	// Appending to a compact range cannot fail for a 32-byte hash; signing
	// can, so a checkpoint is built on a copy and committed only once signed.
	// An audit.seal record asks for a checkpoint now, covering itself and
	// everything before it (a quiet log may take long to reach K records).
	cpDue := (rec.Seq/p.cfg.Interval) > (p.lastCP/p.cfg.Interval) || rec.Event.Kind == events.KindAuditSeal
	tree, window := p.tree, p.window
	if cpDue {
		hashes := make([][]byte, len(p.tree.Hashes()))
		copy(hashes, p.tree.Hashes())
		var err error
		if tree, err = factory.NewRange(0, size, hashes); err != nil {
			return nil, fmt.Errorf("audit: copy tree: %w", err)
		}
		window = append([]byte(nil), p.window...)
	}
	for s := size + 1; s < rec.Seq; s++ {
		if err := tree.Append(MissingLeaf[:], nil); err != nil {
			return nil, fmt.Errorf("audit: append seq %d: %w", s, err)
		}
		window = append(window, MissingLeaf[:]...)
	}
	leaf := p.hasher.hash(rec.Raw)
	if err := tree.Append(leaf[:], nil); err != nil {
		return nil, fmt.Errorf("audit: append seq %d: %w", rec.Seq, err)
	}
	window = append(window, leaf[:]...)
	if !cpDue {
		p.tree, p.window = tree, window
		return out, nil
	}
	root := rootOf(tree)
	signed, err := SignCheckpoint(p.cfg.Signer, p.cfg.Origin, rec.Seq, root)
	if err != nil {
		return nil, err
	}
	data := events.AuditCheckpoint{
		TreeSize: rec.Seq,
		RootHash: root.String(),
		Note:     signed,
		Interval: p.cfg.Interval,
		FirstSeq: p.lastCP + 1,
		Leaves:   base64.StdEncoding.EncodeToString(window),
		Prefix:   base64.StdEncoding.EncodeToString(p.prefix),
	}
	cp := processors.NewOutput(Name, &rec, 0, events.SubjectCheckpoint, events.KindAuditCheckpoint, data)
	cp.Event.Conversation = "" // a checkpoint covers the whole log
	p.tree = tree
	p.prefix = flatHashes(tree)
	p.lastCP = rec.Seq
	p.window = make([]byte, 0, int(p.cfg.Interval)*HashSize)
	return append([]processors.Output{cp}, out...), nil
}
