package httpapi

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Browser sessions: the approval page logs in once with a token (or a
// paired device is approved, see issueSession) and then carries a cookie
// instead of the token. The cookie is HttpOnly and SameSite=Strict, its
// value a random 256-bit id the server keeps only as a SHA-256 digest,
// with the session's role, name and expiry. A request that changes state
// with a cookie must also carry the session's CSRF token (HeaderCSRF, an
// HMAC of the session under a key only this server holds, so it is bound
// to the session and never stored) and an Origin header naming this
// server. Sessions live in memory: a restart logs every browser out.

const (
	// SessionCookie is the name of the session cookie.
	SessionCookie = "vigil_session"
	// HeaderCSRF carries a session's CSRF token on state-changing requests.
	HeaderCSRF = "Vigil-CSRF"
	// sessionIDBytes is the size of a session id: 256 random bits.
	sessionIDBytes = 32
	// sessionTTL is how long a session lasts from its login.
	sessionTTL = 12 * time.Hour
	// maxSessions bounds the sessions kept at once.
	maxSessions = 4096
)

// Session errors callers branch on.
var (
	// ErrSessionRole: only the approver and admin roles get sessions.
	ErrSessionRole = errors.New("httpapi: browser sessions are for the approver and admin roles")
	// ErrSessionName: a session's name is 1-64 printable characters.
	ErrSessionName = fmt.Errorf("httpapi: a session's name is 1-%d printable characters", maxNameLen)
	// ErrTooManySessions: the store is full of sessions that have not expired.
	ErrTooManySessions = fmt.Errorf("httpapi: %d browser sessions are open, the limit", maxSessions)
)

type sessionKey [sha256.Size]byte

// session is what the server keeps of a browser session.
type session struct {
	role    natsutil.Role
	name    string
	created time.Time
	expires time.Time
	// token is the digest of the token the session logged in with (zero
	// for a paired device): a token no longer valid ends its sessions.
	token [sha256.Size]byte
}

// sessionStore holds the sessions by the digest of their id.
type sessionStore struct {
	// csrfKey keys the CSRF tokens; it never leaves the process.
	csrfKey [32]byte
	now     func() time.Time
	ttl     time.Duration

	mu   sync.Mutex
	byID map[sessionKey]*session
}

func newSessionStore() *sessionStore {
	st := &sessionStore{now: time.Now, ttl: sessionTTL, byID: map[sessionKey]*session{}}
	rand.Read(st.csrfKey[:]) // never fails (crypto/rand)
	return st
}

// create stores a new session and returns its id (the cookie's value).
func (st *sessionStore) create(role natsutil.Role, name string, token [sha256.Size]byte) (string, *session, error) {
	if role != roleApprover && role != roleAdmin {
		return "", nil, ErrSessionRole
	}
	if !validName(name) {
		return "", nil, ErrSessionName
	}
	var raw [sessionIDBytes]byte
	rand.Read(raw[:])
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	now := st.now()
	sess := &session{role: role, name: name, created: now, expires: now.Add(st.ttl), token: token}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.byID) >= maxSessions {
		st.expireLocked(now)
		if len(st.byID) >= maxSessions {
			return "", nil, ErrTooManySessions
		}
	}
	st.byID[sessionDigest(id)] = sess
	return id, sess, nil
}

func sessionDigest(id string) sessionKey { return sha256.Sum256([]byte(id)) }

// lookup returns the live session of id, or nil.
func (st *sessionStore) lookup(id string) (sessionKey, *session) {
	k := sessionDigest(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	sess, ok := st.byID[k]
	if !ok {
		return k, nil
	}
	if !st.now().Before(sess.expires) {
		delete(st.byID, k)
		return k, nil
	}
	return k, sess
}

// end forgets one session.
func (st *sessionStore) end(k sessionKey) {
	st.mu.Lock()
	delete(st.byID, k)
	st.mu.Unlock()
}

// endWhere forgets every session for which match is true and says how many.
func (st *sessionStore) endWhere(match func(*session) bool) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for k, sess := range st.byID {
		if match(sess) {
			delete(st.byID, k)
			n++
		}
	}
	return n
}

func (st *sessionStore) expireLocked(now time.Time) {
	for k, sess := range st.byID {
		if !now.Before(sess.expires) {
			delete(st.byID, k)
		}
	}
}

// csrf is the CSRF token of the session whose id digests to k.
func (st *sessionStore) csrf(k sessionKey) string {
	m := hmac.New(sha256.New, st.csrfKey[:])
	m.Write([]byte("vigil-csrf\x00"))
	m.Write(k[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// setSessionCookie sends the cookie of session id.
func setSessionCookie(w http.ResponseWriter, id string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: id, Path: "/", Expires: expires,
		MaxAge: max(1, int(time.Until(expires).Seconds())), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
}

// clearSessionCookie tells the browser to forget its session cookie.
func clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// issueSession starts a browser session of role (approver or admin) named
// name (what the log records as the approver: "http:<name>") and sets its
// cookie on w. Device pairing calls it when the admin approves a paired
// browser; the login form calls it for a token. It fails with
// ErrSessionRole, ErrSessionName or ErrTooManySessions.
func (s *Server) issueSession(w http.ResponseWriter, role natsutil.Role, name string) error {
	_, err := s.startSession(w, role, name, [sha256.Size]byte{})
	return err
}

func (s *Server) startSession(w http.ResponseWriter, role natsutil.Role, name string, token [sha256.Size]byte) (sessionInfo, error) {
	id, sess, err := s.sessions.create(role, name, token)
	if err != nil {
		return sessionInfo{}, err
	}
	setSessionCookie(w, id, sess.expires)
	s.log.Info("httpapi: browser session started", "role", role, "name", name)
	return s.sessions.info(sessionDigest(id), sess), nil
}

// endSessionsNamed ends every browser session named name (a paired device
// revoked) and says how many there were.
func (s *Server) endSessionsNamed(name string) int {
	return s.sessions.endWhere(func(sess *session) bool { return sess.name == name })
}

// sessionInfo is what GET /ui/session and a login answer.
type sessionInfo struct {
	Role    natsutil.Role `json:"role"`
	Name    string        `json:"name"`
	CSRF    string        `json:"csrf"`
	Expires time.Time     `json:"expires"`
}

func (st *sessionStore) info(k sessionKey, sess *session) sessionInfo {
	return sessionInfo{Role: sess.role, Name: sess.name, CSRF: st.csrf(k), Expires: sess.expires.UTC()}
}

// safeMethod reports whether a request with method m changes no state.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sessionAuth authenticates a request by its session cookie, for
// authenticate when it has no Authorization header. ok is false when the
// request has no session cookie; otherwise the principal or the refusal.
func (s *Server) sessionAuth(r *http.Request, roles []natsutil.Role) (p principal, e *apiError, ok bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || s.sessions == nil {
		return principal{}, nil, false
	}
	k, sess := s.sessions.lookup(c.Value)
	if sess == nil {
		return principal{}, &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: roles,
			Message: "the session has ended or expired: log in again at /"}, true
	}
	if sess.token != ([sha256.Size]byte{}) && !s.sessionTokenValid(sess) {
		s.sessions.end(k)
		return principal{}, &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: roles,
			Message: "the token this session logged in with is no longer valid: log in again at /"}, true
	}
	if !safeMethod(r.Method) {
		if e := s.checkSameOrigin(r); e != nil {
			return principal{}, e, true
		}
		got := r.Header.Get(HeaderCSRF)
		if got == "" || !hmac.Equal([]byte(got), []byte(s.sessions.csrf(k))) {
			return principal{}, &apiError{Status: http.StatusForbidden, reason: "csrf", Field: HeaderCSRF,
				Message: "a request that changes state with a session cookie needs the session's " + HeaderCSRF + " header (GET /ui/session)"}, true
		}
	}
	if !slices.Contains(roles, sess.role) {
		return principal{}, &apiError{Status: http.StatusForbidden, reason: "forbidden", Needs: roles,
			Message: fmt.Sprintf("%s needs the %s role; this session is %s", r.Pattern, roleList(roles), sess.role)}, true
	}
	return principal{role: sess.role, name: sess.name}, nil, true
}

// sessionTokenValid reports whether the token a session logged in with
// still authenticates as the session's role, a role file's token or a
// named token in force (tokens.go): a token revoked ends the sessions it
// opened, at their next request. Read models that cannot answer end the
// session too (never a guess).
func (s *Server) sessionTokenValid(sess *session) bool {
	for _, e := range s.tokens.entries {
		if e.sum == sess.token {
			return e.role == sess.role
		}
	}
	tr := s.tokenReads()
	if tr == nil {
		return false
	}
	t, err := tr.TokenByHash("sha256:" + hex.EncodeToString(sess.token[:]))
	return err == nil && natsutil.Role(t.Role) == sess.role
}

// checkSameOrigin refuses a state-changing browser request whose Origin
// is not this server (a cross-site form or script). Browsers send Origin
// on every POST, PUT and DELETE; one without it is refused too.
func (s *Server) checkSameOrigin(r *http.Request) *apiError {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return &apiError{Status: http.StatusForbidden, reason: "csrf", Field: "Origin",
			Message: "a request that changes state with a session cookie needs an Origin header naming this server"}
	}
	if !s.originServed(r, origin) {
		return &apiError{Status: http.StatusForbidden, reason: "csrf", Field: "Origin",
			Message: fmt.Sprintf("Origin %q is not this server: cross-site requests are refused (a name this server serves is configured with --http-host)", clip(origin, 256))}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return &apiError{Status: http.StatusForbidden, reason: "csrf", Field: "Sec-Fetch-Site",
			Message: fmt.Sprintf("Sec-Fetch-Site %q: only same-origin requests may use a session", site)}
	}
	return nil
}

// loginRequest is the body of POST /ui/session.
type loginRequest struct {
	Token string `json:"token"`
	// Name is who logs in, recorded as the approver of their verdicts;
	// default the token's role.
	Name string `json:"name"`
}

// login exchanges an approver or admin token for a session cookie. The
// token is checked like a bearer token; an agent or runtime token gets
// 403 (it can never approve, so it gets no page).
func (s *Server) login(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if e := s.checkSameOrigin(r); e != nil {
		return e
	}
	b, e := readBody(w, r, s.cfg.Limits.MaxSmallBody)
	if e != nil {
		return e
	}
	var req loginRequest
	if e := decodeStrict(b, &req); e != nil {
		return e
	}
	tok := strings.TrimSpace(req.Token)
	if tok == "" {
		return badRequest("token", "required: an approver token (DATA/creds/approver.token)")
	}
	who, e := s.lookupToken(tok, people)
	if e != nil {
		e.Field = "token"
		return e
	}
	role := who.role
	if !slices.Contains(people, role) {
		return &apiError{Status: http.StatusForbidden, reason: "forbidden", Field: "token", Needs: people,
			Message: fmt.Sprintf("the page needs the %s role; this token is %s", roleList(people), role)}
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = string(role)
	}
	info, err := s.startSession(w, role, name, sha256.Sum256([]byte(tok)))
	switch {
	case errors.Is(err, ErrSessionName):
		return badRequest("name", "a name is 1-%d printable characters", maxNameLen)
	case errors.Is(err, ErrTooManySessions):
		return &apiError{Status: http.StatusServiceUnavailable, reason: "busy", Message: err.Error() + "; retry later"}
	case err != nil:
		return &apiError{Status: http.StatusForbidden, reason: "forbidden", Message: err.Error()}
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

// currentSession answers who the session cookie is, with its CSRF token
// (the page reads it on load).
func (s *Server) currentSession(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: people,
			Message: "no session: log in with POST /ui/session"}
	}
	k, sess := s.sessions.lookup(c.Value)
	if sess == nil || (sess.token != ([sha256.Size]byte{}) && !s.sessionTokenValid(sess)) {
		clearSessionCookie(w)
		return &apiError{Status: http.StatusUnauthorized, reason: "unauthenticated", Needs: people,
			Message: "the session has ended or expired: log in again"}
	}
	writeJSON(w, http.StatusOK, s.sessions.info(k, sess))
	return nil
}

// logout ends the request's session (authenticated, with its CSRF token).
func (s *Server) logout(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		s.sessions.end(sessionDigest(c.Value))
	}
	clearSessionCookie(w)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
