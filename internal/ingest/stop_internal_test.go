package ingest

import (
	"context"
	"errors"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestStopGivesUpStuckPublishes: a request whose publish cannot be
// acknowledged (here no stream takes VIGIL_LOG's subjects, as while the
// log's leader is gone) retries for AckTimeout; Stop gives it up after
// StopGrace instead of waiting that out.
func TestStopGivesUpStuckPublishes(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL(), natsutil.InboxOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Conn: nc, JS: js, AckTimeout: 10 * time.Minute, StopGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartContext(t.Context()); err != nil {
		t.Fatal(err)
	}
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
