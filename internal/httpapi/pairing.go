package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// Device pairing over HTTP (processors/pairing has the rules). A browser
// POSTs /pair and gets a code to read to the admin, plus a secret it keeps;
// the admin runs `vigil pairing approve web CODE`; the browser polls
// GET /pair/{request_id} with its secret (header HeaderPairSecret) and,
// once approved, that poll sets an approver session cookie (issueSession)
// named after the device. Neither the code nor the secret is ever stored
// or logged: the log holds their keyed hashes (Config.PairingKey). The
// routes need no token (the browser has none yet); what they can do is
// bounded by the fold's limits, checked before anything is appended, so
// an anonymous flood appends nothing once the limits are reached.

// HeaderPairSecret carries a pairing request's secret on GET /pair/{request_id}.
const HeaderPairSecret = "Vigil-Pair-Secret"

// pairingWait bounds how long POST /pair waits for its request to be folded.
const pairingWait = 10 * time.Second

// pairingService is the API's view of pairing: a Reader following the
// pairing events, and which approved requests have claimed their session.
type pairingService struct {
	key     []byte
	reader  *pairinglog.Reader
	mu      sync.Mutex
	claimed map[string]bool
}

// startPairing follows the pairing events (when the server has a pairing
// key and a JetStream), ending the sessions of devices revoked.
func (s *Server) startPairing() {
	if len(s.cfg.PairingKey) == 0 || s.cfg.JetStream == nil {
		return
	}
	p := &pairingService{key: s.cfg.PairingKey, reader: pairinglog.NewReader(s.cfg.JetStream), claimed: map[string]bool{}}
	p.reader.OnOutcome = func(o pairing.Outcome) {
		if o.Result == pairing.ResultRevoked && o.Name != "" && s.sessions != nil {
			if n := s.endSessionsNamed(o.Name); n > 0 {
				s.log.Info("httpapi: sessions of a revoked device ended", "device", o.Name, "sessions", n)
			}
		}
	}
	s.pairing = p
	s.follow("pairing events", p.reader.Follow)
}

// pairingStarted is POST /pair's answer.
type pairingStarted struct {
	RequestID string `json:"request_id"`
	// Code is what the person reads to the admin ("ABCD-EFGH").
	Code string `json:"code"`
	// Secret proves this browser's claim when it polls (HeaderPairSecret).
	Secret    string    `json:"secret"`
	ExpiresAt time.Time `json:"expires_at"`
	StatusURL string    `json:"status_url"`
	// Approve is the command the admin runs.
	Approve string `json:"approve"`
}

// pairingStatus is GET /pair/{request_id}'s answer.
type pairingStatus struct {
	RequestID string    `json:"request_id"`
	State     string    `json:"state"`
	ExpiresAt time.Time `json:"expires_at"`
	// Name is the device's name, once approved.
	Name string `json:"name,omitempty"`
	// Session is true on the poll that started the browser's session.
	Session bool   `json:"session,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (s *Server) pairingUnavailable() *apiError {
	return unavailable("device pairing is not enabled on this server (it needs the node's pairing key and JetStream)")
}

// clientAddr is the address the per-client limit counts: the peer's IP
// (a proxy in front of Vigil makes all its clients one).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// refuseAgents refuses a pairing request that proves it comes from an
// agent (or its runtime): a token of those roles. An agent that sends no
// token is an anonymous browser like any other; what stops it is that
// only the admin approves, by a code read on the device being paired.
func (s *Server) refuseAgents(r *http.Request) *apiError {
	if r.Header.Get("Authorization") == "" {
		return nil
	}
	p, e := s.authenticate(r, natsutil.TokenRoles)
	if e == nil && (p.role == roleAgent || p.role == roleRuntime) {
		return &apiError{Status: http.StatusForbidden, reason: "forbidden", Needs: people,
			Message: fmt.Sprintf("%s needs the %s role, or no token (a browser to pair has none); this token is %s, and agents may not pair devices",
				r.Pattern, roleList(people), p.role)}
	}
	return nil
}

func pairingRefused(reason string) *apiError {
	msg := "pairing refused: "
	switch reason {
	case pairing.ReasonLocked:
		msg += "too many failed approvals; pairing is locked out for an hour"
	case pairing.ReasonRateLimited:
		msg += "one request per client every " + pairing.ClientInterval.String() + "; wait, or use the code already shown"
	case pairing.ReasonTooMany:
		msg += "too many codes are waiting for the admin; ask them to approve, deny or clear the pending ones (vigil pairing clear-pending)"
	default:
		msg += reason
	}
	return &apiError{Status: http.StatusTooManyRequests, Message: msg, reason: "pairing_" + reason}
}

// requestPairing is POST /pair: a new code for this browser.
func (s *Server) requestPairing(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	p := s.pairing
	if p == nil {
		return s.pairingUnavailable()
	}
	if e := s.refuseAgents(r); e != nil {
		return e
	}
	// A page of another site may not spend this server's pairing limits
	// from a visitor's browser (a client with no Origin, curl, may).
	if r.Header.Get("Origin") != "" {
		if e := s.checkSameOrigin(r); e != nil {
			return e
		}
	}
	if r.ContentLength > 0 {
		if _, e := readBody(w, r, s.cfg.Limits.MaxSmallBody); e != nil {
			return e
		}
	}
	addr := clientAddr(r)
	clientHash := pairing.HashClient(p.key, addr)
	// The fold's limits first, on what has been folded so far: a request
	// that would be refused is refused here and appends nothing.
	var refused string
	p.reader.Current(func(f *pairing.Fold) { refused = f.WouldRefuse(clientHash, time.Now()) })
	if refused != "" {
		return pairingRefused(refused)
	}
	cl, e := s.clientFor(roleAdmin)
	if e != nil {
		return e
	}
	code, err := pairinglog.NewCode()
	if err != nil {
		return unavailable("no randomness: %v", err)
	}
	secret, err := pairinglog.NewSecret()
	if err != nil {
		return unavailable("no randomness: %v", err)
	}
	id, err := pairinglog.NewRequestID()
	if err != nil {
		return unavailable("no randomness: %v", err)
	}
	ev := pairinglog.RequestEvent(p.key, id, code, secret, addr, "http")
	res, err := cl.Append(r.Context(), ev)
	if err != nil {
		return ingestError(err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), pairingWait)
	defer cancel()
	o, err := p.reader.WaitOutcome(ctx, res.Seq)
	if err != nil {
		return unavailable("the request was stored (log seq %d) but its outcome is not known yet: %v", res.Seq, err)
	}
	if o.Result != pairing.ResultAccepted {
		return pairingRefused(o.Reason)
	}
	var req pairing.Request
	p.reader.Current(func(f *pairing.Fold) { req, _ = f.Get(id) })
	s.log.Info("httpapi: pairing requested", "request", id, "seq", res.Seq)
	writeJSON(w, http.StatusCreated, pairingStarted{
		RequestID: id, Code: pairing.FormatCode(code), Secret: secret, ExpiresAt: req.ExpiresAt.UTC(),
		StatusURL: "/pair/" + id, Approve: "vigil pairing approve web " + pairing.FormatCode(code),
	})
	return nil
}

// pairingState is GET /pair/{request_id}: how the request stands, for the
// browser that holds its secret; the poll that first sees it approved
// starts the browser's approver session.
func (s *Server) pairingState(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	p := s.pairing
	if p == nil {
		return s.pairingUnavailable()
	}
	if e := s.refuseAgents(r); e != nil {
		return e
	}
	id := r.PathValue("request_id")
	secret := r.Header.Get(HeaderPairSecret)
	var req pairing.Request
	found := false
	p.reader.Current(func(f *pairing.Fold) { req, found = f.Get(id) })
	claim := pairing.HashClaim(p.key, secret)
	if !found || secret == "" || req.ClaimHash == "" || subtle.ConstantTimeCompare([]byte(claim), []byte(req.ClaimHash)) != 1 {
		return &apiError{Status: http.StatusNotFound, Field: HeaderPairSecret, reason: "pairing_unknown",
			Message: "no pairing request with this id and secret (send the secret POST /pair gave in the " + HeaderPairSecret + " header)"}
	}
	out := pairingStatus{RequestID: id, State: req.State, ExpiresAt: req.ExpiresAt.UTC(), Reason: req.Reason}
	if req.State == pairing.StateApproved {
		out.Name = req.Name
		if e := s.claimSession(w, p, req); e != nil {
			return e
		}
		out.Session = true
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// claimSession starts the approver session of an approved request, once:
// a later poll (the secret leaked from the browser) gets 409, and so does
// one more than pairing.CodeTTL after the approval.
func (s *Server) claimSession(w http.ResponseWriter, p *pairingService, req pairing.Request) *apiError {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed[req.ID] || time.Since(req.DecidedAt) > pairing.CodeTTL {
		return &apiError{Status: http.StatusConflict, reason: "pairing_claimed",
			Message: "this pairing's session was already started (or its hour to start it has passed); pair again if this browser has no session"}
	}
	if s.sessions == nil {
		return unavailable("this server keeps no browser sessions")
	}
	if err := s.issueSession(w, roleApprover, req.Name); err != nil {
		if errors.Is(err, ErrTooManySessions) {
			return unavailable("%v", err)
		}
		return &apiError{Status: http.StatusInternalServerError, reason: "internal", Message: "the session could not start: " + err.Error()}
	}
	p.claimed[req.ID] = true
	s.log.Info("httpapi: paired device's session started", "request", req.ID, "device", req.Name)
	return nil
}

// pairingView is GET /v1/pairing's answer: the requests and devices, never
// a code, a secret or a hash.
type pairingView struct {
	Requests []pairing.Request `json:"requests"`
	Lockout  pairing.Lockout   `json:"lockout"`
	Seq      uint64            `json:"seq"`
}

// listPairing is GET /v1/pairing (admin): what `vigil pairing list` shows.
func (s *Server) listPairing(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	p := s.pairing
	if p == nil {
		return s.pairingUnavailable()
	}
	var out pairingView
	p.reader.Current(func(f *pairing.Fold) {
		out = pairingView{Requests: f.Requests(), Lockout: f.Lock(), Seq: f.Seq()}
	})
	if out.Requests == nil {
		out.Requests = []pairing.Request{}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
