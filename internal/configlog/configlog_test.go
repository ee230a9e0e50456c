package configlog

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

func TestPrepare(t *testing.T) {
	global := events.Config{Analyzers: events.Analyzers{Rules: true}, Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh}}
	conv := global
	conv.Scope, conv.Conversation = events.ScopeConversation, "c-1"
	bad := global
	bad.Confirmation.Mode = "sometimes"
	cases := []struct {
		name        string
		cfg         events.Config
		inForce     int64
		check       func(events.Config) error
		wantVersion int64
		wantFields  []string // refused with these fields; nil: accepted
	}{
		{"first version", global, 0, nil, 1, nil},
		{"next version", global, 4, nil, 5, nil},
		{"explicit version above", withVersion(global, 9), 4, nil, 9, nil},
		{"version does not increase", withVersion(global, 4), 4, nil, 4, []string{"version"}},
		{"version goes back", withVersion(global, 2), 4, nil, 2, []string{"version"}},
		{"invalid mode", bad, 0, nil, 1, []string{"confirmation.mode"}},
		{"node check refuses", global, 0, func(events.Config) error { return errors.New("rule x does not compile") }, 1, []string{"(config)"}},
		{"conversation scope", conv, 0, nil, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, cfg, err := Prepare(Request{Config: c.cfg, InForce: c.inForce, Check: c.check, Agent: "tester"})
			if cfg.Version != c.wantVersion {
				t.Errorf("version %d, want %d", cfg.Version, c.wantVersion)
			}
			if c.wantFields != nil {
				var ref *RefusedError
				if !errors.As(err, &ref) || !errors.Is(err, ErrRefused) {
					t.Fatalf("err = %v, want a *RefusedError", err)
				}
				for _, f := range c.wantFields {
					found := false
					for _, p := range ref.Problems {
						found = found || p.Field == f
					}
					if !found {
						t.Errorf("problems %+v do not name %s", ref.Problems, f)
					}
				}
				if !strings.Contains(err.Error(), "refused, nothing appended") {
					t.Errorf("error %q does not say nothing was appended", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != events.KindConfig || ev.ID == "" || ev.Agent != "tester" || ev.Validate() != nil {
				t.Fatalf("event %+v", ev)
			}
			if c.cfg.Scope == events.ScopeConversation && ev.Conversation != c.cfg.Conversation {
				t.Errorf("conversation config sent on %q", ev.Conversation)
			}
			stored, err := events.DataAs[events.Config](&ev)
			if err != nil || stored.Version != c.wantVersion {
				t.Errorf("stored config %+v, %v", stored, err)
			}
		})
	}
}

func withVersion(c events.Config, v int64) events.Config { c.Version = v; return c }

func TestSame(t *testing.T) {
	a := events.DefaultConfig()
	b := a
	b.Version = 7
	if !Same(a, b) {
		t.Error("configs that differ only in version are not the same")
	}
	c := a
	c.Confirmation.Mode = events.ModeAlways
	if Same(a, c) {
		t.Error("configs with different modes are the same")
	}
}

func TestScope(t *testing.T) {
	c := events.Config{Scope: events.ScopeConversation, Conversation: "c-9"}
	if ScopeKey(c) != "c-9" || ScopeLabel(c) != "conversation c-9" {
		t.Errorf("conversation scope: %q %q", ScopeKey(c), ScopeLabel(c))
	}
	if ScopeKey(events.Config{}) != "" || ScopeLabel(events.Config{}) != events.ScopeGlobal {
		t.Error("global scope")
	}
}
