package processors_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

func raw(t *testing.T, ev events.Event) []byte {
	t.Helper()
	if ev.V == 0 {
		ev.V = 1
	}
	if ev.Time.IsZero() {
		ev.Time = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	}
	b, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// failing is a processor that fails on records whose id says so.
type failing struct{ seen []uint64 }

func (f *failing) Name() string { return "failing" }

func (f *failing) Step(rec events.Record) ([]processors.Output, error) {
	f.seen = append(f.seen, rec.Seq)
	if strings.HasPrefix(rec.Event.ID, "bad") {
		return nil, errors.New("cannot fold " + rec.Event.ID)
	}
	return []processors.Output{processors.NewOutput(f.Name(), &rec, 0, "vigil.test", events.KindStats, map[string]any{"ok": true})}, nil
}

func TestFeed(t *testing.T) {
	cases := []struct {
		name      string
		raw       []byte
		wantKinds []events.Kind
		wantIDs   []string
	}{
		{"folds", raw(t, events.Event{ID: "good", Kind: events.KindMessage, Conversation: "c"}),
			[]events.Kind{events.KindStats}, []string{"failing:7"}},
		{"fold error becomes an alert", raw(t, events.Event{ID: "bad-1", Kind: events.KindMessage, Conversation: "c"}),
			[]events.Kind{events.KindAlert}, []string{"failing:7:alert"}},
		{"undecodable record is still stepped, and alerted", []byte{0xc1, 0x00},
			[]events.Kind{events.KindStats, events.KindAlert}, []string{"failing:7", "failing:7:alert"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &failing{}
			rec, outs := processors.Feed(p, 7, "vigil.log.c", tc.raw)
			if rec.Seq != 7 || string(rec.Raw) != string(tc.raw) {
				t.Fatalf("record %+v", rec)
			}
			if len(p.seen) != 1 || p.seen[0] != 7 {
				t.Fatalf("processor saw %v, want [7]", p.seen)
			}
			if len(outs) != len(tc.wantKinds) {
				t.Fatalf("%d outputs, want %d: %+v", len(outs), len(tc.wantKinds), outs)
			}
			for i, o := range outs {
				if o.Event.Kind != tc.wantKinds[i] || o.Event.ID != tc.wantIDs[i] || o.Event.Seq != 7 {
					t.Fatalf("output %d = %s %s seq %d, want %s %s", i, o.Event.Kind, o.Event.ID, o.Event.Seq, tc.wantKinds[i], tc.wantIDs[i])
				}
			}
		})
	}
}

func TestPipeline(t *testing.T) {
	if _, err := processors.NewPipeline(stats.New(), stats.New()); err == nil {
		t.Fatal("two processors with one name were accepted")
	}
	f := &failing{}
	pipe, err := processors.NewPipeline(f, stats.New())
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := processors.Decode(1, "vigil.log.c", raw(t, events.Event{ID: "bad-2", Kind: events.KindMessage, Conversation: "c"}))
	outs, err := pipe.Step(rec)
	var se *processors.StepError
	if !errors.As(err, &se) || se.Processor != "failing" || se.Seq != 1 {
		t.Fatalf("error %v, want a StepError naming the failing processor", err)
	}
	// The other processor still ran: stats emits on a conversation's first record.
	if len(outs) != 1 || outs[0].Event.ID != "stats:1" {
		t.Fatalf("outputs %+v, want the stats output only", outs)
	}
}

func TestOutputID(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "risk:42"}, {1, "risk:42:1"}, {12, "risk:42:12"}} {
		if got := processors.OutputID("risk", 42, tc.n); got != tc.want {
			t.Errorf("OutputID(risk, 42, %d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestConfigTracker(t *testing.T) {
	global := events.DefaultConfig()
	global.Version = 2
	global.Analyzers.LLMHint = true
	conv := events.DefaultConfig()
	conv.Version = 3
	conv.Scope = events.ScopeConversation
	conv.Conversation = "c-1"
	conv.Confirmation.Mode = events.ModeAlways
	cfgRec := func(seq uint64, c events.Config) *events.Record {
		data, err := events.ToData(c)
		if err != nil {
			t.Fatal(err)
		}
		return &events.Record{Seq: seq, Event: events.Event{V: 1, ID: "cfg", Kind: events.KindConfig, Data: data}}
	}
	tr := processors.NewConfigTracker()
	if c, seq := tr.For("c-1"); c.Version != 0 || seq != 0 || c.Confirmation.Mode != events.ModeRisky {
		t.Fatalf("before any config: v%d from %d mode %s, want the default", c.Version, seq, c.Confirmation.Mode)
	}
	tr.Observe(cfgRec(5, global))
	tr.Observe(cfgRec(9, conv))
	// The agent's own claim of a sandbox is not its backend; the
	// runtime's is, and a later claim by the agent changes nothing.
	tr.Observe(&events.Record{Seq: 10, Event: events.Event{Kind: events.KindConversationStarted, Conversation: "c-1",
		Data: map[string]any{"backend": "docker", "workspace": "/w"}}})
	if info := tr.Conversation("c-1"); info.Backend != "" || info.Workspace != "/w" {
		t.Fatalf("after the agent's claim: conversation info %+v", info)
	}
	tr.Observe(&events.Record{Seq: 11, Event: events.Event{Kind: events.KindConversationStarted, Conversation: "c-1", Origin: events.OriginRuntime,
		Data: map[string]any{"backend": "docker", "workspace": "/w"}}})
	tr.Observe(&events.Record{Seq: 12, Event: events.Event{Kind: events.KindConversationStarted, Conversation: "c-1",
		Data: map[string]any{"backend": "modal", "workspace": "/"}}})
	if c, seq := tr.For("c-2"); c.Version != 2 || seq != 5 {
		t.Fatalf("c-2: v%d from %d, want the global v2 from 5", c.Version, seq)
	}
	if c, seq := tr.For("c-1"); c.Version != 3 || seq != 9 || c.Confirmation.Mode != events.ModeAlways {
		t.Fatalf("c-1: v%d from %d, want its own v3 from 9", c.Version, seq)
	}
	if info := tr.Conversation("c-1"); info.Backend != "docker" || info.Workspace != "/w" {
		t.Fatalf("conversation info %+v", info)
	}
	over := events.DefaultConfig()
	over.Version = 99
	tr.Override = &over
	if c, seq := tr.For("c-1"); c.Version != 99 || seq != 0 {
		t.Fatalf("override: v%d from %d", c.Version, seq)
	}
}
