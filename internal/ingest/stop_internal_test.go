package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/jsnode"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestStopGivesUpStuckPublishes: a request whose publish cannot be
// acknowledged (here no stream takes VIGIL_LOG's subjects, as while the
// log's leader is gone) retries for AckTimeout; Stop gives it up after
// StopGrace instead of waiting that out.
func TestStopGivesUpStuckPublishes(t *testing.T) {
	s, nc := startBareService(t)
	ev := events.Event{V: 1, ID: "stuck-1", Kind: events.KindObservation, Conversation: "c-1", Time: time.Now(),
		Data: map[string]any{"action_id": "a1", "content": "ok"}}
	body, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest(events.IngestAgentPrefix+"c-1", nc.NewRespInbox(), body); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, func() string {
		if len(s.sem) == 0 {
			return "the request is not being handled yet"
		}
		return ""
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop waited out its context (%v) for a publish that cannot be acknowledged", err)
		}
		t.Fatalf("Stop: %v", err)
	}
}

// startBareService starts a service on a bare JetStream server (no
// streams: a publish to VIGIL_LOG waits for one) over a connection with
// Vigil's inboxes, stopped when the test ends; publishes are retried for
// 10 minutes and given up 50 ms into Stop.
func startBareService(t *testing.T) (*Service, *nats.Conn) {
	t.Helper()
	js := jsnode.Start(t, natsutil.InboxOptions()...)
	s, err := New(Config{Conn: js.Conn(), JS: js, UnsafeNoRedaction: true, UnsafeNoConfigCheck: true, AckTimeout: 10 * time.Minute, StopGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s, js.Conn()
}

// TestNewRefusesNoRedaction: a service with no redaction step or no
// config check is refused unless its config turns each off by name.
func TestNewRefusesNoRedaction(t *testing.T) {
	js := jsnode.Start(t, natsutil.InboxOptions()...)
	_, err := New(Config{Conn: js.Conn(), JS: js})
	if err == nil || !strings.Contains(err.Error(), "Redactor") || !strings.Contains(err.Error(), "UnsafeNoRedaction") {
		t.Fatalf("New with no Redactor: %v, want a refusal naming Redactor and UnsafeNoRedaction", err)
	}
	_, err = New(Config{Conn: js.Conn(), JS: js, UnsafeNoRedaction: true})
	if err == nil || !strings.Contains(err.Error(), "CheckConfig") || !strings.Contains(err.Error(), "UnsafeNoConfigCheck") {
		t.Fatalf("New with no CheckConfig: %v, want a refusal naming CheckConfig and UnsafeNoConfigCheck", err)
	}
	s, err := New(Config{Conn: js.Conn(), JS: js, UnsafeNoRedaction: true, UnsafeNoConfigCheck: true})
	if err != nil {
		t.Fatalf("New with both Unsafe switches: %v", err)
	}
	s.Stop(context.Background())
}
