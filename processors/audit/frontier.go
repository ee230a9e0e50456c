package audit

import (
	"fmt"

	"github.com/transparency-dev/merkle/compact"
)

// Frontier is the log's Merkle tree reduced to its compact range: the
// O(log n) subtree hashes that give the root of records 1..Size and let
// later records extend it. It is the audit fold's tree without its
// checkpoints: what a reader needs to recompute a root from part of the
// log, given the frontier of the part before.
type Frontier struct {
	r      *compact.Range
	hasher leafHasher
}

// NewFrontier returns the frontier of the empty tree.
func NewFrontier() *Frontier { return &Frontier{r: factory.NewEmptyRange(0)} }

// ParseFrontier returns the frontier of size records from its subtree
// hashes as Hashes gave them.
func ParseFrontier(size uint64, hashes []byte) (*Frontier, error) {
	r, err := newRange(size, hashes)
	if err != nil {
		return nil, fmt.Errorf("audit: frontier: %w", err)
	}
	return &Frontier{r: r}, nil
}

// Append adds the record stored at log seq, whose stored bytes are raw,
// as the fold does: every seq skipped since the last one gets
// MissingLeaf first. A seq at or below Size is an error.
func (f *Frontier) Append(seq uint64, raw []byte) error {
	if seq <= f.r.End() {
		return fmt.Errorf("audit: frontier: seq %d after seq %d: records must come in increasing order", seq, f.r.End())
	}
	for s := f.r.End() + 1; s < seq; s++ {
		if err := f.r.Append(MissingLeaf[:], nil); err != nil {
			return fmt.Errorf("audit: frontier: seq %d: %w", s, err)
		}
	}
	leaf := f.hasher.hash(raw)
	if err := f.r.Append(leaf[:], nil); err != nil {
		return fmt.Errorf("audit: frontier: seq %d: %w", seq, err)
	}
	return nil
}

// Size is the number of records (log seqs) the frontier covers.
func (f *Frontier) Size() uint64 { return f.r.End() }

// Root is the RFC 6962 root of records 1..Size.
func (f *Frontier) Root() Hash { return rootOf(f.r) }

// Hashes returns the subtree hashes, concatenated (ParseFrontier's input).
func (f *Frontier) Hashes() []byte { return flatHashes(f.r) }
