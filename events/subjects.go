package events

// Subjects and streams of DESIGN.md, "Streams and subjects".
const (
	StreamLog     = "VIGIL_LOG"
	StreamDerived = "VIGIL_DERIVED"
	StreamDLQ     = "VIGIL_DLQ"

	IngestAgentPrefix   = "vigil.ingest.agent."
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

// IngestControlSubject is where people and operators send control events.
func IngestControlSubject(conversation string) string {
	return IngestControlPrefix + token(conversation)
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
