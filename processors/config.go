package processors

import (
	"time"

	"github.com/vigil-dev/vigil/events"
)

// ConfigTracker folds config and conversation.started events so a processor
// knows, at each log position, the config in force for a conversation and
// where that conversation's tools run.
//
// Config precedence: a conversation-scoped config overrides the global one
// for that conversation; otherwise the latest global config applies; with
// no config event ever, events.DefaultConfig() applies. A config event that
// does not decode or validate is ignored here (the ingest service refuses
// invalid configs, so this happens only with a tampered or foreign log).
type ConfigTracker struct {
	global    events.Config
	globalSeq uint64
	perConv   map[string]scopedConfig
	convs     map[string]ConversationInfo
	// Validate, when set, is applied to every config before it is adopted.
	Validate func(events.Config) error
	// Override, when set, is in force everywhere and config events are
	// ignored: a what-if replay under another config.
	Override *events.Config
}

type scopedConfig struct {
	cfg events.Config
	seq uint64
}

// ConversationInfo is what conversation.started said about a conversation.
//
// Backend is believed only from a trusted origin (the runtime or an
// admin: events.Origin.Trusted): an agent's own claim of a sandbox is
// never its backend. Workspace is taken from the agent too (hooks send
// their working directory), until a trusted conversation.started sets
// it; risk scoring never lets a workspace cover system paths.
type ConversationInfo struct {
	Backend   string
	Workspace string
	// trusted: Workspace came from a trusted origin.
	trusted bool
}

// Options are what every config-aware processor's constructor accepts.
type Options struct {
	// ConfigOverride replaces every config event (what-if replay).
	ConfigOverride *events.Config
	// IdleAfter is how long, in log time, a conversation may be silent
	// before the processor forgets what it keeps about it (see
	// IdleConversations); zero means DefaultIdleAfter, negative never.
	// Live and replay must use the same value to agree.
	IdleAfter time.Duration
}

// NewConfigTracker starts with the default config in force.
func NewConfigTracker() *ConfigTracker {
	return &ConfigTracker{
		global:  events.DefaultConfig(),
		perConv: map[string]scopedConfig{},
		convs:   map[string]ConversationInfo{},
	}
}

// Observe folds rec. It reports whether the config in force changed for
// some conversation, and returns the error when a config event was ignored.
func (t *ConfigTracker) Observe(rec *events.Record) (changed bool, err error) {
	ev := &rec.Event
	switch ev.Kind {
	case events.KindConversationStarted:
		info := t.convs[ev.Conversation]
		trusted := ev.Origin.Trusted() && ev.Origin != events.OriginApprover
		switch {
		case trusted:
			if info.Backend == "" {
				info.Backend = ev.StringField("backend")
			}
			if !info.trusted {
				info.Workspace, info.trusted = ev.StringField("workspace"), true
			}
		case !info.trusted && info.Workspace == "":
			info.Workspace = ev.StringField("workspace")
		}
		t.convs[ev.Conversation] = info
		return false, nil
	case events.KindConfig:
		cfg, err := events.DataAs[events.Config](ev)
		if err != nil {
			return false, err
		}
		if t.Validate != nil {
			if err := t.Validate(cfg); err != nil {
				return false, err
			}
		}
		if cfg.Scope == "conversation" {
			conv := cfg.Conversation
			if conv == "" {
				conv = ev.Conversation
			}
			t.perConv[conv] = scopedConfig{cfg: cfg, seq: rec.Seq}
			return true, nil
		}
		t.global = cfg
		t.globalSeq = rec.Seq
		return true, nil
	}
	return false, nil
}

// For returns the config in force for conversation, and the log sequence of
// the config event it came from (0 for the built-in default).
func (t *ConfigTracker) For(conversation string) (events.Config, uint64) {
	if t.Override != nil {
		return *t.Override, 0
	}
	if sc, ok := t.perConv[conversation]; ok {
		return sc.cfg, sc.seq
	}
	return t.global, t.globalSeq
}

// Conversation returns what is known about a conversation.
func (t *ConfigTracker) Conversation(conversation string) ConversationInfo {
	return t.convs[conversation]
}
