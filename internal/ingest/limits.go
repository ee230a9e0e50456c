package ingest

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/events"
)

// Load limits per credential.
//
// Every agent on a host shares the agent credential, so what one
// prompt-injected agent can send, it sends with the rights of all: a flood
// of conversations (each one state in every processor and a row on the
// approval page) or of actions (each one scored, gated and shown) would
// blind the people who approve. The ingest service therefore caps, per
// credential class that producers hold (agent and runtime; people and
// operators are not capped), the conversations live at once and the
// actions stored per second. What is over a cap is refused before
// anything of the request is stored, with a reply that says which cap and
// what to do; it is not written to VIGIL_DLQ (the body is not at fault,
// and a flood must not become a flood of records), and an alert is raised
// the first time a cap is hit and at most once a minute after that.
//
// A conversation is live from its first event until it has been idle for
// Limits.IdleAfter; the service remembers, per live conversation, its id
// and when it was last seen, nothing else, so the memory an idle
// conversation costs here is bounded (Limits.Conversations of them at most
// per credential), and it is forgotten once idle.

// Default limits (see Limits).
const (
	DefaultMaxConversations = 10_000
	DefaultActionsPerSecond = 2_000
	DefaultActionBurst      = 10_000
	DefaultIdleAfter        = 30 * time.Minute
	// alertEvery bounds how often a cap that keeps being hit raises an alert.
	alertEvery = time.Minute
)

// Limits caps what one producer credential may send. The zero value gives
// the defaults; a negative number turns a cap off (a benchmark that
// measures throughput, never a deployment facing agents).
type Limits struct {
	// Conversations bounds the conversations live at once per credential;
	// default DefaultMaxConversations.
	Conversations int
	// ActionsPerSecond is the sustained rate of actions stored per
	// credential, and ActionBurst how many may arrive at once above it;
	// defaults DefaultActionsPerSecond and DefaultActionBurst.
	ActionsPerSecond float64
	ActionBurst      int
	// IdleAfter is how long a conversation stays live after its last
	// event; default DefaultIdleAfter.
	IdleAfter time.Duration
}

// ErrInvalidLimits is wrapped by every error Limits.Validate returns.
var ErrInvalidLimits = errors.New("ingest: invalid limits")

// EnsureDefaults fills in every zero field.
func (l *Limits) EnsureDefaults() {
	if l.Conversations == 0 {
		l.Conversations = DefaultMaxConversations
	}
	if l.ActionsPerSecond == 0 {
		l.ActionsPerSecond = DefaultActionsPerSecond
	}
	if l.ActionBurst == 0 {
		l.ActionBurst = max(DefaultActionBurst, int(l.ActionsPerSecond))
	}
	if l.IdleAfter == 0 {
		l.IdleAfter = DefaultIdleAfter
	}
}

// Validate reports every problem of limits that had their defaults filled.
func (l Limits) Validate() error {
	var errs []error
	bad := func(field string, v any, what string) {
		errs = append(errs, fmt.Errorf("%w: %s = %v: %s", ErrInvalidLimits, field, v, what))
	}
	if l.ActionsPerSecond > 0 && l.ActionBurst < 1 {
		bad("ActionBurst", l.ActionBurst, "must be at least 1 when actions are rate-limited; give how many actions may arrive at once")
	}
	if l.ActionsPerSecond != l.ActionsPerSecond { // NaN
		bad("ActionsPerSecond", l.ActionsPerSecond, "is not a number; give actions per second, or a negative number for no cap")
	}
	if l.IdleAfter < time.Second {
		bad("IdleAfter", l.IdleAfter, "is under one second; a conversation would never count as live")
	}
	return errors.Join(errs...)
}

// limiter holds the live conversations and the action bucket of each
// capped credential class. Safe for concurrent use.
type limiter struct {
	lim Limits
	mu  sync.Mutex
	by  map[events.Origin]*credLoad
}

// credLoad is one credential class's load.
type credLoad struct {
	live      map[string]int64 // conversation -> last seen (unix ns)
	nextSweep int64            // unix ns: when idle conversations are next looked for
	tokens    float64          // actions that may still arrive now
	refilled  int64            // unix ns of the last refill
	alerted   map[string]int64 // cap -> when its last alert was raised
}

func newLimiter(l Limits) *limiter {
	return &limiter{lim: l, by: map[events.Origin]*credLoad{}}
}

// capped reports whether producers of origin o are held to the limits.
func capped(o events.Origin) bool {
	return o == events.OriginAgent || o == events.OriginRuntime
}

// limitRefusal is a request over a cap: the reply's reason, and whether
// an alert is due.
type limitRefusal struct {
	reason string
	cap    string
	alert  bool
}

// admit records a request of origin o in conversation conv holding
// actions actions at now, or refuses it whole (nothing recorded).
func (l *limiter) admit(o events.Origin, conv string, actions int, now time.Time) *limitRefusal {
	if !capped(o) {
		return nil
	}
	ns := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.by[o]
	if c == nil {
		c = &credLoad{live: map[string]int64{}, tokens: float64(l.lim.ActionBurst), refilled: ns, alerted: map[string]int64{}}
		l.by[o] = c
	}
	_, known := c.live[conv]
	if !known && conv != "" && l.lim.Conversations > 0 && len(c.live) >= l.lim.Conversations {
		l.sweep(c, ns)
		if len(c.live) >= l.lim.Conversations {
			return c.refusal("conversations", ns, fmt.Sprintf(
				"the %s credential has %d live conversations, its cap; a conversation stays live until it has been idle for %s: send this event in a conversation already open, or wait, or ask an operator to raise the cap",
				o, len(c.live), l.lim.IdleAfter))
		}
	}
	if actions > 0 && l.lim.ActionsPerSecond > 0 {
		c.tokens = min(float64(l.lim.ActionBurst), c.tokens+float64(ns-c.refilled)/1e9*l.lim.ActionsPerSecond)
		c.refilled = ns
		if c.tokens < float64(actions) {
			return c.refusal("actions", ns, fmt.Sprintf(
				"the %s credential is over its cap of %g actions a second (burst %d); nothing of the request was stored: send it again later",
				o, l.lim.ActionsPerSecond, l.lim.ActionBurst))
		}
		c.tokens -= float64(actions)
	}
	if conv != "" {
		c.live[conv] = ns
	}
	return nil
}

// sweep forgets the conversations idle for IdleAfter, at most once a
// second (a flood at the cap must not cost a scan of the map per request).
func (l *limiter) sweep(c *credLoad, ns int64) {
	if ns < c.nextSweep {
		return
	}
	c.nextSweep = ns + int64(time.Second)
	idle := ns - int64(l.lim.IdleAfter)
	for conv, last := range c.live {
		if last <= idle {
			delete(c.live, conv)
		}
	}
}

func (c *credLoad) refusal(what string, ns int64, reason string) *limitRefusal {
	r := &limitRefusal{reason: reason, cap: what}
	if last, ok := c.alerted[what]; !ok || ns-last >= int64(alertEvery) {
		c.alerted[what] = ns
		r.alert = true
	}
	return r
}

// liveConversations is how many conversations of origin o are live (tests).
func (l *limiter) liveConversations(o events.Origin) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.by[o]; c != nil {
		return len(c.live)
	}
	return 0
}
