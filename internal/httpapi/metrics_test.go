package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestMetricsFindingsAndNotify: a secret the ingest service removes is
// counted by its rule, and the node's notifier reports on /metrics.
func TestMetricsFindingsAndNotify(t *testing.T) {
	a := startAPI(t)
	secret := "ghp_" + strings.Repeat("a1B2c3D4e5", 4)[:36]
	ev := map[string]any{"v": 1, "id": "m-secret", "kind": "message", "conversation": "c-sec",
		"data": map[string]any{"role": "user", "content": "my token is " + secret}}
	if code, b := a.call(t, natsutil.RoleAgent, "POST", "/v1/events", ev, nil); code != http.StatusOK {
		t.Fatalf("append: %d %s", code, b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, b := a.call(t, natsutil.RoleAdmin, "GET", "/metrics", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("metrics: %d %s", code, b)
		}
		m := string(b)
		if strings.Contains(m, secret) {
			t.Fatal("the metrics hold the secret")
		}
		if strings.Contains(m, `vigil_redaction_findings_total{rule="`) && strings.Contains(m, "vigil_notify_inflight 0") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack the findings by rule or the notifier:\n%s", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetricsHoldNoAgentChosenSeries: what an agent credential can send
// (forged redactions records with hundreds of rule names, over HTTP and
// over NATS; an unknown kind; an unknown tool; requests to paths of its
// choosing; a verdict it may not give) adds no series whose label the
// agent chose to GET /metrics: no label value holds the agent's marker,
// and the findings by rule are only the built-in rules that fired.
func TestMetricsHoldNoAgentChosenSeries(t *testing.T) {
	a := startAPI(t)
	const marker = "zzagent"
	forged := func(i int) []any {
		rs := make([]any, 50)
		for j := range rs {
			rs[j] = map[string]any{"rule": fmt.Sprintf("%s-%d-%d\x1b[2J", marker, i, j), "count": 1, "path": "data.content"}
		}
		return rs
	}
	secret := "ghp_" + strings.Repeat("Zz9Yy8Xx7W", 4)[:36]
	for i := range 20 {
		ev := map[string]any{"v": 1, "id": fmt.Sprintf("m-forged-%d", i), "kind": "message", "conversation": "c-" + marker,
			"agent": marker + "-agent", "data": map[string]any{"role": "user", "content": "token " + secret, "redactions": forged(i)}}
		if code, b := a.call(t, natsutil.RoleAgent, "POST", "/v1/events", ev, nil); code != http.StatusOK {
			t.Fatalf("append %d: %d %s", i, code, b)
		}
	}
	agent := agentClient(t, a)
	for i := 20; i < 40; i++ {
		ev := bashAction("c-"+marker, "ls "+marker)
		ev.Data["tool"] = marker + "-tool"
		ev.Data["redactions"] = forged(i)
		if _, err := agent.Append(t.Context(), ev); err != nil {
			t.Fatalf("append over NATS %d: %v", i, err)
		}
	}
	a.call(t, natsutil.RoleAgent, "POST", "/v1/events", map[string]any{"v": 1, "kind": marker + "-kind", "conversation": "c-x", "data": map[string]any{}}, nil)
	a.call(t, natsutil.RoleAgent, "POST", "/v1/approvals", map[string]any{"action_id": "m-forged-1", "verdict": "once", "approver": marker}, nil)
	for _, path := range []string{"/" + marker, "/v1/" + marker, "/ui/assets/" + marker + ".js"} {
		req, _ := http.NewRequest("GET", a.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+a.tokens[natsutil.RoleAgent])
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	var m string
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, b := a.call(t, natsutil.RoleAdmin, "GET", "/metrics", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("metrics: %d %s", code, b)
		}
		m = string(b)
		// Every event folded: the 40 appended are counted by kind.
		if strings.Contains(m, "vigil_read_models_lag_records 0") && strings.Contains(m, `vigil_events_total{kind="message"} 20`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read models never folded the attack:\n%s", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(m, marker) || strings.Contains(m, secret) {
		for _, l := range strings.Split(m, "\n") {
			if strings.Contains(l, marker) || strings.Contains(l, secret) {
				t.Errorf("a series the agent chose: %s", l)
			}
		}
	}
	var rules []string
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, "vigil_redaction_findings_total{") {
			rules = append(rules, l)
		}
	}
	if len(rules) == 0 || len(rules) > 4 {
		t.Errorf("findings by rule: %q; want the built-in rule(s) that found the token, and no other", rules)
	}
	t.Logf("/metrics: %d bytes; findings %q", len(m), rules)
}
