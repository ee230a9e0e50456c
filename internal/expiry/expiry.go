// Package expiry is the timer behind the gate's fail-closed expiry. The
// gate fold never reads a clock; this timer does, and speaks to the fold
// only through the log: when an action has waited for a person longer than
// the approval timeout its gate.requested carries, the timer appends an
// approval.expired event on the control subject, and the gate denies the
// action, by timeout, at that event's log position.
//
// The timer follows the gate outputs in VIGIL_DERIVED (vigil.gate.>) with
// an ordered consumer, and schedules every gate.requested not yet followed
// by a gate.decided for its timeout after the time VIGIL_DERIVED stored the
// request (the server's clock, never the agent's). It fires nothing until
// it has caught up with the stream, so it never expires an action whose
// decision it has not read yet. The expiry's event id is
// "expired:<action id>", so several timers (every node of a fleet runs one)
// append it once; and the gate ignores an expiry for an action already
// decided, so racing a person is harmless.
//
// # A start reads live state, not history
//
// After a restart the timer must find every action still pending, with the
// stored time of its request. It does not read every gate output ever
// stored (at 10,000,000 events that was ≈ 100 s of CPU and, at 1,000,000,
// 1.1 GB of allocations): it reads them from a bounded point, found with
// the node's read models (Config.Pending, the projections' pending
// approvals) and the stored times of VIGIL_LOG:
//
//  1. P is the log position the read models reflect (read first), and
//     Pending lists the actions they hold as pending (read after, so at a
//     position P' ≥ P).
//  2. L is the smallest of P+1 and the log seqs the pending requests were
//     derived from. Every action pending now has its request derived from
//     a log record at L or later: either the read models hold it as
//     pending (its seq ≥ L by definition), or its request was not applied
//     by P' (its record is after P' ≥ P), or they hold a decision for it
//     (then it needs no expiry). The read models only lag the stream
//     (the driver applies a batch to them after storing its outputs), and
//     lag only moves L back.
//  3. A driver derives a request from a log record only after VIGIL_LOG
//     stored that record, and VIGIL_LOG stores its records in seq order, so
//     VIGIL_DERIVED stored every pending request after VIGIL_LOG stored
//     record L (or, when L is past the log's end, its last record). Stored
//     times are read from the clocks of the servers leading each stream:
//     as long as those (or one clock before and after it steps back)
//     disagree by at most Config.ClockSkew, every pending request's stored
//     time is at least record L's less ClockSkew, and the timer starts its
//     consumer there (DeliverByStartTimePolicy).
//
// A decision on a pending action is derived from a later log record than
// its request, so it is read as well; so is any request derived from a
// record after P. What a start reads is therefore the gate outputs stored
// since the oldest pending request (or since the first record the read
// models lacked), however many decided actions precede it: after a clean
// stop with nothing pending, a few messages. When the bound cannot be
// taken (no read models, read models that fail or were wiped, a log record
// that is gone) the timer reads every gate output, as before, which is
// always exact. A crash changes nothing in the argument (the read models
// commit their position with their contents, and re-deriving only stores
// outputs again, later), nor does a fleet (each node bounds its start with
// its own read models; outputs any node stores are read by every timer).
//
// On the data path: a timer: it reads the clock and writes into the log,
// so the folds never read one.
package expiry

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/projections"
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
	// Pending, the node's read models (a *projections.Store), bounds what
	// a start reads (see the package doc); nil means every gate output is
	// read at start.
	Pending PendingSource
	// ClockSkew is how far the clocks that stamp VIGIL_LOG's and
	// VIGIL_DERIVED's stored times may disagree (or one step back): the
	// start reads that much earlier than the bound. Zero means
	// DefaultClockSkew, negative none.
	ClockSkew time.Duration
	// MaxWait is the longest the timer sleeps without reading its clock
	// again; zero means an hour. (Its clock is Now: a wall clock that
	// jumps, or a test's fake clock, is followed within MaxWait.)
	MaxWait time.Duration
}

// DefaultClockSkew is Config.ClockSkew's default: servers of a cluster
// synchronised by NTP disagree by milliseconds; a minute also covers a
// clock stepped back at a boot, at the price of reading a minute more of
// gate outputs at start.
const DefaultClockSkew = time.Minute

// PendingSource is what the timer reads of the read models at start: the
// log position they reflect and the actions they hold as pending.
// *projections.Store is one.
type PendingSource interface {
	Position() uint64
	Pending() ([]projections.PendingApproval, error)
}

// StartInfo says how the timer rebuilt its schedule at start.
type StartInfo struct {
	// From is the stored time the timer started reading gate outputs at;
	// zero when it read them all.
	From time.Time
	// Bound is the log seq the start was bounded by (L in the package
	// doc); 0 when it read every gate output.
	Bound uint64
	// ReadAll says why it read every gate output, when it did.
	ReadAll string
	// Read counts the gate outputs it read until it had caught up.
	Read uint64
	// Waiting is how many actions were waiting for a person then.
	Waiting int
}

// Timer appends approval.expired events when approval timeouts pass.
type Timer struct {
	cfg Config
	cl  *client.Client
	js  jetstream.JetStream
	// ready is closed once Run has caught up; start is set before.
	ready     chan struct{}
	readyOnce sync.Once
	start     StartInfo
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
	switch {
	case cfg.ClockSkew == 0:
		cfg.ClockSkew = DefaultClockSkew
	case cfg.ClockSkew < 0:
		cfg.ClockSkew = 0
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Hour
	}
	cl, err := client.Connect(context.Background(), client.Options{Conn: cfg.Conn, Name: cfg.Agent, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	return &Timer{cfg: cfg, cl: cl, js: cl.JetStream(), ready: make(chan struct{})}, nil
}

// Ready is closed once Run has caught up with the gate outputs stored when
// it started (and so has its whole schedule).
func (t *Timer) Ready() <-chan struct{} { return t.ready }

// StartInfo says how Run rebuilt its schedule; it is set once Ready is
// closed.
func (t *Timer) StartInfo() StartInfo {
	select {
	case <-t.ready:
		return t.start
	default:
		return StartInfo{}
	}
}

// startPoint is where a start reads gate outputs from (the package doc's
// argument): the stored time of log record L less the clock skew, with L;
// or a zero time and why every gate output must be read.
func (t *Timer) startPoint(ctx context.Context) (from time.Time, bound uint64, readAll string) {
	if t.cfg.Pending == nil {
		return time.Time{}, 0, "no read models"
	}
	pos := t.cfg.Pending.Position() // before Pending: see the package doc
	pending, err := t.cfg.Pending.Pending()
	if err != nil {
		return time.Time{}, 0, "read models: " + err.Error()
	}
	bound = pos + 1
	for _, p := range pending {
		bound = min(bound, p.Seq)
	}
	if bound <= 1 {
		return time.Time{}, 0, "the read models hold nothing, or a request pending since the log's first record"
	}
	st, err := t.js.Stream(ctx, events.StreamLog)
	if err != nil {
		return time.Time{}, 0, "log: " + err.Error()
	}
	info, err := st.Info(ctx)
	if err != nil {
		return time.Time{}, 0, "log: " + err.Error()
	}
	switch {
	case bound < info.State.FirstSeq:
		return time.Time{}, 0, fmt.Sprintf("log record %d is no longer stored", bound)
	case bound > info.State.LastSeq:
		// Every record from L on is yet to be stored: after the last one.
		from = info.State.LastTime
	default:
		m, err := st.GetMsg(ctx, bound)
		if err != nil {
			return time.Time{}, 0, fmt.Sprintf("log record %d: %v", bound, err)
		}
		from = m.Time
	}
	if from.IsZero() {
		return time.Time{}, 0, fmt.Sprintf("no stored time for log record %d", bound)
	}
	return from.Add(-t.cfg.ClockSkew), bound, ""
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
	body    []byte // a gate output, decoded by apply when it matters
	stored  time.Time
	pending uint64
}

// Run follows the gate outputs and appends expiries until ctx is done. It
// returns nil on a clean stop. A timer runs once.
func (t *Timer) Run(ctx context.Context) error {
	log := t.cfg.Logger
	st, err := t.js.Stream(ctx, events.StreamDerived)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting: a clean stop
		}
		return fmt.Errorf("expiry: %w", err)
	}
	from, bound, readAll := t.startPoint(ctx)
	ccfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.GatePrefix + ">"},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if readAll == "" {
		ccfg.DeliverPolicy, ccfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &from
	}
	cons, err := st.OrderedConsumer(ctx, ccfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("expiry: follow gate outputs: %w", err)
	}
	t.start = StartInfo{From: from, Bound: bound, ReadAll: readAll}
	caughtUp := false
	markCaughtUp := func(waiting int) {
		caughtUp = true
		t.start.Waiting = waiting
		t.readyOnce.Do(func() { close(t.ready) })
		log.Info("expiry timer caught up", "waiting", waiting, "read", t.start.Read,
			"from", t.start.From, "bound", t.start.Bound, "read_all", t.start.ReadAll)
	}
	if info, err := cons.Info(ctx); err == nil && info.NumPending == 0 {
		markCaughtUp(0)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
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
			select {
			case msgs <- gateMsg{body: m.Data(), stored: meta.Timestamp, pending: meta.NumPending}:
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
			timer.Reset(t.cfg.MaxWait)
			return
		}
		wait := (*h)[0].at.Sub(t.cfg.Now())
		timer.Reset(max(0, min(wait, t.cfg.MaxWait)))
	}
	log.Info("expiry timer following gate outputs", "from", from, "bound", bound, "read_all", readAll)
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
			if !caughtUp {
				t.start.Read++
				if m.pending == 0 {
					markCaughtUp(h.Len())
				}
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
	if k, ok := events.DerivedKind(m.body); ok && k == events.KindGateDecided && len(byID) == 0 {
		return // a decision, and no request waits to be cancelled by it
	}
	d, err := events.DecodeDerived(m.body)
	if err != nil {
		return
	}
	data, ok := d.Data.(map[string]any)
	if !ok {
		return
	}
	id, _ := data["action_id"].(string)
	if id == "" {
		return
	}
	switch d.Kind {
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
		w := &due{actionID: id, conv: d.Conversation, timeout: timeout, at: m.stored.Add(dur)}
		byID[id] = w
		heap.Push(h, w)
	case events.KindGateDecided:
		if w, ok := byID[id]; ok {
			heap.Remove(h, w.index)
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
