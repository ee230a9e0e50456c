package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// gateService is an ingest service on a plain nats-server that answers
// gate requests as answer says (n: the request's number, from 1).
type gateService struct {
	t      *testing.T
	nc     *nats.Conn
	n      atomic.Int32
	answer func(n int, m *nats.Msg)
	mu     sync.Mutex
	sub    *nats.Subscription
}

// plainServer starts a nats-server without JetStream on a port the kernel
// picks, shut down when the test ends.
func plainServer(t *testing.T) *natsserver.Server {
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
	return ns
}

// startGateService starts the server and the service, and returns a
// client of it.
func startGateService(t *testing.T, answer func(n int, m *nats.Msg)) (*Client, *gateService) {
	t.Helper()
	ns := plainServer(t)
	g := &gateService{t: t, answer: answer}
	var err error
	if g.nc, err = nats.Connect(ns.ClientURL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.nc.Close)
	g.up()
	c, err := Connect(t.Context(), Options{URL: ns.ClientURL(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, g
}

// up subscribes the service; down leaves (requests get no responders).
func (g *gateService) up() {
	g.mu.Lock()
	defer g.mu.Unlock()
	sub, err := g.nc.Subscribe(events.IngestSubjectFor(events.KindAction, "c1"), func(m *nats.Msg) {
		g.answer(int(g.n.Add(1)), m)
	})
	if err == nil {
		err = g.nc.Flush()
	}
	if err != nil {
		g.t.Error(err)
	}
	g.sub = sub
}

func (g *gateService) down() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.sub.Unsubscribe(); err != nil {
		g.t.Error(err)
	}
	if err := g.nc.Flush(); err != nil {
		g.t.Error(err)
	}
}

// respond answers m with v. A handler can still run after its test's
// cleanup closed the connection (nats.go delivers from its own
// goroutine): an answer that fails because the connection is closed is
// the test ending, not a failure, and reporting it would fail a test that
// has completed.
func respond(t *testing.T, m *nats.Msg, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = m.Respond(b)
	}
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrConnectionDraining) {
		t.Error(err)
	}
}

func storedAt(seq uint64, dup bool) events.IngestReply {
	return events.IngestReply{Results: []events.IngestResult{{ID: "a1", Seq: seq, Duplicate: dup}}}
}

func decided(seq uint64, o events.Outcome, by events.DecidedBy) transport.WaitReply {
	return transport.WaitReply{Decided: &events.GateDecided{ActionID: "a1", LogSeq: seq, Outcome: o, By: by}}
}

// TestGateAsksAgainWhenTheServiceGivesUpEarly: a node that stops ends
// its waits for decisions early ("no decision"); GateAndWait asks again
// with the same action, and the decision another node (or the node back
// again) sends is the answer. A service that keeps giving up is asked a
// bounded number of times, then the gate is denied (fail closed).
func TestGateAsksAgainWhenTheServiceGivesUpEarly(t *testing.T) {
	action := ev("a1", events.KindAction, "c1")
	stopped := transport.WaitReply{WaitError: "no decision within 10m0s (denied: fail closed)"}
	t.Run("a stopping node, another answers", func(t *testing.T) {
		c, g := startGateService(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, n > 1))
			if n == 1 {
				respond(t, m, stopped)
				return
			}
			respond(t, m, decided(7, events.OutcomeAllow, events.ByHuman))
		})
		res, err := c.GateAndWait(t.Context(), action, nil)
		if err != nil || res.Outcome != events.OutcomeAllow || res.By != events.ByHuman || res.Seq != 7 {
			t.Fatalf("GateAndWait = %+v, %v", res, err)
		}
		if got := g.n.Load(); got != 2 {
			t.Fatalf("%d requests, want 2", got)
		}
	})
	t.Run("the only node restarting", func(t *testing.T) {
		// Its service leaves with its waits and is back 0.5 s later: the
		// repeats meanwhile find no responders and are sent again.
		var g *gateService
		c, g := startGateService(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, n > 1))
			if n == 1 {
				respond(t, m, stopped)
				go func() {
					g.down()
					time.Sleep(500 * time.Millisecond)
					g.up()
				}()
				return
			}
			respond(t, m, decided(7, events.OutcomeDeny, events.ByRule))
		})
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		res, err := c.GateAndWait(ctx, action, nil)
		if err != nil || res.Outcome != events.OutcomeDeny || res.By != events.ByRule {
			t.Fatalf("GateAndWait = %+v, %v", res, err)
		}
		if got := g.n.Load(); got < 2 {
			t.Fatalf("%d requests, want 2 or more", got)
		}
	})
	t.Run("a service that keeps giving up", func(t *testing.T) {
		c, g := startGateService(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, n > 1))
			respond(t, m, transport.WaitReply{WaitError: "too many waits"})
		})
		res, err := c.GateAndWait(t.Context(), action, nil)
		if !errors.Is(err, ErrNoDecision) || res.Outcome != events.OutcomeDeny {
			t.Fatalf("GateAndWait = %+v, %v; want a denial wrapping ErrNoDecision", res, err)
		}
		if got := g.n.Load(); got != 1+maxWaitRepeats {
			t.Fatalf("%d requests, want %d", got, 1+maxWaitRepeats)
		}
	})
	t.Run("a wait that ran its course is withdrawn", func(t *testing.T) {
		// The service's wait ends a moment before the caller's deadline
		// (it began later): its answer is the caller's timeout, and the
		// action is withdrawn as at the deadline.
		var withdrawn atomic.Bool
		c, g := startGateService(t, func(n int, m *nats.Msg) {
			if bytes.Contains(m.Data, []byte("withdrawn")) {
				withdrawn.Store(true)
				respond(t, m, events.IngestReply{Results: []events.IngestResult{{ID: "a1:withdrawn", Seq: 8}}})
				return
			}
			respond(t, m, storedAt(7, n > 1))
			respond(t, m, transport.WaitReply{WaitError: "no decision within 200ms (denied: fail closed)"})
		})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancelShort()
		res, err := c.GateAndWait(short, action, &GateOptions{Withdraw: true})
		if !errors.Is(err, ErrNoDecision) || res.Outcome != events.OutcomeDeny {
			t.Fatalf("GateAndWait = %+v, %v; want a denial wrapping ErrNoDecision", res, err)
		}
		if !withdrawn.Load() || g.n.Load() != 2 {
			t.Fatalf("withdrawn %v after %d requests; want the action withdrawn, once", withdrawn.Load(), g.n.Load())
		}
	})
	t.Run("a decision on another stored position is not this action's", func(t *testing.T) {
		c, _ := startGateService(t, func(n int, m *nats.Msg) {
			respond(t, m, storedAt(7, false))
			respond(t, m, decided(8, events.OutcomeAllow, events.ByRule))
			respond(t, m, decided(7, events.OutcomeDeny, events.ByRule))
		})
		res, err := c.GateAndWait(t.Context(), action, nil)
		if err != nil || res.Outcome != events.OutcomeDeny || res.Seq != 7 {
			t.Fatalf("GateAndWait = %+v, %v; want the decision on seq 7", res, err)
		}
	})
}
