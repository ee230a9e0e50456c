// Package expiry is the timer behind the gate's fail-closed expiry. The
// gate fold never reads a clock; this timer does, and speaks to the fold
// only through the log: when an action has waited for a person longer than
// the approval timeout its gate.requested carries, the timer appends an
// approval.expired event on the control subject, and the gate denies the
// action, by timeout, at that event's log position.
//
// The timer follows the gate outputs in VIGIL_DERIVED (vigil.gate.>) with
// an ordered consumer from the start of the stream, so after a restart it
// rebuilds its schedule from what is stored: every gate.requested not yet
// followed by a gate.decided is due its timeout after the time VIGIL_DERIVED
// stored the request (the server's clock, never the agent's). It fires
// nothing until it has caught up with the stream, so it never expires an
// action whose decision it has not read yet. The expiry's event id is
// "expired:<action id>", so several timers (every node of a fleet runs one)
// append it once; and the gate ignores an expiry for an action already
// decided, so racing a person is harmless.
package expiry

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
)

// Config configures a timer.
type Config struct {
	// Conn is a connection with service or admin credentials: it reads
	// VIGIL_DERIVED and appends on control subjects. The timer does not
	// close it.
	Conn *nats.Conn
	// Logger; default discards.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Agent names the timer in the events it appends; default "vigil-expiry".
	Agent string
}

// Timer appends approval.expired events when approval timeouts pass.
type Timer struct {
	cfg Config
	cl  *client.Client
	js  jetstream.JetStream
}

// New checks cfg and returns a timer; Run starts it.
func New(cfg Config) (*Timer, error) {
	if cfg.Conn == nil {
		return nil, errors.New("expiry: Conn is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Agent == "" {
		cfg.Agent = "vigil-expiry"
	}
	cl, err := client.Connect(context.Background(), client.Options{Conn: cfg.Conn, Name: cfg.Agent, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	return &Timer{cfg: cfg, cl: cl, js: cl.JetStream()}, nil
}

// due is one pending action and when it expires.
type due struct {
	actionID string
	conv     string
	timeout  string
	at       time.Time
	index    int
	retries  int
}

type dueHeap []*due

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].actionID < h[j].actionID
	}
	return h[i].at.Before(h[j].at)
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *dueHeap) Push(x any)   { d := x.(*due); d.index = len(*h); *h = append(*h, d) }
func (h *dueHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	d.index = -1
	return d
}

type gateMsg struct {
	d       events.Derived
	stored  time.Time
	pending uint64
}

// Run follows the gate outputs and appends expiries until ctx is done. It
// returns nil on a clean stop.
func (t *Timer) Run(ctx context.Context) error {
	log := t.cfg.Logger
	st, err := t.js.Stream(ctx, events.StreamDerived)
	if err != nil {
		return fmt.Errorf("expiry: %w", err)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.GatePrefix + ">"},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("expiry: follow gate outputs: %w", err)
	}
	caughtUp := false
	if info, err := cons.Info(ctx); err == nil && info.NumPending == 0 {
		caughtUp = true
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return fmt.Errorf("expiry: follow gate outputs: %w", err)
	}
	msgs := make(chan gateMsg, 1024)
	readErr := make(chan error, 1)
	go func() {
		defer close(msgs)
		for {
			m, err := it.Next()
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					readErr <- err
				}
				return
			}
			meta, err := m.Metadata()
			if err != nil {
				continue
			}
			d, err := events.DecodeDerived(m.Data())
			if err != nil {
				continue
			}
			select {
			case msgs <- gateMsg{d: d, stored: meta.Timestamp, pending: meta.NumPending}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		it.Stop()
		for range msgs {
		}
	}()

	h := &dueHeap{}
	byID := map[string]*due{}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	reset := func() {
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if !caughtUp || h.Len() == 0 {
			timer.Reset(time.Hour)
			return
		}
		wait := (*h)[0].at.Sub(t.cfg.Now())
		if wait < 0 {
			wait = 0
		}
		timer.Reset(wait)
	}
	log.Info("expiry timer following gate outputs", "caught_up", caughtUp)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			return fmt.Errorf("expiry: follow gate outputs: %w", err)
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			t.apply(m, h, byID)
			if m.pending == 0 && !caughtUp {
				caughtUp = true
				log.Info("expiry timer caught up", "waiting", h.Len())
			}
			reset()
		case <-timer.C:
			now := t.cfg.Now()
			for h.Len() > 0 && !(*h)[0].at.After(now) {
				d := (*h)[0]
				if err := t.expire(ctx, d); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					d.retries++
					backoff := time.Duration(min(d.retries, 6)) * time.Second
					log.Warn("expiry not appended; will retry", "action", d.actionID, "err", err, "in", backoff)
					d.at = now.Add(backoff)
					heap.Fix(h, d.index)
					break
				}
				// Appended (once, whatever other timers do: the id dedups).
				heap.Remove(h, d.index)
				delete(byID, d.actionID)
			}
			reset()
		}
	}
}

func (t *Timer) apply(m gateMsg, h *dueHeap, byID map[string]*due) {
	data, ok := m.d.Data.(map[string]any)
	if !ok {
		return
	}
	id, _ := data["action_id"].(string)
	if id == "" {
		return
	}
	switch m.d.Kind {
	case events.KindGateRequested:
		if _, ok := byID[id]; ok {
			return
		}
		timeout, _ := data["timeout"].(string)
		dur, err := time.ParseDuration(timeout)
		if err != nil || dur <= 0 {
			dur = events.DefaultApprovalTimeout
			timeout = dur.String()
		}
		d := &due{actionID: id, conv: m.d.Conversation, timeout: timeout, at: m.stored.Add(dur)}
		byID[id] = d
		heap.Push(h, d)
	case events.KindGateDecided:
		if d, ok := byID[id]; ok {
			heap.Remove(h, d.index)
			delete(byID, id)
		}
	}
}

// ExpiredID is the id of the approval.expired event for action id: fixed,
// so that every timer of a fleet appends it once.
func ExpiredID(actionID string) string {
	id := "expired:" + actionID
	if len(id) > events.MaxIDLen {
		sum := sha256.Sum256([]byte(actionID))
		id = "expired:sha256:" + hex.EncodeToString(sum[:])
	}
	return id
}

func (t *Timer) expire(ctx context.Context, d *due) error {
	ev := events.Event{
		V: events.CurrentVersion, ID: ExpiredID(d.actionID), Kind: events.KindApprovalExpired,
		Conversation: d.conv, Agent: t.cfg.Agent, Time: t.cfg.Now().UTC(),
		Data: map[string]any{"action_id": d.actionID, "reason": "no decision within " + d.timeout + " (fail closed)"},
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := t.cl.Append(ctx, ev)
	if err == nil {
		t.cfg.Logger.Info("approval expired", "action", d.actionID, "conversation", d.conv, "timeout", d.timeout)
	}
	return err
}
