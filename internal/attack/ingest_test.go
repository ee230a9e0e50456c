package attack

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// syncBuffer is a log sink tests can read while the node writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRefusalsRecordNoSecret: a refused request's reason, as stored in
// VIGIL_DLQ and VIGIL_DERIVED and as logged, never quotes what the
// producer put in an id, a kind, a conversation, the subject or the
// Content-Type: those are where an injected agent hides a secret.
func TestRefusalsRecordNoSecret(t *testing.T) {
	var logs syncBuffer
	tg := startTarget(t, func(c *node.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	nc := tg.dial(t, natsutil.RoleAgent)
	const secret = "ghp_R4nd0mS3cr3tT0k3nV4lu3Xyz0123456789"
	cases := []struct {
		name, subject, ct string
		body              string
	}{
		{"secret as the id of a control kind", events.IngestAgentSubject("c1"), ingest.ContentTypeJSON,
			`{"v":1,"id":"` + secret + `","kind":"config","data":{}}`},
		{"secret as an unknown kind", events.IngestAgentSubject("c1"), ingest.ContentTypeJSON,
			`{"v":1,"id":"a1","kind":"` + secret + `","conversation":"c1","data":{}}`},
		{"secret as a conversation that does not match", events.IngestAgentSubject("c1"), ingest.ContentTypeJSON,
			`{"v":1,"id":"a2","kind":"message","conversation":"` + secret + `","data":{"role":"user","content":"x"}}`},
		{"secret as the subject token", events.IngestAgentSubject(secret), ingest.ContentTypeJSON,
			`{"v":1,"id":"a3","kind":"action","conversation":"` + secret + `","data":{}}`},
		{"secret in the content type", events.IngestAgentSubject("c1"), "application/" + secret, `{}`},
		{"secret as the agent of an invalid event", events.IngestAgentSubject("c1"), ingest.ContentTypeJSON,
			`{"v":1,"id":"a4","kind":"action","conversation":"c1","agent":"` + secret + `","data":{"tool":7}}`},
	}
	for _, c := range cases {
		m := &nats.Msg{Subject: c.subject, Data: []byte(c.body), Header: nats.Header{}}
		m.Header.Set(ingest.HeaderContentType, c.ct)
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r := ingestReply(t, resp.Data); r.Error == "" {
			t.Fatalf("%s: stored", c.name)
		}
	}
	waitFor(t, "a DLQ record per refusal", 10*time.Second, func() bool {
		return len(tg.streamRecords(t, events.StreamDLQ)) >= len(cases)
	})
	for _, stream := range []string{events.StreamDLQ, events.StreamDerived, events.StreamLog} {
		for _, r := range tg.streamRecords(t, stream) {
			if bytes.Contains(r.Data, []byte(secret)) {
				t.Errorf("%s seq %d holds the secret", stream, r.Seq)
			}
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the node's log holds the secret")
	}
}

// TestConfigThatDoesNotCompileIsRefused: whatever path a config takes
// (here the Go client, not `vigil config set`), the ingest service checks
// it whole, CEL included: a config that would make the gate deny
// everything is never stored.
func TestConfigThatDoesNotCompileIsRefused(t *testing.T) {
	tg := startTarget(t)
	admin := tg.clientAs(t, natsutil.RoleAdmin)
	for i, rule := range []events.PolicyRule{
		{Name: "broken", Expr: `action.tool == `, Level: events.RiskHigh},
		{Name: "not-bool", Expr: `"a string"`, Level: events.RiskHigh},
		{Name: "unknown-var", Expr: `nosuchthing.field == 1`, Level: events.RiskHigh},
	} {
		cfg := events.DefaultConfig()
		cfg.Version = int64(i + 2)
		cfg.PolicyRules = []events.PolicyRule{rule}
		data, err := events.ToData(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = admin.Append(t.Context(), events.Event{V: 1, ID: "cfg-" + rule.Name, Kind: events.KindConfig, Time: time.Now().UTC(), Data: data})
		var refused *client.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "config refused") {
			t.Errorf("config with rule %s: %v; want refused", rule.Name, err)
		}
	}
	for _, r := range tg.streamRecords(t, events.StreamLog) {
		if e, _ := events.DecodeMsgpack(r.Data); e.Kind == events.KindConfig {
			t.Errorf("a config was stored at seq %d", r.Seq)
		}
	}
	res, err := tg.clientAs(t, natsutil.RoleAgent).GateAndWait(t.Context(), action("after-cfg", "c1", "ls"), nil)
	if err != nil || res.Outcome != events.OutcomeAllow {
		t.Errorf("ls after the refused configs: %+v, %v", res, err)
	}
}

// TestNodeRedactionFollowsConfig: the node as serve builds it applies the
// redaction settings of the config in force (extra rules), now and after
// a restart on the same directory.
func TestNodeRedactionFollowsConfig(t *testing.T) {
	dir := t.TempDir()
	start := func() *target {
		return startTarget(t, func(c *node.Config) { c.DataDir = dir })
	}
	tg := start()
	const token = "ACME-TOKEN-Zq81xk2Pw9vN"
	cfg := events.DefaultConfig()
	cfg.Version = 2
	cfg.Redaction.ExtraRules = []events.RedactionRule{{Name: "acme-token", Regex: `ACME-TOKEN-[A-Za-z0-9]{12}`, Keywords: []string{"acme-token-"}}}
	data, err := events.ToData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.clientAs(t, natsutil.RoleAdmin).Append(t.Context(), events.Event{V: 1, ID: "cfg-2", Kind: events.KindConfig, Time: time.Now().UTC(), Data: data}); err != nil {
		t.Fatal(err)
	}
	stored := func(tg *target, id string) string {
		r, err := tg.clientAs(t, natsutil.RoleAgent).Append(t.Context(), action(id, "c-red", "deploy "+token))
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range tg.streamRecords(t, events.StreamLog) {
			if rec.Seq == r.Seq {
				return string(rec.Data)
			}
		}
		t.Fatalf("seq %d not found", r.Seq)
		return ""
	}
	if got := stored(tg, "a1"); strings.Contains(got, token) || !strings.Contains(got, "REDACTED:acme-token") {
		t.Errorf("stored %q: the config's extra rule was not applied", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	tg = start()
	if got := stored(tg, "a2"); strings.Contains(got, token) {
		t.Errorf("after a restart, stored %q", got)
	}
}

// TestBatchAllOrNothing: a batch whose one event is over the payload
// limit once stored is refused whole: nothing before or after it is
// stored, and the reply names the event.
func TestBatchAllOrNothing(t *testing.T) {
	tg := startTarget(t)
	nc := tg.dial(t, natsutil.RoleAgent)
	small := func(id string) msgpack.RawMessage {
		b, _ := msgpack.Marshal(map[string]any{"v": 1, "id": id, "kind": "message", "conversation": "c-b", "data": map[string]any{"role": "user", "content": "x"}})
		return b
	}
	// The big event fits the request but not the log once the service
	// adds its time, origin and the batch's headers.
	limit := int(nc.MaxPayload())
	request := func(n int) []byte {
		big, _ := msgpack.Marshal(map[string]any{"v": 1, "id": "b2", "kind": "message", "conversation": "c-b", "data": map[string]any{"role": "user", "content": strings.Repeat("y", n)}})
		body, _ := msgpack.Marshal([]msgpack.RawMessage{small("b1"), big, small("b3")})
		return body
	}
	base := len(request(1<<17)) - 1<<17
	body := request(limit - 8 - base) // 8 bytes under the limit as sent
	if len(body) > limit {
		t.Fatalf("request of %d bytes over the limit %d: adjust the test", len(body), limit)
	}
	resp, err := nc.Request(events.IngestAgentSubject("c-b"), body, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := ingestReply(t, resp.Data)
	if r.Error == "" || !strings.Contains(r.Error, "nothing of the request was stored") {
		t.Fatalf("reply %+v; want the whole batch refused", r)
	}
	for _, rec := range tg.streamRecords(t, events.StreamLog) {
		t.Errorf("log seq %d stored from a refused batch", rec.Seq)
	}
}
