package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// callWith sends a request with a given bearer token and decodes a JSON
// answer into out (when not nil).
func (a *api) callWith(t *testing.T, token, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, a.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a.spec.check(t, method, path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	if out != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, b
}

type createdToken struct {
	ID, Role, Name, Hint, Token string
	Seq                         uint64
	Applied                     bool
}

func (a *api) createToken(t *testing.T, role natsutil.Role, name string) createdToken {
	t.Helper()
	var c createdToken
	code, b := a.call(t, natsutil.RoleAdmin, "POST", "/v1/tokens", map[string]any{"role": role, "name": name}, &c)
	if code != http.StatusCreated || !c.Applied || !natsutil.ValidToken(c.Token) || c.ID == "" || c.Role != string(role) {
		t.Fatalf("create a %s token: %d %s", role, code, b)
	}
	if c.Hint != c.Token[len(c.Token)-4:] {
		t.Fatalf("hint %q is not the token's last four characters", c.Hint)
	}
	return c
}

// TestNamedTokens: an admin creates a token of each role; each has
// exactly its role's rights at once; the list never shows a token; a
// revoked token is refused by the very next request.
func TestNamedTokens(t *testing.T) {
	a := startAPI(t)
	made := map[natsutil.Role]createdToken{}
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleApprover, natsutil.RoleAdmin} {
		tok := a.createToken(t, role, "test "+string(role))
		made[role] = tok
		switch role {
		case natsutil.RoleAgent:
			var g gateAnswer
			if code, b := a.callWith(t, tok.Token, "POST", "/v1/gate", action("ls-tok", "c-tok", "ls"), &g); code != http.StatusOK || g.Outcome != "allow" {
				t.Fatalf("gate with a named agent token: %d %s", code, b)
			}
			// An agent token can never approve, nor manage tokens.
			if code, b := a.callWith(t, tok.Token, "POST", "/v1/approvals", map[string]any{"action_id": "ls-tok", "verdict": "once"}, nil); code != http.StatusForbidden {
				t.Fatalf("approve with a named agent token: %d %s", code, b)
			}
			if code, b := a.callWith(t, tok.Token, "POST", "/v1/tokens", map[string]any{"role": "admin"}, nil); code != http.StatusForbidden {
				t.Fatalf("mint with a named agent token: %d %s", code, b)
			}
		case natsutil.RoleApprover:
			if code, b := a.callWith(t, tok.Token, "GET", "/v1/pending", nil, nil); code != http.StatusOK {
				t.Fatalf("pending with a named approver token: %d %s", code, b)
			}
			if code, b := a.callWith(t, tok.Token, "GET", "/v1/tokens", nil, nil); code != http.StatusForbidden {
				t.Fatalf("list tokens with a named approver token: %d %s", code, b)
			}
		case natsutil.RoleAdmin:
			// A named admin token manages tokens too.
			var l struct{ Tokens []map[string]any }
			if code, b := a.callWith(t, tok.Token, "GET", "/v1/tokens", nil, &l); code != http.StatusOK || len(l.Tokens) != 3 {
				t.Fatalf("list with a named admin token: %d %s", code, b)
			}
		}
	}
	// The list names the tokens, never shows them.
	code, b := a.call(t, natsutil.RoleAdmin, "GET", "/v1/tokens", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, b)
	}
	for _, tok := range made {
		if strings.Contains(string(b), tok.Token) || strings.Contains(string(b), tok.Token[len(natsutil.TokenPrefix):20]) {
			t.Fatalf("the list shows a token: %s", b)
		}
		if !strings.Contains(string(b), tok.ID) {
			t.Fatalf("the list lacks %s: %s", tok.ID, b)
		}
	}

	// Revocation is in force for the very next request.
	ap := made[natsutil.RoleApprover]
	var rv struct {
		ID      string
		Applied bool
	}
	if code, b := a.call(t, natsutil.RoleAdmin, "DELETE", "/v1/tokens/"+ap.ID+"?reason=lost", nil, &rv); code != http.StatusOK || !rv.Applied {
		t.Fatalf("revoke: %d %s", code, b)
	}
	if code, b := a.callWith(t, ap.Token, "GET", "/v1/pending", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("a revoked token, at once: %d %s, want 401", code, b)
	}
	if code, b := a.call(t, natsutil.RoleAdmin, "DELETE", "/v1/tokens/"+ap.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("revoke twice: %d %s, want 404", code, b)
	}
	var l struct {
		Tokens []struct{ ID, Revoked string }
	}
	a.call(t, natsutil.RoleAdmin, "GET", "/v1/tokens", nil, &l)
	if len(l.Tokens) != 2 {
		t.Fatalf("the list after a revocation: %+v", l)
	}
	a.call(t, natsutil.RoleAdmin, "GET", "/v1/tokens?all=true", nil, &l)
	if len(l.Tokens) != 3 {
		t.Fatalf("the list of all after a revocation: %+v", l)
	}
	// The role files' tokens keep working.
	if code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/pending", nil, nil); code != http.StatusOK {
		t.Fatalf("the approver file token: %d %s", code, b)
	}

	// Bad requests name the field.
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"role": "service"}, "role"},
		{map[string]any{"role": "approver", "name": "a\x00b"}, "name"},
		{map[string]any{"role": "approver", "token": "vigil_x"}, "token"},
	} {
		var e struct{ Field string }
		if code, b := a.call(t, natsutil.RoleAdmin, "POST", "/v1/tokens", c.body, &e); code != http.StatusBadRequest || e.Field != c.field {
			t.Errorf("create %v: %d %s, want 400 naming %s", c.body, code, b, c.field)
		}
	}
}
