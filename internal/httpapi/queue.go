package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

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
// credential the log stamped), and the level and rules. GET /v1/pending
// and the live stream's "pending" events carry the same cards.

// queuePageMax bounds one page of GET /ui/pending.
const queuePageMax = 200

// maxCommandText bounds the command text a card carries: past it, the
// card carries the command's first maxCommandText-commandTailText bytes
// in Command and its last commandTailText bytes in CommandTail, and says
// how many bytes between them it does not carry (the detail's arguments,
// the stored event, hold them all). The tail is always carried, so a
// dangerous end (`&& curl … | bash`) never falls off.
const (
	maxCommandText  = 256 << 10
	commandTailText = 16 << 10
)

// pendingCard is one pending action as a person is shown it: the pending
// action, its Command replaced by the whole command as stored.
type pendingCard struct {
	client.PendingAction
	// Summary is the gate's summary of the command (gate.requested's
	// command: cut at 400 bytes at its end, its whitespace collapsed), which
	// Command held before the stored command was read.
	Summary string `json:"summary"`
	// CommandStored is true when Command is the stored action's command;
	// false when the stored action could not be read, and Command is the
	// summary.
	CommandStored bool `json:"command_stored"`
	// CommandBytes is the whole command's length. CommandCut is how many
	// bytes of it the card does not carry, between Command (its head) and
	// CommandTail (its last bytes); both are 0 and empty when Command is
	// whole.
	CommandBytes int    `json:"command_bytes"`
	CommandCut   int    `json:"command_cut,omitempty"`
	CommandTail  string `json:"command_tail,omitempty"`
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
	Total  int           `json:"total"`
	Newer  int           `json:"newer"`
	Offset int           `json:"offset"`
	Order  string        `json:"order"`
	Anchor uint64        `json:"anchor"`
	Cards  []pendingCard `json:"pending"`
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
	out := queueResponse{Order: order, Offset: int(offset), Cards: []pendingCard{}, Conversations: []conversationCount{}}
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
		out.Cards = append(out.Cards, s.cardOf(r.Context(), p))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// cardOf is p with its whole command and its credential, from the stored
// action (the read models, else the log).
func (s *Server) cardOf(ctx context.Context, p client.PendingAction) pendingCard {
	c := pendingCard{PendingAction: p, Summary: p.Command, Credential: events.OriginAgent}
	if ev, ok := s.storedAction(ctx, p.ID, p.Seq); ok {
		c.Command, c.CommandStored = wholeCommand(ev), true
		c.Credential = credentialOf(ev)
	}
	c.CommandBytes = len(c.Command)
	c.Command, c.CommandTail, c.CommandCut = headTail(c.Command, maxCommandText, commandTailText)
	return c
}

// cardsOf is cardOf of each of ps.
func (s *Server) cardsOf(ctx context.Context, ps []client.PendingAction) []pendingCard {
	out := make([]pendingCard, len(ps))
	for i, p := range ps {
		out[i] = s.cardOf(ctx, p)
	}
	return out
}

// headTail bounds s to max bytes: s itself when it fits, else its first
// max-tail bytes as head, its last tail bytes as end, and how many bytes
// between them are left out (each part whole UTF-8: a rune that would be
// split is left out with the middle).
func headTail(s string, max, tail int) (head, end string, cut int) {
	if len(s) <= max {
		return s, "", 0
	}
	h := max - tail
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h], s[t:], t - h
}

// storedAction reads the action id stored at log seq: from the read
// models when they hold it, else from the log itself (the read models
// may not have applied it yet).
func (s *Server) storedAction(ctx context.Context, id string, seq uint64) (*events.Event, bool) {
	if seq == 0 {
		return nil, false
	}
	if s.cfg.Reads != nil {
		if rec, err := s.cfg.Reads.EventAt(seq); err == nil {
			if rec.Event.ID != id || rec.Event.Kind != events.KindAction {
				return nil, false
			}
			return &rec.Event, true
		}
	}
	if s.cfg.JetStream == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, storedActionWait)
	defer cancel()
	st, err := s.cfg.JetStream.Stream(ctx, events.StreamLog)
	if err != nil {
		return nil, false
	}
	m, err := st.GetMsg(ctx, seq)
	if err != nil {
		return nil, false
	}
	ev, err := events.DecodeMsgpack(m.Data)
	if err != nil || ev.ID != id || ev.Kind != events.KindAction {
		return nil, false
	}
	return &ev, true
}

// storedActionWait bounds reading one stored action from the log.
const storedActionWait = 5 * time.Second

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

// Placement is display.Placement: whether a conversation's id, agent and
// backend were attested by the runtime, or are the agent's claims.
type Placement = display.Placement

// placementScan bounds how many events of a conversation are read for
// its conversation.started.
const placementScan = maxEventsPage

// placementOf reads the conversation.started events among the first
// events of ev's conversation.
func (s *Server) placementOf(ev *events.Event, seq uint64) Placement {
	recs, _ := s.cfg.Reads.ByConversation(ev.Conversation, 1, placementScan)
	return display.PlacementOf(ev, seq, recs)
}
