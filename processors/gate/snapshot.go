package gate

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// snapshotVersion is the version of the gate's snapshot.
const snapshotVersion = 3

type snapshotState struct {
	V           int                     `msgpack:"v"`
	Fingerprint string                  `msgpack:"fingerprint"`
	Tracker     processors.TrackerState `msgpack:"tracker"`
	Backends    []snapBackend           `msgpack:"backends"`
	Pending     []snapPending           `msgpack:"pending"`
	// Decided is in the order the decisions were remembered, oldest first.
	Decided  []snapDecided `msgpack:"decided"`
	Sessions []snapGrant   `msgpack:"sessions"`
	Allow    []Entry       `msgpack:"allow"`
	// Gone is the compact set of forgotten decided ids (see goneIDs):
	// pairs of id hash and action seq, sorted by hash.
	Gone processors.StateUints `msgpack:"gone"`
	Idle processors.IdleState  `msgpack:"idle"`
	// MCP is the MCP memory (version 3).
	MCP inject.MCPMemoryState `msgpack:"mcp"`
	// Written is the files tools run from written per conversation (version 3).
	Written risk.WrittenState `msgpack:"written"`
}

type snapBackend struct {
	Conversation string `msgpack:"conversation"`
	Backend      string `msgpack:"backend"`
	Trusted      bool   `msgpack:"trusted"`
}

type snapPending struct {
	ID        string               `msgpack:"id"`
	Seq       uint64               `msgpack:"seq"`
	Conv      string               `msgpack:"conv"`
	Req       events.GateRequested `msgpack:"req"`
	AskRule   bool                 `msgpack:"ask_rule"`
	HandedOff string               `msgpack:"handed_off"`
	ReusedAt  uint64               `msgpack:"reused_at"`
}

type snapDecided struct {
	ID        string           `msgpack:"id"`
	Outcome   events.Outcome   `msgpack:"outcome"`
	By        events.DecidedBy `msgpack:"by"`
	Seq       uint64           `msgpack:"seq"`
	ActionSeq uint64           `msgpack:"action_seq"`
	ReusedAt  uint64           `msgpack:"reused_at"`
}

type snapGrant struct {
	Conversation string `msgpack:"conversation"`
	Shape        string `msgpack:"shape"`
	Approver     string `msgpack:"approver"`
	Seq          uint64 `msgpack:"seq"`
}

// fingerprint names the options besides the log that change the gate's
// outputs: the config override and MaxDecided. (A custom NewScorer cannot
// be named; a pipeline that swaps scorers must not share snapshots.)
func (p *Processor) fingerprint() string {
	return processors.Fingerprint(p.opts.ConfigOverride, p.opts.MaxDecided)
}

// Snapshot encodes the gate's state, every map in key order (see
// processors.Snapshotter). The compiled scorers are a cache, rebuilt on
// first use after Restore.
func (p *Processor) Snapshot() ([]byte, error) {
	st := snapshotState{V: snapshotVersion, Fingerprint: p.fingerprint(), Tracker: p.tracker.State(),
		Backends: make([]snapBackend, 0, len(p.backends)), Pending: make([]snapPending, 0, len(p.pending)),
		Decided: make([]snapDecided, 0, len(p.order)-p.head)}
	for _, c := range sortedKeys(p.backends) {
		b := p.backends[c]
		st.Backends = append(st.Backends, snapBackend{Conversation: c, Backend: b.backend, Trusted: b.trusted})
	}
	for _, id := range sortedKeys(p.pending) {
		pa := p.pending[id]
		st.Pending = append(st.Pending, snapPending{ID: id, Seq: pa.seq, Conv: pa.conv, Req: pa.req,
			AskRule: pa.askRule, HandedOff: pa.handedOff, ReusedAt: pa.reusedAt})
	}
	for _, o := range p.order[p.head:] {
		id := o.id
		di := p.decided[id]
		st.Decided = append(st.Decided, snapDecided{ID: id, Outcome: di.outcome, By: di.by, Seq: di.seq, ActionSeq: di.actionSeq, ReusedAt: di.reusedAt})
	}
	for _, c := range sortedKeys(p.sessions) {
		for _, shape := range sortedKeys(p.sessions[c]) {
			g := p.sessions[c][shape]
			st.Sessions = append(st.Sessions, snapGrant{Conversation: c, Shape: shape, Approver: g.approver, Seq: g.seq})
		}
	}
	st.Allow = p.allow.Entries()
	st.Gone = p.gone.flat()
	st.Idle = p.idle.State()
	st.MCP = p.mcp.State()
	st.Written = p.written.State()
	return processors.EncodeState(&st)
}

// Restore replaces the gate's state with a snapshot's (see
// processors.Snapshotter). A snapshot taken under another config override
// or MaxDecided is refused.
func (p *Processor) Restore(b []byte) error {
	var st snapshotState
	if err := processors.DecodeState(b, &st); err != nil {
		return err
	}
	if st.V != snapshotVersion {
		return fmt.Errorf("%w: gate snapshot version %d, want %d", processors.ErrSnapshot, st.V, snapshotVersion)
	}
	if st.Fingerprint != p.fingerprint() {
		return fmt.Errorf("%w: gate snapshot taken under another config override or max decided", processors.ErrSnapshot)
	}
	if len(st.Decided) > p.opts.MaxDecided {
		return fmt.Errorf("%w: gate snapshot remembers %d decisions, more than %d", processors.ErrSnapshot, len(st.Decided), p.opts.MaxDecided)
	}
	gone, err := goneFrom(st.Gone)
	if err != nil {
		return err
	}
	idle := processors.NewIdleConversations(p.idle.After())
	if err := idle.SetState(st.Idle); err != nil {
		return err
	}
	mem := inject.NewMCPMemory()
	if err := mem.SetState(st.MCP); err != nil {
		return fmt.Errorf("%w: %v", processors.ErrSnapshot, err)
	}
	written := risk.NewWrittenFiles()
	if err := written.SetState(st.Written); err != nil {
		return fmt.Errorf("%w: %v", processors.ErrSnapshot, err)
	}
	// The tracker is the last part that can refuse; nothing is changed before.
	if err := p.tracker.SetState(st.Tracker); err != nil {
		return err
	}
	backends := make(map[string]backendInfo, len(st.Backends))
	for _, b := range st.Backends {
		backends[b.Conversation] = backendInfo{backend: b.Backend, trusted: b.Trusted}
	}
	pend := make(map[string]*pending, len(st.Pending))
	for _, s := range st.Pending {
		pend[s.ID] = &pending{seq: s.Seq, conv: s.Conv, req: s.Req, askRule: s.AskRule, handedOff: s.HandedOff, reusedAt: s.ReusedAt}
	}
	decided := make(map[string]decidedInfo, len(st.Decided))
	order := make([]decidedID, 0, len(st.Decided))
	for _, d := range st.Decided {
		decided[d.ID] = decidedInfo{outcome: d.Outcome, by: d.By, seq: d.Seq, actionSeq: d.ActionSeq, reusedAt: d.ReusedAt}
		order = append(order, decidedID{id: d.ID})
	}
	sessions := map[string]map[string]grant{}
	for _, g := range st.Sessions {
		if sessions[g.Conversation] == nil {
			sessions[g.Conversation] = map[string]grant{}
		}
		sessions[g.Conversation][g.Shape] = grant{approver: g.Approver, seq: g.Seq}
	}
	allow := NewAllowlist()
	for i := range st.Allow {
		e := st.Allow[i]
		allow.entries[e.ID] = &e
	}
	p.backends, p.pending, p.decided, p.order, p.head = backends, pend, decided, order, 0
	p.sessions, p.allow, p.gone, p.idle, p.mcp, p.written = sessions, allow, gone, idle, mem, written
	p.seen, p.hashed = seenIDs{}, decidedID{} // built again from the restored state
	clear(p.scorers)
	return nil
}

// goneIDs remembers, forever and compactly, the action ids the gate no
// longer keeps in full (beyond MaxDecided): a 64-bit hash of the id
// (SHA-256, truncated) and the log seq of the action. It is what lets the
// gate deny an action that reuses an id decided long ago. A collision
// (odds 2^-64 per pair) could only deny an action, never allow one.
//
// The set is a sorted array of (hash, seq) pairs, 16 bytes an id and no
// pointers, plus a map of the ids added since the array was last merged
// with it: at 10,000,000 log events (3.2 million forgotten ids) a map of
// every id was 67 MB of heap and most of restoring a snapshot;
// the array is the snapshot's own encoding, kept as it is decoded. The
// map is merged in once it holds an eighth as many ids as the array, so
// an add costs O(1) amortized, a lookup a map probe and a binary search.
//
// A filter of about a byte an id answers most lookups of an id never
// forgotten (nearly every new action's) without the probe and the search.
type goneIDs struct {
	sorted []uint64          // hash, seq pairs, by hash, each hash once
	recent map[uint64]uint64 // hash → seq, added since the last merge
	// filter has the bit of every hash in the set (filterBit); a clear
	// bit means the hash is not in it. nil: not built yet (built on the
	// first lookup after a merge or a restore). Derived from the set,
	// never in a snapshot.
	filter []uint64
}

// filterBit is h's bit in a filter of n words (a power of two).
func filterBit(h uint64, n int) (word int, bit uint64) {
	i := h & (uint64(n)*64 - 1)
	return int(i / 64), 1 << (i % 64)
}

// buildFilter sizes the filter for the set (at least 8 bits an id) and
// sets the bit of every hash in it.
func (g *goneIDs) buildFilter() {
	n := 1
	for n*64 < 8*(len(g.sorted)/2+len(g.recent)) {
		n *= 2
	}
	g.filter = make([]uint64, n)
	for i := 0; i < len(g.sorted); i += 2 {
		w, b := filterBit(g.sorted[i], n)
		g.filter[w] |= b
	}
	for h := range g.recent {
		w, b := filterBit(h, n)
		g.filter[w] |= b
	}
}

// goneMergeAt is the fewest recent ids that trigger a merge.
const goneMergeAt = 4096

func idHash(id string) uint64 {
	sum := sha256.Sum256([]byte(id))
	return binary.BigEndian.Uint64(sum[:8])
}

func (g *goneIDs) add(id string, actionSeq uint64) { g.addHash(idHash(id), actionSeq) }

// addHash is add with the id's hash (idHash) already computed.
func (g *goneIDs) addHash(h, actionSeq uint64) {
	if g.recent == nil {
		g.recent = map[uint64]uint64{}
	}
	g.recent[h] = actionSeq
	if g.filter != nil {
		w, b := filterBit(h, len(g.filter))
		g.filter[w] |= b
	}
	if len(g.recent) >= max(goneMergeAt, len(g.sorted)/16) {
		g.merge()
	}
}

func (g *goneIDs) get(id string) (uint64, bool) {
	if g.empty() {
		return 0, false
	}
	return g.getHash(idHash(id))
}

// empty reports whether no id was ever forgotten (get needs no hash).
func (g *goneIDs) empty() bool { return len(g.recent) == 0 && len(g.sorted) == 0 }

// getHash is get with the id's hash (idHash) already computed.
func (g *goneIDs) getHash(h uint64) (uint64, bool) {
	if g.filter == nil {
		g.buildFilter()
	}
	if w, b := filterBit(h, len(g.filter)); g.filter[w]&b == 0 {
		return 0, false
	}
	if seq, ok := g.recent[h]; ok {
		return seq, true
	}
	// A binary search over the pairs (sort.Search, without its closure).
	lo, hi := 0, len(g.sorted)/2
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g.sorted[2*m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(g.sorted)/2 && g.sorted[2*lo] == h {
		return g.sorted[2*lo+1], true
	}
	return 0, false
}

// merge folds the recent ids into the sorted array (a recent id's seq
// replaces the array's for the same hash: an id forgotten twice keeps its
// latest action).
func (g *goneIDs) merge() {
	if len(g.recent) == 0 {
		return
	}
	hs := make([]uint64, 0, len(g.recent))
	for h := range g.recent {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	out := make([]uint64, 0, len(g.sorted)+2*len(hs))
	i := 0
	for _, h := range hs {
		for i < len(g.sorted) && g.sorted[i] < h {
			out = append(out, g.sorted[i], g.sorted[i+1])
			i += 2
		}
		if i < len(g.sorted) && g.sorted[i] == h {
			i += 2
		}
		out = append(out, h, g.recent[h])
	}
	out = append(out, g.sorted[i:]...)
	g.sorted = out
	clear(g.recent)
	g.filter = nil // resized for the set on the next lookup
}

// flat is the set as hash, seq pairs sorted by hash (the array itself,
// after a merge: the caller must not change it).
func (g *goneIDs) flat() []uint64 {
	g.merge()
	return g.sorted
}

// goneFrom takes a snapshot's pairs as the set; they must be sorted by
// hash, each hash once, as flat gives them.
func goneFrom(flat []uint64) (goneIDs, error) {
	if len(flat)%2 != 0 {
		return goneIDs{}, fmt.Errorf("%w: gate forgotten ids: odd length %d", processors.ErrSnapshot, len(flat))
	}
	for i := 2; i < len(flat); i += 2 {
		if flat[i] <= flat[i-2] {
			return goneIDs{}, fmt.Errorf("%w: gate forgotten ids not in order at %d", processors.ErrSnapshot, i/2)
		}
	}
	return goneIDs{sorted: flat}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	return keys
}

var _ processors.Snapshotter = (*Processor)(nil)
