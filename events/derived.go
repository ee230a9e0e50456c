package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// Derived is an event a processor publishes to VIGIL_DERIVED. Its bytes are
// a pure function of the log prefix, so replay can compare them exactly.
//
// Data may hold a typed value (RiskAssessed, GateDecided …) or the generic
// map a decoder returns; both encode to the same bytes: those of Data
// rendered as a generic, normalised map, with every map's keys sorted, as
// Event does. Unknown top-level fields are not kept: derived events
// are Vigil's own, and a processor always writes the whole envelope.
type Derived struct {
	V  int    `msgpack:"v" json:"v"`
	ID string `msgpack:"id" json:"id"` // "<processor>:<log seq>[:n]", also the Nats-Msg-Id
	// Kind is one of the derived kinds.
	Kind         Kind   `msgpack:"kind" json:"kind"`
	Conversation string `msgpack:"conversation,omitempty" json:"conversation,omitempty"`
	// Seq is the log sequence of the event this was derived from (0 for
	// outputs that derive from no log event, such as a dlq.record).
	Seq uint64 `msgpack:"seq" json:"seq"`
	// Time is the time of the log event it derives from (folds read no clock).
	Time string `msgpack:"time" json:"time"`
	Data any    `msgpack:"data" json:"data"`
}

// toMap renders d as a generic map with canonical values.
func (d *Derived) toMap() (map[string]any, error) { return d.envelope(toGeneric) }

// envelope renders d as a generic map, its data rendered by generic.
func (d *Derived) envelope(generic func(any) (any, error)) (map[string]any, error) {
	data, err := generic(d.Data)
	if err != nil {
		return nil, fmt.Errorf("events: data of derived %s: %w", d.ID, err)
	}
	m := map[string]any{
		"v": int64(d.V), "id": d.ID, "kind": string(d.Kind),
		"seq": seqValue(d.Seq), "time": d.Time, "data": data,
	}
	if d.Conversation != "" {
		m["conversation"] = d.Conversation
	}
	return m, nil
}

// seqValue is a sequence in normal form (int64 when it fits, as normalize
// would make it).
func seqValue(seq uint64) any {
	if seq <= math.MaxInt64 {
		return int64(seq)
	}
	return seq
}

// toGeneric renders a typed value as the generic, normalised value a
// decoder would return for it (structs become maps).
func toGeneric(v any) (any, error) {
	switch v.(type) {
	case nil, map[string]any, []any, string, bool, int64, uint64, float64:
		return normalize(cloneValue(v), 0)
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeMsgpackValue(b, MaxDepth)
}

// toNormal is toGeneric followed by normalize: the generic value d.Data
// encodes as. A typed value is encoded by the msgpack library and read
// back by fastValue, the library's decoder and normalize when that cannot.
func toNormal(v any) (any, error) {
	switch v.(type) {
	case nil, map[string]any, []any, string, bool, int64, uint64, float64:
		return normalize(cloneValue(v), 0)
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	if checkMsgpack(b, MaxDepth) == nil {
		p := 0
		if n, ok := fastValue(b, "", &p, 0); ok && p == len(b) {
			return n, nil
		}
	}
	g, err := decodeMsgpackValue(b, MaxDepth)
	if err != nil {
		return nil, err
	}
	return normalize(g, 0)
}

// Marshal encodes d for the wire, canonically: the same derived event, typed
// or generic, always gives the same bytes. The processors' typed Data and
// Data already in normal form are written straight into canonical bytes
// (appendDerived); anything else takes marshalGeneric, to the same bytes.
func (d *Derived) Marshal() ([]byte, error) {
	if b, ok := appendDerived(make([]byte, 0, derivedSizeHint(d)), d); ok {
		return b, nil
	}
	return d.marshalGeneric()
}

// marshalGeneric is Marshal by way of a generic value: d rendered as a map
// with its Data normalised (toNormal), then written by encodeCanonical. It
// takes every Data, and is the reference appendDerived agrees with.
func (d *Derived) marshalGeneric() ([]byte, error) {
	m, err := d.envelope(toNormal)
	if err != nil {
		return nil, err
	}
	var n any = m
	if !isNormal(m, 0) {
		if n, err = normalize(m, 0); err != nil {
			return nil, fmt.Errorf("events: encode derived %s: %w", d.ID, err)
		}
	}
	b, err := encodeCanonical(n)
	if err != nil {
		return nil, fmt.Errorf("events: encode derived %s: %w", d.ID, err)
	}
	return b, nil
}

// MarshalMsgpack is Marshal, so msgpack.Marshal(d) is canonical too.
func (d Derived) MarshalMsgpack() ([]byte, error) { return d.Marshal() }

// UnmarshalMsgpack decodes with DecodeDerived.
func (d *Derived) UnmarshalMsgpack(b []byte) error {
	out, err := DecodeDerived(b)
	if err != nil {
		return err
	}
	*d = out
	return nil
}

// MarshalJSON encodes d as its JSON spelling, keys sorted.
func (d Derived) MarshalJSON() ([]byte, error) {
	m, err := d.toMap()
	if err != nil {
		return nil, err
	}
	return json.Marshal(jsonSafe(m))
}

// UnmarshalJSON decodes with DecodeDerivedJSON.
func (d *Derived) UnmarshalJSON(b []byte) error {
	out, err := DecodeDerivedJSON(b)
	if err != nil {
		return err
	}
	*d = out
	return nil
}

// DecodeDerived decodes a derived event; Data comes back as a generic map.
// A body that cannot be decoded is a *DecodeError, never a panic. A body
// of the usual kinds of values is decoded without the msgpack library
// (fastValue, as DecodeMsgpack does); every other takes the library's
// path, to the same result or the same refusal.
func DecodeDerived(b []byte) (Derived, error) {
	if checkMsgpack(b, MaxDepth) == nil {
		// The strings are substrings of one copy of the body: a derived
		// event's body is small and nearly all strings.
		p := 0
		if v, ok := fastValue(b, string(b), &p, 0); ok && p == len(b) {
			if m, ok := v.(map[string]any); ok {
				return derivedFromMap(m, "msgpack") // fastValue's values are normal
			}
		}
	}
	v, err := decodeMsgpackValue(b, MaxDepth)
	if err != nil {
		return Derived{}, err
	}
	return derivedFromValue(v, "msgpack")
}

// DecodeDerivedJSON decodes the JSON spelling of a derived event, with the
// same rules as DecodeDerived.
func DecodeDerivedJSON(b []byte) (Derived, error) {
	v, err := decodeJSONValue(b)
	if err != nil {
		return Derived{}, err
	}
	return derivedFromValue(v, "json")
}

func derivedFromValue(v any, format string) (Derived, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Derived{}, &DecodeError{Format: format, Reason: fmt.Sprintf("top level is %s, want a map", typeName(v))}
	}
	n, err := normalize(m, 0)
	if err != nil {
		return Derived{}, &DecodeError{Format: format, Reason: err.Error()}
	}
	return derivedFromMap(n.(map[string]any), format)
}

// derivedFromMap extracts a derived event from a normalised map.
func derivedFromMap(m map[string]any, format string) (Derived, error) {
	bad := func(field, want string) (Derived, error) {
		return Derived{}, &DecodeError{Format: format, Reason: fmt.Sprintf("field %q must be %s", field, want)}
	}
	var d Derived
	if v, present := m["v"]; present {
		n, ok := v.(int64)
		if !ok || n < 0 || n > maxVersion {
			return bad("v", "a small non-negative integer")
		}
		d.V = int(n)
	}
	var kind string
	var ok bool
	if d.ID, ok = optString(m, "id"); !ok {
		return bad("id", "a string")
	}
	if kind, ok = optString(m, "kind"); !ok {
		return bad("kind", "a string")
	}
	if d.Conversation, ok = optString(m, "conversation"); !ok {
		return bad("conversation", "a string")
	}
	if d.Time, ok = optString(m, "time"); !ok {
		return bad("time", "a string")
	}
	d.Kind = Kind(kind)
	switch x, present := m["seq"]; x := x.(type) {
	case nil:
		if present {
			return bad("seq", "a non-negative integer")
		}
	case int64:
		if x < 0 {
			return bad("seq", "a non-negative integer")
		}
		d.Seq = uint64(x)
	case uint64:
		d.Seq = x
	default:
		return bad("seq", "a non-negative integer")
	}
	d.Data = m["data"]
	return d, nil
}

// Validate checks a derived event: its envelope and its data, as its kind
// requires (see schemas/derived.json and the per-kind schemas).
func (d *Derived) Validate() error {
	if d.V != CurrentVersion {
		return &ValidationError{"v", fmt.Sprintf("version %d is not supported; write v=%d", d.V, CurrentVersion)}
	}
	if !ValidID(d.ID) {
		return &ValidationError{"id", fmt.Sprintf("must be 1-%d printable ASCII characters with no spaces", MaxIDLen)}
	}
	if !d.Kind.IsDerived() {
		return &ValidationError{"kind", fmt.Sprintf("%q is not a derived kind", d.Kind)}
	}
	if d.Conversation != "" && !ValidToken(d.Conversation) {
		return &ValidationError{"conversation", "must be 1-128 characters of letters, digits, - _ : @"}
	}
	if _, err := parseTime(d.Time); err != nil {
		return &ValidationError{"time", "must be the RFC 3339 time of the log event it derives from"}
	}
	data, err := toGeneric(d.Data)
	if err != nil {
		return &ValidationError{"data", fmt.Sprintf("cannot be encoded: %v", err)}
	}
	m, ok := data.(map[string]any)
	if !ok {
		return &ValidationError{"data", fmt.Sprintf("is %s; it must be an object", typeName(data))}
	}
	return validateData(d.Kind, m)
}

// DerivedDataAs decodes d.Data into the typed view T (RiskAssessed,
// GateDecided …).
func DerivedDataAs[T any](d *Derived) (T, error) {
	out, err := decodeInto[T](d.Data)
	if err != nil {
		return out, &ValidationError{Field: "data", Reason: fmt.Sprintf("does not fit a %s: %v", d.Kind, err)}
	}
	return out, nil
}

// Reason explains one contribution to a risk level.
type Reason struct {
	Analyzer string `msgpack:"analyzer" json:"analyzer"`
	Rule     string `msgpack:"rule" json:"rule"`
	Detail   string `msgpack:"detail,omitempty" json:"detail,omitempty"`
	Level    Risk   `msgpack:"level,omitempty" json:"level,omitempty"`
	// Span is [start, end) in bytes of the analysed text, when it has one.
	Span []int `msgpack:"span,omitempty" json:"span,omitempty"`
}

// RiskAssessed is the risk processor's output for one action.
type RiskAssessed struct {
	ActionID      string   `msgpack:"action_id" json:"action_id"`
	LogSeq        uint64   `msgpack:"log_seq" json:"log_seq"`
	ConfigVersion int64    `msgpack:"config_version" json:"config_version"`
	Level         Risk     `msgpack:"level" json:"level"`
	Reasons       []Reason `msgpack:"reasons" json:"reasons"`
}

// Outcome is a gate decision.
type Outcome string

// Outcomes.
const (
	OutcomeAllow Outcome = "allow"
	OutcomeDeny  Outcome = "deny"
)

// DecidedBy names what made a gate decision.
type DecidedBy string

// Deciders.
const (
	ByRule      DecidedBy = "rule"
	ByHuman     DecidedBy = "human"
	ByAllowlist DecidedBy = "allowlist"
	BySandbox   DecidedBy = "sandbox"
	ByTimeout   DecidedBy = "timeout"
	ByMode      DecidedBy = "mode"
	BySession   DecidedBy = "session"
	// ByClient: the agent's own client decided, as the agent reports it (a
	// hand-off to the client's prompt followed by the tool running, or a
	// refusal in that prompt). Never a person's decision in Vigil's sense:
	// nothing an agent credential sends is.
	ByClient DecidedBy = "client"
)

// Digest is "sha256:<hex>" of b: how gate.requested and gate.decided name
// the exact stored bytes of an action (events.Record.Raw), and how a
// dead letter names a refused body.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:])
}

// GateRequested says an action waits for a person.
type GateRequested struct {
	ActionID string   `msgpack:"action_id" json:"action_id"`
	LogSeq   uint64   `msgpack:"log_seq" json:"log_seq"`
	Level    Risk     `msgpack:"level" json:"level"`
	Reasons  []Reason `msgpack:"reasons" json:"reasons"`
	Tool     string   `msgpack:"tool,omitempty" json:"tool,omitempty"`
	Command  string   `msgpack:"command,omitempty" json:"command,omitempty"`
	Shape    string   `msgpack:"shape,omitempty" json:"shape,omitempty"`
	// Timeout is the config's approval_timeout (a Go duration): the expiry
	// timer denies the action that long after this request was stored.
	Timeout       string `msgpack:"timeout,omitempty" json:"timeout,omitempty"`
	ConfigVersion int64  `msgpack:"config_version,omitempty" json:"config_version,omitempty"`
	Agent         string `msgpack:"agent,omitempty" json:"agent,omitempty"`
	// Backend is where the conversation's tools run, as far as the gate
	// trusts it: a conversation.started from the runtime or an admin, else
	// "local".
	Backend string `msgpack:"backend,omitempty" json:"backend,omitempty"`
	// BackendClaimed is the backend the agent's own conversation.started
	// claimed, when the gate did not take it (an agent cannot put itself
	// in a sandbox).
	BackendClaimed string `msgpack:"backend_claimed,omitempty" json:"backend_claimed,omitempty"`
	// Digest is "sha256:<hex>" of the action as stored (see Digest): an
	// approval may name it to approve exactly this action.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
}

// GateDecided is the final decision on an action.
type GateDecided struct {
	ActionID string    `msgpack:"action_id" json:"action_id"`
	LogSeq   uint64    `msgpack:"log_seq" json:"log_seq"`
	Outcome  Outcome   `msgpack:"outcome" json:"outcome"`
	By       DecidedBy `msgpack:"by" json:"by"`
	Level    Risk      `msgpack:"level" json:"level"`
	Reasons  []Reason  `msgpack:"reasons" json:"reasons"`
	Approver string    `msgpack:"approver,omitempty" json:"approver,omitempty"`
	Reason   string    `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// DecisionSeq is the log sequence of the event that decided (the action
	// itself, an approval, an expiry).
	DecisionSeq uint64 `msgpack:"decision_seq" json:"decision_seq"`
	// Shape is the normalised command shape session and allowlist approvals match.
	Shape         string `msgpack:"shape,omitempty" json:"shape,omitempty"`
	ConfigVersion int64  `msgpack:"config_version,omitempty" json:"config_version,omitempty"`
	// Verdict is the approver's verdict when By is human (once, session,
	// always, deny), or what the client reported when By is client (once,
	// deny); EntryID the allowlist entry that allowed (By
	// allowlist) or that an always verdict created.
	Verdict Verdict `msgpack:"verdict,omitempty" json:"verdict,omitempty"`
	EntryID string  `msgpack:"entry_id,omitempty" json:"entry_id,omitempty"`
	// Would, in mode analyze-only, is what mode risky would have done:
	// "ask" or "deny" ("" when it would have allowed).
	Would string `msgpack:"would,omitempty" json:"would,omitempty"`
	// AskSecurityRisk says whether the config in force now wants agents to
	// ask their LLM for security_risk (see Config.AsksSecurityRisk), so a
	// runtime follows a mid-conversation switch at its next action.
	AskSecurityRisk bool `msgpack:"ask_security_risk,omitempty" json:"ask_security_risk,omitempty"`
	// Digest is "sha256:<hex>" of the action as stored (the record at
	// LogSeq): the decision is about exactly those bytes.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
}

// Severity is how urgently an alert needs an operator. It is stored as its
// string; an alert read from a log may carry one this build does not name.
type Severity string

// The severities Vigil emits.
const (
	// SeverityMedium: worth a look (a verdict or pairing request that
	// could not apply).
	SeverityMedium Severity = "medium"
	// SeverityHigh: an attack on a boundary was refused, or a record
	// could not be judged (a control kind on an agent subject, a poison
	// message, a rule that failed).
	SeverityHigh Severity = "high"
	// SeverityCritical: the log or the derived stream can no longer be
	// trusted as it is (a gap, an edit, a deleted or replaced stream).
	SeverityCritical Severity = "critical"
)

// Alert reports something an operator must see (a control kind on an agent
// subject, an approval for an unknown action, tampering).
type Alert struct {
	Severity Severity `msgpack:"severity" json:"severity"`
	Reason   string   `msgpack:"reason" json:"reason"`
	EventID  string   `msgpack:"event_id,omitempty" json:"event_id,omitempty"`
	LogSeq   uint64   `msgpack:"log_seq,omitempty" json:"log_seq,omitempty"`
	Subject  string   `msgpack:"subject,omitempty" json:"subject,omitempty"`
}

// DeadLetter records a refused body: the reason and a digest, never the body.
type DeadLetter struct {
	Reason  string `msgpack:"reason" json:"reason"`
	Subject string `msgpack:"subject" json:"subject"`
	// Digest is "sha256:<hex>" of the refused body. The body itself is never kept.
	Digest  string `msgpack:"digest" json:"digest"`
	Size    int    `msgpack:"size" json:"size"`
	EventID string `msgpack:"event_id,omitempty" json:"event_id,omitempty"`
	Time    string `msgpack:"time" json:"time"`
}

// AuditCheckpoint is a signed statement of the log's tree head.
type AuditCheckpoint struct {
	TreeSize uint64 `msgpack:"tree_size" json:"tree_size"`
	RootHash string `msgpack:"root_hash" json:"root_hash"` // base64
	// Note is the checkpoint in signed-note text form.
	Note string `msgpack:"note" json:"note"`
	// The fields below let `vigil audit verify` name an altered record by
	// its sequence (see processors/audit and docs/audit.md). Leaves and
	// Prefix are authenticated by the signed root: Prefix extended by
	// Leaves must give RootHash.

	// Interval is the processor's checkpoint interval, in records.
	Interval uint64 `msgpack:"interval,omitempty" json:"interval,omitempty"`
	// FirstSeq is the first log sequence whose leaf hash is in Leaves; the
	// window is FirstSeq..TreeSize.
	FirstSeq uint64 `msgpack:"first_seq,omitempty" json:"first_seq,omitempty"`
	// Leaves are the RFC 6962 leaf hashes of log records FirstSeq..TreeSize,
	// 32 bytes each, concatenated, in standard base64.
	Leaves string `msgpack:"leaves,omitempty" json:"leaves,omitempty"`
	// Prefix is the compact range of the tree of size FirstSeq-1 (the roots
	// of its perfect subtrees, left to right), 32 bytes each, concatenated,
	// in standard base64.
	Prefix string `msgpack:"prefix,omitempty" json:"prefix,omitempty"`
}

// Stats are the running totals of one conversation, as the stats
// processor publishes them on vigil.stats.<conversation>.
type Stats struct {
	Conversation string            `msgpack:"conversation" json:"conversation"`
	Events       uint64            `msgpack:"events" json:"events"`
	ByKind       map[string]uint64 `msgpack:"by_kind" json:"by_kind"`
	Actions      uint64            `msgpack:"actions" json:"actions"`
	Redacted     uint64            `msgpack:"redacted" json:"redacted"`
	FirstSeq     uint64            `msgpack:"first_seq" json:"first_seq"`
	LastSeq      uint64            `msgpack:"last_seq" json:"last_seq"`
}
