package auditlog

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/audit"
)

// DefaultBlockBits is the Prover's default block size, as a power of two:
// blocks of 256 log records.
const DefaultBlockBits = 8

// Prover answers the same proofs as Prove, for a server that answers many:
// Prove reads VIGIL_LOG from 1 up to the checkpoint for every proof, a
// Prover reads each record once and then at most two blocks per proof.
//
// It cuts the log into blocks of 2^blockBits records and keeps, for every
// complete block below the newest checkpoint, the block's subtree root and
// the RFC 6962 nodes above those roots: 2 hashes per block (about 0.25
// byte per record with 256-record blocks, 250 KB for a million records),
// never a record or a leaf. A proof takes its upper nodes from there and
// its lower ones from the leaves of two blocks read from the log: the
// block of the record proved and the newest checkpoint's partial last
// block. The checkpoints are read incrementally too (only records newer
// than the last one read), and the blocks are extended as checkpoints
// cover more of the log.
//
// Every proof is checked against the checkpoint's root before it is
// returned. A cache that no longer matches the streams (a stream replaced
// or shortened, which the streams' creation time and length tell; or a
// proof that does not check) is dropped and the proof is built again from
// the log as it is now, so a cached answer is never worse than Prove's.
// A Prover is safe for concurrent use.
type Prover struct {
	js        jetstream.JetStream
	vs        note.Verifiers
	blockBits uint

	// sem is the Prover's lock, held across stream reads: a channel, so
	// that a request waiting for it gives up when its context ends.
	sem chan struct{}
	// VIGIL_DERIVED's creation time and the next sequence to read for
	// checkpoints; best is the largest checkpoint read (found is false
	// before one).
	derivedCreated time.Time
	derivedNext    uint64
	best           audit.Checkpoint
	found          bool
	// VIGIL_LOG's creation time, and levels[l][j]: the RFC 6962 node at
	// level blockBits+l, index j (levels[0] holds the block roots).
	logCreated time.Time
	levels     [][]audit.Hash
	// rebuiltFor is the checkpoint size the blocks were last built again
	// for, after a proof did not check.
	rebuiltFor uint64
	// built counts the records read into blocks.
	built uint64
	// progress is told of the records read into blocks (may be nil).
	progress func(seq, end uint64)
}

// NewProver returns a Prover of the streams of js, checking checkpoint
// signatures with vs (unchecked when vs is nil, as Prove), with blocks of
// 2^blockBits records (0 means DefaultBlockBits).
func NewProver(js jetstream.JetStream, vs note.Verifiers, blockBits uint) *Prover {
	if blockBits == 0 {
		blockBits = DefaultBlockBits
	}
	return &Prover{js: js, vs: vs, blockBits: min(blockBits, 20), sem: make(chan struct{}, 1)}
}

// SetProgress makes the Prover tell fn of every record it reads into its
// blocks (seq, and the last sequence of the read), for a terminal to show
// how far the first proof has got. Call it before the first proof.
func (p *Prover) SetProgress(fn func(seq, end uint64)) {
	p.lock(context.Background())
	defer p.unlock()
	p.progress = fn
}

// lock takes the Prover's lock, or returns ctx's error first.
func (p *Prover) lock(ctx context.Context) error {
	select {
	case p.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Prover) unlock() { <-p.sem }

// RecordsRead is how many log records the Prover has read into its blocks
// since it was made (the records of the blocks a proof reads are not
// counted): the whole log once, plus once more after each reset.
func (p *Prover) RecordsRead() uint64 {
	p.lock(context.Background())
	defer p.unlock()
	return p.built
}

// CachedHashes is how many hashes the Prover keeps.
func (p *Prover) CachedHashes() int {
	p.lock(context.Background())
	defer p.unlock()
	n := 0
	for _, l := range p.levels {
		n += len(l)
	}
	return n
}

// Latest returns the newest checkpoint of at least size atLeast, as
// Latest, reading only the checkpoints stored since the last call.
func (p *Prover) Latest(ctx context.Context, atLeast uint64) (audit.Checkpoint, error) {
	if err := p.lock(ctx); err != nil {
		return audit.Checkpoint{}, err
	}
	defer p.unlock()
	return p.latest(ctx, atLeast)
}

func (p *Prover) latest(ctx context.Context, atLeast uint64) (audit.Checkpoint, error) {
	info, err := streamInfo(ctx, p.js, events.StreamDerived)
	if err != nil {
		return audit.Checkpoint{}, err
	}
	if !info.Created.Equal(p.derivedCreated) || info.State.LastSeq+1 < p.derivedNext {
		p.derivedCreated, p.derivedNext, p.best, p.found = info.Created, 0, audit.Checkpoint{}, false
	}
	var cps []events.AuditCheckpoint
	next := p.derivedNext
	err = readCheckpoints(ctx, p.js, p.derivedNext, func(at uint64, cp events.AuditCheckpoint, err error) {
		if err == nil {
			cps = append(cps, cp)
		}
		next = max(next, at+1)
	})
	if err != nil {
		return audit.Checkpoint{}, err
	}
	p.derivedNext = max(next, info.State.LastSeq+1)
	if cp, ok := ChooseCheckpoint(cps, p.vs, 0); ok && (!p.found || cp.Size > p.best.Size) {
		p.best, p.found = cp, true
	}
	if !p.found || p.best.Size < atLeast {
		return audit.Checkpoint{}, fmt.Errorf("%w: seq %d is not covered by a valid checkpoint yet (the last one has tree size %d); wait for the next one", ErrNoCheckpoint, atLeast, p.best.Size)
	}
	return p.best, nil
}

// Prove builds the proof of the record at seq in the tree of the newest
// checkpoint that covers it, as Prove does, with the same errors.
func (p *Prover) Prove(ctx context.Context, seq uint64) (Proof, error) {
	if seq == 0 {
		return Proof{}, fmt.Errorf("%w: log sequences start at 1", ErrMissing)
	}
	if err := p.lock(ctx); err != nil {
		return Proof{}, err
	}
	cp, err := p.latest(ctx, seq)
	if err == nil {
		err = p.extend(ctx, cp.Size)
	}
	levels := make([][]audit.Hash, len(p.levels))
	copy(levels, p.levels) // appended to, never changed: safe to read unlocked
	p.unlock()
	if err != nil {
		return Proof{}, err
	}
	pr, err := p.prove(ctx, levels, cp, seq)
	if _, stale := err.(staleError); !stale {
		return pr, err
	}
	// The blocks may be stale (a stream replaced under the same name at
	// the same length): build them again from the log as it is now, once
	// per checkpoint (a log that does not match stays so: no request
	// makes the Prover read it whole again).
	if err := p.lock(ctx); err != nil {
		return Proof{}, err
	}
	if p.rebuiltFor == cp.Size {
		p.unlock()
		return Proof{}, err
	}
	p.rebuiltFor, p.levels = cp.Size, nil
	err = p.extend(ctx, cp.Size)
	levels = make([][]audit.Hash, len(p.levels))
	copy(levels, p.levels)
	p.unlock()
	if err != nil {
		return Proof{}, err
	}
	return p.prove(ctx, levels, cp, seq)
}

// staleError is ErrMismatch from a proof built with cached nodes.
type staleError struct{ error }

func (e staleError) Unwrap() error { return e.error }

// extend adds the complete blocks of the log's first size records that
// are not cached yet, after dropping the cache if VIGIL_LOG was replaced
// or shortened. Missing records are audit.MissingLeaf, as in LogTree.
func (p *Prover) extend(ctx context.Context, size uint64) error {
	info, err := streamInfo(ctx, p.js, events.StreamLog)
	if err != nil {
		return err
	}
	bsize := uint64(1) << p.blockBits
	if !info.Created.Equal(p.logCreated) || info.State.LastSeq < p.blocks()*bsize {
		p.logCreated, p.levels = info.Created, nil
	}
	have, want := p.blocks(), size>>p.blockBits
	if have >= want {
		return nil
	}
	leaves := make([]audit.Hash, 0, bsize)
	from := have*bsize + 1
	flush := func() {
		p.push(subtreeRoot(leaves))
		leaves = leaves[:0]
	}
	err = transport.ReadStream(ctx, p.js, transport.ReadOptions{Stream: events.StreamLog, From: from, To: want * bsize},
		func(r transport.RawRecord) error {
			if p.progress != nil {
				p.progress(r.Seq, want*bsize)
			}
			for next := from + uint64(len(leaves)); next < r.Seq; next++ {
				leaves = append(leaves, audit.MissingLeaf)
				if uint64(len(leaves)) == bsize {
					from += bsize
					flush()
				}
			}
			leaves = append(leaves, audit.LeafHash(r.Data))
			p.built++
			if uint64(len(leaves)) == bsize {
				from += bsize
				flush()
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("auditlog: read VIGIL_LOG: %w", err)
	}
	for p.blocks() < want { // records deleted at the end
		for uint64(len(leaves)) < bsize {
			leaves = append(leaves, audit.MissingLeaf)
		}
		flush()
	}
	return nil
}

// blocks is the number of blocks cached.
func (p *Prover) blocks() uint64 {
	if len(p.levels) == 0 {
		return 0
	}
	return uint64(len(p.levels[0]))
}

// push appends a block root and the nodes it completes above it.
func (p *Prover) push(h audit.Hash) {
	for l := 0; ; l++ {
		if l == len(p.levels) {
			p.levels = append(p.levels, nil)
		}
		p.levels[l] = append(p.levels[l], h)
		n := len(p.levels[l])
		if n%2 == 1 {
			return
		}
		h = nodeHash(p.levels[l][n-2], p.levels[l][n-1])
	}
}

// prove builds and checks the proof of seq in cp's tree from the cached
// upper levels and the leaves of the blocks it needs, read from the log.
func (p *Prover) prove(ctx context.Context, levels [][]audit.Hash, cp audit.Checkpoint, seq uint64) (Proof, error) {
	nodes, err := proof.Inclusion(seq-1, cp.Size)
	if err != nil {
		return Proof{}, err
	}
	bsize := uint64(1) << p.blockBits
	blocks := map[uint64][]audit.Hash{} // block index → its leaves read (up to cp.Size)
	var raw []byte
	readBlock := func(b uint64) ([]audit.Hash, error) {
		if leaves, ok := blocks[b]; ok {
			return leaves, nil
		}
		first, last := b*bsize+1, min((b+1)*bsize, cp.Size)
		leaves := make([]audit.Hash, 0, last-first+1)
		err := transport.ReadStream(ctx, p.js, transport.ReadOptions{Stream: events.StreamLog, From: first, To: last},
			func(r transport.RawRecord) error {
				for first+uint64(len(leaves)) < r.Seq {
					leaves = append(leaves, audit.MissingLeaf)
				}
				leaves = append(leaves, audit.LeafHash(r.Data))
				if r.Seq == seq {
					raw = r.Data
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("auditlog: read VIGIL_LOG: %w", err)
		}
		for first+uint64(len(leaves)) <= last {
			leaves = append(leaves, audit.MissingLeaf)
		}
		blocks[b] = leaves
		return leaves, nil
	}
	if _, err := readBlock((seq - 1) >> p.blockBits); err != nil {
		return Proof{}, err
	}
	if raw == nil {
		return Proof{}, fmt.Errorf("%w: seq %d is not in VIGIL_LOG (deleted); run vigil audit verify", ErrMissing, seq)
	}
	cached := false
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		var h audit.Hash
		if id.Level >= p.blockBits {
			l, j := id.Level-p.blockBits, id.Index
			if int(l) >= len(levels) || j >= uint64(len(levels[l])) {
				return Proof{}, fmt.Errorf("auditlog: node %d/%d of a tree of size %d is not cached", id.Level, id.Index, cp.Size)
			}
			h, cached = levels[l][j], true
		} else {
			first := id.Index << id.Level // leaf index
			leaves, err := readBlock(first >> p.blockBits)
			if err != nil {
				return Proof{}, err
			}
			off := first % bsize
			h = subtreeRoot(leaves[off : off+1<<id.Level])
		}
		hashes[i] = h[:]
	}
	path, err := nodes.Rehash(hashes, rfc6962.DefaultHasher.HashChildren)
	if err != nil {
		return Proof{}, err
	}
	out := make([]audit.Hash, len(path))
	for i := range path {
		copy(out[i][:], path[i])
	}
	leaf := audit.LeafHash(raw)
	if err := audit.VerifyInclusion(seq, cp.Size, leaf, out, cp.Root); err != nil {
		err = fmt.Errorf("%w: seq %d, checkpoint of tree size %d (%v); run vigil audit verify", ErrMismatch, seq, cp.Size, err)
		if cached {
			return Proof{}, staleError{err}
		}
		return Proof{}, err
	}
	return Proof{Seq: seq, Checkpoint: cp, Raw: raw, Leaf: leaf, Path: out}, nil
}

// subtreeRoot is the RFC 6962 root of a perfect subtree (len(leaves) a
// power of two) from its leaf hashes.
func subtreeRoot(leaves []audit.Hash) audit.Hash {
	if len(leaves) == 1 {
		return leaves[0]
	}
	half := len(leaves) / 2
	return nodeHash(subtreeRoot(leaves[:half]), subtreeRoot(leaves[half:]))
}

func nodeHash(l, r audit.Hash) audit.Hash {
	var h audit.Hash
	copy(h[:], rfc6962.DefaultHasher.HashChildren(l[:], r[:]))
	return h
}

func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("auditlog: stream %s: %w", name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("auditlog: stream %s info: %w", name, err)
	}
	return info, nil
}
