package httpapi

import (
	"net/http"

	"github.com/vigil-dev/vigil/events"
)

// maxEventsPage bounds one page of GET /v1/conversations/{conversation}/events.
const maxEventsPage = 1000

// conversationEvent is one event of a conversation, as stored (redacted),
// with the gate's view of it when it is an action.
type conversationEvent struct {
	Seq   uint64       `json:"seq"`
	Event events.Event `json:"event"`
	// Risk is the risk assessment of an action, once made.
	Risk *events.RiskAssessed `json:"risk,omitempty"`
	// Decision is the gate's final decision on an action, once made.
	Decision *events.GateDecided `json:"decision,omitempty"`
	// Pending is true while the action waits for a person.
	Pending bool `json:"pending,omitempty"`
	// Credential is the class of credential the event arrived with, as
	// the log stamped it (agent for events stored before origins).
	Credential events.Origin `json:"credential"`
	// Claim marks a message whose role is only its sender's claim ("agent-sent,
	// claims role user"): never the user's words.
	Claim string `json:"claim,omitempty"`
}

type conversationResponse struct {
	Conversation string              `json:"conversation"`
	Events       []conversationEvent `json:"events"`
	// Next is the ?from= of the next page, when this one is full.
	Next uint64 `json:"next,omitempty"`
}

// conversationEvents pages through a conversation's events in log order
// (?from= a log seq, ?limit= at most 1000), each action with its risk and
// decision.
func (s *Server) conversationEvents(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	conv := r.PathValue("conversation")
	if !validConversation(conv) {
		return badRequest("conversation", "%q is not a conversation id (1-128 letters, digits, - _ : @; _ for global events)", conv)
	}
	from, e := queryUint(r, "from", 0)
	if e != nil {
		return e
	}
	limit, e := queryUint(r, "limit", 100)
	if e != nil {
		return e
	}
	if limit == 0 || limit > maxEventsPage {
		return badRequest("limit", "want 1 to %d, got %d", maxEventsPage, limit)
	}
	if s.cfg.Reads == nil {
		return unavailable("this node keeps no read models; use vigil tail --conversation")
	}
	recs, err := s.cfg.Reads.ByConversation(conv, from, int(limit))
	if err != nil {
		return readError(err)
	}
	var waiting map[string]uint64
	out := conversationResponse{Conversation: conv, Events: make([]conversationEvent, 0, len(recs))}
	for _, rec := range recs {
		ce := conversationEvent{Seq: rec.Seq, Event: rec.Event, Credential: credentialOf(&rec.Event)}
		if rec.Event.Kind == events.KindMessage {
			ce.Claim = roleClaim(&rec.Event)
		}
		if rec.Event.Kind == events.KindAction {
			id := rec.Event.ID
			if ra, err := s.cfg.Reads.RiskOf(id); err == nil && ra.LogSeq == rec.Seq {
				ce.Risk = &ra
			}
			if gd, err := s.cfg.Reads.Decision(id); err == nil && gd.LogSeq == rec.Seq {
				ce.Decision = &gd
			} else {
				if waiting == nil {
					waiting = map[string]uint64{}
					if pas, err := s.cfg.Reads.Pending(); err == nil {
						for _, pa := range pas {
							waiting[pa.Request.ActionID] = pa.Request.LogSeq
						}
					}
				}
				ce.Pending = waiting[id] == rec.Seq
			}
		}
		out.Events = append(out.Events, ce)
	}
	if uint64(len(recs)) == limit {
		out.Next = recs[len(recs)-1].Seq + 1
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
