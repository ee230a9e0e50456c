package events

// Subjects and streams of DESIGN.md, "Streams and subjects".
const (
	StreamLog     = "VIGIL_LOG"
	StreamDerived = "VIGIL_DERIVED"
	StreamDLQ     = "VIGIL_DLQ"

	IngestAgentPrefix = "vigil.ingest.agent."
	// IngestRuntimePrefix is where an agent's runtime (the sandbox host, the
	// orchestrator) sends agent kinds with its own credential: the only
	// place a conversation's sandbox backend is believed from.
	IngestRuntimePrefix = "vigil.ingest.runtime."
	// IngestApprovalPrefix is where people send verdicts (approval.decision,
	// allowlist.changed): approver or admin credentials.
	IngestApprovalPrefix = "vigil.ingest.approval."
	// IngestControlPrefix is for operators and the node itself: configs,
	// expiries, seals, pairing (admin or service credentials).
	IngestControlPrefix = "vigil.ingest.control."
	LogPrefix           = "vigil.log."
	RiskPrefix          = "vigil.risk."
	GatePrefix          = "vigil.gate."
	StatsPrefix         = "vigil.stats."

	SubjectCheckpoint = "vigil.audit.checkpoint"
	// SubjectConfigStored is a core NATS subject (no stream) on which an
	// ingest instance announces each config event it stored (the stored
	// bytes), so every instance's redaction follows the config in force.
	// Only the service and admin roles may publish on it.
	SubjectConfigStored = "vigil.config.stored"
	SubjectAlert        = "vigil.alert"
	SubjectDLQ          = "vigil.dlq"
)

// LogSubject is the VIGIL_LOG subject of a conversation ("" means global).
func LogSubject(conversation string) string { return LogPrefix + token(conversation) }

// IngestAgentSubject is where agents send events for a conversation.
func IngestAgentSubject(conversation string) string {
	return IngestAgentPrefix + token(conversation)
}

// IngestControlSubject is where operators send control events.
func IngestControlSubject(conversation string) string {
	return IngestControlPrefix + token(conversation)
}

// IngestApprovalSubject is where people send their verdicts.
func IngestApprovalSubject(conversation string) string {
	return IngestApprovalPrefix + token(conversation)
}

// IngestRuntimeSubject is where an agent's runtime sends events.
func IngestRuntimeSubject(conversation string) string {
	return IngestRuntimePrefix + token(conversation)
}

// IngestSubjectFor is the ingest subject an event of kind k is sent on by
// the least privileged role that may send it: agent kinds on the agent
// subject, verdicts on the approval subject, the rest on the control
// subject.
func IngestSubjectFor(k Kind, conversation string) string {
	switch {
	case !k.IsControl():
		return IngestAgentSubject(conversation)
	case k.IsVerdict():
		return IngestApprovalSubject(conversation)
	}
	return IngestControlSubject(conversation)
}

// RiskSubject is where risk assessments of a conversation are published.
func RiskSubject(conversation string) string { return RiskPrefix + token(conversation) }

// GateSubject is where gate requests and decisions of a conversation go.
func GateSubject(conversation string) string { return GatePrefix + token(conversation) }

func token(conversation string) string {
	if conversation == "" {
		return GlobalScope
	}
	return conversation
}
