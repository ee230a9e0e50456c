package events

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Typed views of Event.Data, one per kind. They are read-only views: the
// generic map stays the source of truth, so fields a view does not name are
// never lost. Use DataAs to get one.

// ConversationStarted opens a conversation.
type ConversationStarted struct {
	// Backend is where tools run: local, ssh, docker, singularity, modal, daytona…
	Backend   string `msgpack:"backend,omitempty" json:"backend,omitempty"`
	Workspace string `msgpack:"workspace,omitempty" json:"workspace,omitempty"`
}

// Action is a tool call the agent wants to make.
type Action struct {
	Tool string         `msgpack:"tool" json:"tool"`
	Args map[string]any `msgpack:"args,omitempty" json:"args,omitempty"`
	// SecurityRisk is the agent's own hint, as sent; see Event.SecurityRisk.
	SecurityRisk any    `msgpack:"security_risk,omitempty" json:"security_risk,omitempty"`
	Thought      any    `msgpack:"thought,omitempty" json:"thought,omitempty"`
	Backend      string `msgpack:"backend,omitempty" json:"backend,omitempty"`
	Cwd          string `msgpack:"cwd,omitempty" json:"cwd,omitempty"`
}

// Observation is the result of an action.
type Observation struct {
	ActionID string `msgpack:"action_id" json:"action_id"`
	Content  any    `msgpack:"content,omitempty" json:"content,omitempty"`
	ExitCode *int64 `msgpack:"exit_code,omitempty" json:"exit_code,omitempty"`
}

// Message is a chat message in the conversation.
type Message struct {
	Role    string `msgpack:"role" json:"role"`
	Content any    `msgpack:"content" json:"content"`
}

// ContextLoaded records a context file the agent read (AGENTS.md, .cursorrules…).
type ContextLoaded struct {
	Path    string `msgpack:"path" json:"path"`
	Content string `msgpack:"content" json:"content"`
}

// Verdict is a person's answer to an approval request.
type Verdict string

// Verdicts.
const (
	VerdictOnce    Verdict = "once"
	VerdictSession Verdict = "session"
	VerdictAlways  Verdict = "always"
	VerdictDeny    Verdict = "deny"
)

// ApprovalDecision is a person's verdict on a pending action.
type ApprovalDecision struct {
	ActionID string  `msgpack:"action_id" json:"action_id"`
	Verdict  Verdict `msgpack:"verdict" json:"verdict"`
	Approver string  `msgpack:"approver,omitempty" json:"approver,omitempty"`
	Reason   string  `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// LogSeq and Digest, when set, bind the verdict to the exact stored
	// action (gate.requested's log_seq and digest): if the action waiting
	// under ActionID is not that one, the verdict decides nothing.
	LogSeq uint64 `msgpack:"log_seq,omitempty" json:"log_seq,omitempty"`
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
}

// Allowlist operations.
const (
	AllowlistAdd    = "add"
	AllowlistRevoke = "revoke"
)

// AllowlistChanged adds or revokes a global allowlist entry.
type AllowlistChanged struct {
	Op      string `msgpack:"op" json:"op"` // AllowlistAdd (needs Shape) or AllowlistRevoke
	EntryID string `msgpack:"entry_id" json:"entry_id"`
	// Shape is the normalised command shape the entry allows (see the gate).
	Shape    string `msgpack:"shape,omitempty" json:"shape,omitempty"`
	ActionID string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	By       string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason   string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// ApprovalExpired is appended by the timer when a pending action's approval
// window has passed; the gate then denies it (fail closed).
type ApprovalExpired struct {
	ActionID string `msgpack:"action_id" json:"action_id"`
	Reason   string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// AuditSeal is the data of an audit.seal event.
type AuditSeal struct {
	// By names who asked for the checkpoint (an operator, "serve").
	By     string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Pairing is the data of the pairing.* kinds.
type Pairing struct {
	User     string `msgpack:"user" json:"user"`
	Platform string `msgpack:"platform,omitempty" json:"platform,omitempty"`
	// CodeHash is a salted hash of the pairing code; the code itself is never stored.
	CodeHash string `msgpack:"code_hash,omitempty" json:"code_hash,omitempty"`
	By       string `msgpack:"by,omitempty" json:"by,omitempty"`
	// ClaimHash is a keyed hash of the secret a browser keeps to claim
	// its approved pairing (pairing.requested); Client a keyed hash of
	// the requester's address, for the per-client rate limit.
	ClaimHash string `msgpack:"claim_hash,omitempty" json:"claim_hash,omitempty"`
	Client    string `msgpack:"client,omitempty" json:"client,omitempty"`
	// Name is the name an approval gives the paired device.
	Name   string `msgpack:"name,omitempty" json:"name,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// TokenCreated is the data of a token.created event: a named HTTP API
// token of a role. The token itself is never in the log: Hash is its
// SHA-256 digest ("sha256:<hex>"), Hint its last four characters, which
// is all a listing shows.
type TokenCreated struct {
	TokenID string `msgpack:"token_id" json:"token_id"`
	Role    string `msgpack:"role" json:"role"`
	Name    string `msgpack:"name,omitempty" json:"name,omitempty"`
	Hash    string `msgpack:"hash" json:"hash"`
	Hint    string `msgpack:"hint,omitempty" json:"hint,omitempty"`
	By      string `msgpack:"by,omitempty" json:"by,omitempty"`
}

// TokenRevoked is the data of a token.revoked event.
type TokenRevoked struct {
	TokenID string `msgpack:"token_id" json:"token_id"`
	By      string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason  string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// DataAs decodes e.Data into the typed view T. Unknown fields are ignored
// by the view and stay in e.Data. The view is lenient about types where
// msgpack is (a float into an integer field); Validate is the strict check.
func DataAs[T any](e *Event) (T, error) {
	out, err := decodeInto[T](e.Data)
	if err != nil {
		return out, &ValidationError{Field: "data", Reason: fmt.Sprintf("does not fit a %s: %v", e.Kind, err)}
	}
	return out, nil
}

// decodeInto converts a generic value to T through msgpack.
func decodeInto[T any](v any) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed value")
		}
	}()
	b, err := msgpack.Marshal(v)
	if err != nil {
		return out, err
	}
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	if err := dec.Decode(&out); err != nil {
		return out, err
	}
	return out, nil
}

// ToData renders a typed value as a generic data map (for building events).
func ToData(v any) (map[string]any, error) {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	n, err := normalize(m, 0)
	if err != nil {
		return nil, err
	}
	return n.(map[string]any), nil
}

// Tool returns data.tool of an action, or "".
func (e *Event) Tool() string {
	s, _ := e.Data["tool"].(string)
	return s
}

// Args returns data.args of an action as a map (nil when absent).
func (e *Event) Args() map[string]any {
	m, _ := e.Data["args"].(map[string]any)
	return m
}

// StringField returns data[key] when it is a string.
func (e *Event) StringField(key string) string {
	s, _ := e.Data[key].(string)
	return s
}
