package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/projections"
)

// Named tokens (`vigil token create|list|revoke`, /v1/tokens).
//
// Besides the role files (natsutil.EnsureTokens: one token per role,
// kept as they are, which `vigil hook` and scripts read), an admin may
// create any number of named, revocable tokens. Each is 256 random bits
// (natsutil.NewToken), shown once when created; the log holds only a
// token.created event with its SHA-256 digest and last four characters,
// and a token.revoked event ends it. Both are control kinds: only an
// admin credential can append them (an agent's are refused to VIGIL_DLQ,
// an approver's too). Every node folds them into its read models
// (projections, "tokens"), and looks a presented token up there by its
// digest on each request. So a revocation is in force on a node as soon
// as its read models reach the event — POST and DELETE /v1/tokens answer
// only once this node's have ("applied": true), so the next request with
// a revoked token gets 401 — and on every other node of a fleet when
// theirs do (normally milliseconds).

// TokenReads are the read models of the named tokens; *projections.Store
// implements it. Config.Reads is used when it does.
type TokenReads interface {
	TokenByHash(hash string) (projections.Token, error)
	Token(id string) (projections.Token, error)
	Tokens() ([]projections.Token, error)
}

// maxApplyWait bounds how long a token change waits for this node's read
// models to apply it.
const maxApplyWait = 10 * time.Second

// tokenDigest is how the log and the read models name a token.
func tokenDigest(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// tokenReads returns the read models of the named tokens, or nil.
func (s *Server) tokenReads() TokenReads {
	if s.cfg.Reads == nil {
		return nil
	}
	tr, _ := s.cfg.Reads.(TokenReads)
	return tr
}

// lookupToken finds who tok belongs to: a role file's token (compared in
// constant time), else a named token in force. A token that is neither
// is 401; read models that cannot answer are 503 (never a guess).
func (s *Server) lookupToken(tok string, roles []natsutil.Role) (principal, *apiError) {
	if role, ok := s.tokens.lookup(tok); ok {
		return principal{role: role}, nil
	}
	unknown := &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: roles,
		Message: "unknown or revoked token: use a role's token from DATA/creds/<role>.token or one from vigil token create"}
	tr := s.tokenReads()
	if tr == nil || !natsutil.ValidToken(tok) {
		return principal{}, unknown
	}
	t, err := tr.TokenByHash(tokenDigest(tok))
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return principal{}, unknown
	case err != nil:
		return principal{}, &apiError{Status: http.StatusServiceUnavailable, reason: "unavailable", Needs: roles,
			Message: fmt.Sprintf("the token cannot be checked now (read models: %v); retry, or use a role file's token", err)}
	}
	role := natsutil.Role(t.Role)
	if !slices.Contains(natsutil.TokenRoles, role) {
		return principal{}, unknown
	}
	return principal{role: role, tokenID: t.ID}, nil
}

// tokenCreateRequest is the body of POST /v1/tokens.
type tokenCreateRequest struct {
	Role string `json:"role"`
	Name string `json:"name"`
}

// TokenInfo is a named token as GET /v1/tokens lists it: never the token
// itself.
type TokenInfo struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Name      string `json:"name,omitempty"`
	Hint      string `json:"hint,omitempty"`
	By        string `json:"by,omitempty"`
	Created   string `json:"created,omitempty"`
	Seq       uint64 `json:"seq"`
	Revoked   string `json:"revoked,omitempty"`
	RevokedBy string `json:"revoked_by,omitempty"`
}

func infoOf(t projections.Token) TokenInfo {
	return TokenInfo{ID: t.ID, Role: t.Role, Name: t.Name, Hint: t.Hint, By: t.By, Created: t.Created,
		Seq: t.Seq, Revoked: t.Revoked, RevokedBy: t.RevokedBy}
}

// TokenCreated is the answer to POST /v1/tokens: the only time the token
// is shown.
type TokenCreated struct {
	TokenInfo
	Token string `json:"token"`
	// Applied is true once this node accepts the token (its read models
	// hold the event).
	Applied bool `json:"applied"`
}

// tokenRevokedResponse is the answer to DELETE /v1/tokens/{token_id}.
type tokenRevokedResponse struct {
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
	// Applied is true once this node refuses the token.
	Applied bool `json:"applied"`
}

// TokenList is the answer to GET /v1/tokens.
type TokenList struct {
	Tokens []TokenInfo `json:"tokens"`
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	b, e := readBody(w, r, s.cfg.Limits.MaxSmallBody)
	if e != nil {
		return e
	}
	var req tokenCreateRequest
	if e := decodeStrict(b, &req); e != nil {
		return e
	}
	role := natsutil.Role(req.Role)
	if !slices.Contains(natsutil.TokenRoles, role) {
		return badRequest("role", "%q: want one of %s", req.Role, roleList(natsutil.TokenRoles))
	}
	req.Name = strings.TrimSpace(req.Name)
	if req.Name != "" && !validName(req.Name) {
		return badRequest("name", "a name is 1-%d printable characters", maxNameLen)
	}
	if s.tokenReads() == nil {
		return unavailable("this node keeps no read models, so it cannot check named tokens")
	}
	tok, err := natsutil.NewToken()
	if err != nil {
		return unavailable("%v", err)
	}
	// A short id: the ingest service's redaction step would take a long
	// random one under a "token_id" key for a secret.
	id, e := s.newTokenID()
	if e != nil {
		return e
	}
	data, err := events.ToData(events.TokenCreated{TokenID: id, Role: string(role), Name: req.Name,
		Hash: tokenDigest(tok), Hint: tok[len(tok)-4:], By: actor(who)})
	if err != nil {
		return unavailable("%v", err)
	}
	seq, e := s.appendControl(r.Context(), who, events.KindTokenCreated, data)
	if e != nil {
		return e
	}
	out := TokenCreated{Token: tok}
	out.TokenInfo = TokenInfo{ID: id, Role: string(role), Name: req.Name, Hint: tok[len(tok)-4:], By: actor(who), Seq: seq}
	if s.waitApplied(r.Context(), seq) {
		// Applied only if the read models hold this very token (an event
		// the log changed, by redaction say, would not be).
		if t, err := s.tokenReads().TokenByHash(tokenDigest(tok)); err == nil && t.ID == id && t.Seq == seq {
			out.TokenInfo, out.Applied = infoOf(t), true
		}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	all, e := queryBool(r, "all")
	if e != nil {
		return e
	}
	tr := s.tokenReads()
	if tr == nil {
		return unavailable("this node keeps no read models")
	}
	ts, err := tr.Tokens()
	if err != nil {
		return readError(err)
	}
	out := TokenList{Tokens: []TokenInfo{}}
	for _, t := range ts {
		if all || t.Active() {
			out.Tokens = append(out.Tokens, infoOf(t))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	id := r.PathValue("token_id")
	if !events.ValidToken(id) {
		return badRequest("token_id", "%q is not a token id (vigil token list shows them)", id)
	}
	var reason string
	if v := r.URL.Query().Get("reason"); v != "" {
		if !validName(v) {
			return badRequest("reason", "a reason is 1-%d printable characters", maxNameLen)
		}
		reason = v
	}
	tr := s.tokenReads()
	if tr == nil {
		return unavailable("this node keeps no read models")
	}
	t, err := tr.Token(id)
	if err != nil {
		return readError(err)
	}
	if !t.Active() {
		return &apiError{Status: http.StatusNotFound, Field: "token_id", reason: "not_found",
			Message: fmt.Sprintf("token %s was revoked at log seq %d", id, t.RevokedSeq)}
	}
	data, err := events.ToData(events.TokenRevoked{TokenID: id, By: actor(who), Reason: reason})
	if err != nil {
		return unavailable("%v", err)
	}
	seq, e := s.appendControl(r.Context(), who, events.KindTokenRevoked, data)
	if e != nil {
		return e
	}
	writeJSON(w, http.StatusOK, tokenRevokedResponse{ID: id, Seq: seq, Applied: s.waitApplied(r.Context(), seq)})
	return nil
}

// newTokenID returns an id no token has: "tk-" and 8 hex digits.
func (s *Server) newTokenID() (string, *apiError) {
	for range 8 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", unavailable("%v", err)
		}
		id := "tk-" + hex.EncodeToString(b[:])
		_, err := s.tokenReads().Token(id)
		switch {
		case errors.Is(err, projections.ErrNotFound):
			return id, nil
		case err != nil:
			return "", readError(err)
		}
	}
	return "", unavailable("no free token id; retry")
}

// appendControl appends a global control event with the caller's role's
// credential (the ingest service refuses it unless that is an admin's).
func (s *Server) appendControl(ctx context.Context, who principal, kind events.Kind, data map[string]any) (uint64, *apiError) {
	ev := events.Event{V: events.CurrentVersion, ID: ulid.Make().String(), Kind: kind,
		Agent: actor(who), Time: time.Now().UTC(), Data: data}
	if err := ev.Validate(); err != nil {
		return 0, badRequest("", "%v", err)
	}
	cl, e := s.clientFor(who.role)
	if e != nil {
		return 0, e
	}
	res, err := cl.Append(ctx, ev)
	if err != nil {
		return 0, ingestError(err)
	}
	return res.Seq, nil
}

// actor names who made a change over HTTP, as the log records it:
// "http:<role>", with the named token's id when it was one.
func actor(who principal) string {
	if who.tokenID != "" {
		return "http:" + string(who.role) + "/" + who.tokenID
	}
	return "http:" + string(who.role)
}

// waitApplied waits (at most maxApplyWait) until this node's read models
// hold log record seq, and reports whether they do.
func (s *Server) waitApplied(ctx context.Context, seq uint64) bool {
	if s.cfg.Reads == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, maxApplyWait)
	defer cancel()
	return s.cfg.Reads.WaitPosition(ctx, seq)
}
