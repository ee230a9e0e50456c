package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/notify"
	"github.com/vigil-dev/vigil/internal/testnode"
)

func startNode(t *testing.T) (*node.Node, string) {
	t.Helper()
	dir := t.TempDir()
	n, err := node.Start(t.Context(), node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.Close(ctx)
	})
	return n, dir
}

func connect(t *testing.T, dir string, role natsutil.Role) *client.Client {
	t.Helper()
	cl, err := client.Connect(t.Context(), client.Options{DataDir: dir, Role: role, Name: "notify-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func action(id, conv, command string) events.Event {
	return events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindAction, Conversation: conv, Agent: "coder-1",
		Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
}

type received struct {
	header http.Header
	body   []byte
}

// TestSignedWithRetries: a webhook that fails twice gets the third
// attempt, signed so that Verify accepts it, with the action's fields and
// a Slack text; a webhook of other levels gets nothing; the failures and
// the delivery are counted.
func TestSignedWithRetries(t *testing.T) {
	n, dir := startNode(t)
	secretFile := filepath.Join(t.TempDir(), "hook.secret")
	secret := []byte("s3cr3t-signing-key")
	if err := os.WriteFile(secretFile, append(secret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []received
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		got = append(got, received{r.Header.Clone(), b})
	}))
	t.Cleanup(srv.Close)
	lowOnly := 0
	low := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lowOnly++
		mu.Unlock()
	}))
	t.Cleanup(low.Close)

	// The consumer starts from new requests: runNotifier waits until it exists.
	nt := runNotifier(t, notify.Options{
		JetStream: n.JetStream(), Durable: "test-notify", Backoff: 10 * time.Millisecond, Attempts: 4,
		Webhooks: func(conv string) ([]events.Webhook, error) {
			return []events.Webhook{
				{Name: "ops", URL: srv.URL, SecretFile: secretFile, Levels: []events.Risk{events.RiskHigh}},
				{Name: "low", URL: low.URL, Levels: []events.Risk{events.RiskLow}},
			}, nil
		},
	})

	agent := connect(t, dir, natsutil.RoleAgent)
	if _, err := agent.Append(t.Context(), action("rm-1", "c-n", "rm -rf /")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		k := len(got)
		mu.Unlock()
		if k > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook never got the notification")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	r := got[0]
	mu.Unlock()
	if err := notify.Verify(secret, r.header, r.body, time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("signature: %v (%v)", err, r.header)
	}
	if err := notify.Verify([]byte("another key"), r.header, r.body, time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a signature verified with another key")
	}
	tampered := append([]byte{}, r.body...)
	tampered[len(tampered)/2] ^= 1
	if err := notify.Verify(secret, r.header, tampered, time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a tampered body verified")
	}
	if err := notify.Verify(secret, r.header, r.body, time.Now().Add(time.Hour), 5*time.Minute); err == nil {
		t.Fatal("an old notification verified")
	}
	var p notify.Payload
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "gate.requested" || p.ActionID != "rm-1" || p.Conversation != "c-n" || p.Level != events.RiskHigh ||
		p.Command != "rm -rf /" || p.LogSeq == 0 || !strings.Contains(p.Text, "rm -rf /") || !strings.Contains(p.Text, "HIGH") {
		t.Fatalf("payload: %+v", p)
	}
	if r.header.Get(notify.HeaderDelivery) == "" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers: %v", r.header)
	}
	// The notifier counts a delivery once the webhook's answer is back,
	// which may be after the webhook saw the request.
	testnode.Eventually(t, 10*time.Second, func() string {
		if v := count(t, nt, "vigil_notify_attempt_failures_total", "ops", "status_5xx"); v != 2 {
			return fmt.Sprintf("failed attempts counted: %v, want 2", v)
		}
		if v := count(t, nt, "vigil_notify_deliveries_total", "ops", "sent"); v != 1 {
			return fmt.Sprintf("deliveries counted: %v, want 1", v)
		}
		return ""
	})
	mu.Lock()
	defer mu.Unlock()
	if lowOnly != 0 {
		t.Fatalf("a LOW-only webhook got a HIGH action")
	}
}

// count reads one labelled counter among the notifier's metrics.
func count(t *testing.T, c prometheus.Collector, name, webhook, label string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["webhook"] == webhook && (labels["reason"] == label || labels["result"] == label) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestHangingWebhookDoesNotDelayGate: with a config whose webhook never
// answers, a harmless action is still decided at once, and a person's
// approval of a pending action reaches the waiting gate while the
// webhook still hangs.
func TestHangingWebhookDoesNotDelayGate(t *testing.T) {
	_, dir := startNode(t)
	hit := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })

	admin := connect(t, dir, natsutil.RoleAdmin)
	cfg := events.DefaultConfig()
	cfg.Version = 1
	cfg.Notify = &events.Notify{Webhooks: []events.Webhook{{Name: "hang", URL: srv.URL}}}
	data, err := events.ToData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Append(t.Context(), events.Event{V: events.CurrentVersion, ID: "cfg-hook", Kind: events.KindConfig,
		Agent: "ops", Time: time.Now().UTC(), Data: data}); err != nil {
		t.Fatal(err)
	}
	agent := connect(t, dir, natsutil.RoleAgent)
	type result struct {
		g   client.GateResult
		err error
	}
	res := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		g, err := agent.GateAndWait(ctx, action("rm-h", "c-h", "rm -rf /"), nil)
		res <- result{g, err}
	}()
	select {
	case <-hit:
	case <-time.After(20 * time.Second):
		t.Fatal("the node never called the webhook")
	}
	// The webhook hangs; gating goes on.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if g, err := agent.GateAndWait(ctx, action("ls-h", "c-h", "ls"), nil); err != nil || g.Outcome != events.OutcomeAllow {
		t.Fatalf("a harmless action while the webhook hangs: %+v %v", g, err)
	}
	approver := connect(t, dir, natsutil.RoleApprover)
	p, err := approver.FindPending(ctx, "rm-h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approver.Decide(ctx, p, events.VerdictOnce, client.DecideOptions{Approver: "alice"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-res:
		if r.err != nil || r.g.Outcome != events.OutcomeAllow {
			t.Fatalf("the waiting gate: %+v %v", r.g, r.err)
		}
	case <-ctx.Done():
		t.Fatal("the approval never reached the waiting gate while the webhook hung")
	}
	select {
	case <-release:
		t.Fatal("released early")
	default: // the webhook still hangs: the decision did not wait for it
	}
}

// TestWebhooksReadAfterTheActionIsApplied: the notifier reads the
// webhooks only once what it reads them from holds the action (the read
// models apply a batch after its outputs are stored, so a config event
// just before the action may not be there when the request arrives).
// Here the webhook list exists only from the action's own log seq on:
// read at once, the request would go unannounced.
func TestWebhooksReadAfterTheActionIsApplied(t *testing.T) {
	n, dir := startNode(t)
	srvURL, hit := payloadSink(t)
	var applied atomic.Uint64 // the log seq the fake read models hold
	runNotifier(t, notify.Options{
		JetStream: n.JetStream(), Durable: "test-notify-applied",
		Applied: func(ctx context.Context, seq uint64) bool {
			applied.Store(max(applied.Load(), seq)) // applied on demand
			return true
		},
		Webhooks: func(conv string) ([]events.Webhook, error) {
			if applied.Load() == 0 {
				return nil, nil // the config with the webhook is not applied yet
			}
			return []events.Webhook{{Name: "ops", URL: srvURL}}, nil
		},
	})
	agent := connect(t, dir, natsutil.RoleAgent)
	res, err := agent.Append(t.Context(), action("rm-a", "c-a", "rm -rf /"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-hit:
		if p.ActionID != "rm-a" || p.LogSeq != res.Seq {
			t.Fatalf("announced %s at log seq %d, want rm-a at %d", p.ActionID, p.LogSeq, res.Seq)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request was never announced: the webhooks were read before the action was applied")
	}
	if got := applied.Load(); got != res.Seq {
		t.Fatalf("the notifier waited for log seq %d, want the action's %d", got, res.Seq)
	}
}

// TestRequestStoredBeforeTheConsumerIsAnnounced: a notifier whose
// consumer is first created after a request was stored (a node's first
// start, with agents appending as soon as the server listens) announces
// it, from Options.Since on.
func TestRequestStoredBeforeTheConsumerIsAnnounced(t *testing.T) {
	n, dir := startNode(t)
	srvURL, hit := payloadSink(t)
	since := time.Now()
	agent := connect(t, dir, natsutil.RoleAgent)
	if _, err := agent.Append(t.Context(), action("rm-early", "c-e", "rm -rf /")); err != nil {
		t.Fatal(err)
	}
	testnode.Eventually(t, 20*time.Second, func() string {
		ps, err := n.Projections().Pending()
		if err != nil || len(ps) == 0 {
			return fmt.Sprintf("the request is not pending yet (%v)", err)
		}
		return ""
	})
	runNotifier(t, notify.Options{
		JetStream: n.JetStream(), Durable: "test-notify-late", Since: since,
		Webhooks: func(string) ([]events.Webhook, error) { return []events.Webhook{{Name: "ops", URL: srvURL}}, nil },
	})
	select {
	case p := <-hit:
		if p.ActionID != "rm-early" {
			t.Fatalf("announced %q, want rm-early", p.ActionID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a request stored before the consumer was made was never announced")
	}
}

// payloadSink is a webhook that hands each notification it receives to
// the channel it returns, beside its URL.
func payloadSink(t *testing.T) (string, <-chan notify.Payload) {
	hit := make(chan notify.Payload, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p notify.Payload
		if err := json.NewDecoder(r.Body).Decode(&p); err == nil {
			hit <- p
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hit
}

// runNotifier runs a notifier with o until the test ends, once its
// consumer exists.
func runNotifier(t *testing.T, o notify.Options) *notify.Notifier {
	t.Helper()
	nt, err := notify.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- nt.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testnode.Eventually(t, 20*time.Second, func() string {
		if _, err := o.JetStream.Consumer(t.Context(), events.StreamDerived, o.Durable); err != nil {
			return "the notifier's consumer never appeared"
		}
		return ""
	})
	return nt
}

// TestStalledReadModelsCostEachRequestLittle: read models that never
// catch up (rebuilding, failed) hold the first request for the whole
// wait and each later one only briefly, so a run of requests (an agent's
// flood of risky actions) is still announced, none 5 s late each.
func TestStalledReadModelsCostEachRequestLittle(t *testing.T) {
	n, dir := startNode(t)
	srvURL, hit := payloadSink(t)
	bounds := make(chan time.Duration, 16)
	runNotifier(t, notify.Options{
		JetStream: n.JetStream(), Durable: "test-notify-stalled",
		Applied: func(ctx context.Context, seq uint64) bool {
			d, _ := ctx.Deadline()
			bounds <- time.Until(d)
			<-ctx.Done() // never applied
			return false
		},
		Webhooks: func(string) ([]events.Webhook, error) { return []events.Webhook{{Name: "ops", URL: srvURL}}, nil },
	})
	agent := connect(t, dir, natsutil.RoleAgent)
	const requests = 3
	for i := range requests {
		if _, err := agent.Append(t.Context(), action(fmt.Sprintf("rm-s%d", i), "c-s", "rm -rf /")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range requests {
		select {
		case <-hit:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d requests announced", i, requests)
		}
		b := <-bounds
		if i == 0 && b < time.Second {
			t.Fatalf("the first wait was given %v, want the whole wait", b)
		}
		if i > 0 && b > time.Second {
			t.Fatalf("wait %d, with the read models stalled, was given %v", i+1, b)
		}
	}
}
