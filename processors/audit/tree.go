package audit

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/tlog"
)

// HashSize is the size of every hash in the tree (SHA-256).
const HashSize = sha256.Size

// Hash is a leaf or node hash of the tree.
type Hash [HashSize]byte

// String is the hash in standard base64, as checkpoints spell it.
func (h Hash) String() string { return base64.StdEncoding.EncodeToString(h[:]) }

// ParseHash decodes a standard-base64 hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != HashSize {
		return h, fmt.Errorf("audit: %q is not a base64 SHA-256 hash", clip(s, 60))
	}
	copy(h[:], b)
	return h, nil
}

// LeafHash is the RFC 6962 leaf hash of one log record: SHA-256(0x00 ||
// raw), where raw is the record's msgpack bytes exactly as VIGIL_LOG stores
// them. Leaf i of the tree is the record at log sequence i+1.
func LeafHash(raw []byte) Hash {
	d := sha256.New()
	d.Write([]byte{0})
	d.Write(raw)
	var h Hash
	d.Sum(h[:0])
	return h
}

// leafHasher computes leaf hashes without allocating, reusing its buffer.
type leafHasher struct{ buf []byte }

func (l *leafHasher) hash(raw []byte) Hash {
	l.buf = append(append(l.buf[:0], 0), raw...)
	return sha256.Sum256(l.buf)
}

// MissingLeaf stands in the tree for a log sequence that had no record when
// the audit processor folded past it (deleted, or a record that did not
// decode and so never reached the fold). It is the leaf hash of a fixed
// string no msgpack event can equal, so it never matches a real record.
var MissingLeaf = LeafHash([]byte("vigil.audit: no record at this log sequence"))

// factory builds the compact ranges of the RFC 6962 tree. It holds only the
// node hash function and is never changed.
var factory = &compact.RangeFactory{Hash: hashChildren}

// hashChildren is rfc6962.DefaultHasher.HashChildren, SHA-256(0x01 || l ||
// r), without a hasher and a buffer allocated per call: the tree hashes a
// node for nearly every leaf. It returns a new slice (ranges keep it).
func hashChildren(l, r []byte) []byte {
	var buf [1 + 2*HashSize]byte
	b := append(append(append(buf[:0], rfc6962.RFC6962NodeHashPrefix), l...), r...)
	sum := sha256.Sum256(b)
	return append(make([]byte, 0, HashSize), sum[:]...)
}

// newRange returns the compact range [0, size) with the given subtree
// hashes (32 bytes each, concatenated), as a checkpoint's Prefix holds them.
func newRange(size uint64, flat []byte) (*compact.Range, error) {
	n := compact.RangeSize(0, size)
	if len(flat) != n*HashSize {
		return nil, fmt.Errorf("compact range of %d leaves needs %d hashes, got %d bytes", size, n, len(flat))
	}
	hashes := make([][]byte, n)
	for i := range hashes {
		hashes[i] = append([]byte(nil), flat[i*HashSize:(i+1)*HashSize]...)
	}
	return factory.NewRange(0, size, hashes)
}

// flatHashes concatenates a compact range's subtree hashes.
func flatHashes(r *compact.Range) []byte {
	out := make([]byte, 0, len(r.Hashes())*HashSize)
	for _, h := range r.Hashes() {
		out = append(out, h...)
	}
	return out
}

// rootOf returns the root of a compact range starting at 0; the empty tree
// has the RFC 6962 empty root.
func rootOf(r *compact.Range) Hash {
	var h Hash
	root, err := r.GetRootHash(nil)
	if err != nil || root == nil {
		copy(h[:], rfc6962.DefaultHasher.EmptyRoot())
		return h
	}
	copy(h[:], root)
	return h
}

// Tree keeps every node hash of a log's tree in memory (about 2 hashes per
// record), so it can answer inclusion proofs for any record in any tree
// size. It is what `vigil audit prove` and `vigil audit export` build while
// they read the log; the processor itself keeps only a compact range.
type Tree struct {
	stored []tlog.Hash
	n      int64
}

// Append adds the next leaf (the record at log sequence Size()+1).
func (t *Tree) Append(leaf Hash) error {
	hs, err := tlog.StoredHashesForRecordHash(t.n, tlog.Hash(leaf), t)
	if err != nil {
		return err
	}
	t.stored = append(t.stored, hs...)
	t.n++
	return nil
}

// Size is the number of leaves.
func (t *Tree) Size() uint64 { return uint64(t.n) }

// ReadHashes implements tlog.HashReader over the stored hashes.
func (t *Tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.stored)) {
			return nil, fmt.Errorf("audit: tree hash %d not stored", x)
		}
		out[i] = t.stored[x]
	}
	return out, nil
}

// Root returns the root hash of the tree of the first size leaves.
func (t *Tree) Root(size uint64) (Hash, error) {
	if size > t.Size() {
		return Hash{}, fmt.Errorf("audit: tree of size %d asked, %d leaves known", size, t.n)
	}
	if size == 0 {
		var h Hash
		copy(h[:], rfc6962.DefaultHasher.EmptyRoot())
		return h, nil
	}
	h, err := tlog.TreeHash(int64(size), t)
	return Hash(h), err
}

// Prove returns the RFC 6962 inclusion proof (audit path, leaf upwards) of
// the record at log sequence seq in the tree of size size.
func (t *Tree) Prove(seq, size uint64) ([]Hash, error) {
	if seq == 0 || seq > size {
		return nil, fmt.Errorf("audit: seq %d is not in a tree of size %d", seq, size)
	}
	if size > t.Size() {
		return nil, fmt.Errorf("audit: tree of size %d asked, %d leaves known", size, t.n)
	}
	p, err := tlog.ProveRecord(int64(size), int64(seq-1), t)
	if err != nil {
		return nil, err
	}
	out := make([]Hash, len(p))
	for i := range p {
		out[i] = Hash(p[i])
	}
	return out, nil
}

// ErrNotIncluded means an inclusion proof does not lead to the root.
var ErrNotIncluded = errors.New("audit: inclusion proof does not verify")

// VerifyInclusion checks that leaf is the record at log sequence seq of
// the tree of size size with the given root. It uses
// github.com/transparency-dev/merkle, an implementation independent of the
// one that builds the proofs.
func VerifyInclusion(seq, size uint64, leaf Hash, path []Hash, root Hash) error {
	if seq == 0 || seq > size {
		return fmt.Errorf("%w: seq %d is not in a tree of size %d", ErrNotIncluded, seq, size)
	}
	p := make([][]byte, len(path))
	for i := range path {
		p[i] = path[i][:]
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, seq-1, size, leaf[:], p, root[:]); err != nil {
		return fmt.Errorf("%w: %v", ErrNotIncluded, err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
