package attack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// The HTTP API's boundaries (docs/http.md, docs/security.md), tried with
// nothing but a role's token and an ordinary HTTP client against a node
// started as `vigil serve` starts one, listening on loopback.

// withHTTP serves the HTTP API on a free loopback port, with limits.
func withHTTP(l httpapi.Limits) func(*node.Config) {
	return func(c *node.Config) {
		c.HTTPListen = "127.0.0.1:0"
		c.HTTPLimits = l
	}
}

// httpTarget is a node serving the HTTP API, and its roles' tokens.
type httpTarget struct {
	*target
	base   string
	tokens map[natsutil.Role]string
}

func startHTTPTarget(t *testing.T, l httpapi.Limits) *httpTarget {
	t.Helper()
	tg := startTarget(t, withHTTP(l))
	ht := &httpTarget{target: tg, base: tg.Info().HTTPURL, tokens: map[natsutil.Role]string{}}
	if ht.base == "" {
		t.Fatal("the node serves no HTTP API")
	}
	for _, r := range natsutil.TokenRoles {
		tok, err := natsutil.ReadToken(datadir.New(tg.dir).Creds().Dir(), r)
		if err != nil {
			t.Fatal(err)
		}
		ht.tokens[r] = tok
	}
	return ht
}

// noToken sends a request with no Authorization header.
const noToken natsutil.Role = ""

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request as role; body is sent as JSON (a string as is).
func (ht *httpTarget) do(t *testing.T, role natsutil.Role, method, path string, body any) httpReply {
	t.Helper()
	return ht.doAuth(t, ht.bearer(role), method, path, body)
}

func (ht *httpTarget) bearer(role natsutil.Role) string {
	if role == noToken {
		return ""
	}
	return "Bearer " + ht.tokens[role]
}

func (ht *httpTarget) doAuth(t *testing.T, auth, method, path string, body any) httpReply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, ht.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var b []byte
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		// A live stream: its headers are the answer.
		cancel()
	} else if b, err = io.ReadAll(resp.Body); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

func jsonAction(id, conv, command string) map[string]any {
	return map[string]any{"v": 1, "id": id, "kind": "action", "conversation": conv, "agent": "attacker",
		"data": map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
}

// waitPendingHTTP polls GET /v1/pending (as an approver) until id waits.
func (ht *httpTarget) waitPendingHTTP(t *testing.T, id string) map[string]any {
	t.Helper()
	var found map[string]any
	waitFor(t, id+" pending over HTTP", gateDeadline, func() bool {
		r := ht.do(t, natsutil.RoleApprover, "GET", "/v1/pending", nil)
		var out struct{ Pending []map[string]any }
		if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
			t.Fatalf("pending: %d %s", r.status, r.body)
		}
		for _, p := range out.Pending {
			if p["id"] == id {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// gateInBackground gates an action as the agent over HTTP, waiting long.
func (ht *httpTarget) gateInBackground(t *testing.T, ev map[string]any) <-chan httpReply {
	ch := make(chan httpReply, 1)
	b, _ := json.Marshal(ev)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", ht.base+"/v1/gate?wait=2m", bytes.NewReader(b))
		req.Header.Set("Authorization", ht.bearer(natsutil.RoleAgent))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- httpReply{}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		ch <- httpReply{status: resp.StatusCode, body: body}
	}()
	return ch
}

// matrixRequest is a request to one route that a role allowed to use it
// can make without harm, and the roles that may use the route: the
// security model (docs/security.md, docs/http.md), written here apart
// from the server's own route table.
type matrixRequest struct {
	path  string
	body  any
	roles []natsutil.Role // nil: no token needed
	// public routes need no token (device pairing: a browser to pair has
	// none); roles are then the tokens they accept (an agent's is refused).
	public bool
	// session routes are the approval page's browser session (a cookie,
	// not a bearer token): no token of any role may get a 2xx from them
	// (the page tests log in and out).
	session bool
}

var (
	agentR    = natsutil.RoleAgent
	runtimeR  = natsutil.RoleRuntime
	approverR = natsutil.RoleApprover
	adminR    = natsutil.RoleAdmin
)

// matrixRequests has one request per route of httpapi.Routes(); a route
// missing here fails TestHTTPPermissionMatrix, so a new route must be
// placed in the matrix.
var matrixRequests = map[string]matrixRequest{
	"GET /healthz": {path: "/healthz"},
	"GET /readyz":  {path: "/readyz"},
	"GET /metrics": {path: "/metrics", roles: []natsutil.Role{approverR, adminR}},
	"POST /v1/events": {path: "/v1/events", roles: []natsutil.Role{agentR, runtimeR, adminR},
		body: map[string]any{"v": 1, "kind": "message", "conversation": "c-matrix", "data": map[string]any{"role": "user", "content": "hello"}}},
	"POST /v1/gate": {path: "/v1/gate?wait=5s", roles: []natsutil.Role{agentR, runtimeR, adminR},
		body: jsonAction("", "c-matrix", "ls")},
	"GET /v1/pending": {path: "/v1/pending", roles: []natsutil.Role{approverR, adminR}},
	"POST /v1/approvals": {path: "/v1/approvals", roles: []natsutil.Role{approverR, adminR},
		body: map[string]any{"action_id": "nothing-waits", "verdict": "deny"}},
	"GET /v1/stream": {path: "/v1/stream", roles: []natsutil.Role{approverR, adminR}},
	"GET /v1/config": {path: "/v1/config", roles: []natsutil.Role{approverR, adminR}},
	"PUT /v1/config": {path: "/v1/config", roles: []natsutil.Role{adminR},
		body: map[string]any{"analyzers": map[string]any{"rules": true}, "confirmation": map[string]any{"mode": "risky", "threshold": "HIGH"}}},
	"GET /v1/allowlist":                           {path: "/v1/allowlist", roles: []natsutil.Role{approverR, adminR}},
	"DELETE /v1/allowlist/{entry_id}":             {path: "/v1/allowlist/al-none", roles: []natsutil.Role{approverR, adminR}},
	"GET /v1/conversations/{conversation}/events": {path: "/v1/conversations/c-matrix/events", roles: []natsutil.Role{approverR, adminR}},
	"GET /v1/tokens":                              {path: "/v1/tokens", roles: []natsutil.Role{adminR}},
	"POST /v1/tokens":                             {path: "/v1/tokens", roles: []natsutil.Role{adminR}, body: map[string]any{"role": "agent", "name": "matrix"}},
	"GET /v1/audit/checkpoint":                    {path: "/v1/audit/checkpoint", roles: []natsutil.Role{approverR, adminR}},
	"GET /v1/audit/proof/{seq}":                   {path: "/v1/audit/proof/1", roles: []natsutil.Role{approverR, adminR}},
	"DELETE /v1/tokens/{token_id}":                {path: "/v1/tokens/tk-00000000", roles: []natsutil.Role{adminR}},
	"GET /pair":                                   {path: "/pair", roles: []natsutil.Role{approverR, adminR}, public: true},
	"GET /pair.js":                                {path: "/pair.js", roles: []natsutil.Role{approverR, adminR}, public: true},
	"POST /pair":                                  {path: "/pair", roles: []natsutil.Role{approverR, adminR}, public: true},
	"GET /pair/{request_id}":                      {path: "/pair/web-none", roles: []natsutil.Role{approverR, adminR}, public: true},
	"GET /v1/pairing":                             {path: "/v1/pairing", roles: []natsutil.Role{adminR}},
	// The approval page: the page and its assets are public (they hold
	// no data); its reads need a person's token or session.
	"GET /":                       {path: "/", roles: []natsutil.Role{agentR, runtimeR, approverR, adminR}, public: true},
	"GET /ui/assets/{name}":       {path: "/ui/assets/app.js", roles: []natsutil.Role{agentR, runtimeR, approverR, adminR}, public: true},
	"POST /ui/session":            {path: "/ui/session", session: true},
	"GET /ui/session":             {path: "/ui/session", session: true},
	"DELETE /ui/session":          {path: "/ui/session", roles: []natsutil.Role{approverR, adminR}},
	"GET /ui/pending":             {path: "/ui/pending", roles: []natsutil.Role{approverR, adminR}},
	"GET /ui/actions/{action_id}": {path: "/ui/actions/nothing-waits", roles: []natsutil.Role{approverR, adminR}},
	"GET /ui/history":             {path: "/ui/history", roles: []natsutil.Role{approverR, adminR}},
}

// TestHTTPPermissionMatrix tries every role (and no token) on every route
// and checks each answer against the security model (matrixRequests): no
// token 401, a role the model does not allow 403 (naming the roles that
// may), a role it allows never 401 or 403. Only the probes need no token.
func TestHTTPPermissionMatrix(t *testing.T) {
	checkPermissionMatrix(t, startHTTPTarget(t, httpapi.Limits{}))
}

// checkPermissionMatrix runs the matrix with ht's tokens.
func checkPermissionMatrix(t *testing.T, ht *httpTarget) {
	roles := append([]natsutil.Role{noToken}, natsutil.TokenRoles...)
	served := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		key := rt.Method + " " + rt.Path
		served[key] = true
		req, ok := matrixRequests[key]
		if !ok {
			t.Errorf("route %s is not in the permission matrix; add it to matrixRequests", key)
			continue
		}
		if req.session {
			for _, role := range roles {
				if r := ht.do(t, role, rt.Method, req.path, req.body); r.status < 300 {
					t.Errorf("%s as %q without a session: %d %s, want no success", key, role, r.status, r.body)
				}
			}
			continue
		}
		if req.roles == nil && !req.public && rt.Path != "/healthz" && rt.Path != "/readyz" {
			t.Errorf("the matrix lets %s be used with no token; only the probes may", key)
		}
		for _, role := range roles {
			r := ht.do(t, role, rt.Method, req.path, req.body)
			name := string(role)
			if role == noToken {
				name = "no token"
			}
			allowed := req.roles == nil || (role != noToken && contains(req.roles, role)) || (role == noToken && req.public)
			switch {
			case allowed && (r.status == http.StatusUnauthorized || r.status == http.StatusForbidden):
				t.Errorf("%s as %s: %d %s, want it allowed", key, name, r.status, r.body)
			case !allowed && role == noToken:
				if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s with no token: %d %s, want 401 with WWW-Authenticate", key, r.status, r.body)
				}
			case !allowed:
				var e struct {
					Error string
					Needs []string
				}
				if r.status != http.StatusForbidden || json.Unmarshal(r.body, &e) != nil || len(e.Needs) != len(req.roles) || !strings.Contains(e.Error, "needs the") {
					t.Errorf("%s as %s: %d %s, want 403 naming the roles that may", key, name, r.status, r.body)
				}
			}
		}
	}
	for key := range matrixRequests {
		if !served[key] {
			t.Errorf("the matrix tries %s, which is not a route", key)
		}
	}
}

func contains(roles []natsutil.Role, r natsutil.Role) bool {
	for _, x := range roles {
		if x == r {
			return true
		}
	}
	return false
}

// TestHTTPNoToken: every route but the probes refuses a request with no
// token, a malformed Authorization header, another scheme, an unknown
// token of the right form, or a role's token with a byte changed.
func TestHTTPNoToken(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	fake, err := natsutil.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	admin := ht.tokens[natsutil.RoleAdmin]
	flipped := admin[:len(admin)-1] + string(admin[len(admin)-1]^1)
	auths := map[string]string{
		"none":          "",
		"no scheme":     admin,
		"basic":         "Basic " + admin,
		"empty bearer":  "Bearer ",
		"unknown token": "Bearer " + fake,
		"one byte off":  "Bearer " + flipped,
		"token + junk":  "Bearer " + admin + "x",
		"nkey seed":     "Bearer SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4",
	}
	for _, rt := range httpapi.Routes() {
		if rt.Roles == nil {
			continue
		}
		req := matrixRequests[rt.Method+" "+rt.Path]
		for what, auth := range auths {
			if r := ht.doAuth(t, auth, rt.Method, req.path, req.body); r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d %s, want 401", rt.Method, rt.Path, what, r.status, r.body)
			}
		}
	}
}

// TestHTTPAgentCannotApprove: an agent token can neither decide through
// /v1/approvals nor slip a verdict in as an event; the attempt in an event
// is refused by the ingest service, recorded in VIGIL_DLQ and alerted, as
// over NATS; the action still waits, and a person then decides it.
func TestHTTPAgentCannotApprove(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	gated := ht.gateInBackground(t, jsonAction("rm-self", "c-self", "rm -rf /"))
	p := ht.waitPendingHTTP(t, "rm-self")

	r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/approvals", map[string]any{"action_id": "rm-self", "verdict": "once"})
	if r.status != http.StatusForbidden {
		t.Fatalf("agent approves over /v1/approvals: %d %s", r.status, r.body)
	}
	for i, kind := range []string{"approval.decision", "allowlist.changed"} {
		ev := map[string]any{"v": 1, "id": fmt.Sprintf("forged-%d", i), "kind": kind, "conversation": "c-self",
			"data": map[string]any{"action_id": "rm-self", "verdict": "always", "approver": "security lead",
				"log_seq": p["seq"], "digest": p["digest"], "op": "add", "entry_id": "al-forged", "shape": p["shape"]}}
		r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/events", ev)
		if r.status != http.StatusForbidden {
			t.Fatalf("agent sends %s as an event: %d %s", kind, r.status, r.body)
		}
		// And in a batch behind an innocent event: nothing of it is stored.
		batch := []any{map[string]any{"v": 1, "id": fmt.Sprintf("cover-%d", i), "kind": "message", "conversation": "c-self",
			"data": map[string]any{"role": "user", "content": "hi"}}, ev}
		if r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/events", batch); r.status != http.StatusForbidden {
			t.Fatalf("agent sends %s in a batch: %d %s", kind, r.status, r.body)
		}
	}
	for _, rec := range ht.streamRecords(t, events.StreamLog) {
		ev, err := events.DecodeMsgpack(rec.Data)
		if err == nil && (ev.Kind.IsControl() || strings.HasPrefix(ev.ID, "cover-")) {
			t.Fatalf("stored from the agent's token: %s %s", ev.Kind, ev.ID)
		}
	}
	waitFor(t, "the forged verdicts in VIGIL_DLQ", gateDeadline, func() bool {
		return len(ht.streamRecords(t, events.StreamDLQ)) >= 4
	})
	waitFor(t, "an alert for the forged verdicts", gateDeadline, func() bool {
		for _, d := range ht.derived(t) {
			if d.Kind == events.KindAlert && strings.Contains(fmt.Sprint(d.Data), "control kind") {
				return true
			}
		}
		return false
	})
	if _, decided := decidedNow(t, ht.target, "rm-self"); decided {
		t.Fatal("the agent's action was decided by the agent's own attempts")
	}
	ht.waitPendingHTTP(t, "rm-self")
	// A person denies it; the agent's wait ends with deny by human.
	if r := ht.do(t, natsutil.RoleApprover, "POST", "/v1/approvals", map[string]any{"action_id": "rm-self", "verdict": "deny", "reason": "no"}); r.status != http.StatusOK {
		t.Fatalf("approver denies: %d %s", r.status, r.body)
	}
	g := <-gated
	var res struct{ Outcome, By string }
	if g.status != http.StatusOK || json.Unmarshal(g.body, &res) != nil || res.Outcome != "deny" || res.By != "human" {
		t.Fatalf("the agent's gate: %d %s", g.status, g.body)
	}
}

// TestHTTPAgentCannotReadAnotherConversation: while a victim's actions
// wait and are decided, an agent token reads nothing of them: not the
// queue, the live stream, the history, the config, the allowlist or the
// metrics; and reusing the victim's action id with other content is
// refused without its decision.
func TestHTTPAgentCannotReadAnotherConversation(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	victim := ht.gateInBackground(t, jsonAction("victim-1", "victim", "rm -rf / --no-preserve-root"))
	ht.waitPendingHTTP(t, "victim-1")
	for _, path := range []string{
		"/v1/pending", "/v1/pending?conversation=victim", "/v1/stream", "/v1/stream?conversation=victim",
		"/v1/conversations/victim/events", "/v1/config?conversation=victim", "/v1/allowlist", "/metrics",
	} {
		for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime} {
			if r := ht.do(t, role, "GET", path, nil); r.status != http.StatusForbidden || strings.Contains(string(r.body), "victim-1") {
				t.Errorf("%s GET %s: %d %s, want 403", role, path, r.status, r.body)
			}
		}
	}
	if r := ht.do(t, natsutil.RoleApprover, "POST", "/v1/approvals", map[string]any{"action_id": "victim-1", "verdict": "once"}); r.status != http.StatusOK {
		t.Fatalf("approve the victim's action: %d %s", r.status, r.body)
	}
	if r := <-victim; r.status != http.StatusOK || !strings.Contains(string(r.body), `"outcome":"allow"`) {
		t.Fatalf("the victim's gate: %d %s", r.status, r.body)
	}
	// The spy reuses the id in its own conversation, and in the victim's
	// with other content: refused, and never answered with the decision.
	for _, ev := range []map[string]any{
		jsonAction("victim-1", "spy", "rm -rf / --no-preserve-root"),
		jsonAction("victim-1", "victim", "echo hi"),
	} {
		r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/gate?wait=2s", ev)
		if r.status != http.StatusUnprocessableEntity || strings.Contains(string(r.body), "allow") || strings.Contains(string(r.body), "approver") {
			t.Fatalf("id reuse in %v: %d %s, want 422 without the decision", ev["conversation"], r.status, r.body)
		}
	}
}

// TestHTTPOnlyAdminsSetConfig: neither an agent nor an approver token can
// change the config that judges actions, through PUT /v1/config or as an
// event; nothing is stored.
func TestHTTPOnlyAdminsSetConfig(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	cfg := map[string]any{"analyzers": map[string]any{}, "confirmation": map[string]any{"mode": "never"}}
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime, natsutil.RoleApprover} {
		if r := ht.do(t, role, "PUT", "/v1/config", cfg); r.status != http.StatusForbidden {
			t.Errorf("%s PUT /v1/config: %d %s", role, r.status, r.body)
		}
		ev := map[string]any{"v": 1, "id": "cfg-" + string(role), "kind": "config", "data": cfg}
		if r := ht.do(t, role, "POST", "/v1/events", ev); r.status != http.StatusForbidden {
			t.Errorf("%s POST a config event: %d %s", role, r.status, r.body)
		}
	}
	for _, rec := range ht.streamRecords(t, events.StreamLog) {
		if ev, err := events.DecodeMsgpack(rec.Data); err == nil && ev.Kind == events.KindConfig {
			t.Fatalf("a config was stored: %s", ev.ID)
		}
	}
	if r := ht.do(t, natsutil.RoleAdmin, "PUT", "/v1/config", map[string]any{"analyzers": map[string]any{"rules": true},
		"confirmation": map[string]any{"mode": "risky"}}); r.status != http.StatusOK {
		t.Fatalf("admin PUT /v1/config: %d %s", r.status, r.body)
	}
}

// TestHTTPBodiesAreBounded: a body over its route's limit is refused with
// 413 whether it announces its length or not, and so is a batch over the
// event limit; headers over the limit get 431.
func TestHTTPBodiesAreBounded(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{MaxEventBody: 64 << 10, MaxSmallBody: 4 << 10, MaxConfigBody: 16 << 10, MaxBatch: 10})
	big := func(n int) string {
		return `{"v":1,"kind":"message","conversation":"c-big","data":{"role":"user","content":"` + strings.Repeat("a", n) + `"}}`
	}
	cases := []struct {
		role         natsutil.Role
		method, path string
		body         string
	}{
		{natsutil.RoleAgent, "POST", "/v1/events", big(65 << 10)},
		{natsutil.RoleAgent, "POST", "/v1/gate", big(65 << 10)},
		{natsutil.RoleApprover, "POST", "/v1/approvals", `{"action_id":"x","verdict":"deny","reason":"` + strings.Repeat("r", 5<<10) + `"}`},
		{natsutil.RoleAdmin, "PUT", "/v1/config", `{"policy_rules":[{"name":"` + strings.Repeat("n", 17<<10) + `"}]}`},
	}
	for _, c := range cases {
		for _, chunked := range []bool{false, true} {
			req, _ := http.NewRequestWithContext(t.Context(), c.method, ht.base+c.path, nil)
			if chunked {
				// No Content-Length: the limit holds while reading.
				req.Body = io.NopCloser(strings.NewReader(c.body))
				req.ContentLength = -1
			} else {
				req.Body = io.NopCloser(strings.NewReader(c.body))
				req.ContentLength = int64(len(c.body))
			}
			req.Header.Set("Authorization", ht.bearer(c.role))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("%s %s, %d bytes (chunked %v): %d %s, want 413", c.method, c.path, len(c.body), chunked, resp.StatusCode, b)
			}
		}
	}
	var batch []any
	for i := range 11 {
		batch = append(batch, map[string]any{"v": 1, "id": fmt.Sprintf("b-%d", i), "kind": "message", "conversation": "c-big",
			"data": map[string]any{"role": "user", "content": "x"}})
	}
	if r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/events", batch); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("a batch of 11 over a limit of 10: %d %s", r.status, r.body)
	}
	// Not JSON at all, or not declared as JSON.
	if r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/events", "\x00\x01msgpack?"); r.status != http.StatusBadRequest {
		t.Errorf("a binary body: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ht.base+"/v1/events", strings.NewReader(big(10)))
	req.Header.Set("Authorization", ht.bearer(natsutil.RoleAgent))
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	// Headers over the limit (64 KiB by default).
	req, _ = http.NewRequestWithContext(t.Context(), "GET", ht.base+"/v1/pending", nil)
	req.Header.Set("Authorization", ht.bearer(natsutil.RoleApprover))
	req.Header.Set("X-Padding", strings.Repeat("p", 128<<10))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("128 KiB of headers: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
}

// TestHTTPSlowClientsAreCut: a client that sends its headers, or its
// body, too slowly is disconnected (it does not hold a connection and a
// goroutine forever); the server still answers others.
func TestHTTPSlowClientsAreCut(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond})
	host := strings.TrimPrefix(ht.base, "http://")
	for _, what := range []struct{ name, send string }{
		{"headers never finished", "GET /v1/pending HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ht.tokens[natsutil.RoleApprover] + "\r\n"},
		{"body never sent", "POST /v1/approvals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ht.tokens[natsutil.RoleApprover] +
			"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"action_id\":"},
	} {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte(what.send)); err != nil {
			t.Fatal(err)
		}
		// A safety net for the test, not a measure: the server's limits
		// are far below it.
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		rd := bufio.NewReader(conn)
		var err2 error
		for err2 == nil {
			_, err2 = rd.ReadByte()
		}
		conn.Close()
		if ne, ok := err2.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the server kept the connection open", what.name)
		}
	}
	if r := ht.do(t, natsutil.RoleApprover, "GET", "/v1/pending", nil); r.status != http.StatusOK {
		t.Fatalf("after the slow clients: %d %s", r.status, r.body)
	}
}

// TestHTTPWaitsAndStreamsAreBounded: beyond the limit of gate waits or
// live streams held at once, a request is refused at once (503), never
// queued.
func TestHTTPWaitsAndStreamsAreBounded(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{MaxWaits: 2, MaxStreams: 1})
	var held []<-chan httpReply
	for i := range 2 {
		id := fmt.Sprintf("hold-%d", i)
		held = append(held, ht.gateInBackground(t, jsonAction(id, "c-hold", "rm -rf /")))
		ht.waitPendingHTTP(t, id)
	}
	r := ht.do(t, natsutil.RoleAgent, "POST", "/v1/gate?wait=1m", jsonAction("hold-2", "c-hold", "rm -rf /"))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("a third wait over a limit of 2: %d %s", r.status, r.body)
	}
	// One stream open; a second is refused.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ht.base+"/v1/stream", nil)
	req.Header.Set("Authorization", ht.bearer(natsutil.RoleApprover))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	if r := ht.do(t, natsutil.RoleApprover, "GET", "/v1/stream", nil); r.status != http.StatusServiceUnavailable {
		t.Fatalf("a second stream over a limit of 1: %d %s", r.status, r.body)
	}
	for i := range 2 {
		if r := ht.do(t, natsutil.RoleApprover, "POST", "/v1/approvals", map[string]any{"action_id": fmt.Sprintf("hold-%d", i), "verdict": "deny"}); r.status != http.StatusOK {
			t.Fatalf("deny hold-%d: %d %s", i, r.status, r.body)
		}
		<-held[i]
	}
}
