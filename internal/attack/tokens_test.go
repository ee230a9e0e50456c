package attack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Named HTTP tokens (docs/http.md, "Tokens"): only an admin mints or
// revokes them, over HTTP or NATS; a named token has exactly its role's
// rights; a revoked one is refused at once.

// namedTokens has an admin create a named token of every role, and
// returns them as an httpTarget whose tokens are those.
func namedTokens(t *testing.T, ht *httpTarget) *httpTarget {
	t.Helper()
	named := &httpTarget{target: ht.target, base: ht.base, tokens: map[natsutil.Role]string{}}
	for _, r := range natsutil.TokenRoles {
		rep := ht.do(t, adminR, "POST", "/v1/tokens", map[string]any{"role": r, "name": "attack " + string(r)})
		var c struct {
			Token   string
			Applied bool
		}
		if rep.status != http.StatusCreated || json.Unmarshal(rep.body, &c) != nil || !c.Applied {
			t.Fatalf("create a %s token: %d %s", r, rep.status, rep.body)
		}
		named.tokens[r] = c.Token
	}
	return named
}

// TestHTTPPermissionMatrixNamedTokens: the whole permission matrix again,
// with named tokens instead of the role files' ones.
func TestHTTPPermissionMatrixNamedTokens(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	checkPermissionMatrix(t, namedTokens(t, ht))
}

// TestAgentCannotMintTokenOverHTTP: an agent token (a role file's or a
// named one), a runtime's and an approver's get 403 on every token
// route, and nothing reaches the log.
func TestAgentCannotMintTokenOverHTTP(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	named := namedTokens(t, ht)
	before := len(ht.streamRecords(t, events.StreamLog))
	for _, tg := range []*httpTarget{ht, named} {
		for _, r := range []natsutil.Role{agentR, runtimeR, approverR} {
			for _, req := range []struct{ method, path string }{
				{"POST", "/v1/tokens"}, {"GET", "/v1/tokens"}, {"DELETE", "/v1/tokens/tk-00000000"},
			} {
				rep := tg.do(t, r, req.method, req.path, map[string]any{"role": "admin", "name": "mine now"})
				if rep.status != http.StatusForbidden || !strings.Contains(string(rep.body), `"needs":["admin"]`) {
					t.Errorf("%s %s as %s: %d %s, want 403 naming admin", req.method, req.path, r, rep.status, rep.body)
				}
			}
		}
	}
	if after := len(ht.streamRecords(t, events.StreamLog)); after != before {
		t.Fatalf("refused token requests appended %d records", after-before)
	}
}

// TestAgentCannotMintTokenOverNATS: an agent that sends a token.created
// of its own making (the digest of a token it knows) on its ingest
// subject is refused, recorded in VIGIL_DLQ and alerted; on the control
// subject its credential may not publish at all. Either way the token it
// made up is refused by the HTTP API.
func TestAgentCannotMintTokenOverNATS(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	mine, err := natsutil.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	mint := func(id string, origin events.Origin) []byte {
		ev := events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindTokenCreated,
			Conversation: "c-mint", Origin: origin, Time: time.Now().UTC(), Data: map[string]any{
				"token_id": "tk-a9e17000", "role": "admin", "name": "agent's", "hash": digest(mine), "hint": mine[len(mine)-4:]}}
		raw, err := ev.MarshalMsgpack()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	// On the one subject family each may send on, claiming any origin in
	// the event: refused by the ingest service.
	for _, who := range []struct {
		role    natsutil.Role
		subject string
	}{
		{agentR, events.IngestAgentSubject("c-mint")},
		{runtimeR, events.IngestRuntimeSubject("c-mint")},
		{approverR, events.IngestApprovalSubject("c-mint")},
	} {
		nc := ht.dial(t, who.role)
		for i, origin := range []events.Origin{"", events.OriginAdmin} {
			msg, err := nc.Request(who.subject, mint(fmt.Sprintf("mint-%s-%d", who.role, i), origin), 5*time.Second)
			if err != nil {
				t.Fatalf("%s: ingest request: %v", who.role, err)
			}
			var refused *client.RefusedError
			if _, err := client.ParseReply(msg.Data, 1); !errors.As(err, &refused) {
				t.Errorf("token.created sent as %s (origin %q): %v; want refused", who.role, origin, err)
			}
		}
		// The control subject: the server refuses the publish (a
		// permission violation), so no ingest service ever sees it.
		if _, err := nc.Request(events.IngestControlSubject("c-mint"), mint("mint-ctl-"+string(who.role), ""), time.Second); err == nil {
			t.Errorf("a %s credential could send on the control subject", who.role)
		}
	}
	waitFor(t, "the refusal in VIGIL_DLQ", 10*time.Second, func() bool {
		return len(ht.streamRecords(t, events.StreamDLQ)) > 0
	})
	waitFor(t, "an alert", 10*time.Second, func() bool {
		for _, d := range ht.derived(t) {
			if d.Kind == events.KindAlert {
				return true
			}
		}
		return false
	})
	for _, r := range ht.streamRecords(t, events.StreamLog) {
		if e, err := events.DecodeMsgpack(r.Data); err == nil && e.Kind == events.KindTokenCreated {
			t.Fatalf("a token.created reached the log: %+v", e)
		}
	}
	if rep := ht.doAuth(t, "Bearer "+mine, "GET", "/v1/tokens", nil); rep.status != http.StatusUnauthorized {
		t.Fatalf("the agent's made-up token: %d %s, want 401", rep.status, rep.body)
	}
}

// TestRevokedTokenRefusedAtOnce: revoking a token over HTTP answers only
// once the node refuses it; the revoked token's very next request is 401,
// on every route, while the other tokens keep working.
func TestRevokedTokenRefusedAtOnce(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	for range 3 {
		named := namedTokens(t, ht)
		var l struct{ Tokens []struct{ ID, Role string } }
		rep := ht.do(t, adminR, "GET", "/v1/tokens", nil)
		if json.Unmarshal(rep.body, &l) != nil {
			t.Fatalf("list: %d %s", rep.status, rep.body)
		}
		for _, tok := range l.Tokens {
			if tok.Role != string(approverR) {
				continue
			}
			if r := named.do(t, approverR, "GET", "/v1/pending", nil); r.status != http.StatusOK {
				t.Fatalf("before the revocation: %d %s", r.status, r.body)
			}
			if r := ht.do(t, adminR, "DELETE", "/v1/tokens/"+tok.ID, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"applied":true`) {
				t.Fatalf("revoke: %d %s", r.status, r.body)
			}
			for _, rt := range httpapi.Routes() {
				if rt.Roles == nil {
					continue
				}
				req, ok := matrixRequests[rt.Method+" "+rt.Path]
				if !ok {
					continue // TestHTTPPermissionMatrix fails on it
				}
				if r := named.do(t, approverR, rt.Method, req.path, req.body); r.status != http.StatusUnauthorized {
					t.Errorf("%s %s with the revoked token: %d %s, want 401", rt.Method, rt.Path, r.status, r.body)
				}
			}
		}
	}
	if r := ht.do(t, approverR, "GET", "/v1/pending", nil); r.status != http.StatusOK {
		t.Fatalf("the approver file token after revocations: %d %s", r.status, r.body)
	}
}

// digest is how the log names a token (sha256:<hex>).
func digest(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return "sha256:" + hex.EncodeToString(sum[:])
}
