package httpapi

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk"
	"github.com/vigil-dev/vigil/projections"
)

// The approval page: one HTML page at / with its script and style sheet,
// embedded in the binary (web/), no third-party asset. It logs in to a
// browser session (session.go), then uses the API as any client does:
// GET /v1/stream for the live queue, POST /v1/approvals for verdicts. Two
// reads are its own, under /ui/: the detail of one action (the stored,
// redacted action, its risk, the parsed view and its conversation's last
// events) and the recent decisions with the audit status. The page never
// builds HTML from data: every field is set as text (web/app.js), and
// the Content-Security-Policy allows scripts from this server only.

//go:embed web
var webFS embed.FS

// pageCSP is the page's Content-Security-Policy: its own script and
// style, no inline script, no frames, no form posts elsewhere.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// pageTable is the approval page's routes: the page and its assets, the
// browser session, and the reads the page makes beyond the /v1 API. They
// are the page's own, not part of the versioned API, but served like it:
// Routes lists them and schemas/openapi.yaml describes them (tag page).
var pageTable = []route{
	{Route{Method: http.MethodGet, Path: "/"}, (*Server).page},
	{Route{Method: http.MethodGet, Path: "/ui/assets/{name}"}, (*Server).asset},
	{Route{Method: http.MethodPost, Path: "/ui/session"}, (*Server).login},
	{Route{Method: http.MethodGet, Path: "/ui/session"}, (*Server).currentSession},
	{Route{Method: http.MethodDelete, Path: "/ui/session", Roles: people}, (*Server).logout},
	{Route{Method: http.MethodGet, Path: "/ui/pending", Roles: people}, (*Server).queue},
	{Route{Method: http.MethodGet, Path: "/ui/actions/{action_id}", Roles: people}, (*Server).actionDetail},
	{Route{Method: http.MethodGet, Path: "/ui/history", Roles: people}, (*Server).history},
}

// pageRoutes adds the page's routes to mux and makes the session store.
func (s *Server) pageRoutes(mux *http.ServeMux) {
	s.sessions = newSessionStore()
	for _, rt := range pageTable {
		mux.Handle(rt.pattern(), s.wrap(rt))
	}
}

// pageHeaders are the headers of the page and its assets.
func pageHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (s *Server) page(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	b, err := webFS.ReadFile("web/index.html")
	if err != nil {
		return &apiError{Status: http.StatusInternalServerError, Message: "the page is not embedded", reason: "internal"}
	}
	pageHeaders(w, "text/html; charset=utf-8")
	w.Write(b)
	return nil
}

// assetTypes are the asset kinds served, by extension.
var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".png": "image/png",
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	name := r.PathValue("name")
	ct, ok := assetTypes[path.Ext(name)]
	if !ok || !fs.ValidPath(name) || strings.Contains(name, "/") {
		return &apiError{Status: http.StatusNotFound, Message: "no asset " + name, reason: "not_found"}
	}
	b, err := webFS.ReadFile("web/" + name)
	if err != nil {
		return &apiError{Status: http.StatusNotFound, Message: "no asset " + name, reason: "not_found"}
	}
	pageHeaders(w, ct)
	w.Write(b)
	return nil
}

// contextEvents is how many events before an action its detail shows.
const contextEvents = 6

// maxTextLen bounds each text the page is sent about one event.
const maxTextLen = 2000

// eventLine is one event of a conversation as the page shows it.
type eventLine struct {
	Seq   uint64      `json:"seq"`
	Kind  events.Kind `json:"kind"`
	Time  string      `json:"time,omitempty"`
	Agent string      `json:"agent,omitempty"`
	// Credential is the class of credential the event arrived with, as
	// the log stamped it (agent when none).
	Credential events.Origin `json:"credential"`
	// Role is a message's role, as its sender wrote it; Claim says when
	// that role is only the sender's claim (a "user" message an agent
	// credential sent is never the user's words).
	Role  string `json:"role,omitempty"`
	Claim string `json:"claim,omitempty"`
	// Text says what happened, cut to maxTextLen bytes (Cut more bytes
	// are not shown).
	Text string `json:"text"`
	Cut  int    `json:"cut,omitempty"`
}

// actionDetail is the answer to GET /ui/actions/{action_id}.
type actionDetail struct {
	ActionID     string `json:"action_id"`
	Conversation string `json:"conversation"`
	Seq          uint64 `json:"seq"`
	// Event is the action as stored: its secrets already redacted.
	Event events.Event         `json:"event"`
	Risk  *events.RiskAssessed `json:"risk,omitempty"`
	// Decision is the gate's decision, once made.
	Decision *events.GateDecided `json:"decision,omitempty"`
	// View is the parsed action (the commands found, paths, hosts), as the
	// risk analyzers see it under the config in force.
	View *risk.View `json:"view,omitempty"`
	// Context are the conversation's last events before the action.
	Context []eventLine `json:"context"`
	// Credential is the class of credential the action arrived with.
	Credential events.Origin `json:"credential"`
	// Placement says whether the conversation's id, agent and backend
	// were attested by the runtime, or are the agent's claims.
	Placement Placement `json:"placement"`
	// Command is the whole command as stored (queueCard.Command).
	Command      string `json:"command"`
	CommandBytes int    `json:"command_bytes"`
}

// actionDetail answers what the page shows of one action (?seq= names
// its log seq when the read models have not assessed it yet).
func (s *Server) actionDetail(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	id := r.PathValue("action_id")
	if !events.ValidID(id) {
		return badRequest("action_id", "%q is not an event id", id)
	}
	seq, e := queryUint(r, "seq", 0)
	if e != nil {
		return e
	}
	if s.cfg.Reads == nil {
		return unavailable("this node keeps no read models")
	}
	s.awaitReads(r.Context())
	ra, err := s.cfg.Reads.RiskOf(id)
	switch {
	case err == nil:
		if seq == 0 {
			seq = ra.LogSeq
		}
	case !errors.Is(err, projections.ErrNotFound):
		return readError(err)
	}
	if seq == 0 {
		return &apiError{Status: http.StatusNotFound, Field: "action_id", reason: "not_found",
			Message: "no action " + id + " is known yet"}
	}
	rec, err := s.cfg.Reads.EventAt(seq)
	if err != nil {
		return readError(err)
	}
	if rec.Event.ID != id || rec.Event.Kind != events.KindAction {
		return &apiError{Status: http.StatusNotFound, Field: "seq", reason: "not_found",
			Message: fmt.Sprintf("log seq %d is not action %s", seq, id)}
	}
	out := actionDetail{ActionID: id, Conversation: rec.Event.Conversation, Seq: rec.Seq, Event: rec.Event,
		Credential: credentialOf(&rec.Event), Placement: s.placementOf(&rec.Event, rec.Seq), Command: wholeCommand(&rec.Event)}
	out.CommandBytes = len(out.Command)
	if err == nil && ra.LogSeq == rec.Seq {
		out.Risk = &ra
	}
	if gd, err := s.cfg.Reads.Decision(id); err == nil && gd.LogSeq == rec.Seq {
		out.Decision = &gd
	}
	out.View = s.parsedView(&rec.Event)
	out.Context, e = s.lastEvents(rec.Event.Conversation, rec.Seq, contextEvents)
	if e != nil {
		return e
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parsedView scores ev under the config in force for its conversation and
// returns the view the analyzers saw; nil when it cannot.
func (s *Server) parsedView(ev *events.Event) *risk.View {
	cs, _, err := s.cfg.Reads.ConfigFor(ev.Conversation)
	cfg := cs.Config
	if err != nil || cs.Seq == 0 {
		cfg = events.DefaultConfig()
	}
	sc, err := risk.NewScorer(cfg)
	if err != nil {
		return nil
	}
	a := sc.ScoreAction(ev, risk.Env{Workspace: cfg.Workspace, Backend: ev.StringField("backend"),
		Conversation: ev.Conversation, Agent: ev.Agent})
	return &a.View
}

// lastEvents returns up to n events of conversation before log seq
// before, oldest first. The read models page forward only, so it reads
// growing windows back from before.
func (s *Server) lastEvents(conversation string, before uint64, n int) ([]eventLine, *apiError) {
	var found []events.Record
	for window := uint64(256); ; window *= 8 {
		from := uint64(1)
		if before > window {
			from = before - window
		}
		found = found[:0]
		for next := from; next < before; {
			recs, err := s.cfg.Reads.ByConversation(conversation, next, maxEventsPage)
			if err != nil {
				return nil, readError(err)
			}
			for _, rec := range recs {
				if rec.Seq >= before {
					break
				}
				found = append(found, rec)
			}
			if len(recs) < maxEventsPage || recs[len(recs)-1].Seq >= before {
				break
			}
			next = recs[len(recs)-1].Seq + 1
			if len(found) > 4*n {
				found = slices.Delete(found, 0, len(found)-n)
			}
		}
		if len(found) >= n || from == 1 || window > 1<<24 {
			break
		}
	}
	if len(found) > n {
		found = found[len(found)-n:]
	}
	out := make([]eventLine, len(found))
	for i, rec := range found {
		out[i] = lineOf(rec)
	}
	return out, nil
}

// lineOf says in a line what an event is.
func lineOf(rec events.Record) eventLine {
	ev := &rec.Event
	l := eventLine{Seq: rec.Seq, Kind: ev.Kind, Agent: ev.Agent, Credential: credentialOf(ev)}
	if !ev.Time.IsZero() {
		l.Time = ev.Time.UTC().Format(time.RFC3339)
	}
	var text string
	switch ev.Kind {
	case events.KindMessage:
		l.Role, l.Claim = ev.StringField("role"), roleClaim(ev)
		text = textOf(ev.Data["content"])
	case events.KindAction:
		text = ev.StringField("tool")
		if args, ok := ev.Data["args"].(map[string]any); ok {
			if c, ok := args["command"].(string); ok {
				text += ": " + c
			} else {
				text += " " + textOf(args)
			}
		}
	case events.KindObservation:
		text = textOf(ev.Data["content"])
		if code, ok := ev.Data["exit_code"]; ok {
			text = fmt.Sprintf("exit %v: %s", code, text)
		}
	case events.KindContextLoaded:
		text = ev.StringField("path")
	default:
		text = textOf(ev.Data)
	}
	l.Text = cut(text, maxTextLen)
	if len(text) > maxTextLen {
		l.Cut = len(text) - len(strings.TrimSuffix(l.Text, "…"))
	}
	return l
}

// roleClaim says when a message's role is only a claim: a role a person
// speaks in (user, or anything but assistant and tool) sent with a
// credential the agent holds. "" when the role is the sender's own.
func roleClaim(ev *events.Event) string {
	role := ev.StringField("role")
	switch role {
	case "assistant", "tool", "agent":
		return ""
	}
	if credentialOf(ev).Trusted() {
		return ""
	}
	if role == "" {
		role = "(none)"
	}
	return "agent-sent, claims role " + role
}

// textOf is a value as text: a string as it is, anything else as JSON.
func textOf(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// historyLimit is how many recent decisions GET /ui/history returns at most.
const historyLimit = 50

// historyCommandLen bounds the command of one history line: past it the
// line carries its first historyCommandLen-historyTailLen bytes and its
// last historyTailLen bytes (headTail).
const (
	historyCommandLen = 4096
	historyTailLen    = 1024
)

// historyScan bounds how many VIGIL_DERIVED records back a history request
// looks for decisions.
const historyScan = 1 << 16

// decisionLine is one decision of the history.
type decisionLine struct {
	Conversation string `json:"conversation"`
	Time         string `json:"time,omitempty"`
	// Command is the action's command (or tool), whole or its head;
	// CommandTail its last bytes when it is cut, CommandCut how many
	// bytes between them the line does not carry; CommandBytes its whole
	// length (the page says how much it does not show).
	Command      string `json:"command,omitempty"`
	CommandBytes int    `json:"command_bytes,omitempty"`
	CommandCut   int    `json:"command_cut,omitempty"`
	CommandTail  string `json:"command_tail,omitempty"`
	events.GateDecided
}

// auditStatus is what the page says of the audit trail.
type auditStatus struct {
	// Checkpoint is the latest signed checkpoint's tree size: the log
	// records 1..Checkpoint are covered by it (0: none yet).
	Checkpoint uint64 `json:"checkpoint"`
	// Verified is true when this node checked the log against it; the
	// page says "covered, not verified here" otherwise.
	Verified bool   `json:"verified"`
	Note     string `json:"note,omitempty"`
}

type historyResponse struct {
	Decisions []decisionLine `json:"decisions"`
	Audit     auditStatus    `json:"audit"`
}

// history answers the recent decisions, newest first, and the audit
// status.
func (s *Server) history(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if s.cfg.JetStream == nil {
		return unavailable("this node serves no history")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	ds, err := s.recentDecisions(ctx, historyLimit)
	if err != nil {
		return unavailable("history: %v", err)
	}
	writeJSON(w, http.StatusOK, historyResponse{Decisions: ds, Audit: s.auditStatus(ctx)})
	return nil
}

// recentDecisions reads the last gate decisions stored in VIGIL_DERIVED
// (within historyScan records), newest first.
func (s *Server) recentDecisions(ctx context.Context, limit int) ([]decisionLine, error) {
	st, err := s.cfg.JetStream.Stream(ctx, events.StreamDerived)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, err
	}
	last := info.State.LastSeq
	out := []decisionLine{}
	if info.State.Msgs == 0 {
		return out, nil
	}
	from := max(info.State.FirstSeq, 1)
	if last > historyScan && last-historyScan > from {
		from = last - historyScan
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.GatePrefix + ">"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
		InactiveThreshold: transport.ReaderInactive,
	})
	if err != nil {
		return nil, err
	}
	for {
		batch, err := cons.FetchNoWait(500)
		if err != nil {
			return nil, err
		}
		n := 0
		done := false
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				continue
			}
			if meta.Sequence.Stream >= last || meta.NumPending == 0 {
				done = true
			}
			d, err := events.DecodeDerived(m.Data())
			if err != nil || d.Kind != events.KindGateDecided {
				continue
			}
			gd, err := events.DerivedDataAs[events.GateDecided](&d)
			if err != nil {
				continue
			}
			out = append(out, decisionLine{Conversation: d.Conversation, Time: d.Time, GateDecided: gd})
			if len(out) > 2*limit {
				out = slices.Delete(out, 0, len(out)-limit)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, err
		}
		if done || n == 0 {
			break
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	slices.Reverse(out)
	if s.cfg.Reads != nil {
		for i := range out {
			if rec, err := s.cfg.Reads.EventAt(out[i].LogSeq); err == nil && rec.Event.ID == out[i].ActionID {
				whole := wholeCommand(&rec.Event)
				out[i].CommandBytes = len(whole)
				out[i].Command, out[i].CommandTail, out[i].CommandCut = headTail(whole, historyCommandLen, historyTailLen)
			}
		}
	}
	return out, nil
}

// auditStatus reports the latest signed checkpoint in VIGIL_DERIVED.
//
// Hook: this node does not verify the log against the checkpoint over
// HTTP yet (`vigil audit verify` does). When the API serves audit
// verification, call it here and set Verified; the page shows it as is.
func (s *Server) auditStatus(ctx context.Context) auditStatus {
	st, err := s.cfg.JetStream.Stream(ctx, events.StreamDerived)
	if err != nil {
		return auditStatus{Note: "the audit stream cannot be read now"}
	}
	m, err := st.GetLastMsgForSubject(ctx, events.SubjectCheckpoint)
	if err != nil {
		return auditStatus{Note: "no signed checkpoint yet"}
	}
	d, err := events.DecodeDerived(m.Data)
	if err != nil {
		return auditStatus{Note: "the last checkpoint does not decode"}
	}
	cp, err := events.DerivedDataAs[events.AuditCheckpoint](&d)
	if err != nil {
		return auditStatus{Note: "the last checkpoint does not decode"}
	}
	return auditStatus{Checkpoint: cp.TreeSize,
		Note: "covered by a signed checkpoint; run vigil audit verify to check the log against it"}
}
