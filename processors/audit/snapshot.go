package audit

import (
	"fmt"

	"github.com/vigil-dev/vigil/processors"
)

// snapshotVersion is the version of the audit processor's snapshot.
const snapshotVersion = 1

// snapshotState is the audit fold's state: O(log n) subtree hashes of the
// compact range (the tree's frontier), the range at the last checkpoint,
// and the leaf hashes since it (at most Interval). No older leaf is kept;
// an inclusion proof for an old record is built by reading the log again
// (vigil audit prove / export build a full Tree as they read it).
type snapshotState struct {
	V           int    `msgpack:"v"`
	Fingerprint string `msgpack:"fingerprint"`
	Size        uint64 `msgpack:"size"`
	Tree        []byte `msgpack:"tree"`
	Prefix      []byte `msgpack:"prefix"`
	LastCP      uint64 `msgpack:"last_cp"`
	Window      []byte `msgpack:"window"`
}

// fingerprint names what changes the outputs besides the log: the
// checkpoint interval, the origin line and the signing key.
func (p *Processor) fingerprint() string {
	return processors.Fingerprint(p.cfg.Interval, p.cfg.Origin, p.cfg.Signer.Name(), p.cfg.Signer.KeyHash())
}

// Snapshot encodes the processor's state (see snapshotState).
func (p *Processor) Snapshot() ([]byte, error) {
	return processors.EncodeState(&snapshotState{
		V: snapshotVersion, Fingerprint: p.fingerprint(),
		Size: p.tree.End(), Tree: flatHashes(p.tree),
		Prefix: nilIfEmpty(p.prefix), LastCP: p.lastCP, Window: nilIfEmpty(p.window),
	})
}

// nilIfEmpty makes an empty slice encode as an absent one, so a state
// encodes the same way whether it was folded or restored.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Restore replaces the state with a snapshot's (see processors.Snapshotter).
// A snapshot taken with another key, origin or interval is refused.
func (p *Processor) Restore(b []byte) error {
	var st snapshotState
	if err := processors.DecodeState(b, &st); err != nil {
		return err
	}
	if st.V != snapshotVersion {
		return fmt.Errorf("%w: audit snapshot version %d, want %d", processors.ErrSnapshot, st.V, snapshotVersion)
	}
	if st.Fingerprint != p.fingerprint() {
		return fmt.Errorf("%w: audit snapshot taken with another signing key, origin or interval", processors.ErrSnapshot)
	}
	tree, err := newRange(st.Size, st.Tree)
	if err != nil {
		return fmt.Errorf("%w: audit tree: %v", processors.ErrSnapshot, err)
	}
	if st.LastCP > st.Size || uint64(len(st.Window)) != (st.Size-st.LastCP)*HashSize {
		return fmt.Errorf("%w: audit window of %d bytes for seqs %d..%d", processors.ErrSnapshot, len(st.Window), st.LastCP+1, st.Size)
	}
	if _, err := newRange(st.LastCP, st.Prefix); err != nil && st.LastCP > 0 {
		return fmt.Errorf("%w: audit prefix: %v", processors.ErrSnapshot, err)
	}
	window := make([]byte, len(st.Window), max(len(st.Window), int(p.cfg.Interval)*HashSize))
	copy(window, st.Window)
	p.tree, p.prefix, p.lastCP, p.window = tree, st.Prefix, st.LastCP, window
	return nil
}

var _ processors.Snapshotter = (*Processor)(nil)
