package ingest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestRepeatsJoinTheRequestInFlight: a producer repeats a request that
// is slow to handle (here its publish waits for VIGIL_LOG, which does not
// exist yet), each attempt on its own reply subject, as an append does.
// The repeats are not handled again (one handler runs), and each gets the
// first one's reply once it is stored: the same position, not "duplicate".
// A repeat on the first one's own reply subject is not answered twice, and
// one with a forged reply subject joins nothing.
func TestRepeatsJoinTheRequestInFlight(t *testing.T) {
	s, nc := startBareService(t)
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
	// An attacker repeats the same bytes with a reply subject that is no
	// inbox of its own (to have the service publish the answer on another
	// service's subject): it joins nothing, and is refused on its own (handled: a second
	// handler runs), never answered there.
	const forgedReply = "vigil.config.stored" // another service's subject, no inbox
	forged, err := nc.SubscribeSync(forgedReply)
	if err != nil {
		t.Fatal(err)
	}
	send(forgedReply)
	wait.Eventually(t, 30*time.Second, func() string {
		if n := len(s.sem); n != 2 {
			return fmt.Sprintf("%d requests handled, want the forged repeat handled on its own", n)
		}
		return ""
	})
	if n := joined(); n != 3 {
		t.Fatalf("%d repeats joined after the forged one, want 3", n)
	}
	// The log appears (a leader elected): the first is stored.
	if err := natsutil.EnsureStreams(t.Context(), s.cfg.JS, natsutil.StreamOptions{}); err != nil {
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
	if m, err := forged.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("the service answered on the forged reply subject %s: %s", m.Subject, m.Data)
	}
}
