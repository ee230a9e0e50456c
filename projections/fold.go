package projections

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
)

// A projection folds applied records into the keys under its prefix, and
// only those: so it can be dropped and rebuilt alone. Folds never fail on
// what an event says (an entry they cannot read is skipped: the processors
// raise the alerts); they fail only when storage does.
type projection struct {
	name   string
	prefix string
	doc    string
	apply  func(t *txn, a *Applied) error
}

var allProjections = []projection{
	{"events", "e/", "events by id and by conversation", foldEvents},
	{"risk", "r/", "risk assessment of each action", foldRisk},
	{"gate", "g/", "pending approvals and gate decisions", foldGate},
	{"allowlist", "a/", "allowlist entries in force", foldAllowlist},
	{"pairing", "p/", "pairing state of each user", foldPairing},
	{"config", "c/", "config in force, and whether to ask agents for security_risk", foldConfig},
	{"tokens", "t/", "named HTTP API tokens (digests only) and their revocations", foldTokens},
	{"stats", "s", "counts per conversation and for the whole log", foldStats},
}

// Projection names one read model.
type Projection struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// Projections lists the read models, in fold order.
func Projections() []Projection {
	out := make([]Projection, len(allProjections))
	for i, p := range allProjections {
		out[i] = Projection{p.name, p.doc}
	}
	return out
}

func lookupProjections(names []string) ([]projection, error) {
	var out []projection
	seen := map[string]bool{}
	for _, n := range names {
		found := false
		for _, p := range allProjections {
			if p.name == n {
				found = true
				if !seen[n] {
					out = append(out, p)
					seen[n] = true
				}
			}
		}
		if !found {
			var all []string
			for _, p := range allProjections {
				all = append(all, p.name)
			}
			return nil, fmt.Errorf("projections: no projection %q (there are: %s)", n, strings.Join(all, ", "))
		}
	}
	return out, nil
}

// txn is one Apply's batch, with an overlay for the keys folds read back
// within the batch, and a cache of the stats being counted.
type txn struct {
	s     *Store
	b     *pebble.Batch
	over  map[string]overlay
	stats map[string]*Stats
}

type overlay struct {
	v   []byte
	del bool
}

// newTxn starts a batch; size is a guess of its bytes, so the batch
// buffer does not grow by copying.
func (s *Store) newTxn(size int) *txn {
	return &txn{s: s, b: s.db.NewBatchWithSize(size)}
}

func (t *txn) close() { t.b.Close() }

// get reads through the batch's own writes made with set/del.
func (t *txn) get(k []byte) ([]byte, bool, error) {
	if o, ok := t.over[string(k)]; ok {
		if o.del {
			return nil, false, nil
		}
		return o.v, true, nil
	}
	return t.s.get(k)
}

// put writes k blindly (no fold reads it back in the same batch).
// encode is msgpack.Marshal(v), byte for byte (the same pooled encoder,
// reset the same way), written into the store's scratch buffer. The bytes
// are valid until the next encode: they are for put, whose batch copies
// them, never for set, whose overlay keeps them.
func (t *txn) encode(v any) ([]byte, error) {
	buf := &t.s.scratch
	buf.Reset()
	enc := msgpack.GetEncoder()
	enc.Reset(buf)
	err := enc.Encode(v)
	msgpack.PutEncoder(enc)
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (t *txn) put(k, v []byte) error {
	if err := t.b.Set(k, v, nil); err != nil {
		return t.s.fail(err)
	}
	return nil
}

// set writes k so that get sees it within the batch.
func (t *txn) set(k, v []byte) error {
	if t.over == nil {
		t.over = map[string]overlay{}
	}
	t.over[string(k)] = overlay{v: v}
	return t.put(k, v)
}

func (t *txn) del(k []byte) error {
	if t.over == nil {
		t.over = map[string]overlay{}
	}
	t.over[string(k)] = overlay{del: true}
	if err := t.b.Delete(k, nil); err != nil {
		return t.s.fail(err)
	}
	return nil
}

// flush writes what the batch accumulated in caches.
func (t *txn) flush() error {
	for k, st := range t.stats {
		b, err := t.encode(st)
		if err != nil {
			return fmt.Errorf("projections: encode stats %s: %w", k, err)
		}
		if err := t.put([]byte(k), b); err != nil {
			return err
		}
	}
	return nil
}

// convOf is the conversation token of a record: its event's, or, for a
// record that did not decode, its log subject's last token.
func convOf(rec *events.Record) string {
	if rec.Event.Kind != "" {
		return rec.Event.SubjectToken()
	}
	if tok, ok := strings.CutPrefix(rec.Subject, events.LogPrefix); ok && tok != "" {
		return tok
	}
	return events.GlobalScope
}

func timeOf(rec *events.Record) string {
	if rec.Event.Time.IsZero() {
		return ""
	}
	return rec.Event.Time.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
}

// --- events -------------------------------------------------------------

func foldEvents(t *txn, a *Applied) error {
	rec := &a.Record
	v := make([]byte, 0, binary.MaxVarintLen64+len(rec.Subject)+len(rec.Raw))
	v = binary.AppendUvarint(v, uint64(len(rec.Subject)))
	v = append(v, rec.Subject...)
	v = append(v, rec.Raw...)
	if err := t.put(eventKey(rec.Seq), v); err != nil {
		return err
	}
	if err := t.put(convKey(convOf(rec), rec.Seq), nil); err != nil {
		return err
	}
	if id := rec.Event.ID; id != "" {
		// Every position of an id is indexed (a blind write: no read on
		// the apply path); lookups take the first, the one its producer
		// was told and a retry must be deduplicated to.
		return t.put(idKey(id, rec.Seq), nil)
	}
	return nil
}

// storedOutput is how the store keeps a risk or gate output: its data as
// the processor gave it (typed or generic: both encode to the same map
// keys) and where it comes from. It is not the wire encoding, which is
// canonical and costs several times more to produce.
type storedOutput struct {
	Conversation string `msgpack:"c,omitempty"`
	Seq          uint64 `msgpack:"s"`
	Time         string `msgpack:"t,omitempty"`
	Data         any    `msgpack:"d"`
}

// encodeOutput encodes d as the read models store it, into t's scratch
// buffer (for put).
func encodeOutput(t *txn, d *events.Derived) ([]byte, error) {
	return t.encode(&storedOutput{Conversation: d.Conversation, Seq: d.Seq, Time: d.Time, Data: d.Data})
}

// --- derived outputs ------------------------------------------------------

// derivedView is what the folds need from a risk or gate output, read
// without a round trip when the processor handed a typed value.
type derivedView struct {
	ActionID string         `msgpack:"action_id"`
	Level    events.Risk    `msgpack:"level"`
	Shape    string         `msgpack:"shape"`
	Outcome  events.Outcome `msgpack:"outcome"`
	By       string         `msgpack:"by"`
}

func viewOf(data any) (derivedView, bool) {
	switch d := data.(type) {
	case events.RiskAssessed:
		return derivedView{ActionID: d.ActionID, Level: d.Level}, true
	case *events.RiskAssessed:
		return derivedView{ActionID: d.ActionID, Level: d.Level}, true
	case events.GateRequested:
		return derivedView{ActionID: d.ActionID, Level: d.Level, Shape: d.Shape}, true
	case *events.GateRequested:
		return derivedView{ActionID: d.ActionID, Level: d.Level, Shape: d.Shape}, true
	case events.GateDecided:
		return derivedView{ActionID: d.ActionID, Level: d.Level, Outcome: d.Outcome, By: string(d.By)}, true
	case *events.GateDecided:
		return derivedView{ActionID: d.ActionID, Level: d.Level, Outcome: d.Outcome, By: string(d.By)}, true
	case map[string]any:
		str := func(k string) string { s, _ := d[k].(string); return s }
		v := derivedView{ActionID: str("action_id"), Level: events.Risk(str("level")), Shape: str("shape"),
			Outcome: events.Outcome(str("outcome")), By: str("by")}
		return v, v.ActionID != ""
	}
	var v derivedView
	b, err := msgpack.Marshal(data)
	if err != nil || msgpack.Unmarshal(b, &v) != nil {
		return derivedView{}, false
	}
	return v, v.ActionID != ""
}

func foldRisk(t *txn, a *Applied) error {
	for i := range a.Outputs {
		d := &a.Outputs[i].Event
		if d.Kind != events.KindRiskAssessed {
			continue
		}
		v, ok := viewOf(d.Data)
		if !ok {
			continue
		}
		b, err := encodeOutput(t, d)
		if err != nil {
			continue
		}
		if err := t.put(key("r/", v.ActionID), b); err != nil {
			return err
		}
	}
	return nil
}

func foldGate(t *txn, a *Applied) error {
	for i := range a.Outputs {
		d := &a.Outputs[i].Event
		if d.Kind != events.KindGateRequested && d.Kind != events.KindGateDecided {
			continue
		}
		v, ok := viewOf(d.Data)
		if !ok {
			continue
		}
		b, err := encodeOutput(t, d)
		if err != nil {
			continue
		}
		if d.Kind == events.KindGateRequested {
			if err := t.put(key("g/p/", v.ActionID), b); err != nil {
				return err
			}
			continue
		}
		if err := t.put(key("g/d/", v.ActionID), b); err != nil {
			return err
		}
		if err := t.b.Delete(key("g/p/", v.ActionID), nil); err != nil {
			return t.s.fail(err)
		}
	}
	return nil
}

// --- allowlist ------------------------------------------------------------

// AllowEntry is one global allowlist entry in force: actions of its shape
// that need a person are allowed in every conversation until it is revoked
// (deny and ask rules still win). The entries are exactly the gate's
// (processors/gate.Allowlist): allowlist.changed events, an add of an
// existing id and a revoke of a missing one ignored. An "always" verdict
// refers to such an entry; it does not make one.
type AllowEntry struct {
	ID       string `msgpack:"entry_id" json:"entry_id"`
	Shape    string `msgpack:"shape" json:"shape"`
	ActionID string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	By       string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason   string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Seq is the log sequence of the allowlist.changed event that added it.
	Seq  uint64 `msgpack:"seq" json:"seq"`
	Time string `msgpack:"time,omitempty" json:"time,omitempty"`
}

func foldAllowlist(t *txn, a *Applied) error {
	rec := &a.Record
	ev := &rec.Event
	if ev.Kind != events.KindAllowlistChanged {
		return nil
	}
	c, err := events.DataAs[events.AllowlistChanged](ev)
	if err != nil || c.EntryID == "" {
		return nil
	}
	k := key("a/e/", c.EntryID)
	switch c.Op {
	case events.AllowlistAdd:
		if c.Shape == "" {
			return nil
		}
		if _, exists, err := t.get(k); err != nil || exists {
			return err
		}
		by := c.By
		if by == "" {
			by = ev.Agent
		}
		e := AllowEntry{ID: c.EntryID, Shape: c.Shape, ActionID: c.ActionID, By: by, Reason: c.Reason, Seq: rec.Seq, Time: timeOf(rec)}
		b, err := msgpack.Marshal(&e)
		if err != nil {
			return err
		}
		return t.set(k, b)
	case events.AllowlistRevoke:
		return t.del(k)
	}
	return nil
}

// --- pairing --------------------------------------------------------------

// Pairing states.
const (
	PairingRequested = "requested"
	PairingApproved  = "approved"
	PairingRevoked   = "revoked"
)

// Pairing is the state of one user's pairing with a messaging platform.
type Pairing struct {
	User     string `msgpack:"user" json:"user"`
	Platform string `msgpack:"platform,omitempty" json:"platform,omitempty"`
	// State is requested, approved or revoked.
	State string `msgpack:"state" json:"state"`
	// CodeHash is the salted hash of the code while a request is open.
	CodeHash     string `msgpack:"code_hash,omitempty" json:"code_hash,omitempty"`
	By           string `msgpack:"by,omitempty" json:"by,omitempty"`
	RequestedSeq uint64 `msgpack:"requested_seq,omitempty" json:"requested_seq,omitempty"`
	ApprovedSeq  uint64 `msgpack:"approved_seq,omitempty" json:"approved_seq,omitempty"`
	RevokedSeq   uint64 `msgpack:"revoked_seq,omitempty" json:"revoked_seq,omitempty"`
	Updated      string `msgpack:"updated,omitempty" json:"updated,omitempty"`
}

func pairingKey(platform, user string) []byte { return key("p/", platform, "\x00", user) }

func foldPairing(t *txn, a *Applied) error {
	rec := &a.Record
	ev := &rec.Event
	var state string
	switch ev.Kind {
	case events.KindPairingRequested:
		state = PairingRequested
	case events.KindPairingApproved:
		state = PairingApproved
	case events.KindPairingRevoked:
		state = PairingRevoked
	default:
		return nil
	}
	p, err := events.DataAs[events.Pairing](ev)
	if err != nil || p.User == "" {
		return nil
	}
	k := pairingKey(p.Platform, p.User)
	var cur Pairing
	if b, found, err := t.get(k); err != nil {
		return err
	} else if found {
		_ = msgpack.Unmarshal(b, &cur)
	}
	cur.User, cur.Platform, cur.State, cur.Updated = p.User, p.Platform, state, timeOf(rec)
	if p.By != "" {
		cur.By = p.By
	}
	switch state {
	case PairingRequested:
		cur.CodeHash, cur.RequestedSeq = p.CodeHash, rec.Seq
	case PairingApproved:
		cur.CodeHash, cur.ApprovedSeq = "", rec.Seq
	case PairingRevoked:
		cur.CodeHash, cur.RevokedSeq = "", rec.Seq
	}
	b, err := msgpack.Marshal(&cur)
	if err != nil {
		return err
	}
	return t.set(k, b)
}

// --- config ---------------------------------------------------------------

// ConfigState is a config event the store keeps: the config and where it
// was appended.
type ConfigState struct {
	Seq    uint64        `msgpack:"seq" json:"seq"`
	Time   string        `msgpack:"time,omitempty" json:"time,omitempty"`
	Config events.Config `msgpack:"config" json:"config"`
}

// foldConfig keeps the latest global config and the latest config of each
// conversation, with processors.ConfigTracker's rules, so the answers agree
// with the gate's: a config event whose data does not decode is ignored
// (the ingest service refuses invalid configs before they reach the log).
func foldConfig(t *txn, a *Applied) error {
	rec := &a.Record
	ev := &rec.Event
	if ev.Kind != events.KindConfig {
		return nil
	}
	cfg, err := events.DataAs[events.Config](ev)
	if err != nil {
		return nil
	}
	k := []byte("c/g")
	if cfg.Scope == events.ScopeConversation {
		conv := cfg.Conversation
		if conv == "" {
			conv = ev.Conversation
		}
		k = key("c/c/", conv)
	}
	b, err := t.encode(&ConfigState{Seq: rec.Seq, Time: timeOf(rec), Config: cfg})
	if err != nil {
		return err
	}
	return t.put(k, b)
}

// --- stats ----------------------------------------------------------------

// Stats are the running counts of a conversation, or of the whole log.
type Stats struct {
	// Conversation is the conversation token ("_" for global events, "" for the whole log).
	Conversation string            `msgpack:"conversation" json:"conversation"`
	Events       uint64            `msgpack:"events" json:"events"`
	ByKind       map[string]uint64 `msgpack:"by_kind" json:"by_kind"`
	Actions      uint64            `msgpack:"actions" json:"actions"`
	// Redacted counts events from which the ingest service removed secrets.
	Redacted uint64 `msgpack:"redacted" json:"redacted"`
	// Findings counts the secrets removed, by redaction rule.
	Findings map[string]uint64 `msgpack:"findings,omitempty" json:"findings,omitempty"`
	// Undecodable counts log records that did not decode.
	Undecodable uint64 `msgpack:"undecodable,omitempty" json:"undecodable,omitempty"`
	// Risk counts risk assessments by level.
	Risk map[string]uint64 `msgpack:"risk,omitempty" json:"risk,omitempty"`
	// Requested counts actions that waited for a person.
	Requested uint64 `msgpack:"requested,omitempty" json:"requested,omitempty"`
	// Decided counts gate decisions by "<outcome>/<by>" (e.g. "deny/timeout").
	Decided   map[string]uint64 `msgpack:"decided,omitempty" json:"decided,omitempty"`
	Alerts    uint64            `msgpack:"alerts,omitempty" json:"alerts,omitempty"`
	FirstSeq  uint64            `msgpack:"first_seq" json:"first_seq"`
	LastSeq   uint64            `msgpack:"last_seq" json:"last_seq"`
	FirstTime string            `msgpack:"first_time,omitempty" json:"first_time,omitempty"`
	LastTime  string            `msgpack:"last_time,omitempty" json:"last_time,omitempty"`
}

func (t *txn) statsFor(k []byte, conv string) (*Stats, error) {
	if st, ok := t.stats[string(k)]; ok {
		return st, nil
	}
	st := &Stats{}
	if b, found, err := t.s.get(k); err != nil {
		return nil, err
	} else if found {
		if err := msgpack.Unmarshal(b, st); err != nil {
			st = &Stats{}
		}
	}
	st.Conversation = conv
	if t.stats == nil {
		t.stats = map[string]*Stats{}
	}
	t.stats[string(k)] = st
	return st, nil
}

func foldStats(t *txn, a *Applied) error {
	rec := &a.Record
	conv := convOf(rec)
	c, err := t.statsFor(key("s/", conv), conv)
	if err != nil {
		return err
	}
	all, err := t.statsFor(keyTotals, "")
	if err != nil {
		return err
	}
	kind := string(rec.Event.Kind)
	if kind == "" {
		kind = "undecodable"
	}
	tm := timeOf(rec)
	for _, st := range []*Stats{c, all} {
		st.Events++
		if st.ByKind == nil {
			st.ByKind = map[string]uint64{}
		}
		st.ByKind[kind]++
		switch {
		case rec.Event.Kind == events.KindAction:
			st.Actions++
		case rec.Event.Kind == "":
			st.Undecodable++
		}
		if len(rec.Event.Redactions) > 0 {
			st.Redacted++
			if st.Findings == nil {
				st.Findings = map[string]uint64{}
			}
			for _, r := range rec.Event.Redactions {
				st.Findings[r.Rule]++
			}
		}
		if st.FirstSeq == 0 {
			st.FirstSeq, st.FirstTime = rec.Seq, tm
		}
		st.LastSeq, st.LastTime = rec.Seq, tm
	}
	// Outputs count for the conversation they are about (a gate decision
	// released by a global allowlist change belongs to its action's).
	for i := range a.Outputs {
		o := &a.Outputs[i]
		d := &o.Event
		oc := conv
		if tok := subjectConv(o.Subject); tok != "" {
			oc = tok
		}
		sc := c
		if oc != conv {
			if sc, err = t.statsFor(key("s/", oc), oc); err != nil {
				return err
			}
		}
		for _, st := range []*Stats{sc, all} {
			switch d.Kind {
			case events.KindRiskAssessed:
				if v, ok := viewOf(d.Data); ok {
					if st.Risk == nil {
						st.Risk = map[string]uint64{}
					}
					st.Risk[string(v.Level)]++
				}
			case events.KindGateRequested:
				st.Requested++
			case events.KindGateDecided:
				if v, ok := viewOf(d.Data); ok {
					if st.Decided == nil {
						st.Decided = map[string]uint64{}
					}
					st.Decided[string(v.Outcome)+"/"+v.By]++
				}
			case events.KindAlert:
				st.Alerts++
			}
		}
	}
	return nil
}

// subjectConv is the conversation token of a risk or gate subject, or "".
func subjectConv(subject string) string {
	for _, p := range []string{events.RiskPrefix, events.GatePrefix} {
		if tok, ok := strings.CutPrefix(subject, p); ok {
			return tok
		}
	}
	return ""
}
