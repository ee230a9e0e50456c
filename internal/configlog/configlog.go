// Package configlog is how a configuration becomes a config event: the
// version it takes, the checks it must pass, and the comparison that says
// whether it changes anything. `vigil config set`, `vigil serve --config`
// and PUT /v1/config all use it, so a configuration is refused or accepted
// the same way whichever way it comes.
//
// It is also which config is in force: History folds a log's config events
// with the gate's own tracker, and Show is the one answer `vigil config
// show` and GET /v1/config give (the same source, the same fields).
//
// The package writes nothing, and reads only in ReadHistory: callers find
// the version in force (from the log or the read models) and append the
// event Prepare returns.
//
// On the data path: a use case shared by the CLI and the HTTP API, on the
// way into the log.
package configlog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
)

// ErrRefused is wrapped by every *RefusedError.
var ErrRefused = errors.New("configlog: config refused")

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Field is the configuration field, without the event's "data."
	// prefix ("confirmation.mode"), or "(config)" for the whole of it.
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// RefusedError says a configuration was refused and nothing was appended,
// with every problem found.
type RefusedError struct {
	Version  int64
	Problems []Problem
}

func (e *RefusedError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Field + ": " + p.Reason
	}
	return fmt.Sprintf("config v%d refused, nothing appended: %s", e.Version, strings.Join(msgs, "; "))
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Problems flattens a (joined) validation error into its problems, each
// with its field.
func Problems(err error) []Problem {
	var out []Problem
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var ve *events.ValidationError
		if errors.As(e, &ve) {
			out = append(out, Problem{Field: strings.TrimPrefix(ve.Field, "data."), Reason: ve.Reason})
			return
		}
		out = append(out, Problem{Field: "(config)", Reason: e.Error()})
	}
	walk(err)
	return out
}

// Refused wraps a validation error of a configuration at version as a
// *RefusedError.
func Refused(version int64, err error) *RefusedError {
	return &RefusedError{Version: version, Problems: Problems(err)}
}

// ScopeKey is where cfg applies: "" for the global scope, else its
// conversation.
func ScopeKey(cfg events.Config) string {
	if cfg.Scope == events.ScopeConversation {
		return cfg.Conversation
	}
	return ""
}

// ScopeLabel names cfg's scope for people: "global" or "conversation ID".
func ScopeLabel(cfg events.Config) string {
	if cfg.Scope == events.ScopeConversation {
		return "conversation " + cfg.Conversation
	}
	return events.ScopeGlobal
}

// Request is a configuration to append.
type Request struct {
	Config events.Config
	// InForce is the version of the configuration in force for the same
	// scope (0 when there is none: the built-in default is version 0). A
	// Config.Version of 0 takes InForce+1; one that does not increase on
	// it is refused.
	InForce int64
	// Check, when set, runs after validation: what only the node knows
	// how to check (policy rules compile, the redactor builds).
	Check func(events.Config) error
	// Agent names who appends it (an operator, "http:admin").
	Agent string
	// Now stamps the event; zero means time.Now.
	Now time.Time
}

// Prepare checks r's configuration and returns the config event to append,
// with the configuration as it will be stored (its version set). Every
// refusal is a *RefusedError listing each problem.
func Prepare(r Request) (events.Event, events.Config, error) {
	cfg := r.Config
	if cfg.Version == 0 {
		cfg.Version = r.InForce + 1
	} else if cfg.Version <= r.InForce {
		return events.Event{}, cfg, &RefusedError{Version: cfg.Version, Problems: []Problem{{Field: "version",
			Reason: fmt.Sprintf("%d does not increase on the version in force for this scope (%d); use %d or more, or leave version out", cfg.Version, r.InForce, r.InForce+1)}}}
	}
	if err := events.ValidateConfig(cfg); err != nil {
		return events.Event{}, cfg, Refused(cfg.Version, err)
	}
	if r.Check != nil {
		if err := r.Check(cfg); err != nil {
			return events.Event{}, cfg, Refused(cfg.Version, err)
		}
	}
	data, err := events.ToData(cfg)
	if err != nil {
		return events.Event{}, cfg, Refused(cfg.Version, fmt.Errorf("the config does not encode: %w", err))
	}
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	ev := events.Event{V: events.CurrentVersion, ID: ulid.Make().String(), Kind: events.KindConfig,
		Agent: r.Agent, Time: now.UTC(), Data: data}
	if cfg.Scope == events.ScopeConversation {
		ev.Conversation = cfg.Conversation
	}
	if err := ev.Validate(); err != nil {
		return events.Event{}, cfg, Refused(cfg.Version, err)
	}
	return ev, cfg, nil
}

// Same reports whether two configurations are the same as the gate reads
// them (defaults filled in), whatever their versions.
func Same(a, b events.Config) bool {
	a, b = a.WithDefaults(), b.WithDefaults()
	a.Version, b.Version = 0, 0
	ma, err1 := canonical(a)
	mb, err2 := canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(ma, mb)
}

func canonical(c events.Config) ([]byte, error) {
	d, err := events.ToData(c)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	err = enc.Encode(d)
	return buf.Bytes(), err
}
