package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// pairer is a browser pairing with the node from one loopback address
// (127.0.0.x: the per-client limit counts addresses), with its cookies.
type pairer struct {
	a *api
	c *http.Client
}

func (a *api) pairer(t *testing.T, ip string) *pairer {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &pairer{a: a, c: &http.Client{Jar: jar, Transport: tr}}
}

func (p *pairer) do(t *testing.T, method, path string, hdr map[string]string, out any) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, p.a.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p.a.spec.check(t, method, path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, b
}

type started struct {
	RequestID string `json:"request_id"`
	Code      string `json:"code"`
	Secret    string `json:"secret"`
	ExpiresAt string `json:"expires_at"`
	StatusURL string `json:"status_url"`
	Approve   string `json:"approve"`
}

type status struct {
	State   string `json:"state"`
	Name    string `json:"name"`
	Session bool   `json:"session"`
}

func (p *pairer) request(t *testing.T) started {
	t.Helper()
	var s started
	if code, b := p.do(t, "POST", "/pair", nil, &s); code != http.StatusCreated {
		t.Fatalf("POST /pair: %d %s", code, b)
	}
	return s
}

func (p *pairer) poll(t *testing.T, s started) (int, status, []byte) {
	t.Helper()
	var st status
	code, b := p.do(t, "GET", s.StatusURL, map[string]string{httpapi.HeaderPairSecret: s.Secret}, &st)
	return code, st, b
}

// admin appends pairing events as `vigil pairing` does, with the node's key.
type admin struct {
	cl  *client.Client
	key []byte
}

func (a *api) admin(t *testing.T) *admin {
	t.Helper()
	dir := a.Info().DataDir
	cl, err := client.Connect(t.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	key, err := pairinglog.LoadKey(datadir.New(dir).Creds().Dir())
	if err != nil {
		t.Fatal(err)
	}
	return &admin{cl: cl, key: key}
}

func (ad *admin) append(t *testing.T, ev events.Event) uint64 {
	t.Helper()
	res, err := ad.cl.Append(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return res.Seq
}

func (ad *admin) attempt(t *testing.T, kind events.Kind, code, name string) uint64 {
	t.Helper()
	c, err := pairing.NormalizeCode(code)
	if err != nil {
		c = code
	}
	return ad.append(t, pairinglog.AttemptEvent(kind, ad.key, pairing.PlatformWeb, c, "", name, "test-admin", ""))
}

// eventually retries fn until it returns "" or the time is up.
func eventually(t *testing.T, what string, fn func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		msg := fn()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPairingOverHTTP pairs a browser with a code against a real node:
// request, poll, the admin's approval by code, the session the next poll
// starts (an approver's, not an admin's), a single claim, revocation
// ending the session, and neither code nor secret anywhere in the log.
func TestPairingOverHTTP(t *testing.T) {
	a := startAPI(t)
	ad := a.admin(t)
	br := a.pairer(t, "127.0.0.1")
	s := br.request(t)
	if !regexp.MustCompile(`^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$`).MatchString(s.Code) || len(s.Secret) != 64 ||
		s.StatusURL != "/pair/"+s.RequestID || s.Approve != "vigil pairing approve web "+s.Code {
		t.Fatalf("POST /pair = %+v", s)
	}
	if code, st, b := br.poll(t, s); code != http.StatusOK || st.State != pairing.StatePending || st.Session {
		t.Fatalf("poll = %d %s", code, b)
	}
	// Without the secret, or with another, the request does not exist.
	for _, secret := range []string{"", strings.Repeat("0", 64), s.Code} {
		other := a.pairer(t, "127.0.0.9")
		hdr := map[string]string{}
		if secret != "" {
			hdr[httpapi.HeaderPairSecret] = secret
		}
		if code, b := other.do(t, "GET", s.StatusURL, hdr, nil); code != http.StatusNotFound {
			t.Fatalf("poll with secret %q = %d %s", secret, code, b)
		}
	}
	// The same client again within ten minutes: refused, nothing appended.
	if code, b := br.do(t, "POST", "/pair", nil, nil); code != http.StatusTooManyRequests || !strings.Contains(string(b), "one request per client") {
		t.Fatalf("second POST /pair = %d %s", code, b)
	}
	// An agent's token may not pair, from anywhere.
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime} {
		p := a.pairer(t, "127.0.0.8")
		hdr := map[string]string{"Authorization": "Bearer " + a.tokens[role]}
		if code, b := p.do(t, "POST", "/pair", hdr, nil); code != http.StatusForbidden {
			t.Fatalf("POST /pair as %s = %d %s", role, code, b)
		}
		hdr[httpapi.HeaderPairSecret] = s.Secret
		if code, b := p.do(t, "GET", s.StatusURL, hdr, nil); code != http.StatusForbidden {
			t.Fatalf("poll as %s = %d %s", role, code, b)
		}
	}
	// Without a session, the browser is nobody.
	if code, _ := br.do(t, "GET", "/v1/pending", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("GET /v1/pending before pairing = %d", code)
	}

	ad.attempt(t, events.KindPairingApproved, s.Code, "test-phone")
	var st status
	eventually(t, "the approval reaches the API", func() string {
		code, got, b := br.poll(t, s)
		if code != http.StatusOK || got.State != pairing.StateApproved {
			return string(b)
		}
		st = got
		return ""
	})
	if !st.Session || st.Name != "test-phone" {
		t.Fatalf("approved poll = %+v", st)
	}
	// The cookie makes the browser an approver: it reads the queue, but
	// admin routes stay closed.
	if code, b := br.do(t, "GET", "/v1/pending", nil, nil); code != http.StatusOK {
		t.Fatalf("GET /v1/pending as the paired browser = %d %s", code, b)
	}
	if code, _ := br.do(t, "GET", "/v1/pairing", nil, nil); code != http.StatusForbidden {
		t.Fatalf("GET /v1/pairing as the paired browser = %d, want 403", code)
	}
	// The secret starts one session, not two.
	thief := a.pairer(t, "127.0.0.7")
	if code, _, b := thief.poll(t, s); code != http.StatusConflict {
		t.Fatalf("second claim = %d %s", code, b)
	}

	// The admin sees the device, never a hash.
	var list struct {
		Requests []map[string]any `json:"requests"`
	}
	if code, b := a.call(t, natsutil.RoleAdmin, "GET", "/v1/pairing", nil, &list); code != http.StatusOK || len(list.Requests) != 1 ||
		list.Requests[0]["state"] != pairing.StateApproved || list.Requests[0]["name"] != "test-phone" || bytes.Contains(b, []byte("hmac")) {
		t.Fatalf("GET /v1/pairing = %d %s", code, b)
	}
	for _, role := range []natsutil.Role{natsutil.RoleAgent, natsutil.RoleRuntime, natsutil.RoleApprover} {
		if code, _ := a.call(t, role, "GET", "/v1/pairing", nil, nil); code != http.StatusForbidden {
			t.Fatalf("GET /v1/pairing as %s = %d", role, code)
		}
	}

	// Revoking the device ends its session.
	ad.append(t, pairinglog.RevokeEvent(s.RequestID, "test-admin", "lost phone"))
	eventually(t, "the revoked device's session ends", func() string {
		if code, b := br.do(t, "GET", "/v1/pending", nil, nil); code != http.StatusUnauthorized {
			return string(b)
		}
		return ""
	})

	// Neither the code nor the secret is in the log, in any form a reader sees.
	raw := logBytes(t, a)
	for _, secret := range []string{s.Code, strings.ReplaceAll(s.Code, "-", ""), s.Secret} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the log holds %q", secret)
		}
	}
	if !bytes.Contains(raw, []byte(pairing.HashCode(ad.key, strings.ReplaceAll(s.Code, "-", "")))) {
		t.Error("the log does not hold the code's keyed hash (was it redacted?)")
	}
}

// logBytes is every record of VIGIL_LOG, concatenated.
func logBytes(t *testing.T, a *api) []byte {
	t.Helper()
	var out []byte
	err := natsutil.ReadStream(t.Context(), a.JetStream(), natsutil.ReadOptions{Stream: events.StreamLog}, func(r natsutil.RawRecord) error {
		out = append(out, r.Data...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPairingLimitsOverHTTP: at most three pending, and a lockout after
// five failed approvals, answered 429 with nothing appended.
func TestPairingLimitsOverHTTP(t *testing.T) {
	a := startAPI(t)
	ad := a.admin(t)
	var codes []started
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		codes = append(codes, a.pairer(t, ip).request(t))
	}
	countLog := func() int { return bytes.Count(logBytes(t, a), []byte(pairing.Conversation)) }
	before := countLog()
	if code, b := a.pairer(t, "127.0.0.5").do(t, "POST", "/pair", nil, nil); code != http.StatusTooManyRequests || !strings.Contains(string(b), "too many codes") {
		t.Fatalf("fourth pending = %d %s", code, b)
	}
	if after := countLog(); after != before {
		t.Errorf("a refused request appended to the log (%d pairing records, then %d)", before, after)
	}
	// A denial frees a place.
	ad.attempt(t, events.KindPairingDenied, codes[1].Code, "")
	eventually(t, "the denial reaches the API", func() string {
		if _, st, b := a.pairer(t, "127.0.0.3").poll(t, codes[1]); st.State != pairing.StateDenied {
			return string(b)
		}
		return ""
	})
	a.pairer(t, "127.0.0.5").request(t)

	for range pairing.MaxFailures {
		ad.attempt(t, events.KindPairingApproved, "ZZZZ-ZZZZ", "")
	}
	eventually(t, "the lockout reaches the API", func() string {
		code, b := a.pairer(t, "127.0.0.6").do(t, "POST", "/pair", nil, nil)
		if code != http.StatusTooManyRequests || !strings.Contains(string(b), "locked out") {
			return string(b)
		}
		return ""
	})
	// Locked: even the right code approves nothing.
	seq := ad.attempt(t, events.KindPairingApproved, codes[0].Code, "")
	var view struct {
		Lockout struct{ Locked bool } `json:"lockout"`
		Seq     uint64                `json:"seq"`
	}
	eventually(t, "the locked-out approval is folded", func() string {
		a.call(t, natsutil.RoleAdmin, "GET", "/v1/pairing", nil, &view)
		if view.Seq < seq {
			return "not folded yet"
		}
		return ""
	})
	if !view.Lockout.Locked {
		t.Fatal("not locked out after five failures")
	}
	if code, st, b := a.pairer(t, "127.0.0.2").poll(t, codes[0]); code != http.StatusOK || st.State != pairing.StatePending {
		t.Fatalf("a correct code approved during a lockout: %d %s", code, b)
	}
}
