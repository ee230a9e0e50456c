package configlog

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// Source values: where the config in force comes from.
const (
	SourceDefault      = "default"      // no config event was ever appended
	SourceGlobal       = "global"       // a global config event
	SourceConversation = "conversation" // the conversation's own config event
)

// SourceOf is where cfg, the config in force from the config event at
// seq (0: the built-in default), comes from: SourceDefault, SourceGlobal
// or SourceConversation.
func SourceOf(cfg events.Config, seq uint64) string {
	switch {
	case seq == 0:
		return SourceDefault
	case cfg.Scope == events.ScopeConversation:
		return SourceConversation
	}
	return SourceGlobal
}

// Shown is the config in force as `vigil config show --json` and
// GET /v1/config answer it.
type Shown struct {
	Conversation string `json:"conversation,omitempty"`
	// At is the log position asked for (0: now).
	At uint64 `json:"at,omitempty"`
	// Source is SourceOf the config in force.
	Source       string        `json:"source"`
	EventID      string        `json:"event_id,omitempty"`
	Seq          uint64        `json:"seq,omitempty"`
	Config       events.Config `json:"config"`
	SecurityRisk gate.Hint     `json:"security_risk"`
}

// Show is the answer for cfg, the config in force for conversation ("":
// the global one) at log position at (0: now), from the config event id
// at seq (0: the built-in default): unset fields as the gate reads them.
func Show(conversation string, at uint64, cfg events.Config, seq uint64, id string) Shown {
	s := Shown{Conversation: conversation, At: at, Source: SourceOf(cfg, seq), Seq: seq,
		Config: cfg.WithDefaults(), SecurityRisk: gate.HintFor(cfg, seq)}
	if seq > 0 {
		s.EventID = id
	}
	return s
}

// History folds the config events of a log with processors.ConfigTracker,
// the gate's own fold, so what it says is in force is what the gate used.
type History struct {
	tracker *processors.ConfigTracker
	ids     map[uint64]string
	// latest config per scope key ("" = global, else the conversation).
	latest map[string]events.Config
	// Last is the last log sequence observed.
	Last uint64
}

// NewHistory returns an empty history: the built-in default in force.
func NewHistory() *History {
	return &History{tracker: processors.NewConfigTracker(), ids: map[uint64]string{}, latest: map[string]events.Config{}}
}

// Observe folds one record of the log; records that are not config
// events, and config events the tracker refuses or whose data does not
// decode, change nothing but Last.
func (h *History) Observe(rec *events.Record) {
	h.Last = rec.Seq
	ev := &rec.Event
	if ev.Kind != events.KindConfig {
		return
	}
	if _, err := h.tracker.Observe(rec); err != nil {
		return
	}
	cfg, err := events.DataAs[events.Config](ev)
	if err != nil {
		return
	}
	h.ids[rec.Seq] = ev.ID
	key := ""
	if cfg.Scope == events.ScopeConversation {
		key = cfg.Conversation
		if key == "" {
			key = ev.Conversation
		}
	}
	h.latest[key] = cfg
}

// SameScope returns the latest config of cfg's scope, and its version (0
// when there is none: the built-in default is version 0).
func (h *History) SameScope(cfg events.Config) (*events.Config, int64) {
	key := ScopeKey(cfg)
	if c, ok := h.latest[key]; ok {
		return &c, c.Version
	}
	if key == "" {
		d := events.DefaultConfig()
		return &d, 0
	}
	return nil, 0
}

// Show is the config in force for conversation ("": the global one) as
// folded so far; at is the log position the history was read to (0: now).
func (h *History) Show(conversation string, at uint64) Shown {
	cfg, seq := h.tracker.For(conversation)
	return Show(conversation, at, cfg, seq, h.ids[seq])
}

// ReadHistory folds the config events of the log stream up to seq at (0:
// all). Global configs live on the "_" log subject, a conversation's own
// on its subject (events.Validate refuses a global config sent on a
// conversation), so only those subjects are read.
func ReadHistory(ctx context.Context, js jetstream.JetStream, conversation string, at uint64) (*History, error) {
	h := NewHistory()
	subjects := []string{events.LogSubject("")}
	if conversation != "" {
		subjects = append(subjects, events.LogSubject(conversation))
	}
	err := transport.ReadStream(ctx, js, transport.ReadOptions{Stream: events.StreamLog, Subjects: subjects, To: at},
		func(r transport.RawRecord) error {
			ev, err := events.DecodeMsgpack(r.Data)
			if err != nil {
				h.Last = r.Seq
				return nil
			}
			h.Observe(&events.Record{Seq: r.Seq, Subject: r.Subject, Raw: r.Data, Event: ev})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read config events: %w", err)
	}
	return h, nil
}
