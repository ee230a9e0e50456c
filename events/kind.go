package events

// Kind names what an event is. The set is closed for validation purposes, but
// decoders never fail on an unknown kind: Validate reports it instead.
type Kind string

// Agent kinds: sent by agents on vigil.ingest.agent.<conversation>.
const (
	KindConversationStarted Kind = "conversation.started"
	KindAction              Kind = "action"
	KindObservation         Kind = "observation"
	KindMessage             Kind = "message"
	KindContextLoaded       Kind = "context.loaded"
)

// Control kinds: accepted only on vigil.ingest.control.<conversation>.
const (
	KindConfig           Kind = "config"
	KindApprovalDecision Kind = "approval.decision"
	KindAllowlistChanged Kind = "allowlist.changed"
	KindApprovalExpired  Kind = "approval.expired"
	KindPairingRequested Kind = "pairing.requested"
	KindPairingApproved  Kind = "pairing.approved"
	KindPairingRevoked   Kind = "pairing.revoked"
	// KindPairingDenied is an admin's denial of a pairing code;
	// KindPairingExpired is the pairing timer's expiry of a code, or
	// the end of a lockout (processors/pairing).
	KindPairingDenied  Kind = "pairing.denied"
	KindPairingExpired Kind = "pairing.expired"
	// KindAuditSeal asks the audit processor for a signed checkpoint now,
	// covering every record so far (appended by serve's sealer when the log
	// has moved, and by `vigil audit export`). Checkpoints otherwise come
	// every K records, which a quiet log may take long to reach.
	KindAuditSeal Kind = "audit.seal"
	// KindTokenCreated and KindTokenRevoked manage the HTTP API's named
	// tokens (`vigil token`): the log holds each token's SHA-256 digest,
	// never the token, so every node's read model knows which tokens are
	// in force and a revocation reaches the whole fleet.
	KindTokenCreated Kind = "token.created"
	KindTokenRevoked Kind = "token.revoked"
)

// Derived kinds: published by processors to VIGIL_DERIVED, never ingested.
const (
	KindRiskAssessed    Kind = "risk.assessed"
	KindGateRequested   Kind = "gate.requested"
	KindGateDecided     Kind = "gate.decided"
	KindAuditCheckpoint Kind = "audit.checkpoint"
	KindAlert           Kind = "alert"
	KindStats           Kind = "stats"
	KindDeadLetter      Kind = "dlq.record"
)

var agentKinds = map[Kind]bool{
	KindConversationStarted: true, KindAction: true, KindObservation: true,
	KindMessage: true, KindContextLoaded: true,
}

var controlKinds = map[Kind]bool{
	KindConfig: true, KindApprovalDecision: true, KindAllowlistChanged: true,
	KindApprovalExpired: true, KindPairingRequested: true,
	KindPairingApproved: true, KindPairingRevoked: true, KindAuditSeal: true,
	KindPairingDenied: true, KindPairingExpired: true,
	KindTokenCreated: true, KindTokenRevoked: true,
}

var derivedKinds = map[Kind]bool{
	KindRiskAssessed: true, KindGateRequested: true, KindGateDecided: true,
	KindAuditCheckpoint: true, KindAlert: true, KindStats: true, KindDeadLetter: true,
}

// IsAgent reports whether k may be sent by an agent.
func (k Kind) IsAgent() bool { return agentKinds[k] }

// IsControl reports whether k may be sent only by people and operators.
func (k Kind) IsControl() bool { return controlKinds[k] }

// IsVerdict reports whether k is a person's verdict (sent on the approval
// subjects by approvers): an approval decision or an allowlist change.
func (k Kind) IsVerdict() bool { return k == KindApprovalDecision || k == KindAllowlistChanged }

// IsDerived reports whether k is produced by a processor.
func (k Kind) IsDerived() bool { return derivedKinds[k] }

// IsKnown reports whether k is any kind this version of Vigil knows.
func (k Kind) IsKnown() bool { return k.IsAgent() || k.IsControl() || k.IsDerived() }

// Loggable reports whether k may be appended to VIGIL_LOG by the ingest service.
func (k Kind) Loggable() bool { return k.IsAgent() || k.IsControl() }

// AllKinds lists every known kind, agent kinds first, in a stable order.
func AllKinds() []Kind {
	return []Kind{
		KindConversationStarted, KindAction, KindObservation, KindMessage, KindContextLoaded,
		KindConfig, KindApprovalDecision, KindAllowlistChanged, KindApprovalExpired,
		KindPairingRequested, KindPairingApproved, KindPairingRevoked, KindAuditSeal,
		KindTokenCreated, KindTokenRevoked, KindPairingDenied, KindPairingExpired,
		KindRiskAssessed, KindGateRequested, KindGateDecided, KindAuditCheckpoint,
		KindAlert, KindStats, KindDeadLetter,
	}
}
