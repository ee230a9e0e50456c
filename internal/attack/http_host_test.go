package attack

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// DNS rebinding: a web page on evil.example, which its DNS server then
// resolves to 127.0.0.1, talks to the node's API from a visitor's browser.
// The browser sends Host: evil.example:PORT and Origin:
// http://evil.example:PORT (same-origin, as far as it knows). Before the
// Host check, POST /pair answered 201 with a code and a secret, and spent
// localhost's one pairing request per 10 minutes.

// rebound sends a request as the rebound browser would: Host and Origin
// of the attacker's name, with the node's port.
func (ht *httpTarget) rebound(t *testing.T, host, origin, auth, method, path string) httpReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, ht.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %s): %v", method, path, host, err)
	}
	defer resp.Body.Close()
	var b []byte
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ = io.ReadAll(resp.Body)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// TestHTTPDNSRebindingIsMisdirected: every route, with or without a token,
// answers 421 to a Host the node does not serve; the rebound POST /pair
// spends no pairing limit (a real browser's request still gets its code
// afterwards); a right Host with another site's Origin is still refused;
// a name given with --http-host is served.
func TestHTTPDNSRebindingIsMisdirected(t *testing.T) {
	ht := startHTTPTarget(t, httpapi.Limits{})
	u, err := url.Parse(ht.base)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	evilHost := "evil.example:" + port
	evilOrigin := "http://" + evilHost

	for _, rt := range httpapi.Routes() {
		path := pathParam.ReplaceAllString(rt.Path, "x1")
		for _, auth := range []string{"", ht.bearer(natsutil.RoleApprover), ht.bearer(natsutil.RoleAdmin)} {
			r := ht.rebound(t, evilHost, evilOrigin, auth, rt.Method, path)
			if r.status != http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s (token: %v): %d %s, want 421", rt.Method, path, evilHost, auth != "", r.status, r.body)
			}
		}
	}
	// Other spellings of another name: without the port, another port,
	// a suffix of a served name, an IP the node does not listen on.
	for _, host := range []string{"evil.example", "localhost.evil.example:" + port, "localhost:1", "127.0.0.2:" + port, "10.0.0.1:" + port, "[::2]:" + port} {
		if r := ht.rebound(t, host, "", "", "GET", "/healthz"); r.status != http.StatusMisdirectedRequest {
			t.Errorf("GET /healthz with Host %s: %d, want 421", host, r.status)
		}
	}

	// The rebound page tries to pair, again and again: nothing is spent.
	for range 5 {
		if r := ht.rebound(t, evilHost, evilOrigin, "", "POST", "/pair"); r.status != http.StatusMisdirectedRequest {
			t.Fatalf("rebound POST /pair: %d %s, want 421", r.status, r.body)
		}
	}
	if n := len(ht.pairingRecords(t)); n != 0 {
		t.Fatalf("the rebound requests appended %d pairing records", n)
	}
	// The right Host with the attacker's Origin (a cross-site form post
	// to the real address): refused, before the limit.
	if r := ht.rebound(t, u.Host, evilOrigin, "", "POST", "/pair"); r.status != http.StatusForbidden {
		t.Fatalf("POST /pair with Origin %s: %d %s, want 403", evilOrigin, r.status, r.body)
	}
	// A person's browser on localhost: its code, the limit untouched.
	r := ht.rebound(t, "localhost:"+port, "http://localhost:"+port, "", "POST", "/pair")
	if r.status != http.StatusCreated {
		t.Fatalf("POST /pair from the page on localhost after the rebinding attempts: %d %s, want 201", r.status, r.body)
	}
	var got struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil || got.Code == "" {
		t.Fatalf("POST /pair: %s", r.body)
	}

	// Names served: the loopback names with the port.
	for _, host := range []string{u.Host, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		if r := ht.rebound(t, host, "", "", "GET", "/healthz"); r.status != http.StatusOK {
			t.Errorf("GET /healthz with Host %s: %d, want 200", host, r.status)
		}
	}
}

// TestHTTPHostFlagServesNames: a name configured (--http-host) is served
// with or without the port, and its Origin is accepted; other names still
// get 421.
func TestHTTPHostFlagServesNames(t *testing.T) {
	tg := startTarget(t, withHTTP(httpapi.Limits{}), func(c *node.Config) {
		c.HTTPHosts = []string{"vigil.internal.example", "approve.example:8443"}
	})
	ht := &httpTarget{target: tg, base: tg.Info().HTTPURL, tokens: map[natsutil.Role]string{}}
	u, _ := url.Parse(ht.base)
	cases := []struct {
		host string
		want int
	}{
		{"vigil.internal.example", http.StatusOK},
		{"vigil.internal.example.", http.StatusOK},
		{"vigil.internal.example:" + u.Port(), http.StatusOK},
		{"approve.example:8443", http.StatusOK},
		{"approve.example", http.StatusMisdirectedRequest},
		{"approve.example:" + u.Port(), http.StatusMisdirectedRequest},
		{"evil.example:" + u.Port(), http.StatusMisdirectedRequest},
	}
	for _, c := range cases {
		if r := ht.rebound(t, c.host, "", "", "GET", "/healthz"); r.status != c.want {
			t.Errorf("GET /healthz with Host %s: %d, want %d", c.host, r.status, c.want)
		}
	}
	// Behind a TLS proxy: Host vigil.internal.example, Origin https://vigil.internal.example.
	r := ht.rebound(t, "vigil.internal.example", "https://vigil.internal.example", "", "POST", "/pair")
	if r.status != http.StatusCreated {
		t.Fatalf("POST /pair through the configured name: %d %s, want 201", r.status, r.body)
	}
}
