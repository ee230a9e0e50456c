package httpapi

import (
	"errors"
	"net/http"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/configlog"
)

// showConfig answers with the config in force now, globally or for
// ?conversation= (a conversation's own config overrides the global one),
// with unset fields as the gate reads them.
func (s *Server) showConfig(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	conv := r.URL.Query().Get("conversation")
	if conv != "" && !validConversation(conv) {
		return badRequest("conversation", "%q is not a conversation id (1-128 letters, digits, - _ : @)", conv)
	}
	if s.cfg.Reads == nil {
		return unavailable("this node keeps no read models; use vigil config show")
	}
	cs, _, err := s.cfg.Reads.ConfigFor(conv)
	if err != nil {
		return readError(err)
	}
	var id string
	if cs.Seq > 0 {
		if rec, err := s.cfg.Reads.EventAt(cs.Seq); err == nil {
			id = rec.Event.ID
		}
	}
	writeJSON(w, http.StatusOK, configlog.Show(conv, 0, cs.Config, cs.Seq, id))
	return nil
}

// configSetResult is the answer to PUT /v1/config (as `vigil config set --json`).
type configSetResult struct {
	Appended bool   `json:"appended"`
	ID       string `json:"id"`
	Seq      uint64 `json:"seq"`
	Version  int64  `json:"version"`
	Scope    string `json:"scope"`
}

// setConfig validates a whole configuration (JSON; unknown fields are
// errors) and appends it as a config event, as `vigil config set` does:
// version may be left out (one more than the version in force for the same
// scope); one that does not increase is refused; every problem is listed,
// each with its field, and nothing is appended then.
func (s *Server) setConfig(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	b, e := readBody(w, r, s.cfg.Limits.MaxConfigBody)
	if e != nil {
		return e
	}
	var cfg events.Config
	if e := decodeStrict(b, &cfg); e != nil {
		return e
	}
	if s.cfg.Reads == nil {
		return unavailable("this node keeps no read models; use vigil config set")
	}
	scope := cfg.Scope
	if scope == "" {
		scope = events.ScopeGlobal
	}
	key, want := "", "global"
	if scope == events.ScopeConversation {
		if cfg.Conversation == "" || !events.ValidToken(cfg.Conversation) {
			return refusedConfig(&configlog.RefusedError{Version: cfg.Version, Problems: []problem{{Field: "conversation", Reason: "a conversation-scoped config names its conversation (1-128 letters, digits, - _ : @)"}}})
		}
		key, want = cfg.Conversation, "conversation"
	}
	cur, source, err := s.cfg.Reads.ConfigFor(key)
	if err != nil {
		return readError(err)
	}
	var curVersion int64
	if source == want {
		curVersion = cur.Config.Version
	}
	ev, cfg, err := configlog.Prepare(configlog.Request{Config: cfg, InForce: curVersion, Check: s.cfg.CheckConfig,
		Agent: "http:" + string(who.role)})
	if err != nil {
		var ref *configlog.RefusedError
		if errors.As(err, &ref) {
			return refusedConfig(ref)
		}
		return badRequest("", "the config cannot be appended: %v", err)
	}
	cl, e := s.clientFor(who.role)
	if e != nil {
		return e
	}
	res, err := cl.Append(r.Context(), ev)
	if err != nil {
		return ingestError(err)
	}
	out := configSetResult{Appended: true, ID: ev.ID, Seq: res.Seq, Version: cfg.Version, Scope: configlog.ScopeLabel(cfg)}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func refusedConfig(ref *configlog.RefusedError) *apiError {
	e := &apiError{Status: http.StatusUnprocessableEntity, Problems: ref.Problems, reason: "config_refused", Message: ref.Error()}
	if len(ref.Problems) == 1 {
		e.Field = ref.Problems[0].Field
	}
	return e
}
