package events

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Derived is an event a processor publishes to VIGIL_DERIVED. Its bytes are
// a pure function of the log prefix, so replay can compare them exactly.
type Derived struct {
	V  int    `msgpack:"v" json:"v"`
	ID string `msgpack:"id" json:"id"` // "<processor>:<log seq>[:n]", also the Nats-Msg-Id
	// Kind is one of the derived kinds.
	Kind         Kind   `msgpack:"kind" json:"kind"`
	Conversation string `msgpack:"conversation,omitempty" json:"conversation,omitempty"`
	// Seq is the log sequence of the event this was derived from.
	Seq uint64 `msgpack:"seq" json:"seq"`
	// Time is the time of the log event it derives from (folds read no clock).
	Time string `msgpack:"time" json:"time"`
	Data any    `msgpack:"data" json:"data"`
}

// Marshal encodes d for the wire. Struct fields are written in a fixed
// order and maps sorted, so equal values give equal bytes.
func (d *Derived) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("events: encode derived %s: %w", d.ID, err)
	}
	return buf.Bytes(), nil
}

// DecodeDerived decodes a derived event; Data comes back as a generic map.
func DecodeDerived(b []byte) (d Derived, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &DecodeError{Format: "msgpack", Reason: "malformed derived event"}
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	if err := dec.Decode(&d); err != nil {
		return Derived{}, &DecodeError{Format: "msgpack", Reason: trimErr(err)}
	}
	if d.Data != nil {
		n, err := normalize(d.Data, 0)
		if err != nil {
			return Derived{}, &DecodeError{Format: "msgpack", Reason: err.Error()}
		}
		d.Data = n
	}
	return d, nil
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
)

// GateRequested says an action waits for a person.
type GateRequested struct {
	ActionID string   `msgpack:"action_id" json:"action_id"`
	LogSeq   uint64   `msgpack:"log_seq" json:"log_seq"`
	Level    Risk     `msgpack:"level" json:"level"`
	Reasons  []Reason `msgpack:"reasons" json:"reasons"`
	Tool     string   `msgpack:"tool,omitempty" json:"tool,omitempty"`
	Command  string   `msgpack:"command,omitempty" json:"command,omitempty"`
	Shape    string   `msgpack:"shape,omitempty" json:"shape,omitempty"`
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
}

// Alert reports something an operator must see (a control kind on an agent
// subject, an approval for an unknown action, tampering).
type Alert struct {
	Severity string `msgpack:"severity" json:"severity"`
	Reason   string `msgpack:"reason" json:"reason"`
	EventID  string `msgpack:"event_id,omitempty" json:"event_id,omitempty"`
	LogSeq   uint64 `msgpack:"log_seq,omitempty" json:"log_seq,omitempty"`
	Subject  string `msgpack:"subject,omitempty" json:"subject,omitempty"`
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
}
