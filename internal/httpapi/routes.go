package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Route is one route of the server: what schemas/openapi.yaml must describe.
type Route struct {
	Method string
	// Path is the route's path, with {name} for a path parameter (the same
	// syntax in net/http patterns and OpenAPI).
	Path string
	// Roles may use the route; nil means no token is needed.
	Roles []natsutil.Role
	// Stream is set on routes that hold the response open (a long poll, a
	// live stream): they set their own write deadlines.
	Stream bool
}

type handlerFunc func(s *Server, w http.ResponseWriter, r *http.Request, who principal) *apiError

type route struct {
	Route
	h handlerFunc
}

var (
	roleAgent    = natsutil.RoleAgent
	roleRuntime  = natsutil.RoleRuntime
	roleApprover = natsutil.RoleApprover
	roleAdmin    = natsutil.RoleAdmin

	// producers send agent events and gate actions.
	producers = []natsutil.Role{roleAgent, roleRuntime, roleAdmin}
	// people read the queue, the config and the allowlist, and decide.
	people = []natsutil.Role{roleApprover, roleAdmin}
	admins = []natsutil.Role{roleAdmin}
)

// table is every route, in the order docs/http.md lists them.
var table = []route{
	{Route{Method: http.MethodGet, Path: "/healthz"}, (*Server).healthz},
	{Route{Method: http.MethodGet, Path: "/readyz"}, (*Server).readyz},
	{Route{Method: http.MethodGet, Path: "/metrics", Roles: people}, (*Server).serveMetrics},
	{Route{Method: http.MethodPost, Path: "/v1/events", Roles: producers}, (*Server).appendEvents},
	{Route{Method: http.MethodPost, Path: "/v1/gate", Roles: producers, Stream: true}, (*Server).gate},
	{Route{Method: http.MethodGet, Path: "/v1/pending", Roles: people}, (*Server).pending},
	{Route{Method: http.MethodPost, Path: "/v1/approvals", Roles: people, Stream: true}, (*Server).approve},
	{Route{Method: http.MethodGet, Path: "/v1/stream", Roles: people, Stream: true}, (*Server).stream},
	{Route{Method: http.MethodGet, Path: "/v1/config", Roles: people}, (*Server).showConfig},
	{Route{Method: http.MethodPut, Path: "/v1/config", Roles: admins}, (*Server).setConfig},
	{Route{Method: http.MethodGet, Path: "/v1/allowlist", Roles: people}, (*Server).allowlist},
	{Route{Method: http.MethodDelete, Path: "/v1/allowlist/{entry_id}", Roles: people}, (*Server).revokeAllowlist},
	{Route{Method: http.MethodGet, Path: "/v1/conversations/{conversation}/events", Roles: people}, (*Server).conversationEvents},
	{Route{Method: http.MethodGet, Path: "/v1/tokens", Roles: admins}, (*Server).listTokens},
	{Route{Method: http.MethodPost, Path: "/v1/tokens", Roles: admins}, (*Server).createToken},
	{Route{Method: http.MethodDelete, Path: "/v1/tokens/{token_id}", Roles: admins}, (*Server).revokeToken},
	{Route{Method: http.MethodGet, Path: "/v1/audit/checkpoint", Roles: people}, (*Server).auditCheckpoint},
	{Route{Method: http.MethodGet, Path: "/v1/audit/proof/{seq}", Roles: people}, (*Server).auditProof},
	{Route{Method: http.MethodGet, Path: "/pair"}, (*Server).pairingPage},
	{Route{Method: http.MethodGet, Path: "/pair.js"}, (*Server).pairingScript},
	{Route{Method: http.MethodPost, Path: "/pair"}, (*Server).requestPairing},
	{Route{Method: http.MethodGet, Path: "/pair/{request_id}"}, (*Server).pairingState},
	{Route{Method: http.MethodGet, Path: "/v1/pairing", Roles: admins}, (*Server).listPairing},
}

// Routes lists every route the server serves: the API's and the
// approval page's (schemas/openapi.yaml describes them all).
func Routes() []Route {
	out := make([]Route, 0, len(table)+len(pageTable))
	for _, r := range slices.Concat(table, pageTable) {
		r.Roles = slices.Clone(r.Roles)
		out = append(out, r.Route)
	}
	return out
}

// pattern is rt's net/http pattern: its method and path, a path ending
// in / matching that path only (not the subtree under it).
func (rt Route) pattern() string {
	p := rt.Method + " " + rt.Path
	if strings.HasSuffix(rt.Path, "/") {
		p += "{$}"
	}
	return p
}

// routes builds the mux: each route behind its auth check, every
// response counted, a panic answered with 500.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range table {
		mux.Handle(rt.pattern(), s.wrap(rt))
	}
	s.pageRoutes(mux) // the approval page (page.go)
	// Anything else: a JSON 404 (or 405 from the mux for a known path).
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.metrics.refused("not_found")
		writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no route %s %s; see docs/http.md", r.Method, r.URL.Path), reason: "not_found"})
	})
	return s.checkHost(mux)
}

func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("httpapi: handler panicked", "route", rt.Path, "panic", fmt.Sprint(v))
				if rec.status == 0 {
					writeError(rec, &apiError{Status: http.StatusInternalServerError, Message: "internal error", reason: "internal"})
				}
			}
			s.metrics.request(rt.Method+" "+rt.Path, rec.status, time.Since(start))
		}()
		if !rt.Stream {
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.Limits.WriteTimeout))
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		var who principal
		if rt.Roles != nil {
			p, err := s.authenticate(r, rt.Roles)
			if err != nil {
				s.metrics.refused(err.reason)
				if err.Status == http.StatusUnauthorized {
					rec.Header().Set("WWW-Authenticate", `Bearer realm="vigil"`)
				}
				writeError(rec, err)
				return
			}
			who = p
		}
		if err := rt.h(s, rec, r, who); err != nil {
			if err.reason != "" {
				s.metrics.refused(err.reason)
			}
			writeError(rec, err)
		}
	})
}

// statusRecorder remembers the status written, for the metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func statusLabel(code int) string {
	if code == 0 {
		code = http.StatusOK
	}
	return strconv.Itoa(code)
}
