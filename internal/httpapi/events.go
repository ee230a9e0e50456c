package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/oklog/ulid/v2"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if err := s.cfg.Healthy(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "failing", "error": err.Error()})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if err := s.cfg.Ready(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// appendResponse is the answer to POST /v1/events.
type appendResponse struct {
	Results []client.Result `json:"results"`
}

// appendEvents stores one event (a JSON object) or a batch (a JSON array),
// in order, all or nothing per ingest request (see client.AppendBatch).
func (s *Server) appendEvents(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	b, e := readBody(w, r, s.cfg.Limits.MaxEventBody)
	if e != nil {
		return e
	}
	evs, e := decodeEvents(b, s.cfg.Limits.MaxBatch)
	if e != nil {
		return e
	}
	cl, e := s.clientFor(who.role)
	if e != nil {
		return e
	}
	if who.role != roleAdmin {
		for _, ev := range evs {
			if ev.Kind.IsControl() {
				return s.sendRefused(r.Context(), cl, who, evs)
			}
		}
	}
	rs, err := cl.AppendBatch(r.Context(), evs)
	if err != nil {
		return ingestError(err)
	}
	s.metrics.appended(len(rs))
	writeJSON(w, http.StatusOK, appendResponse{Results: rs})
	return nil
}

// decodeEvents decodes a JSON event or a JSON array of events.
func decodeEvents(b []byte, maxBatch int) ([]events.Event, *apiError) {
	b = bytes.TrimSpace(b)
	if b[0] != '[' {
		ev, err := events.DecodeJSON(b)
		if err != nil {
			return nil, badRequest("", "not an event: %v", err)
		}
		return []events.Event{ev}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, jsonError(err)
	}
	if len(raws) == 0 {
		return nil, badRequest("", "empty batch: send at least one event")
	}
	if len(raws) > maxBatch {
		return nil, &apiError{Status: http.StatusRequestEntityTooLarge, reason: "batch_too_large",
			Message: fmt.Sprintf("batch of %d events is over the limit of %d; split it", len(raws), maxBatch)}
	}
	evs := make([]events.Event, len(raws))
	for i, raw := range raws {
		ev, err := events.DecodeJSON(raw)
		if err != nil {
			e := badRequest(fmt.Sprintf("[%d]", i), "not an event: %v", err)
			e.Index = &i
			return nil, e
		}
		evs[i] = ev
	}
	return evs, nil
}

// sendRefused sends a batch holding a kind the role may not send where
// the role's NATS credential would send it (its own ingest subjects), so
// that the ingest service refuses it, records it in VIGIL_DLQ and raises
// an alert exactly as it does over NATS; the caller gets 403.
func (s *Server) sendRefused(ctx context.Context, cl *client.Client, who principal, evs []events.Event) *apiError {
	conv := evs[0].Conversation
	raws := make([]msgpack.RawMessage, len(evs))
	for i := range evs {
		if evs[i].Conversation != conv {
			conv = ""
		}
		b, err := evs[i].MarshalMsgpack()
		if err != nil {
			return badRequest(fmt.Sprintf("[%d]", i), "does not encode: %v", err)
		}
		raws[i] = b
	}
	subject := events.IngestAgentSubject(conv)
	if who.role == roleRuntime {
		subject = events.IngestRuntimeSubject(conv)
	}
	var body []byte
	if len(raws) == 1 {
		body = raws[0]
	} else {
		var err error
		if body, err = msgpack.Marshal(raws); err != nil {
			return badRequest("", "does not encode: %v", err)
		}
	}
	msg := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	msg.Header.Set(ingest.HeaderContentType, ingest.ContentTypeMsgpack)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reason := "only approvers and admins send control kinds (approvals, configs, allowlist changes)"
	if resp, err := cl.Conn().RequestMsgWithContext(ctx, msg); err == nil {
		if _, err := client.ParseReply(resp.Data, len(evs)); err != nil {
			var re *client.RefusedError
			if errors.As(err, &re) {
				reason = re.Reason
			}
		}
	}
	return &apiError{Status: http.StatusForbidden, reason: "forbidden_kind", Needs: people,
		Message: fmt.Sprintf("a %s token may send agent kinds only; refused and reported to operators: %s", who.role, reason)}
}

// ingestError maps an append's error to a response.
func ingestError(err error) *apiError {
	var re *client.RefusedError
	switch {
	case errors.As(err, &re):
		e := &apiError{Status: http.StatusUnprocessableEntity, Message: re.Reason, reason: "refused_by_ingest"}
		if re.Index >= 0 {
			i := re.Index
			e.Index = &i
		}
		return e
	case errors.Is(err, client.ErrNoServer), errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return unavailable("the ingest service did not answer (%v); retry with the same event ids", err)
	case errors.Is(err, context.Canceled):
		return unavailable("the request ended before the ingest service answered; retry with the same event ids")
	}
	return &apiError{Status: http.StatusBadGateway, Message: err.Error() + "; retry with the same event ids", reason: "upstream"}
}

// gateResponse is the answer to POST /v1/gate.
type gateResponse struct {
	// Decided is false when the wait ended before the gate decided: treat
	// the action as denied, or send the same action again to wait again.
	Decided bool `json:"decided"`
	client.GateResult
	Note string `json:"note,omitempty"`
}

// gate appends an action and waits for the gate's decision (a long poll,
// bounded by ?wait=). Sending the same action again (same id, same
// content) is safe: it is stored once, and its decision comes back at
// once when made. This is how an agent token reads a decision: only on
// an action it can present.
func (s *Server) gate(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	wait, e := queryDuration(r, "wait", s.cfg.Limits.DefaultGateWait, s.cfg.Limits.MaxGateWait)
	if e != nil {
		return e
	}
	withdraw, e := queryBool(r, "withdraw")
	if e != nil {
		return e
	}
	b, e := readBody(w, r, s.cfg.Limits.MaxEventBody)
	if e != nil {
		return e
	}
	ev, err := events.DecodeJSON(b)
	if err != nil {
		return badRequest("", "not an event: %v", err)
	}
	switch {
	case ev.Kind == "":
		ev.Kind = events.KindAction
	case ev.Kind != events.KindAction:
		return badRequest("kind", "%q: only actions are gated; send other events to POST /v1/events", ev.Kind)
	}
	if ev.Conversation == "" {
		return badRequest("conversation", "required: the conversation the action belongs to")
	}
	if ev.ID == "" {
		ev.ID = ulid.Make().String()
	}
	if ev.V == 0 {
		ev.V = events.CurrentVersion
	}
	cl, e := s.clientFor(who.role)
	if e != nil {
		return e
	}
	select {
	case s.waits <- struct{}{}:
		defer func() { <-s.waits }()
	default:
		w.Header().Set("Retry-After", "1")
		return &apiError{Status: http.StatusServiceUnavailable, reason: "busy",
			Message: fmt.Sprintf("%d gate waits are open, the limit; retry shortly", cap(s.waits))}
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + s.cfg.Limits.WriteTimeout))
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	res, err := cl.GateAndWait(ctx, ev, &client.GateOptions{Withdraw: withdraw})
	switch {
	case err == nil:
		s.metrics.appended(1)
		writeJSON(w, http.StatusOK, gateResponse{Decided: true, GateResult: res})
		return nil
	case errors.Is(err, client.ErrNoDecision):
		if s.ctx.Err() != nil {
			return unavailable("the node is shutting down; send the same action again to get its decision")
		}
		if r.Context().Err() != nil {
			return nil // the client went away
		}
		if res.Seq != 0 {
			s.metrics.appended(1)
		}
		writeJSON(w, http.StatusAccepted, gateResponse{Decided: false, GateResult: res,
			Note: "no decision within " + wait.String() + ": treat the action as denied, or send the same action again to keep waiting"})
		return nil
	case res.By == events.ByClient:
		writeJSON(w, http.StatusOK, gateResponse{Decided: true, GateResult: res, Note: err.Error()})
		return nil
	}
	return ingestError(err)
}
