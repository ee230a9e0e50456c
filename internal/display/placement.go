package display

import (
	"fmt"

	"github.com/vigil-dev/vigil/events"
)

// Placement says whether a conversation's id, agent and backend were
// attested by a credential the agent does not hold: a conversation.started
// the runtime (or an admin) sent. Otherwise they are what the agent
// claims, and an agent can claim any conversation id and agent name, so
// its action may sit inside another session's real history.
type Placement struct {
	Conversation string `json:"conversation"`
	Agent        string `json:"agent,omitempty"`
	Backend      string `json:"backend,omitempty"`
	// Attested is true when a conversation.started from the runtime or an
	// admin placed the conversation; AttestedBy is that credential and
	// StartedSeq its log seq.
	Attested   bool          `json:"attested"`
	AttestedBy events.Origin `json:"attested_by,omitempty"`
	StartedSeq uint64        `json:"started_seq,omitempty"`
	// AttestedAgent is the agent the runtime named; AgentMatches whether
	// the action's (claimed) agent is that one.
	AttestedAgent string `json:"attested_agent,omitempty"`
	AgentMatches  bool   `json:"agent_matches"`
	// BackendClaimed is the backend the agent's own conversation.started
	// claimed, when no trusted credential placed it.
	BackendClaimed string `json:"backend_claimed,omitempty"`
	// Note says it in a sentence (Describe; agent text in it is not
	// escaped).
	Note string `json:"note"`
}

// PlacementOf is the placement of ev, stored at log seq, given the first
// records of its conversation in log order (recs; records at or after seq
// are ignored): the first conversation.started a trusted credential sent
// attests it.
func PlacementOf(ev *events.Event, seq uint64, recs []events.Record) Placement {
	p := Placement{Conversation: ev.Conversation, Agent: ev.Agent}
	for _, rec := range recs {
		if rec.Seq >= seq {
			break
		}
		if rec.Event.Kind != events.KindConversationStarted {
			continue
		}
		o := rec.Event.Origin
		if o.Trusted() && !p.Attested {
			p.Attested, p.AttestedBy, p.StartedSeq = true, o, rec.Seq
			p.AttestedAgent, p.Backend = rec.Event.Agent, rec.Event.StringField("backend")
		} else if !o.Trusted() && p.BackendClaimed == "" {
			p.BackendClaimed = rec.Event.StringField("backend")
		}
	}
	p.AgentMatches = p.Attested && (p.AttestedAgent == "" || p.AttestedAgent == ev.Agent)
	if !p.Attested {
		p.Backend = "local"
	}
	p.Note = p.Describe(func(s string) string { return s })
	return p
}

// Describe says the placement in a sentence, each credential and
// agent-written name passed through field (Escape or Field for a terminal,
// the identity for JSON): the one wording of Note and of the CLI's
// placement line.
func (p Placement) Describe(field func(string) string) string {
	switch {
	case !p.Attested:
		return "not attested: no runtime credential started this conversation; its id, agent and backend are the agent's claims"
	case !p.AgentMatches:
		return fmt.Sprintf("NOT this agent: the %s credential started this conversation (log seq %d) for agent %s; this action claims agent %s",
			field(string(p.AttestedBy)), p.StartedSeq, field(p.AttestedAgent), field(p.Agent))
	default:
		return fmt.Sprintf("attested: the %s credential started this conversation (log seq %d) for agent %s, backend %s",
			field(string(p.AttestedBy)), p.StartedSeq, field(p.AttestedAgent), field(p.Backend))
	}
}
