package client

import (
	"context"
	"sync/atomic"
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

// TestALostRequestIsSentAgainEarly: in a fleet a request goes to any
// node's ingest service (a queue group), and one that dies with it
// loses it while the agent's own connection notices nothing. The first
// request here is taken and never answered (that node); the repeat,
// sent long before the attempt timeout (an hour), is answered. Gates
// and appends both.
func TestALostRequestIsSentAgainEarly(t *testing.T) {
	t.Run("gate", func(t *testing.T) { testLostRequest(t, events.KindAction) })
	t.Run("append", func(t *testing.T) { testLostRequest(t, events.KindMessage) })
}

func testLostRequest(t *testing.T, kind events.Kind) {
	var got atomic.Int32
	c := hourClientOf(t, kind, func(m *nats.Msg) {
		if got.Add(1) == 1 {
			return // the node that took it died
		}
		respond(t, m, storedAt(7, false))
		if m.Header.Get("Vigil-Wait-Decision") != "" {
			respond(t, m, decided(7, events.OutcomeAllow, events.ByRule))
		}
	})
	// Without the early repeat this waits out the hour's attempt; the
	// minute bounds a failing run, it measures nothing.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if kind == events.KindAction {
		res, err := c.GateAndWait(ctx, ev("a1", kind, "c1"), nil)
		if err != nil {
			t.Fatalf("gate: %v (%d requests reached the service)", err, got.Load())
		}
		if res.Outcome != events.OutcomeAllow || res.Seq != 7 {
			t.Fatalf("gate: %+v", res)
		}
	} else {
		res, err := c.Append(ctx, ev("m1", kind, "c1"))
		if err != nil {
			t.Fatalf("append: %v (%d requests reached the service)", err, got.Load())
		}
		if res.Seq != 7 {
			t.Fatalf("append: %+v", res)
		}
	}
	if n := got.Load(); n != 2 {
		t.Fatalf("%d requests reached the service, want 2 (the lost one and its early repeat)", n)
	}
}

// TestGateAsksAgainWhenItsWaitDies: the node that stored the action and
// holds the wait for its decision dies before the decision (no message
// after the stored reply); the request is sent again long before the
// attempt timeout (an hour), and the repeat's wait answers.
func TestGateAsksAgainWhenItsWaitDies(t *testing.T) {
	var got atomic.Int32
	c := hourClientOf(t, events.KindAction, func(m *nats.Msg) {
		if got.Add(1) == 1 {
			respond(t, m, storedAt(7, false))
			return // and the node holding the wait died
		}
		respond(t, m, storedAt(7, true))
		respond(t, m, decided(7, events.OutcomeAllow, events.ByRule))
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // bounds a failing run
	defer cancel()
	res, err := c.GateAndWait(ctx, ev("a1", events.KindAction, "c1"), nil)
	if err != nil {
		t.Fatalf("gate: %v (%d requests reached the service)", err, got.Load())
	}
	if res.Outcome != events.OutcomeAllow || res.Seq != 7 {
		t.Fatalf("gate: %+v", res)
	}
}

// hourClientOf returns a client of a plain server whose ingest subject for
// kind in conversation c1 is served by handle, in the ingest service's
// queue group; its attempts last an hour, so only an early repeat can
// answer within a test.
func hourClientOf(t *testing.T, kind events.Kind, handle nats.MsgHandler) *Client {
	t.Helper()
	ns := plainServer(t)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if _, err := nc.QueueSubscribe(events.IngestSubjectFor(kind, "c1"), "vigil-ingest", handle); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(t.Context(), Options{URL: ns.ClientURL(), Timeout: time.Hour, AttemptTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
