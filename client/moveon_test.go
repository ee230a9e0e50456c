package client

import (
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
)

// TestClientLeavesAServerThatAnswersNothing: the first server of the list
// is up but its ingest service never answers (a node cut off from the
// fleet's majority, its JetStream stuck); after two unanswered attempts
// the client moves to the next server, where the request is answered.
// Appends and gates both.
func TestClientLeavesAServerThatAnswersNothing(t *testing.T) {
	stuck, good := plainServer(t), plainServer(t)
	serve := func(ns *natsserver.Server, handle func(m *nats.Msg)) {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		for _, k := range []events.Kind{events.KindAction, events.KindMessage} {
			if _, err := nc.Subscribe(events.IngestSubjectFor(k, "c1"), handle); err != nil {
				t.Fatal(err)
			}
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	serve(stuck, func(*nats.Msg) {}) // takes every request, answers none
	serve(good, func(m *nats.Msg) {
		respond(t, m, storedAt(7, false))
		if m.Header.Get("Vigil-Wait-Decision") != "" {
			respond(t, m, decided(7, events.OutcomeAllow, events.ByRule))
		}
	})
	for _, tc := range []struct {
		name string
		run  func(c *Client) error
	}{
		{"append", func(c *Client) error {
			_, err := c.Append(t.Context(), ev("a1", events.KindMessage, "c1"))
			return err
		}},
		{"gate", func(c *Client) error {
			res, err := c.GateAndWait(t.Context(), ev("a1", events.KindAction, "c1"), nil)
			if err == nil && res.Outcome != events.OutcomeAllow {
				t.Errorf("gate: %+v", res)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(t.Context(), Options{URL: stuck.ClientURL() + "," + good.ClientURL(),
				Timeout: 20 * time.Second, AttemptTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.Conn().ConnectedUrl(); got != stuck.ClientURL() {
				t.Fatalf("connected to %s first, want %s", got, stuck.ClientURL())
			}
			if err := tc.run(c); err != nil {
				t.Fatal(err)
			}
			if got := c.Conn().ConnectedUrl(); got != good.ClientURL() {
				t.Fatalf("answered while connected to %s, want %s", got, good.ClientURL())
			}
		})
	}
}
