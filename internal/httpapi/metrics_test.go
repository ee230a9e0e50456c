package httpapi_test

import (
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
