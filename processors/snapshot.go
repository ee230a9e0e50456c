package processors

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
)

// ErrSnapshot marks a snapshot that cannot be restored: damaged (its
// digest does not match), of another format version, of other processors,
// or taken under other options (a what-if config override, another audit
// key or interval …). A driver that meets one ignores it and folds from an
// older snapshot or from the start of the log.
var ErrSnapshot = errors.New("processors: snapshot unusable")

// SnapshotFormat is the version of the Pipeline's snapshot encoding. A
// snapshot of another version is refused (ErrSnapshot), never upcast: it
// is only a cache of what folding the log gives.
const SnapshotFormat = 1

// snapshotMagic starts every sealed snapshot.
var snapshotMagic = []byte("VIGILSNP")

// SealSnapshot frames body as magic, format version, length, body and the
// SHA-256 of everything before it, so OpenSnapshot detects any damage.
func SealSnapshot(body []byte) []byte {
	out := make([]byte, 0, len(snapshotMagic)+12+len(body)+sha256.Size)
	out = append(out, snapshotMagic...)
	out = binary.BigEndian.AppendUint32(out, SnapshotFormat)
	out = binary.BigEndian.AppendUint64(out, uint64(len(body)))
	out = append(out, body...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

// OpenSnapshot checks a sealed snapshot and returns its body. Every error
// wraps ErrSnapshot.
func OpenSnapshot(b []byte) ([]byte, error) {
	head := len(snapshotMagic) + 12
	if len(b) < head+sha256.Size || !bytes.Equal(b[:len(snapshotMagic)], snapshotMagic) {
		return nil, fmt.Errorf("%w: not a Vigil snapshot", ErrSnapshot)
	}
	if v := binary.BigEndian.Uint32(b[len(snapshotMagic):]); v != SnapshotFormat {
		return nil, fmt.Errorf("%w: format %d, this build reads %d", ErrSnapshot, v, SnapshotFormat)
	}
	n := binary.BigEndian.Uint64(b[len(snapshotMagic)+4:])
	if n != uint64(len(b)-head-sha256.Size) {
		return nil, fmt.Errorf("%w: body of %d bytes announced, %d present", ErrSnapshot, n, len(b)-head-sha256.Size)
	}
	end := len(b) - sha256.Size
	if sum := sha256.Sum256(b[:end]); !bytes.Equal(sum[:], b[end:]) {
		return nil, fmt.Errorf("%w: digest does not match (damaged)", ErrSnapshot)
	}
	return b[head:end], nil
}

// EncodeState encodes v deterministically (msgpack, map keys sorted,
// compact integers): the encoding processors use for their snapshots.
func EncodeState(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeState decodes what EncodeState encoded; an error wraps ErrSnapshot.
// Large parts of a state are best typed StateBytes and StateUints, which
// decode in one allocation.
func DecodeState(b []byte, v any) error {
	if err := msgpack.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	return nil
}

// StateBytes is a byte string in a state DecodeState decodes. It encodes
// as a []byte does, and decodes in one allocation where msgpack's own
// decoder grows a long one a megabyte at a time (most of the CPU of
// restoring a 51 MB snapshot went there). Its length is checked
// against what is left of the input first, so a damaged length cannot make
// it allocate more than the input holds.
type StateBytes []byte

// DecodeMsgpack implements msgpack.CustomDecoder.
func (s *StateBytes) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeBytesLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*s = nil
		return nil
	}
	if err := fitsInput(d, n); err != nil {
		return err
	}
	b := make([]byte, n)
	if err := d.ReadFull(b); err != nil {
		return err
	}
	*s = b
	return nil
}

// StateUints is a list of integers in a state DecodeState decodes. It
// encodes as a []uint64 does and decodes without reflection, in one
// allocation (a gate that has decided millions of actions keeps two per
// action).
type StateUints []uint64

// DecodeMsgpack implements msgpack.CustomDecoder.
func (s *StateUints) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*s = nil
		return nil
	}
	if err := fitsInput(d, n); err != nil { // at least one byte each
		return err
	}
	out := make([]uint64, n)
	for i := range out {
		if out[i], err = d.DecodeUint64(); err != nil {
			return err
		}
	}
	*s = out
	return nil
}

// fitsInput refuses a length of n bytes (or items of a byte at least)
// when the decoder's input has fewer left. DecodeState decodes from a
// bytes.Reader, which says how much is left.
func fitsInput(d *msgpack.Decoder, n int) error {
	r, ok := d.Buffered().(interface{ Len() int })
	if !ok {
		return errors.New("processors: state decoded from a stream of unknown length")
	}
	if n > r.Len() {
		return fmt.Errorf("processors: state announces %d items, only %d bytes are left", n, r.Len())
	}
	return nil
}

// Fingerprint is a short digest of the options a processor was built with
// that change its outputs (a config override, an audit key …). A
// processor records it in its snapshot and refuses one with another.
func Fingerprint(parts ...any) string {
	b, err := EncodeState(parts)
	if err != nil {
		return "unencodable"
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%x", sum[:12])
}

// pipelineState is a Pipeline's snapshot body.
type pipelineState struct {
	Procs []namedState `msgpack:"procs"`
}

type namedState struct {
	Name  string     `msgpack:"name"`
	State StateBytes `msgpack:"state"`
}

// CanSnapshot reports whether every processor of p is a Snapshotter.
func (p *Pipeline) CanSnapshot() bool {
	for _, proc := range p.procs {
		if _, ok := proc.(Snapshotter); !ok {
			return false
		}
	}
	return true
}

// Snapshot encodes the state of every processor, in order, sealed with a
// format version and a digest (SealSnapshot). It fails when a processor is
// not a Snapshotter.
func (p *Pipeline) Snapshot() ([]byte, error) {
	st := pipelineState{Procs: make([]namedState, 0, len(p.procs))}
	for _, proc := range p.procs {
		s, ok := proc.(Snapshotter)
		if !ok {
			return nil, fmt.Errorf("processors: %s keeps no snapshot", proc.Name())
		}
		b, err := s.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("processors: snapshot %s: %w", proc.Name(), err)
		}
		st.Procs = append(st.Procs, namedState{Name: proc.Name(), State: b})
	}
	body, err := EncodeState(&st)
	if err != nil {
		return nil, err
	}
	return SealSnapshot(body), nil
}

// Restore sets every processor's state from a Pipeline snapshot. It is
// all or nothing: on any error (wrapping ErrSnapshot when the snapshot is
// damaged or does not fit these processors) every processor keeps the
// state it had.
func (p *Pipeline) Restore(b []byte) error {
	body, err := OpenSnapshot(b)
	if err != nil {
		return err
	}
	var st pipelineState
	if err := DecodeState(body, &st); err != nil {
		return err
	}
	names := make([]string, len(p.procs))
	for i, proc := range p.procs {
		names[i] = proc.Name()
	}
	got := make([]string, len(st.Procs))
	for i, s := range st.Procs {
		got[i] = s.Name
	}
	if !slices.Equal(names, got) {
		return fmt.Errorf("%w: taken of processors %v, this pipeline runs %v", ErrSnapshot, got, names)
	}
	// Keep what each processor had, to put it back if a later one refuses.
	backup := make([][]byte, len(p.procs))
	for i, proc := range p.procs {
		s, ok := proc.(Snapshotter)
		if !ok {
			return fmt.Errorf("processors: %s keeps no snapshot", proc.Name())
		}
		if backup[i], err = s.Snapshot(); err != nil {
			return fmt.Errorf("processors: snapshot %s: %w", proc.Name(), err)
		}
	}
	for i, proc := range p.procs {
		if err := proc.(Snapshotter).Restore(st.Procs[i].State); err != nil {
			for j := range i {
				_ = p.procs[j].(Snapshotter).Restore(backup[j])
			}
			return fmt.Errorf("processors: restore %s: %w", proc.Name(), err)
		}
	}
	return nil
}

// TrackerState is a ConfigTracker's state, for the snapshots of the
// processors that embed one.
type TrackerState struct {
	Global    events.Config         `msgpack:"global"`
	GlobalSeq uint64                `msgpack:"global_seq"`
	PerConv   []TrackerScoped       `msgpack:"per_conv"`
	Convs     []TrackerConversation `msgpack:"convs"`
	Override  *events.Config        `msgpack:"override"`
}

// TrackerScoped is one conversation-scoped config.
type TrackerScoped struct {
	Conversation string        `msgpack:"conversation"`
	Config       events.Config `msgpack:"config"`
	Seq          uint64        `msgpack:"seq"`
}

// TrackerConversation is what conversation.started said about one
// conversation.
type TrackerConversation struct {
	Conversation string `msgpack:"conversation"`
	Backend      string `msgpack:"backend"`
	Workspace    string `msgpack:"workspace"`
	Trusted      bool   `msgpack:"trusted"`
}

// State returns the tracker's state, deterministically ordered.
func (t *ConfigTracker) State() TrackerState {
	st := TrackerState{Global: t.global, GlobalSeq: t.globalSeq, Override: t.Override}
	for _, c := range sortedKeys(t.perConv) {
		sc := t.perConv[c]
		st.PerConv = append(st.PerConv, TrackerScoped{Conversation: c, Config: sc.cfg, Seq: sc.seq})
	}
	for _, c := range sortedKeys(t.convs) {
		ci := t.convs[c]
		st.Convs = append(st.Convs, TrackerConversation{Conversation: c, Backend: ci.Backend, Workspace: ci.Workspace, Trusted: ci.trusted})
	}
	return st
}

// SetState replaces the tracker's state with st. The tracker's Override
// and Validate stay as they are; a state taken under another override is
// refused (ErrSnapshot).
func (t *ConfigTracker) SetState(st TrackerState) error {
	if Fingerprint(st.Override) != Fingerprint(t.Override) {
		return fmt.Errorf("%w: taken under another config override", ErrSnapshot)
	}
	perConv := make(map[string]scopedConfig, len(st.PerConv))
	for _, sc := range st.PerConv {
		perConv[sc.Conversation] = scopedConfig{cfg: sc.Config, seq: sc.Seq}
	}
	convs := make(map[string]ConversationInfo, len(st.Convs))
	for _, c := range st.Convs {
		convs[c.Conversation] = ConversationInfo{Backend: c.Backend, Workspace: c.Workspace, trusted: c.Trusted}
	}
	t.global, t.globalSeq, t.perConv, t.convs = st.Global, st.GlobalSeq, perConv, convs
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
