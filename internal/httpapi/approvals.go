package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/allowlistlog"
	"github.com/vigil-dev/vigil/projections"
)

// maxReasonLen bounds a reason given with a verdict or a revocation.
const maxReasonLen = 2000

// pendingList lists the actions waiting for a person: from the read
// models when there are any, else from VIGIL_DERIVED.
func (s *Server) pendingList(r *http.Request, who principal, conversation string) ([]client.PendingAction, *apiError) {
	if s.cfg.Reads == nil {
		cl, e := s.clientFor(who.role)
		if e != nil {
			return nil, e
		}
		ps, err := cl.Pending(r.Context(), conversation)
		if err != nil {
			return nil, unavailable("%v", err)
		}
		return ps, nil
	}
	s.awaitReads(r.Context())
	pas, err := s.cfg.Reads.Pending()
	if err != nil {
		return nil, readError(err)
	}
	out := make([]client.PendingAction, 0, len(pas))
	for _, pa := range pas {
		if conversation != "" && pa.Conversation != conversation {
			continue
		}
		out = append(out, client.PendingFromRequest(pa.Conversation, pa.Time, pa.Request))
	}
	client.SortPending(out)
	return out, nil
}

// maxReadsWait bounds how long a read waits for the read models.
const maxReadsWait = 2 * time.Second

// awaitReads waits (briefly) until the read models hold every gate output
// the live stream has seen: the driver publishes an output before the read
// models apply it, so a person who saw an action on the stream, or a
// stream that subscribed after it passed, finds it in the queue.
func (s *Server) awaitReads(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, maxReadsWait)
	defer cancel()
	s.cfg.Reads.WaitPosition(ctx, s.hub.seen.Load())
}

// readError maps a read model's error to a response.
func readError(err error) *apiError {
	if errors.Is(err, projections.ErrNotFound) {
		return &apiError{Status: http.StatusNotFound, Message: err.Error(), reason: "not_found"}
	}
	return unavailable("read models: %v", err)
}

// pendingResponse is the answer to GET /v1/pending: each action waiting,
// with its whole command as stored (pendingCard).
type pendingResponse struct {
	Pending []pendingCard `json:"pending"`
}

func (s *Server) pending(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	conv := r.URL.Query().Get("conversation")
	if conv != "" && !validConversation(conv) {
		return badRequest("conversation", "%q is not a conversation id (1-128 letters, digits, - _ : @)", conv)
	}
	ps, e := s.pendingList(r, who, conv)
	if e != nil {
		return e
	}
	writeJSON(w, http.StatusOK, pendingResponse{Pending: s.cardsOf(r.Context(), ps)})
	return nil
}

func validConversation(c string) bool { return c == events.GlobalScope || events.ValidToken(c) }

// approvalRequest is the body of POST /v1/approvals.
type approvalRequest struct {
	ActionID string `json:"action_id"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason"`
	// Approver names the person deciding (else the Vigil-Approver header).
	Approver string `json:"approver"`
	// Seq is the log seq of the action as the person saw it (the queue's
	// seq); when given, a verdict for another action under that id, or for
	// one that has a verdict already, is refused (409) instead of recorded.
	Seq uint64 `json:"seq"`
}

// approvalResponse is the answer to POST /v1/approvals.
type approvalResponse struct {
	client.Decision
	Approver string `json:"approver"`
}

// approve records a person's verdict on a pending action, bound to the
// action's log seq and digest as the queue shows it (client.Client.Decide),
// and waits (?wait=, default 10s) for the gate to act on it: 200 once the
// gate confirmed, 202 if the verdict is recorded but the gate has not
// answered yet, 409 if the gate refused it, if the body's seq is not the
// waiting action's (stale), or if the action has a verdict already (one
// this server recorded, or a decision in the read models).
func (s *Server) approve(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	wait, e := queryDuration(r, "wait", 10*time.Second, time.Minute)
	if e != nil {
		return e
	}
	b, e := readBody(w, r, s.cfg.Limits.MaxSmallBody)
	if e != nil {
		return e
	}
	var req approvalRequest
	if e := decodeStrict(b, &req); e != nil {
		return e
	}
	if req.ActionID == "" {
		return badRequest("action_id", "required: the id of a pending action (GET /v1/pending)")
	}
	if !events.ValidID(req.ActionID) {
		return badRequest("action_id", "%q is not an event id", req.ActionID)
	}
	verdict := events.Verdict(req.Verdict)
	switch verdict {
	case events.VerdictOnce, events.VerdictSession, events.VerdictAlways, events.VerdictDeny:
	case "":
		return badRequest("verdict", "required: once, session, always or deny")
	default:
		return badRequest("verdict", "%q: use once, session, always or deny", req.Verdict)
	}
	if len(req.Reason) > maxReasonLen {
		return badRequest("reason", "over %d bytes", maxReasonLen)
	}
	approver, e := approverName(r, req.Approver, who)
	if e != nil {
		return e
	}
	ps, e := s.pendingList(r, who, "")
	if e != nil {
		return e
	}
	p, err := client.LookupPending(ps, req.ActionID)
	if err != nil {
		return &apiError{Status: http.StatusNotFound, Field: "action_id", Message: err.Error(), reason: "not_found"}
	}
	if req.Seq != 0 && req.Seq != p.Seq {
		return &apiError{Status: http.StatusConflict, Field: "seq", reason: "stale",
			Message: fmt.Sprintf("action %s at log seq %d is not the one waiting (log seq %d); reload the queue and decide what it shows", p.ID, req.Seq, p.Seq)}
	}
	if s.cfg.Reads != nil {
		if gd, err := s.cfg.Reads.Decision(p.ID); err == nil && gd.LogSeq == p.Seq {
			return alreadyDecided(p)
		}
	}
	cl, e := s.clientFor(who.role)
	if e != nil {
		return e
	}
	key := waitKey{id: p.ID, seq: p.Seq}
	if !s.verdicts.claim(key) {
		return alreadyDecided(p)
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + s.cfg.Limits.WriteTimeout))
	d, err := cl.Decide(r.Context(), p, verdict, client.DecideOptions{
		Approver: approver, Reason: req.Reason, Wait: wait,
		// Where the verdict came from: the name is the token holder's
		// claim, the credential is what the token proved.
		Data: map[string]any{"via": "http", "credential": string(who.role)},
	})
	switch {
	case errors.Is(err, client.ErrVerdictRefused):
		return &apiError{Status: http.StatusConflict, Message: err.Error(), reason: "verdict_refused"}
	case errors.Is(err, client.ErrNoShape):
		return &apiError{Status: http.StatusUnprocessableEntity, Field: "verdict", Message: err.Error(), reason: "bad_request"}
	case err != nil && d.Seq == 0:
		s.verdicts.release(key) // nothing was recorded: a verdict may still be given
		return ingestError(err)
	}
	status := http.StatusOK
	if !d.Confirmed {
		status = http.StatusAccepted
	}
	writeJSON(w, status, approvalResponse{Decision: d, Approver: approver})
	return nil
}

type allowlistResponse struct {
	Entries []projections.AllowEntry `json:"entries"`
}

func (s *Server) allowlist(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	if s.cfg.Reads == nil {
		return unavailable("this node keeps no read models; use vigil allowlist list")
	}
	es, err := s.cfg.Reads.Allowlist()
	if err != nil {
		return readError(err)
	}
	if es == nil {
		es = []projections.AllowEntry{}
	}
	writeJSON(w, http.StatusOK, allowlistResponse{Entries: es})
	return nil
}

type revokeResponse struct {
	EntryID string `json:"entry_id"`
	Shape   string `json:"shape"`
	Seq     uint64 `json:"seq"`
	By      string `json:"by"`
}

// revokeAllowlist ends an allowlist entry in force (?reason= is recorded).
func (s *Server) revokeAllowlist(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	id := r.PathValue("entry_id")
	if !events.ValidID(id) {
		return badRequest("entry_id", "%q is not an allowlist entry id", id)
	}
	reason := r.URL.Query().Get("reason")
	if len(reason) > maxReasonLen {
		return badRequest("reason", "over %d bytes", maxReasonLen)
	}
	if s.cfg.Reads == nil {
		return unavailable("this node keeps no read models; use vigil allowlist revoke")
	}
	es, err := s.cfg.Reads.Allowlist()
	if err != nil {
		return readError(err)
	}
	var found *projections.AllowEntry
	for i := range es {
		if es[i].ID == id {
			found = &es[i]
		}
	}
	if found == nil {
		return &apiError{Status: http.StatusNotFound, Field: "entry_id", reason: "not_found",
			Message: fmt.Sprintf("no allowlist entry %s is in force; GET /v1/allowlist lists them", id)}
	}
	by, e := approverName(r, "", who)
	if e != nil {
		return e
	}
	cl, e := s.clientFor(who.role)
	if e != nil {
		return e
	}
	ev, err := allowlistlog.RevokeEvent(allowlistlog.Revoke{EntryID: found.ID, By: by, Reason: reason,
		Via: map[string]any{"via": "http", "credential": string(who.role)}})
	if err != nil {
		return badRequest("", "%v", err)
	}
	res, err := cl.Append(r.Context(), ev)
	if err != nil {
		return ingestError(err)
	}
	writeJSON(w, http.StatusOK, revokeResponse{EntryID: found.ID, Shape: found.Shape, Seq: res.Seq, By: by})
	return nil
}

// alreadyDecided is the refusal of a second verdict on p.
func alreadyDecided(p client.PendingAction) *apiError {
	return &apiError{Status: http.StatusConflict, Field: "action_id", reason: "already_decided",
		Message: fmt.Sprintf("action %s (log seq %d) has a verdict already; a second one is not recorded", p.ID, p.Seq)}
}

// maxVerdicts bounds the actions a verdictBook remembers.
const maxVerdicts = 1 << 16

// verdictBook remembers the actions (id and log seq) this server recorded
// a verdict for, the newest maxVerdicts of them, so two verdicts sent at
// once (two clicks, two tabs, a page acting on a stale card) record one.
// The read models' decisions cover the rest (approve checks both).
type verdictBook struct {
	mu    sync.Mutex
	seen  map[waitKey]struct{}
	order []waitKey
}

func newVerdictBook() *verdictBook { return &verdictBook{seen: map[waitKey]struct{}{}} }

// claim reports whether k had no verdict yet, and marks it as having one.
func (b *verdictBook) claim(k waitKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[k]; ok {
		return false
	}
	b.seen[k] = struct{}{}
	b.order = append(b.order, k)
	if len(b.order) > maxVerdicts {
		delete(b.seen, b.order[0])
		b.order = slices.Delete(b.order, 0, 1)
	}
	return true
}

// release forgets k (its verdict was not recorded).
func (b *verdictBook) release(k waitKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.seen, k)
	if i := slices.Index(b.order, k); i >= 0 {
		b.order = slices.Delete(b.order, i, i+1)
	}
}
