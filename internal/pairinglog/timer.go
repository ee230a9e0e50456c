package pairinglog

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/pairing"
)

// TimerConfig configures a Timer.
type TimerConfig struct {
	// Conn is a connection with service or admin credentials: it reads
	// VIGIL_LOG and appends on control subjects. The timer does not close it.
	Conn *nats.Conn
	// Logger; default discards.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Poll is the longest the timer sleeps before it looks at the log
	// again; default 30s. Codes live an hour, so a request is always
	// seen long before it is due.
	Poll time.Duration
}

// Timer appends the time-based outcomes of pairing: pairing.expired for
// a request still pending pairing.CodeTTL after it was stored, and for
// a lockout pairing.LockoutFor after it began. It folds the log with a
// Reader before each look, so it never expires what it has not read.
// Event ids are fixed, so the timers of a fleet append each outcome once.
type Timer struct {
	cfg    TimerConfig
	cl     *client.Client
	reader *Reader
}

// NewTimer checks cfg and returns a timer; Run starts it.
func NewTimer(cfg TimerConfig) (*Timer, error) {
	if cfg.Conn == nil {
		return nil, errors.New("pairinglog: TimerConfig.Conn is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 30 * time.Second
	}
	cl, err := client.Connect(context.Background(), client.Options{Conn: cfg.Conn, Name: TimerAgent, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	return &Timer{cfg: cfg, cl: cl, reader: NewReader(cl.JetStream())}, nil
}

// Run appends outcomes as they fall due until ctx is done; it returns nil
// then. A failed read or append is logged and tried again after a pause.
func (t *Timer) Run(ctx context.Context) error {
	for {
		wait := t.cfg.Poll
		next, err := t.Tick(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			t.cfg.Logger.Warn("pairing timer: will retry", "err", err)
			wait = min(wait, 5*time.Second)
		} else if !next.IsZero() {
			wait = min(wait, max(next.Sub(t.cfg.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Tick reads the log, appends every outcome due by now, and returns when
// the next one falls due (zero when none is pending).
func (t *Timer) Tick(ctx context.Context) (next time.Time, err error) {
	now := t.cfg.Now()
	var due []events.Event
	err = t.reader.View(ctx, func(f *pairing.Fold) {
		note := func(at time.Time, ev events.Event) {
			if !at.After(now) {
				due = append(due, ev)
			} else if next.IsZero() || at.Before(next) {
				next = at
			}
		}
		for _, r := range f.Pending() {
			note(r.ExpiresAt, ExpiredEvent(r.ID))
		}
		if l := f.Lock(); l.Locked {
			note(l.Until, UnlockEvent(l.Seq))
		}
	})
	if err != nil {
		return time.Time{}, err
	}
	for _, ev := range due {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, aerr := t.cl.Append(actx, ev)
		cancel()
		if aerr != nil {
			err = errors.Join(err, aerr)
			continue
		}
		p, _ := events.DataAs[events.Pairing](&ev)
		t.cfg.Logger.Info("pairing: time-based outcome appended", "event", ev.ID, "for", p.User)
	}
	if len(due) > 0 && err == nil {
		// Look again soon: what was due is now in the log.
		next = now.Add(time.Second)
	}
	return next, err
}
