package events

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"
)

// CurrentVersion is the envelope schema version this package writes.
const CurrentVersion = 1

// MaxIDLen bounds an event id; it doubles as the JetStream Nats-Msg-Id.
const MaxIDLen = 128

// GlobalScope is the subject token used for events that belong to no
// conversation (a global config, an allowlist change).
const GlobalScope = "_"

// Event is the envelope every Vigil event travels in.
//
// Data is kept as a generic map so that fields this version does not know
// survive a decode/encode round trip; the typed views in data.go read from it.
// Extra holds unknown top-level envelope fields, kept for the same reason.
type Event struct {
	V            int
	ID           string
	Kind         Kind
	Conversation string
	Agent        string
	// Origin is the class of credential the event arrived with, stamped
	// by the ingest service from the subject it came in on (OriginAgent,
	// OriginApprover, OriginAdmin), overwriting whatever the producer
	// put there. Processors trust a claim (a person's name, a sandbox)
	// only from an origin the agent cannot send as. Empty (events stored
	// before origins existed, or tests) counts as OriginAgent.
	Origin Origin
	Time   time.Time
	Data   map[string]any
	// Redactions lists what the ingest service's redaction step removed:
	// the rule and the JSON path, never the secret.
	Redactions []Redaction
	Extra      map[string]any
}

// Redaction records one secret removed from an event before it was stored.
type Redaction struct {
	Rule  string `msgpack:"rule" json:"rule"`
	Path  string `msgpack:"path" json:"path"`
	Start int    `msgpack:"start" json:"start"`
	End   int    `msgpack:"end" json:"end"`
}

// Record is an event at its position in VIGIL_LOG.
type Record struct {
	// Seq is the VIGIL_LOG stream sequence: the total order every fold uses.
	Seq uint64
	// Subject is the log subject the event was stored under.
	Subject string
	// Raw is the event exactly as stored (msgpack). The audit chain hashes it.
	Raw   []byte
	Event Event
}

// LogValue keeps raw event content out of logs: only identity is logged.
func (e Event) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", e.ID),
		slog.String("kind", string(e.Kind)),
		slog.String("conversation", e.Conversation),
	)
}

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("events: invalid event")

// ValidationError names the field that is wrong and what to do.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("events: invalid event: field %q: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// ValidToken reports whether s can be one NATS subject token (conversation
// ids, agent names): non-empty, at most 128 bytes, letters, digits and - _ : @.
func ValidToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == ':' || c == '@':
		default:
			return false
		}
	}
	return true
}

// ValidID reports whether s can be an event id: 1 to MaxIDLen printable
// ASCII characters (no spaces or control characters), since the id doubles
// as the JetStream Nats-Msg-Id header. Vigil's producers use ULIDs; other
// producers' ids (OpenHands' UUIDs) fit as well.
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Origin is who sent an event, as proven by the subject (and so the
// credential) it arrived on.
type Origin string

// Origins, from least to most trusted.
const (
	OriginAgent Origin = "agent"
	// OriginRuntime is the agent's runtime (the sandbox host, the
	// orchestrator that starts agents): it alone, or an admin, may say
	// where a conversation runs.
	OriginRuntime  Origin = "runtime"
	OriginApprover Origin = "approver"
	OriginAdmin    Origin = "admin"
)

// Trusted reports whether o is a credential an agent does not hold.
func (o Origin) Trusted() bool { return o != "" && o != OriginAgent }

// MaxAgentLen bounds the agent name, in characters.
const MaxAgentLen = 256

// Validate checks an event about to be appended to the log: the envelope,
// and the data as its kind requires (required fields, field types, enums,
// and for a config event the whole configuration; see ValidateConfig).
// Fields the kind does not name are never checked: they are kept as they
// are. schemas/ states the same rules as JSON Schema, and its tests check
// that the two agree.
func (e *Event) Validate() error {
	if e.V != CurrentVersion {
		return &ValidationError{"v", fmt.Sprintf("version %d is not supported; send v=%d", e.V, CurrentVersion)}
	}
	if e.ID == "" {
		return &ValidationError{"id", "is empty; give every event a unique id (a ULID) so retries are stored once"}
	}
	if !ValidID(e.ID) {
		return &ValidationError{"id", fmt.Sprintf("must be 1-%d printable ASCII characters with no spaces (a ULID fits)", MaxIDLen)}
	}
	if !e.Kind.IsKnown() {
		return &ValidationError{"kind", fmt.Sprintf("%q is not a known kind; see schemas/ for the list", e.Kind)}
	}
	if !e.Kind.Loggable() {
		return &ValidationError{"kind", fmt.Sprintf("%q is derived by Vigil's processors and cannot be appended", e.Kind)}
	}
	if e.Conversation == "" {
		if e.Kind.IsAgent() {
			return &ValidationError{"conversation", "is empty; agent events belong to a conversation"}
		}
	} else if !ValidToken(e.Conversation) {
		return &ValidationError{"conversation", "must be 1-128 characters of letters, digits, - _ : @"}
	}
	if utf8.RuneCountInString(e.Agent) > MaxAgentLen {
		return &ValidationError{"agent", fmt.Sprintf("is longer than %d characters", MaxAgentLen)}
	}
	switch e.Origin {
	case "", OriginAgent, OriginRuntime, OriginApprover, OriginAdmin:
	default:
		return &ValidationError{"origin", "is set by the ingest service; leave it out"}
	}
	if e.Time.IsZero() {
		return &ValidationError{"time", "is missing; give an RFC 3339 time"}
	}
	if err := validateData(e.Kind, e.Data); err != nil {
		return err
	}
	if e.Kind == KindConfig {
		return e.validateConfig()
	}
	return nil
}

// SubjectToken is the conversation as a subject token: GlobalScope when empty.
func (e *Event) SubjectToken() string {
	if e.Conversation == "" {
		return GlobalScope
	}
	return e.Conversation
}

// Clone returns a deep copy of e, so a step that rewrites strings (redaction)
// never changes its caller's event.
func (e *Event) Clone() Event {
	c := *e
	c.Data = cloneMap(e.Data)
	c.Extra = cloneMap(e.Extra)
	if e.Redactions != nil {
		c.Redactions = append([]Redaction(nil), e.Redactions...)
	}
	return c
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cloneValue(x[i])
		}
		return out
	case []byte:
		return append([]byte(nil), x...)
	default:
		return v
	}
}
