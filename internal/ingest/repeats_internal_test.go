package ingest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestRepeatsJoinTheRequestInFlight: a producer repeats a request that
// is slow to handle (here its publish waits for VIGIL_LOG, which does not
// exist yet), each attempt on its own reply subject, as an append does.
// The repeats are not handled again (one handler runs), and each gets the
// first one's reply once it is stored: the same position, not "duplicate".
// A repeat on the first one's own reply subject is not answered twice.
func TestRepeatsJoinTheRequestInFlight(t *testing.T) {
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
	defer s.Stop(t.Context())
	ev := events.Event{V: 1, ID: "slow-1", Kind: events.KindObservation, Conversation: "c-1", Time: time.Now(),
		Data: map[string]any{"action_id": "a1", "content": "ok"}}
	body, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	send := func(reply string) {
		t.Helper()
		m := &nats.Msg{Subject: events.IngestAgentPrefix + "c-1", Reply: reply, Data: body, Header: nats.Header{}}
		m.Header.Set(HeaderContentType, ContentTypeMsgpack)
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	var inboxes []string
	var subs []*nats.Subscription
	for range 4 {
		in := nc.NewInbox()
		sub, err := nc.SubscribeSync(in)
		if err != nil {
			t.Fatal(err)
		}
		inboxes, subs = append(inboxes, in), append(subs, sub)
	}
	send(inboxes[0])
	wait.Eventually(t, 30*time.Second, func() string {
		if len(s.sem) == 0 {
			return "the first request is not being handled yet"
		}
		return ""
	})
	for _, in := range inboxes[1:] {
		send(in)
	}
	send(inboxes[0]) // the first one's own reply subject
	joined := func() int {
		s.repeats.mu.Lock()
		defer s.repeats.mu.Unlock()
		n := 0
		for _, l := range s.repeats.byKey {
			for _, f := range l {
				n += len(f.joiners)
			}
		}
		return n
	}
	wait.Eventually(t, 30*time.Second, func() string {
		if n := joined(); n != 3 {
			return fmt.Sprintf("%d repeats joined, want 3", n)
		}
		return ""
	})
	if n := len(s.sem); n != 1 {
		t.Fatalf("%d requests handled at once, want 1 (the repeats must wait for the first)", n)
	}
	// The log appears (a leader elected): the first is stored.
	if err := natsutil.EnsureStreams(t.Context(), js, natsutil.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	var first events.IngestReply
	for i, sub := range subs {
		m, err := sub.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("reply on inbox %d: %v", i, err)
		}
		var r events.IngestReply
		if err := json.Unmarshal(m.Data, &r); err != nil || len(r.Results) != 1 {
			t.Fatalf("reply on inbox %d: %s (%v)", i, m.Data, err)
		}
		if r.Results[0].Duplicate || (i > 0 && r.Results[0].Seq != first.Results[0].Seq) {
			t.Fatalf("reply on inbox %d: %+v, want the first one's (%+v), not a duplicate", i, r.Results[0], first.Results)
		}
		if i == 0 {
			first = r
		}
	}
	if m, err := subs[0].NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("the first one's reply subject was answered twice: %s", m.Data)
	}
}
