package httpapi

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
)

// The page's queue: GET /ui/pending pages the actions that wait for a
// person, so that a page with thousands waiting renders one page of
// cards, and loads each card's detail (GET /ui/actions/{id}) only when it
// is looked at. Each card carries the whole command as stored (the gate's
// summary is cut at 400 bytes and its whitespace collapsed: the page must
// never show a cut command as if it were whole), who sent the action (the
// credential the log stamped), and the level and rules.

// queuePageMax bounds one page of GET /ui/pending.
const queuePageMax = 200

// maxCommandText bounds the command text a card carries. Past it the
// card says how many bytes it does not carry, and the detail's arguments
// (the stored event) hold it all.
const maxCommandText = 256 << 10

// queueCard is one pending action as the page shows it.
type queueCard struct {
	client.PendingAction
	// Command is the whole command as stored (not the gate's summary),
	// up to maxCommandText bytes; CommandBytes is its whole length, and
	// CommandCut how many bytes past maxCommandText are not carried.
	CommandBytes int `json:"command_bytes"`
	CommandCut   int `json:"command_cut,omitempty"`
	// Credential is the class of credential the action arrived with
	// (events.Origin; agent when the log has none).
	Credential events.Origin `json:"credential"`
}

// conversationCount is how many actions wait in one conversation.
type conversationCount struct {
	Conversation string      `json:"conversation"`
	Count        int         `json:"count"`
	Level        events.Risk `json:"level"`
}

type queueResponse struct {
	// Total is how many actions wait (in ?conversation=, when given), of
	// which Newer are past ?before= (the page's anchor: they arrived
	// after it loaded and are not paged until it moves the anchor).
	Total  int         `json:"total"`
	Newer  int         `json:"newer"`
	Offset int         `json:"offset"`
	Order  string      `json:"order"`
	Anchor uint64      `json:"anchor"`
	Cards  []queueCard `json:"pending"`
	// Conversations are the conversations with actions waiting, most first.
	Conversations []conversationCount `json:"conversations"`
}

// queue answers one page of the pending actions: ?order=newest (default),
// oldest or conversation (grouped by conversation, oldest first within
// each); ?offset= and ?limit= (default 50, at most 200); ?before= a log
// seq: only actions at or before it are paged (newest order keeps its
// pages stable under a flood; Newer counts the rest); ?conversation=.
func (s *Server) queue(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	q := r.URL.Query()
	order := q.Get("order")
	switch order {
	case "":
		order = "newest"
	case "newest", "oldest", "conversation":
	default:
		return badRequest("order", "want newest, oldest or conversation, got %q", clip(order, 64))
	}
	conv := q.Get("conversation")
	if conv != "" && !validConversation(conv) {
		return badRequest("conversation", "%q is not a conversation id (1-128 letters, digits, - _ : @)", clip(conv, 200))
	}
	offset, e := queryUint(r, "offset", 0)
	if e != nil {
		return e
	}
	limit, e := queryUint(r, "limit", 50)
	if e != nil {
		return e
	}
	if limit == 0 || limit > queuePageMax {
		return badRequest("limit", "want 1 to %d, got %d", queuePageMax, limit)
	}
	before, e := queryUint(r, "before", 0)
	if e != nil {
		return e
	}
	all, e := s.pendingList(r, who, "")
	if e != nil {
		return e
	}
	out := queueResponse{Order: order, Offset: int(offset), Cards: []queueCard{}, Conversations: []conversationCount{}}
	byConv := map[string]*conversationCount{}
	var ps []client.PendingAction
	for _, p := range all {
		c := byConv[p.Conversation]
		if c == nil {
			c = &conversationCount{Conversation: p.Conversation, Level: p.Level}
			byConv[p.Conversation] = c
		}
		c.Count++
		if p.Level.Rank() > c.Level.Rank() {
			c.Level = p.Level
		}
		if conv != "" && p.Conversation != conv {
			continue
		}
		out.Total++
		out.Anchor = max(out.Anchor, p.Seq)
		if before > 0 && p.Seq > before {
			out.Newer++
			continue
		}
		ps = append(ps, p)
	}
	if before > 0 {
		out.Anchor = before
	}
	for _, c := range byConv {
		out.Conversations = append(out.Conversations, *c)
	}
	slices.SortFunc(out.Conversations, func(a, b conversationCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Conversation, b.Conversation))
	})
	if len(out.Conversations) > 100 {
		out.Conversations = out.Conversations[:100]
	}
	switch order {
	case "newest":
		slices.Reverse(ps)
	case "conversation":
		slices.SortStableFunc(ps, func(a, b client.PendingAction) int { return cmp.Compare(a.Conversation, b.Conversation) })
	}
	if int(offset) < len(ps) {
		ps = ps[offset:min(len(ps), int(offset+limit))]
	} else {
		ps = nil
	}
	for _, p := range ps {
		out.Cards = append(out.Cards, s.cardOf(p))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// cardOf is p with its whole command and its credential, from the stored
// action when the read models hold it.
func (s *Server) cardOf(p client.PendingAction) queueCard {
	c := queueCard{PendingAction: p, Credential: events.OriginAgent}
	if s.cfg.Reads != nil {
		if rec, err := s.cfg.Reads.EventAt(p.Seq); err == nil && rec.Event.ID == p.ID {
			c.Command = wholeCommand(&rec.Event)
			c.Credential = credentialOf(&rec.Event)
		}
	}
	c.CommandBytes = len(c.Command)
	if len(c.Command) > maxCommandText {
		c.CommandCut = len(c.Command) - maxCommandText
		c.Command = cut(c.Command, maxCommandText)
	}
	return c
}

// wholeCommand is what an action runs, as stored (display.Command, as
// the CLI and the webhooks show it): unlike the gate's summary it is never
// cut and keeps its whitespace.
func wholeCommand(ev *events.Event) string {
	return display.Command(ev.Tool(), ev.Args())
}

// credentialOf is the credential an event arrived with, as the log
// stamped it; events stored before origins existed count as the agent's.
func credentialOf(ev *events.Event) events.Origin {
	if ev.Origin == "" {
		return events.OriginAgent
	}
	return ev.Origin
}

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
	// Note says it in a sentence.
	Note string `json:"note"`
}

// placementScan bounds how many events of a conversation are read for
// its conversation.started.
const placementScan = maxEventsPage

// placementOf reads the conversation.started events among the first
// events of ev's conversation.
func (s *Server) placementOf(ev *events.Event, seq uint64) Placement {
	p := Placement{Conversation: ev.Conversation, Agent: ev.Agent}
	recs, err := s.cfg.Reads.ByConversation(ev.Conversation, 1, placementScan)
	if err == nil {
		for _, rec := range recs {
			if rec.Seq >= seq {
				break
			}
			if rec.Event.Kind != events.KindConversationStarted {
				continue
			}
			o := credentialOf(&rec.Event)
			if o.Trusted() && !p.Attested {
				p.Attested, p.AttestedBy, p.StartedSeq = true, o, rec.Seq
				p.AttestedAgent, p.Backend = rec.Event.Agent, rec.Event.StringField("backend")
			} else if !o.Trusted() && p.BackendClaimed == "" {
				p.BackendClaimed = rec.Event.StringField("backend")
			}
		}
	}
	p.AgentMatches = p.Attested && (p.AttestedAgent == "" || p.AttestedAgent == ev.Agent)
	switch {
	case !p.Attested:
		p.Backend = "local"
		p.Note = "not attested: no runtime credential started this conversation; its id, agent name and backend are the agent's own claims"
	case !p.AgentMatches:
		p.Note = "the " + string(p.AttestedBy) + " credential started this conversation for agent " + p.AttestedAgent + "; this action claims agent " + ev.Agent
	default:
		p.Note = "attested by the " + string(p.AttestedBy) + " credential (conversation.started)"
	}
	return p
}
