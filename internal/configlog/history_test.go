package configlog

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

func configRecord(t *testing.T, seq uint64, id string, cfg events.Config) *events.Record {
	t.Helper()
	data, err := events.ToData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev := events.Event{V: 1, ID: id, Kind: events.KindConfig, Conversation: cfg.Conversation, Data: data}
	return &events.Record{Seq: seq, Event: ev}
}

func TestHistoryShow(t *testing.T) {
	global := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true}, Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskMedium}}
	conv := global
	conv.Version, conv.Scope, conv.Conversation = 1, events.ScopeConversation, "c-1"
	conv.Confirmation.Threshold = events.RiskLow

	h := NewHistory()
	if s := h.Show("", 0); s.Source != "default" || s.Seq != 0 || s.EventID != "" {
		t.Fatalf("empty history: %+v", s)
	}
	h.Observe(&events.Record{Seq: 1, Event: events.Event{V: 1, ID: "a-1", Kind: events.KindAction}})
	h.Observe(configRecord(t, 2, "cfg-global", global))
	h.Observe(configRecord(t, 3, "cfg-conv", conv))
	if h.Last != 3 {
		t.Errorf("Last = %d, want 3", h.Last)
	}
	for _, tc := range []struct {
		conv, source, id string
		seq              uint64
		threshold        events.Risk
	}{
		{"", "global", "cfg-global", 2, events.RiskMedium},
		{"c-2", "global", "cfg-global", 2, events.RiskMedium},
		{"c-1", "conversation", "cfg-conv", 3, events.RiskLow},
	} {
		s := h.Show(tc.conv, 0)
		if s.Source != tc.source || s.EventID != tc.id || s.Seq != tc.seq || s.Config.Confirmation.Threshold != tc.threshold || s.Conversation != tc.conv {
			t.Errorf("Show(%q) = %+v, want source %s, event %s at %d, threshold %s", tc.conv, s, tc.source, tc.id, tc.seq, tc.threshold)
		}
	}
	if cur, v := h.SameScope(conv); cur == nil || v != 1 || cur.Confirmation.Threshold != events.RiskLow {
		t.Errorf("SameScope(conversation) = %+v, %d", cur, v)
	}
	other := conv
	other.Conversation = "c-9"
	if cur, v := h.SameScope(other); cur != nil || v != 0 {
		t.Errorf("SameScope(another conversation) = %+v, %d; want none", cur, v)
	}
}

func TestSourceOf(t *testing.T) {
	conv := events.Config{Scope: events.ScopeConversation, Conversation: "c-1"}
	for _, tc := range []struct {
		cfg  events.Config
		seq  uint64
		want string
	}{
		{events.DefaultConfig(), 0, "default"},
		{events.Config{}, 7, "global"},
		{events.Config{Scope: events.ScopeGlobal}, 7, "global"},
		{conv, 7, "conversation"},
	} {
		if got := SourceOf(tc.cfg, tc.seq); got != tc.want {
			t.Errorf("SourceOf(%+v, %d) = %q, want %q", tc.cfg, tc.seq, got, tc.want)
		}
	}
}
