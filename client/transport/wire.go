package transport

import (
	"time"

	"github.com/vigil-dev/vigil/events"
)

// Content types a producer may set in the HeaderContentType header of an
// ingest request (the reply is an events.IngestReply).
const (
	ContentTypeMsgpack = "application/msgpack"
	ContentTypeJSON    = "application/json"
	ContentTypeJSONL   = "application/jsonl"
	HeaderContentType  = "Content-Type"
)

// HeaderWaitDecision, on a request holding one action, asks the service
// to answer with the gate's decision too: after the stored reply, it
// sends on the same reply inbox a WaitReply with the gate's request (if
// the action waits for a person) and then one with the decision, or one
// with WaitError when the wait (the header's value, a Go duration, at
// most MaxDecisionWait) runs out. This is how agents learn decisions: they
// may not subscribe to the gate subjects, which carry every
// conversation's decisions.
const HeaderWaitDecision = "Vigil-Wait-Decision"

// MaxDecisionWait bounds one wait for a decision.
const MaxDecisionWait = 10 * time.Minute

// WaitReply is a message after the stored reply of a request that asked
// for its decision.
type WaitReply struct {
	Requested *events.GateRequested `json:"requested,omitempty"`
	Decided   *events.GateDecided   `json:"decided,omitempty"`
	// WaitError says why no decision came (the wait ran out, too many
	// waits): the caller must treat the action as denied.
	WaitError string `json:"wait_error,omitempty"`
}
