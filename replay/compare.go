package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// RecordedOutput is one message of the recorded derived stream.
type RecordedOutput struct {
	// ID is the message's Nats-Msg-Id; BodyID the id inside the body. They
	// differ only if the message was tampered with.
	ID      string
	BodyID  string
	Subject string
	// Seq and Conversation are read from the body.
	Seq          uint64
	Conversation string
	Data         []byte
	// StreamSeq is the message's sequence in the derived stream.
	StreamSeq uint64
	// Err is set when the body is not a derived event.
	Err error
}

// Recorded yields the recorded derived outputs, in stream order.
type Recorded interface {
	Outputs(ctx context.Context, fn func(RecordedOutput) error) error
	String() string
}

// DerivedStream reads VIGIL_DERIVED.
type DerivedStream struct {
	JS jetstream.JetStream
	// Subjects filter the stream; empty means all.
	Subjects []string
}

func (d DerivedStream) String() string { return "stream " + events.StreamDerived }

// Outputs reads VIGIL_DERIVED from its first message to the last one the
// stream's leader holds when the read starts, through ordered consumers.
// An ordered consumer may sit on a replica that is behind the leader and
// then says nothing is pending before that last message: the read then
// asks the leader whether it holds a selected message the consumer did
// not deliver and, while it does, reads on from there on a new consumer
// (for at most transport.ReadPatience), so an output stored is never reported as
// missing because one replica had not received it yet.
func (d DerivedStream) Outputs(ctx context.Context, fn func(RecordedOutput) error) error {
	var st jetstream.Stream
	var info *jetstream.StreamInfo
	var err error
	// Asked again through an election (the stream's leader killed).
	for retryUntil := time.Now().Add(transport.ReadPatience); ; {
		ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
		st, err = d.JS.Stream(ictx, events.StreamDerived)
		if err == nil {
			info, err = st.Info(ictx)
		}
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().After(retryUntil) || !transient(err) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("replay: stream %s: %w", events.StreamDerived, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	last := info.State.LastSeq
	from := max(info.State.FirstSeq, 1)
	deadline := time.Now().Add(transport.ReadPatience)
	for {
		got, err := d.read(ctx, st, from, last, fn)
		if got >= from {
			from = got + 1
		}
		if err != nil && transient(err) && ctx.Err() == nil && time.Now().Before(deadline) {
			// A read that does not answer through an election: on again
			// after the last output delivered.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		if err != nil || got >= last {
			return err
		}
		held, err := transport.LeaderHolds(ctx, st, from, last, d.Subjects)
		if err == nil && !held {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the stream's leader holds it, but no consumer delivered it")
			}
			return fmt.Errorf("replay: read %s: stopped before seq %d of %d: %w", events.StreamDerived, from, last, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// read reads from..to on one ordered consumer until it has nothing
// pending, and returns the last stream sequence delivered (0 if none).
func (d DerivedStream) read(ctx context.Context, st jetstream.Stream, from, to uint64, fn func(RecordedOutput) error) (uint64, error) {
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: d.Subjects,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from, InactiveThreshold: transport.ReaderInactive})
	if err != nil {
		return 0, fmt.Errorf("replay: read %s: %w", events.StreamDerived, err)
	}
	if ci, err := cons.Info(ctx); err == nil && ci.NumPending == 0 {
		return 0, nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2048))
	if err != nil {
		return 0, fmt.Errorf("replay: read %s: %w", events.StreamDerived, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	var got uint64
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return got, ctx.Err()
			}
			return got, fmt.Errorf("replay: read %s: %w", events.StreamDerived, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return got, fmt.Errorf("replay: read %s: %w", events.StreamDerived, err)
		}
		if meta.Sequence.Stream > to {
			return to, nil
		}
		got = meta.Sequence.Stream
		o := RecordedOutput{ID: m.Headers().Get(jetstream.MsgIDHeader), Subject: m.Subject(), Data: m.Data(), StreamSeq: meta.Sequence.Stream}
		o.BodyID, o.Seq, o.Conversation, o.Err = peekDerived(o.Data)
		if o.ID == "" {
			o.ID = o.BodyID
		}
		if err := fn(o); err != nil {
			return got, err
		}
		if got >= to || meta.NumPending == 0 {
			return got, nil
		}
	}
}

// peekDerived reads id, seq and conversation from a derived event's
// msgpack map without decoding the rest.
func peekDerived(b []byte) (id string, seq uint64, conv string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("malformed derived event")
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	n, err := dec.DecodeMapLen()
	if err != nil {
		return "", 0, "", fmt.Errorf("not a derived event: %v", err)
	}
	for range n {
		k, err := dec.DecodeString()
		if err != nil {
			return "", 0, "", fmt.Errorf("not a derived event: %v", err)
		}
		switch k {
		case "id":
			id, err = dec.DecodeString()
		case "seq":
			seq, err = dec.DecodeUint64()
		case "conversation":
			conv, err = dec.DecodeString()
		default:
			err = dec.Skip()
		}
		if err != nil {
			return "", 0, "", fmt.Errorf("not a derived event: field %s: %v", k, err)
		}
	}
	return id, seq, conv, nil
}

// Difference kinds.
const (
	// DiffChanged: replay derived the output with different bytes.
	DiffChanged = "changed"
	// DiffMissing: replay derived an output the recorded stream lacks.
	DiffMissing = "missing"
	// DiffUnexpected: the recorded stream has an output replay did not derive.
	DiffUnexpected = "unexpected"
	// DiffMalformed: a recorded message is not a derived event, or its
	// Nats-Msg-Id and body id disagree.
	DiffMalformed = "malformed"
)

// Difference is one disagreement between replay and the record: a bug in
// a fold (it is not deterministic, or changed since the log was written)
// or tampering with the derived stream.
type Difference struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject,omitempty"`
	// Replayed and Recorded are the derived events' bytes (msgpack), or
	// for an export check, their data as JSON.
	Replayed []byte `json:"-"`
	Recorded []byte `json:"-"`
	// ReplayedJSON and RecordedJSON are the same, as JSON, for people.
	ReplayedJSON json.RawMessage `json:"replayed,omitempty"`
	RecordedJSON json.RawMessage `json:"recorded,omitempty"`
	Detail       string          `json:"detail,omitempty"`
}

// ignoredPrefixes are ids of derived messages that no fold produces: the
// ingest service's alerts and dead letters, the live driver's own alerts
// (a consumer changed under it, records missing from the log, an output
// the stream refused; see internal/driver), and the node's own (a stream
// replaced or cut short, the start-time continuity check; see
// internal/node: "serve:...").
var ignoredPrefixes = []string{"ingest:", "dlq:", "driver:", "serve:"}

func ignoredID(id string) bool {
	for _, p := range ignoredPrefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// comparer matches replayed outputs with recorded ones by id. Both arrive
// in (nearly) log order, so the unmatched sets stay small: memory follows
// the disorder between the two, not the length of the log.
type comparer struct {
	rep      *Report
	max      int
	expected map[string]pendingOut // replayed, not yet recorded
	recorded map[string]pendingOut // recorded, not yet replayed
	recent   recentSet             // matched ids, to recognise duplicates
	// published bounds the log seqs whose outputs are known stored, when
	// bounded (Frontier.Published).
	published uint64
	bounded   bool
}

type pendingOut struct {
	seq     uint64
	subject string
	data    []byte
}

func newComparer(rep *Report, max int) *comparer {
	return &comparer{rep: rep, max: max, expected: map[string]pendingOut{}, recorded: map[string]pendingOut{},
		recent: newRecentSet(1 << 16)}
}

func (c *comparer) diff(d Difference) {
	switch d.Kind {
	case DiffChanged:
		c.rep.Changed++
	case DiffMissing:
		c.rep.Missing++
	case DiffUnexpected:
		c.rep.Unexpected++
	case DiffMalformed:
		c.rep.Malformed++
	}
	if len(c.rep.Differences) < c.max {
		d.ReplayedJSON, d.RecordedJSON = derivedJSON(d.Replayed), derivedJSON(d.Recorded)
		c.rep.Differences = append(c.rep.Differences, d)
	}
}

func (c *comparer) replayed(id string, seq uint64, subject string, b []byte) {
	c.rep.Outputs++
	if r, ok := c.recorded[id]; ok {
		delete(c.recorded, id)
		c.match(id, seq, subject, b, r.data)
		return
	}
	c.expected[id] = pendingOut{seq, subject, b}
}

func (c *comparer) recordedOut(o RecordedOutput) {
	c.rep.Recorded++
	if e, ok := c.expected[o.ID]; ok {
		delete(c.expected, o.ID)
		c.match(o.ID, e.seq, e.subject, e.data, o.Data)
		return
	}
	if h, ok := c.recent.get(o.ID); ok {
		if h == hashOf(o.Data) {
			c.rep.Duplicates++
			return
		}
		c.diff(Difference{Kind: DiffChanged, ID: o.ID, Seq: o.Seq, Subject: o.Subject, Recorded: o.Data,
			Detail: fmt.Sprintf("a second, different copy of %s at %s sequence %d", o.ID, events.StreamDerived, o.StreamSeq)})
		return
	}
	if _, dup := c.recorded[o.ID]; dup {
		c.rep.Duplicates++
		return
	}
	c.recorded[o.ID] = pendingOut{o.Seq, o.Subject, o.Data}
}

func (c *comparer) match(id string, seq uint64, subject string, replayed, recorded []byte) {
	if bytes.Equal(replayed, recorded) {
		c.rep.Matched++
	} else {
		c.diff(Difference{Kind: DiffChanged, ID: id, Seq: seq, Subject: subject, Replayed: replayed, Recorded: recorded})
	}
	c.recent.put(id, hashOf(recorded))
}

// flushMissing reports every replayed output still unmatched as
// missing, or as not published yet when its record is past what is known
// stored: once the recorded stream has ended, none can match any more
// (and holding them would grow with the log).
func (c *comparer) flushMissing() {
	for _, id := range sortedBySeq(c.expected) {
		e := c.expected[id]
		if c.bounded && e.seq > c.published {
			c.rep.Unpublished++ // its record is past what is known stored
			continue
		}
		c.diff(Difference{Kind: DiffMissing, ID: id, Seq: e.seq, Subject: e.subject, Replayed: e.data,
			Detail: "replay derived it; the recorded stream does not have it"})
	}
	clear(c.expected)
}

// finish reports what is left unmatched, in log order.
func (c *comparer) finish() {
	c.flushMissing()
	for _, id := range sortedBySeq(c.recorded) {
		r := c.recorded[id]
		c.diff(Difference{Kind: DiffUnexpected, ID: id, Seq: r.seq, Subject: r.subject, Recorded: r.data,
			Detail: "recorded, but no processor in this replay derives it"})
	}
}

func sortedBySeq(m map[string]pendingOut) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if m[a].seq != m[b].seq {
			if m[a].seq < m[b].seq {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return ids
}

func hashOf(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// recentSet remembers the last n matched ids and their bytes' hash.
type recentSet struct {
	ids  []string
	next int
	m    map[string]uint64
}

func newRecentSet(n int) recentSet {
	return recentSet{ids: make([]string, n), m: make(map[string]uint64, n)}
}

func (r *recentSet) get(id string) (uint64, bool) {
	h, ok := r.m[id]
	return h, ok
}

func (r *recentSet) put(id string, h uint64) {
	if old := r.ids[r.next]; old != "" {
		delete(r.m, old)
	}
	r.ids[r.next] = id
	r.m[id] = h
	r.next = (r.next + 1) % len(r.ids)
}

// derivedJSON renders derived-event bytes (msgpack, or already JSON) for people.
func derivedJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return b
	}
	d, err := events.DecodeDerived(b)
	if err != nil {
		s, _ := json.Marshal(fmt.Sprintf("<%d bytes that are not a derived event: %v>", len(b), err))
		return s
	}
	j, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return j
}

// ExportChecks holds an export's recorded risk and gate data, by the log
// sequence of the action they are about, to compare with the risk.assessed
// and gate.decided data replay derives (audit export writes them so).
type ExportChecks struct {
	risk map[uint64]exportFact
	gate map[uint64]exportFact
}

type exportFact struct {
	actionID string
	data     []byte // canonical JSON
}

// NewExportChecks returns an empty set of checks.
func NewExportChecks() *ExportChecks {
	return &ExportChecks{risk: map[uint64]exportFact{}, gate: map[uint64]exportFact{}}
}

func (x *ExportChecks) add(actionID string, seq uint64, risk, gate json.RawMessage) {
	if c, ok := canonical(risk); ok {
		x.risk[seq] = exportFact{actionID, c}
	}
	if c, ok := canonical(gate); ok {
		x.gate[seq] = exportFact{actionID, c}
	}
}

func canonical(b json.RawMessage) ([]byte, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// replayed compares one replayed output with the export's data, if any.
func (x *ExportChecks) replayed(c *comparer, o *processors.Output) {
	var m map[uint64]exportFact
	switch o.Event.Kind {
	case events.KindRiskAssessed:
		m = x.risk
	case events.KindGateDecided:
		m = x.gate
	default:
		return
	}
	d, err := o.Event.MarshalJSON()
	if err != nil {
		return
	}
	var whole struct {
		Data json.RawMessage `json:"data"`
	}
	var probe struct {
		LogSeq uint64 `json:"log_seq"`
	}
	if json.Unmarshal(d, &whole) != nil || json.Unmarshal(whole.Data, &probe) != nil || probe.LogSeq == 0 {
		return
	}
	f, ok := m[probe.LogSeq]
	if !ok {
		return
	}
	delete(m, probe.LogSeq)
	c.rep.Recorded++
	c.rep.Outputs++
	got, _ := canonical(whole.Data)
	if bytes.Equal(got, f.data) {
		c.rep.Matched++
		return
	}
	c.diff(Difference{Kind: DiffChanged, ID: o.Event.ID, Seq: probe.LogSeq, Subject: o.Subject, Replayed: got, Recorded: f.data,
		Detail: fmt.Sprintf("the export's %s data for action %s differs", o.Event.Kind, f.actionID)})
}

func (x *ExportChecks) finish(c *comparer) {
	for _, kind := range []struct {
		name string
		m    map[uint64]exportFact
	}{{"risk", x.risk}, {"gate", x.gate}} {
		seqs := make([]uint64, 0, len(kind.m))
		for seq := range kind.m {
			seqs = append(seqs, seq)
		}
		slices.Sort(seqs)
		for _, seq := range seqs {
			f := kind.m[seq]
			c.rep.Recorded++
			c.diff(Difference{Kind: DiffUnexpected, ID: f.actionID, Seq: seq, Recorded: f.data,
				Detail: fmt.Sprintf("the export has %s data for action %s; replay derived none", kind.name, f.actionID)})
		}
	}
}

// unsigned removes the signed note from an audit checkpoint's bytes,
// keeping tree_size and root_hash: what can be compared without the
// signing key (Config.UnsignedCheckpoints). Other bytes pass unchanged.
func unsigned(b []byte) []byte {
	d, err := events.DecodeDerived(b)
	if err != nil || d.Kind != events.KindAuditCheckpoint {
		return b
	}
	if m, ok := d.Data.(map[string]any); ok {
		delete(m, "note")
	}
	out, err := d.Marshal()
	if err != nil {
		return b
	}
	return out
}
