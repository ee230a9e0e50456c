package client

import (
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// gateFake is an ingest service on a plain nats-server that answers gate
// requests as answer says (the request's number, from 1).
func gateFake(t *testing.T, answer func(n int, m *nats.Msg)) (*Client, *atomic.Int32) {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(ns.Shutdown)
	svc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	var n atomic.Int32
	if _, err := svc.Subscribe(events.IngestSubjectFor(events.KindAction, "c1"), func(m *nats.Msg) {
		answer(int(n.Add(1)), m)
	}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(t.Context(), Options{URL: ns.ClientURL(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, &n
}

func respond(t *testing.T, m *nats.Msg, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = m.Respond(b)
	}
	if err != nil {
		t.Error(err)
	}
}

func storedAt(seq uint64, dup bool) events.IngestReply {
	return events.IngestReply{Results: []events.IngestResult{{ID: "a1", Seq: seq, Duplicate: dup}}}
}

// TestGateAsksAgainWhenTheServiceGivesUpEarly: a node that stops ends
// its waits for decisions early ("no decision"); GateAndWait asks again
// with the same action, and the decision another node sends is the
// answer. A service that keeps giving up is asked a bounded number of
// times, then the gate is denied (fail closed).
func TestGateAsksAgainWhenTheServiceGivesUpEarly(t *testing.T) {
	action := ev("a1", events.KindAction, "c1")
	t.Run("a stopping node", func(t *testing.T) {
		c, n := gateFake(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, n > 1))
			if n == 1 {
				respond(t, m, transport.WaitReply{WaitError: "no decision within 10m0s (denied: fail closed)"})
				return
			}
			respond(t, m, transport.WaitReply{Decided: &events.GateDecided{ActionID: "a1", LogSeq: 7, DecisionSeq: 9,
				Outcome: events.OutcomeAllow, By: events.ByHuman, Approver: "alice"}})
		})
		res, err := c.GateAndWait(t.Context(), action, nil)
		if err != nil || res.Outcome != events.OutcomeAllow || res.By != events.ByHuman || res.Seq != 7 {
			t.Fatalf("GateAndWait = %+v, %v", res, err)
		}
		if got := n.Load(); got != 2 {
			t.Fatalf("%d requests, want 2", got)
		}
	})
	t.Run("a service that keeps giving up", func(t *testing.T) {
		c, n := gateFake(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, n > 1))
			respond(t, m, transport.WaitReply{WaitError: "too many waits"})
		})
		res, err := c.GateAndWait(t.Context(), action, nil)
		if !errors.Is(err, ErrNoDecision) || res.Outcome != events.OutcomeDeny {
			t.Fatalf("GateAndWait = %+v, %v; want a denial wrapping ErrNoDecision", res, err)
		}
		if got := n.Load(); got != 1+maxWaitRepeats {
			t.Fatalf("%d requests, want %d", got, 1+maxWaitRepeats)
		}
	})
	t.Run("a decision on another stored position is not this action's", func(t *testing.T) {
		c, _ := gateFake(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, false))
			respond(t, m, transport.WaitReply{Decided: &events.GateDecided{ActionID: "a1", LogSeq: 8, Outcome: events.OutcomeAllow, By: events.ByRule}})
			respond(t, m, transport.WaitReply{Decided: &events.GateDecided{ActionID: "a1", LogSeq: 7, Outcome: events.OutcomeDeny, By: events.ByRule}})
		})
		res, err := c.GateAndWait(t.Context(), action, nil)
		if err != nil || res.Outcome != events.OutcomeDeny || res.Seq != 7 {
			t.Fatalf("GateAndWait = %+v, %v; want the decision on seq 7", res, err)
		}
	})
}
