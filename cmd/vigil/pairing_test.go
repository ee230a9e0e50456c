package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// pairBrowser asks the node at url for a code from a loopback address, as
// a browser opening /pair does, and polls with its secret.
type pairBrowser struct {
	url string
	c   *http.Client
	id  string
	// code and secret are what POST /pair answered.
	code, secret string
}

func newPairBrowser(t *testing.T, url, ip string) *pairBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	b := &pairBrowser{url: url, c: &http.Client{Jar: jar, Transport: tr}}
	resp, err := b.c.Post(url+"/pair", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct{ RequestID, Code, Secret string }
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &struct {
		RequestID *string `json:"request_id"`
		Code      *string `json:"code"`
		Secret    *string `json:"secret"`
	}{&s.RequestID, &s.Code, &s.Secret}) != nil {
		t.Fatalf("POST /pair: %d %s", resp.StatusCode, body)
	}
	b.id, b.code, b.secret = s.RequestID, s.Code, s.Secret
	return b
}

func (b *pairBrowser) poll(t *testing.T) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", b.url+"/pair/"+b.id, nil)
	req.Header.Set(httpapi.HeaderPairSecret, b.secret)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// listing runs vigil pairing list --json [--all].
func listing(t *testing.T, dir string, all bool) pairingListing {
	t.Helper()
	args := []string{"pairing", "list", "--data", dir, "--json"}
	if all {
		args = append(args, "--all")
	}
	out, stderr, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("pairing list: exit %d: %s", code, stderr)
	}
	var l pairingListing
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("pairing list: %v: %s", err, out)
	}
	return l
}

// TestPairingCLI drives vigil pairing against vigil serve: approve by the
// code a browser got (it becomes an approver with the name given), a wrong
// code refused and counted, deny, revoke, clear-pending, and the exact
// command names and exit codes.
func TestPairingCLI(t *testing.T) {
	dir := t.TempDir()
	startServe(t, dir, "--http-listen", "127.0.0.1:0")
	info, err := client.ReadServeInfo(dir)
	if err != nil || info.HTTPURL == "" {
		t.Fatalf("serve.json: %+v, %v", info, err)
	}
	if l := listing(t, dir, false); len(l.Requests) != 0 || l.Lockout.Locked {
		t.Fatalf("fresh node lists %+v", l)
	}
	phone := newPairBrowser(t, info.HTTPURL, "127.0.0.1")

	// Refused before anything is appended: another platform, a malformed code.
	for _, args := range [][]string{{"approve", "telegram", phone.code}, {"approve", "web", "ABCD-EFG0"}, {"approve", "web", "ABC"}} {
		_, stderr, code := runCLI(t, "", append([]string{"pairing"}, append(args, "--data", dir)...)...)
		if code != 1 || stderr == "" {
			t.Fatalf("pairing %v: exit %d %q", args, code, stderr)
		}
	}
	// A wrong code is appended, and counted.
	_, stderr, code := runCLI(t, "", "pairing", "approve", "web", "ZZZZ-ZZZZ", "--data", dir)
	if code != 1 || !strings.Contains(stderr, "no open pairing request has the code ZZZZ-ZZZZ") || !strings.Contains(stderr, "1 failed attempt") {
		t.Fatalf("wrong code: exit %d %q", code, stderr)
	}
	if l := listing(t, dir, false); len(l.Requests) != 1 || l.Requests[0].State != pairing.StatePending || l.Requests[0].ID != phone.id {
		t.Fatalf("list = %+v", l)
	}
	// The right code, typed loosely, approves and names the device.
	loose := strings.ToLower(strings.ReplaceAll(phone.code, "-", " "))
	out, stderr, code := runCLI(t, "", "pairing", "approve", "web", loose, "--name", "alice-phone", "--data", dir)
	if code != 0 || !strings.Contains(out, `approver device "alice-phone"`) || !strings.Contains(out, phone.id) {
		t.Fatalf("approve: exit %d %q %q", code, out, stderr)
	}
	waitFor(t, "the browser's session", func() bool {
		status, st := phone.poll(t)
		return status == http.StatusOK && st["state"] == pairing.StateApproved && st["session"] == true && st["name"] == "alice-phone"
	})
	if l := listing(t, dir, false); len(l.Requests) != 1 || l.Requests[0].State != pairing.StateApproved || l.Requests[0].Name != "alice-phone" {
		t.Fatalf("list after approval = %+v", l)
	}
	// The same code again: used up.
	if _, stderr, code := runCLI(t, "", "pairing", "approve", "web", phone.code, "--data", dir); code != 1 || !strings.Contains(stderr, "2 failed attempt") {
		t.Fatalf("approve twice: exit %d %q", code, stderr)
	}

	// deny, clear-pending.
	tablet := newPairBrowser(t, info.HTTPURL, "127.0.0.2")
	laptop := newPairBrowser(t, info.HTTPURL, "127.0.0.3")
	desk := newPairBrowser(t, info.HTTPURL, "127.0.0.4")
	if out, stderr, code := runCLI(t, "", "pairing", "deny", "web", tablet.code, "--reason", "not ours", "--data", dir); code != 0 || !strings.Contains(out, "denied: request "+tablet.id) {
		t.Fatalf("deny: exit %d %q %q", code, out, stderr)
	}
	if _, st := tablet.poll(t); st["state"] != pairing.StateDenied {
		waitFor(t, "the denial", func() bool { _, st := tablet.poll(t); return st["state"] == pairing.StateDenied })
	}
	if out, _, code := runCLI(t, "", "pairing", "clear-pending", "--data", dir); code != 0 || !strings.Contains(out, "2 pending pairing request(s) cancelled") {
		t.Fatalf("clear-pending: exit %d %q", code, out)
	}
	for _, b := range []*pairBrowser{laptop, desk} {
		waitFor(t, "the cancellation", func() bool { _, st := b.poll(t); return st["state"] == pairing.StateRevoked })
	}
	if out, _, code := runCLI(t, "", "pairing", "clear-pending", "--data", dir); code != 0 || !strings.Contains(out, "no pairing request is pending") {
		t.Fatalf("clear-pending again: exit %d %q", code, out)
	}

	// revoke, by name.
	if out, stderr, code := runCLI(t, "", "pairing", "revoke", "alice-phone", "--data", dir); code != 0 || !strings.Contains(out, `device "alice-phone"`) {
		t.Fatalf("revoke: exit %d %q %q", code, out, stderr)
	}
	if _, stderr, code := runCLI(t, "", "pairing", "revoke", "alice-phone", "--data", dir); code != 1 || !strings.Contains(stderr, "no paired device") {
		t.Fatalf("revoke twice: exit %d %q", code, stderr)
	}
	l := listing(t, dir, true)
	states := map[string]string{}
	for _, q := range l.Requests {
		states[q.ID] = q.State
	}
	want := map[string]string{phone.id: pairing.StateRevoked, tablet.id: pairing.StateDenied, laptop.id: pairing.StateRevoked, desk.id: pairing.StateRevoked}
	for id, st := range want {
		if states[id] != st {
			t.Errorf("list --all: %s is %q, want %q (%v)", id, states[id], st, states)
		}
	}
	if out, _, _ := runCLI(t, "", "pairing", "list", "--data", dir); strings.Contains(out, "hmac") || strings.Contains(out, phone.code) {
		t.Errorf("list shows a hash or a code: %s", out)
	}
}

// TestPairingCLILockout: five failures lock pairing out; while locked the
// right code is refused too (exit 1), and the list says so.
func TestPairingCLILockout(t *testing.T) {
	dir := t.TempDir()
	startServe(t, dir, "--http-listen", "127.0.0.1:0")
	info, err := client.ReadServeInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := newPairBrowser(t, info.HTTPURL, "127.0.0.1")
	for i := range pairing.MaxFailures {
		_, stderr, code := runCLI(t, "", "pairing", "deny", "web", "ZZZZ-ZZZZ", "--data", dir)
		if code != 1 || (i == pairing.MaxFailures-1) != strings.Contains(stderr, "locked out") {
			t.Fatalf("failure %d: exit %d %q", i+1, code, stderr)
		}
	}
	if _, stderr, code := runCLI(t, "", "pairing", "approve", "web", b.code, "--data", dir); code != 1 || !strings.Contains(stderr, "locked out") {
		t.Fatalf("approve while locked: exit %d %q", code, stderr)
	}
	if l := listing(t, dir, false); !l.Lockout.Locked || l.Requests[0].State != pairing.StatePending {
		t.Fatalf("list = %+v", l)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
