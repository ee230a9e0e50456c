package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// browser is an HTTP client with a cookie jar, as the page's browser is.
type browser struct {
	a      *api
	c      *http.Client
	origin string
	csrf   string
}

func (a *api) browser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{a: a, c: &http.Client{Jar: jar}, origin: a.url}
}

// do sends a request with the browser's cookies, its Origin and (when
// set) its CSRF token, and returns the status and the body.
func (b *browser) do(t *testing.T, method, path, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.a.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	if b.csrf != "" {
		req.Header.Set(httpapi.HeaderCSRF, b.csrf)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	b.a.spec.check(t, method, path, resp.StatusCode, resp.Header.Get("Content-Type"), out)
	return resp.StatusCode, out
}

type sessionAnswer struct {
	Role, Name, CSRF string
}

// login logs b in with role's token and keeps the CSRF token.
func (b *browser) login(t *testing.T, role natsutil.Role, name string) sessionAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"token": b.a.tokens[role], "name": name})
	code, out := b.do(t, "POST", "/ui/session", string(body), nil)
	if code != http.StatusOK {
		t.Fatalf("login as %s: %d %s", role, code, out)
	}
	var s sessionAnswer
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	b.csrf = s.CSRF
	return s
}

func TestSessionLogin(t *testing.T) {
	a := startAPI(t)
	b := a.browser(t)

	// No session: the API refuses, the session endpoint says so.
	if code, _ := b.do(t, "GET", "/v1/pending", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("pending without a session: %d", code)
	}
	if code, _ := b.do(t, "GET", "/ui/session", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("session without a cookie: %d", code)
	}

	// Tokens that may not approve get no session; unknown ones neither.
	for _, tc := range []struct {
		token string
		want  int
	}{
		{a.tokens[natsutil.RoleAgent], http.StatusForbidden},
		{a.tokens[natsutil.RoleRuntime], http.StatusForbidden},
		{"vgl_" + strings.Repeat("A", 26), http.StatusUnauthorized},
		{"", http.StatusBadRequest},
	} {
		body, _ := json.Marshal(map[string]string{"token": tc.token})
		if code, out := b.do(t, "POST", "/ui/session", string(body), nil); code != tc.want {
			t.Errorf("login with %.8q…: %d %s, want %d", tc.token, code, out, tc.want)
		}
	}
	if code, _ := b.do(t, "GET", "/v1/pending", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("pending after refused logins: %d", code)
	}

	// A login from another site is refused (login CSRF).
	body, _ := json.Marshal(map[string]string{"token": a.tokens[natsutil.RoleApprover]})
	if code, out := b.do(t, "POST", "/ui/session", string(body), map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Fatalf("cross-site login: %d %s", code, out)
	}

	s := b.login(t, natsutil.RoleApprover, "alice's phone")
	if s.Role != "approver" || s.Name != "alice's phone" || len(s.CSRF) < 40 {
		t.Fatalf("session %+v", s)
	}
	if code, out := b.do(t, "GET", "/v1/pending", "", nil); code != http.StatusOK {
		t.Fatalf("pending with a session: %d %s", code, out)
	}
	// The session's role is the token's: config is for admins.
	if code, _ := b.do(t, "PUT", "/v1/config", `{}`, nil); code != http.StatusForbidden {
		t.Fatalf("config set with an approver session: %d", code)
	}

	// A state-changing request needs the CSRF token and this Origin.
	approval := `{"action_id":"01KAAAAAAAAAAAAAAAAAAAAAAA","verdict":"deny"}`
	for _, tc := range []struct {
		name, field string
		hdr         map[string]string
	}{
		{"no csrf", httpapi.HeaderCSRF, map[string]string{httpapi.HeaderCSRF: ""}},
		{"wrong csrf", httpapi.HeaderCSRF, map[string]string{httpapi.HeaderCSRF: strings.Repeat("x", 43)}},
		{"no origin", "Origin", map[string]string{"Origin": ""}},
		{"foreign origin", "Origin", map[string]string{"Origin": "http://evil.example"}},
		{"origin with another port", "Origin", map[string]string{"Origin": "http://127.0.0.1:1"}},
		{"cross-site", "Sec-Fetch-Site", map[string]string{"Sec-Fetch-Site": "cross-site"}},
	} {
		code, out := b.do(t, "POST", "/v1/approvals", approval, tc.hdr)
		if code != http.StatusForbidden || !strings.Contains(string(out), `"field":"`+tc.field+`"`) {
			t.Errorf("%s: %d %s, want 403 naming %s", tc.name, code, out, tc.field)
		}
	}
	// With both, the request reaches the handler (no such action: 404).
	if code, out := b.do(t, "POST", "/v1/approvals", approval, nil); code != http.StatusNotFound {
		t.Fatalf("approval with csrf: %d %s", code, out)
	}

	// Another session's CSRF token does not fit this one.
	b2 := a.browser(t)
	s2 := b2.login(t, natsutil.RoleApprover, "bob")
	if s2.CSRF == s.CSRF {
		t.Fatal("two sessions share a CSRF token")
	}
	if code, _ := b.do(t, "POST", "/v1/approvals", approval, map[string]string{httpapi.HeaderCSRF: s2.CSRF}); code != http.StatusForbidden {
		t.Fatalf("approval with another session's csrf: %d", code)
	}

	// Logout ends the session at once, for this browser only.
	if code, out := b.do(t, "DELETE", "/ui/session", "", nil); code != http.StatusNoContent {
		t.Fatalf("logout: %d %s", code, out)
	}
	if code, _ := b.do(t, "GET", "/v1/pending", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("pending after logout: %d", code)
	}
	if code, _ := b2.do(t, "GET", "/v1/pending", "", nil); code != http.StatusOK {
		t.Fatalf("the other session after logout: %d", code)
	}
}

// TestSessionCookie: the cookie is HttpOnly, SameSite=Strict, random and
// not the token.
func TestSessionCookie(t *testing.T) {
	a := startAPI(t)
	body, _ := json.Marshal(map[string]string{"token": a.tokens[natsutil.RoleApprover]})
	seen := map[string]bool{}
	for range 3 {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", a.url+"/ui/session", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", a.url)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var c *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == httpapi.SessionCookie {
				c = ck
			}
		}
		if c == nil {
			t.Fatalf("no %s cookie: %v", httpapi.SessionCookie, resp.Header["Set-Cookie"])
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 {
			t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, an expiry", c)
		}
		if len(c.Value) < 22 || strings.Contains(c.Value, a.tokens[natsutil.RoleApprover]) || seen[c.Value] {
			t.Errorf("cookie value %q: want ≥128 random bits, new each time, not the token", c.Value)
		}
		seen[c.Value] = true
	}
}

// TestSessionOfNamedToken: a named approver token logs in too; revoking
// it ends its sessions at their next request; a named agent token gets
// no session.
func TestSessionOfNamedToken(t *testing.T) {
	a := startAPI(t)
	ap := a.createToken(t, natsutil.RoleApprover, "dana")
	ag := a.createToken(t, natsutil.RoleAgent, "bot")
	b := a.browser(t)
	body, _ := json.Marshal(map[string]string{"token": ag.Token})
	if code, out := b.do(t, "POST", "/ui/session", string(body), nil); code != http.StatusForbidden {
		t.Fatalf("login with a named agent token: %d %s", code, out)
	}
	body, _ = json.Marshal(map[string]string{"token": ap.Token, "name": "dana"})
	code, out := b.do(t, "POST", "/ui/session", string(body), nil)
	if code != http.StatusOK {
		t.Fatalf("login with a named approver token: %d %s", code, out)
	}
	var s sessionAnswer
	json.Unmarshal(out, &s)
	b.csrf = s.CSRF
	if code, out := b.do(t, "GET", "/v1/pending", "", nil); code != http.StatusOK {
		t.Fatalf("pending: %d %s", code, out)
	}
	if code, b := a.call(t, natsutil.RoleAdmin, "DELETE", "/v1/tokens/"+ap.ID, nil, nil); code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, b)
	}
	if code, out := b.do(t, "GET", "/v1/pending", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("pending after the token's revocation: %d %s", code, out)
	}
	if code, _ := b.do(t, "GET", "/ui/session", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("session after the token's revocation: %d", code)
	}
}

// TestPageRoutes: the page and its assets are served with their types and
// a CSP that allows only this server's script; other names are 404; the
// page's reads need a person's role.
func TestPageRoutes(t *testing.T) {
	a := startAPI(t)
	for _, tc := range []struct {
		path, ctype string
		code        int
	}{
		{"/", "text/html; charset=utf-8", 200},
		{"/ui/assets/app.js", "text/javascript; charset=utf-8", 200},
		{"/ui/assets/app.css", "text/css; charset=utf-8", 200},
		{"/ui/assets/index.html", "application/json", 404},
		{"/ui/assets/..%2fpage.go", "application/json", 404},
		{"/ui/assets/nope.js", "application/json", 404},
		{"/index.html", "application/json", 404},
	} {
		resp, err := http.Get(a.url + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.spec.check(t, "GET", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.code, tc.ctype)
		}
		if tc.code == 200 {
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("GET %s: CSP %q", tc.path, csp)
			}
		}
	}
	for _, tc := range []struct {
		role natsutil.Role
		path string
		want int
	}{
		{"", "/ui/history", 401},
		{natsutil.RoleAgent, "/ui/history", 403},
		{natsutil.RoleRuntime, "/ui/history", 403},
		{natsutil.RoleApprover, "/ui/history", 200},
		{natsutil.RoleAdmin, "/ui/history", 200},
		{"", "/ui/actions/01KAAAAAAAAAAAAAAAAAAAAAAA", 401},
		{natsutil.RoleAgent, "/ui/actions/01KAAAAAAAAAAAAAAAAAAAAAAA", 403},
		{natsutil.RoleApprover, "/ui/actions/01KAAAAAAAAAAAAAAAAAAAAAAA", 404},
		{natsutil.RoleApprover, "/ui/actions/a%20b", 400},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", a.url+tc.path, nil)
		if tc.role != "" {
			req.Header.Set("Authorization", "Bearer "+a.tokens[tc.role])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.spec.check(t, "GET", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s as %q: %d, want %d", tc.path, tc.role, resp.StatusCode, tc.want)
		}
	}
}

// TestSessionNameIsTheApprover: a verdict sent with a session is recorded
// under the session's name, whatever name the request claims.
func TestSessionNameIsTheApprover(t *testing.T) {
	a := startAPI(t)
	b := a.browser(t)
	b.login(t, natsutil.RoleApprover, "alice")
	ch := a.gateAsync(t, action("act-session-name", "c-session", "rm -rf /"), "60s")
	p := a.waitPending(t, "act-session-name")
	code, out := b.do(t, "POST", "/v1/approvals",
		fmt.Sprintf(`{"action_id":%q,"verdict":"once","approver":"mallory"}`, p.ID),
		map[string]string{httpapi.HeaderApprover: "mallory"})
	if code != http.StatusOK || !strings.Contains(string(out), `"approver":"http:alice"`) {
		t.Fatalf("approval: %d %s, want 200 recorded as http:alice", code, out)
	}
	if g := <-ch; g.Outcome != "allow" || g.Approver != "http:alice" {
		t.Fatalf("gate: %+v, want allow by http:alice", g)
	}
}
