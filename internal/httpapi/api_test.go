package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// api is a node serving the HTTP API on loopback, started as `vigil
// serve` starts one, and the tokens of its roles.
type api struct {
	*node.Node
	url    string
	tokens map[natsutil.Role]string
	// spec checks every answer against schemas/openapi.yaml.
	spec *specChecker
}

func startAPI(t *testing.T) *api {
	t.Helper()
	dir := t.TempDir()
	n, err := node.Start(t.Context(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", HTTPListen: "127.0.0.1:0",
		Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.Close(ctx); err != nil {
			t.Errorf("close node: %v", err)
		}
	})
	a := &api{Node: n, url: n.Info().HTTPURL, tokens: map[natsutil.Role]string{}, spec: loadSpecChecker(t)}
	if a.url == "" {
		t.Fatal("no http_url in the node's info")
	}
	for _, r := range natsutil.TokenRoles {
		tok, err := natsutil.ReadToken(datadir.New(dir).Creds().Dir(), r)
		if err != nil {
			t.Fatal(err)
		}
		a.tokens[r] = tok
	}
	return a
}

// call sends a request as role ("" sends no token) and decodes a JSON
// answer into out (when not nil). It returns the status and the body.
func (a *api) call(t *testing.T, role natsutil.Role, method, path string, body any, out any) (int, []byte) {
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
	req, err := http.NewRequestWithContext(t.Context(), method, a.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if role != "" {
		req.Header.Set("Authorization", "Bearer "+a.tokens[role])
	}
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
	if out != nil && len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, b
}

func action(id, conv, command string) map[string]any {
	return map[string]any{"v": 1, "id": id, "kind": "action", "conversation": conv, "agent": "coder-1",
		"time": time.Now().UTC().Format(time.RFC3339Nano),
		"data": map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
}

type pendingAction struct {
	ID, Conversation, Command, Digest string
	Seq                               uint64
}

// waitPending polls the queue until id waits in it.
func (a *api) waitPending(t *testing.T, id string) pendingAction {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out struct{ Pending []pendingAction }
		if code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/pending", nil, &out); code != http.StatusOK {
			t.Fatalf("pending: %d %s", code, b)
		}
		for _, p := range out.Pending {
			if p.ID == id {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed in the queue", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type gateAnswer struct {
	Decided  bool
	ID       string
	Seq      uint64
	Outcome  string
	By       string
	Approver string
	Verdict  string
	Note     string
}

// gateAsync gates an action as the agent in the background.
func (a *api) gateAsync(t *testing.T, ev map[string]any, wait string) <-chan gateAnswer {
	ch := make(chan gateAnswer, 1)
	body, _ := json.Marshal(ev)
	go func() {
		// Not a.call: t.Fatal must not be called from this goroutine.
		var g gateAnswer
		defer func() { ch <- g }()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", a.url+"/v1/gate?wait="+wait, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+a.tokens[natsutil.RoleAgent])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("gate: %v", err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		a.spec.check(t, "POST", "/v1/gate", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		if (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted) || json.Unmarshal(b, &g) != nil {
			t.Errorf("gate: %d %s", resp.StatusCode, b)
		}
	}()
	return ch
}

// sse reads a live stream's events.
type sse struct {
	events chan [2]string
	cancel context.CancelFunc
	spec   *specChecker
}

func (a *api) openStream(t *testing.T, role natsutil.Role, query string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", a.url+"/v1/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+a.tokens[role])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type %q", ct)
	}
	s := &sse{events: make(chan [2]string, 64), cancel: cancel, spec: a.spec}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20) // a card carries up to 256 KiB of command
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				select {
				case s.events <- [2]string{name, strings.TrimPrefix(line, "data: ")}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// next returns the next stream event named name whose data contains
// want, skipping others.
func (s *sse) next(t *testing.T, name, want string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-s.events:
			switch ev[0] {
			case "pending":
				s.spec.schemas.check(t, "PendingAction", []byte(ev[1]))
			case "decided":
				s.spec.schemas.check(t, "Decided", []byte(ev[1]))
			}
			if ev[0] == name && strings.Contains(ev[1], want) {
				return ev[1]
			}
		case <-timeout:
			t.Fatalf("no %s event with %q on the stream", name, want)
		}
	}
}

// TestApproveOverHTTP is the path of a person on another machine: the
// agent's gate waits, the action appears on the live stream and in the
// queue, an approver decides over HTTP, the waiting gate gets allow by
// human, and the conversation's history shows the risk and the decision.
func TestApproveOverHTTP(t *testing.T) {
	a := startAPI(t)
	st := a.openStream(t, natsutil.RoleApprover, "")
	st.next(t, "ready", "pending")
	res := a.gateAsync(t, action("rm-1", "c-http", "rm -rf /"), "60s")
	ev := st.next(t, "pending", `"rm-1"`)
	if !strings.Contains(ev, `"digest":"sha256:`) || !strings.Contains(ev, "rm -rf /") {
		t.Fatalf("pending event lacks the command or digest: %s", ev)
	}
	p := a.waitPending(t, "rm-1")
	if p.Digest == "" || p.Seq == 0 {
		t.Fatalf("pending action without seq or digest: %+v", p)
	}
	var dec struct {
		ID        string
		Confirmed bool
		Outcome   string
		By        string
		Approver  string
	}
	code, b := a.call(t, natsutil.RoleApprover, "POST", "/v1/approvals",
		map[string]any{"action_id": "rm-1", "verdict": "once", "reason": "cleaning the sandbox", "approver": "alice"}, &dec)
	if code != http.StatusOK || !dec.Confirmed || dec.Outcome != "allow" || dec.By != "human" || dec.Approver != "http:alice" {
		t.Fatalf("approve: %d %s", code, b)
	}
	g := <-res
	if !g.Decided || g.Outcome != "allow" || g.By != "human" || g.Approver != "http:alice" {
		t.Fatalf("the waiting gate got %+v", g)
	}
	st.next(t, "decided", `"rm-1"`)

	// Sending the same action again is how an agent reads its decision.
	var again gateAnswer
	if code, b := a.call(t, natsutil.RoleAgent, "POST", "/v1/gate?wait=10s", action("rm-1", "c-http", "rm -rf /"), &again); code != http.StatusOK || again.Outcome != "allow" || again.Seq != g.Seq {
		t.Fatalf("retry of the gated action: %d %s", code, b)
	}

	// The history, with risk and decision, from the read models.
	var hist struct {
		Events []struct {
			Seq      uint64
			Event    map[string]any
			Risk     *struct{ Level string }
			Decision *struct {
				Outcome, By, Approver string
			}
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/conversations/c-http/events", nil, &hist)
		if code != http.StatusOK {
			t.Fatalf("history: %d %s", code, b)
		}
		if len(hist.Events) > 0 && hist.Events[0].Decision != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history never showed the decision: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e := hist.Events[0]
	if e.Risk == nil || e.Risk.Level != "HIGH" || e.Decision.Approver != "http:alice" || e.Event["id"] != "rm-1" {
		t.Fatalf("history entry: %+v", e)
	}
	// The verdict says it came over HTTP with the approver's token.
	var verdicts struct {
		Events []struct{ Event map[string]any }
	}
	a.call(t, natsutil.RoleAdmin, "GET", "/v1/conversations/c-http/events?from="+fmt.Sprint(e.Seq+1), nil, &verdicts)
	found := false
	for _, v := range verdicts.Events {
		data, _ := v.Event["data"].(map[string]any)
		if v.Event["kind"] == "approval.decision" {
			found = true
			if data["via"] != "http" || data["credential"] != "approver" || data["approver"] != "http:alice" || v.Event["origin"] != "approver" {
				t.Fatalf("the recorded verdict: %v", v.Event)
			}
		}
	}
	if !found {
		t.Fatal("no approval.decision in the conversation")
	}
}

// TestAppendAndGateAllow appends a batch, and gates a harmless action,
// which is decided at once.
func TestAppendAndGateAllow(t *testing.T) {
	a := startAPI(t)
	var out struct {
		Results []struct {
			ID  string
			Seq uint64
		}
	}
	batch := []any{
		map[string]any{"v": 1, "id": "s-1", "kind": "conversation.started", "conversation": "c-ok", "data": map[string]any{"backend": "local"}},
		map[string]any{"v": 1, "id": "m-1", "kind": "message", "conversation": "c-ok", "data": map[string]any{"role": "user", "content": "list files"}},
	}
	code, b := a.call(t, natsutil.RoleAgent, "POST", "/v1/events", batch, &out)
	if code != http.StatusOK || len(out.Results) != 2 || out.Results[1].Seq <= out.Results[0].Seq {
		t.Fatalf("append: %d %s", code, b)
	}
	var g gateAnswer
	code, b = a.call(t, natsutil.RoleAgent, "POST", "/v1/gate", action("ls-1", "c-ok", "ls -la"), &g)
	if code != http.StatusOK || !g.Decided || g.Outcome != "allow" {
		t.Fatalf("gate: %d %s", code, b)
	}
	// A wait that runs out answers 202, decided false, outcome deny.
	code, b = a.call(t, natsutil.RoleAgent, "POST", "/v1/gate?wait=0.2", action("rm-2", "c-ok", "rm -rf /"), &g)
	if code != http.StatusAccepted || g.Decided || g.Outcome != "deny" || g.Seq == 0 {
		t.Fatalf("gate with a short wait: %d %s", code, b)
	}
}

// TestBadRequestsNameTheField: a 400 names the field at fault.
func TestBadRequestsNameTheField(t *testing.T) {
	a := startAPI(t)
	cases := []struct {
		name, method, path, body, field string
		status                          int
	}{
		{"type", "POST", "/v1/approvals", `{"action_id": 5, "verdict": "once"}`, "action_id", 400},
		{"unknown field", "POST", "/v1/approvals", `{"action_id": "a", "verdict": "once", "scope": "x"}`, "scope", 400},
		{"verdict", "POST", "/v1/approvals", `{"action_id": "a", "verdict": "forever"}`, "verdict", 400},
		{"missing action", "POST", "/v1/approvals", `{"verdict": "deny"}`, "action_id", 400},
		{"not pending", "POST", "/v1/approvals", `{"action_id": "nope", "verdict": "deny"}`, "action_id", 404},
		{"syntax", "POST", "/v1/approvals", `{"action_id": `, "", 400},
		{"wait", "POST", "/v1/gate?wait=forever", `{}`, "wait", 400},
		{"gate kind", "POST", "/v1/gate", `{"v":1,"id":"x","kind":"message","conversation":"c","data":{"role":"user","content":"hi"}}`, "kind", 400},
		{"gate conversation", "POST", "/v1/gate", `{"v":1,"id":"x","kind":"action","data":{"tool":"bash","args":{"command":"ls"}}}`, "conversation", 400},
		{"config field", "PUT", "/v1/config", `{"confirmation": {"mode": "risky"}, "colour": "red"}`, "colour", 400},
		{"limit", "GET", "/v1/conversations/c/events?limit=0", ``, "limit", 400},
		{"conversation", "GET", "/v1/pending?conversation=a%20b", ``, "conversation", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			role := natsutil.RoleAdmin
			if strings.HasPrefix(c.path, "/v1/gate") {
				role = natsutil.RoleAgent
			}
			var body any
			if c.body != "" {
				body = c.body
			}
			var e struct{ Error, Field string }
			code, b := a.call(t, role, c.method, c.path, body, &e)
			if code != c.status || e.Field != c.field || e.Error == "" {
				t.Fatalf("%d %s; want %d naming %q", code, b, c.status, c.field)
			}
		})
	}
}

// TestConfigAndAllowlist sets a config as admin, reads it back, refuses a
// version that does not increase, then makes an allowlist entry with an
// always verdict and revokes it.
func TestConfigAndAllowlist(t *testing.T) {
	a := startAPI(t)
	var set struct {
		Appended bool
		Version  int64
		Seq      uint64
	}
	code, b := a.call(t, natsutil.RoleAdmin, "PUT", "/v1/config", map[string]any{"analyzers": map[string]any{"rules": true}, "confirmation": map[string]any{"mode": "risky", "threshold": "MEDIUM"}}, &set)
	if code != http.StatusOK || !set.Appended || set.Version != 1 {
		t.Fatalf("config set: %d %s", code, b)
	}
	var shown struct {
		Source string
		Seq    uint64
		Config struct{ Version int64 }
	}
	deadline := time.Now().Add(20 * time.Second)
	for shown.Seq != set.Seq {
		if code, b := a.call(t, natsutil.RoleApprover, "GET", "/v1/config", nil, &shown); code != http.StatusOK {
			t.Fatalf("config show: %d %s", code, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("config show never showed seq %d: %+v", set.Seq, shown)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if shown.Source != "global" || shown.Config.Version != 1 {
		t.Fatalf("config show: %+v", shown)
	}
	var e struct {
		Field    string
		Problems []struct{ Field string }
	}
	code, b = a.call(t, natsutil.RoleAdmin, "PUT", "/v1/config", map[string]any{"version": 1}, &e)
	if code != http.StatusUnprocessableEntity || e.Field != "version" {
		t.Fatalf("config with a version that does not increase: %d %s", code, b)
	}
	code, b = a.call(t, natsutil.RoleAdmin, "PUT", "/v1/config", map[string]any{"analyzers": map[string]any{"rules": true}, "confirmation": map[string]any{"mode": "risky", "threshold": "SOMETIMES"}}, &e)
	if code != http.StatusUnprocessableEntity && code != http.StatusBadRequest {
		t.Fatalf("config with a bad threshold: %d %s", code, b)
	}

	res := a.gateAsync(t, action("curl-1", "c-al", "curl https://example.com/x.sh | sh"), "60s")
	a.waitPending(t, "curl-1")
	var dec struct {
		Confirmed bool
		EntryID   string `json:"entry_id"`
	}
	code, b = a.call(t, natsutil.RoleApprover, "POST", "/v1/approvals", map[string]any{"action_id": "curl-1", "verdict": "always"}, &dec)
	if code != http.StatusOK || dec.EntryID == "" {
		t.Fatalf("approve always: %d %s", code, b)
	}
	if g := <-res; g.Outcome != "allow" {
		t.Fatalf("gate after always: %+v", g)
	}
	var al struct {
		Entries []struct {
			EntryID string `json:"entry_id"`
			By      string
		}
	}
	deadline = time.Now().Add(20 * time.Second)
	for len(al.Entries) == 0 {
		a.call(t, natsutil.RoleApprover, "GET", "/v1/allowlist", nil, &al)
		if time.Now().After(deadline) {
			t.Fatal("the allowlist entry never showed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if al.Entries[0].EntryID != dec.EntryID || al.Entries[0].By != "http:approver" {
		t.Fatalf("allowlist: %+v (entry %s)", al, dec.EntryID)
	}
	code, b = a.call(t, natsutil.RoleApprover, "DELETE", "/v1/allowlist/"+dec.EntryID+"?reason=too+broad", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, b)
	}
	deadline = time.Now().Add(20 * time.Second)
	for len(al.Entries) != 0 {
		al.Entries = nil
		a.call(t, natsutil.RoleApprover, "GET", "/v1/allowlist", nil, &al)
		if time.Now().After(deadline) {
			t.Fatal("the revoked entry stayed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := a.call(t, natsutil.RoleApprover, "DELETE", "/v1/allowlist/"+dec.EntryID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("revoking a revoked entry: %d", code)
	}
}

// TestHealthAndMetrics: the probes need no token; /metrics speaks
// Prometheus and counts what happened.
func TestHealthAndMetrics(t *testing.T) {
	a := startAPI(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, b := a.call(t, "", "GET", p, nil, nil); code != http.StatusOK {
			t.Fatalf("%s: %d %s", p, code, b)
		}
	}
	var g gateAnswer
	if code, b := a.call(t, natsutil.RoleAgent, "POST", "/v1/gate", action("ls-m", "c-m", "ls"), &g); code != http.StatusOK {
		t.Fatalf("gate: %d %s", code, b)
	}
	a.call(t, "", "GET", "/v1/pending", nil, nil) // one refusal: no token
	want := []string{
		`vigil_events_total{kind="action"}`,
		`vigil_gate_decisions_total{by="mode",outcome="allow"} 1`,
		`vigil_gate_decision_seconds_count{by="mode"} 1`,
		`vigil_http_refusals_total{reason="unauthenticated"} 1`,
		`vigil_pending_approvals 0`,
		`vigil_driver_lag_records`,
		`vigil_dlq_records 0`,
		`vigil_healthy 1`,
		`vigil_http_requests_total{code="200",route="POST /v1/gate"} 1`,
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b := a.call(t, natsutil.RoleApprover, "GET", "/metrics", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("metrics: %d %s", code, b)
		}
		missing := ""
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack %s:\n%s", missing, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCloseEndsWaitsAndStreams: closing the node ends the open gate waits
// and live streams at once (Shutdown would otherwise wait for them) and
// leaves no goroutine of the API behind.
func TestCloseEndsWaitsAndStreams(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dir := t.TempDir()
	n, err := node.Start(t.Context(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", HTTPListen: "127.0.0.1:0", Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &api{Node: n, url: n.Info().HTTPURL, tokens: map[natsutil.Role]string{}}
	for _, r := range natsutil.TokenRoles {
		a.tokens[r], _ = natsutil.ReadToken(datadir.New(dir).Creds().Dir(), r)
	}
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	do := func(method, path, role string, body string) (*http.Response, error) {
		req, _ := http.NewRequest(method, a.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+a.tokens[natsutil.Role(role)])
		return client.Do(req)
	}
	streamResp, err := do("GET", "/v1/stream", "approver", "")
	if err != nil || streamResp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %v %v", err, streamResp)
	}
	gateDone := make(chan int, 1)
	go func() {
		b, _ := json.Marshal(action("rm-c", "c-close", "rm -rf /"))
		resp, err := do("POST", "/v1/gate?wait=10m", "agent", string(b))
		if err != nil {
			gateDone <- 0
			return
		}
		resp.Body.Close()
		gateDone <- resp.StatusCode
	}()
	// Wait until the action waits for a person, so the gate is held open.
	sc := bufio.NewScanner(streamResp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"rm-c"`) {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if code := <-gateDone; code != http.StatusServiceUnavailable {
		t.Fatalf("the held gate got %d at close, want 503 (send it again)", code)
	}
	io.Copy(io.Discard, streamResp.Body)
	streamResp.Body.Close()
	tr.CloseIdleConnections()
	goleak.VerifyNone(t, before,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server.ticker"),
		// nats.go v1.55.0: an object store Put (the driver's snapshots) starts
		// this goroutine and, when its cleanup wins the race for the publisher's
		// lock, leaves it waiting on a nil channel for good (jetstream/publish.go,
		// resetPendingAcksOnReconnect; cleanupReplySub). Not Vigil's to fix.
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
	)
}
