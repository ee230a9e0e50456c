package expiry_test

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/expiry"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/server"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

func TestExpiredID(t *testing.T) {
	if got := expiry.ExpiredID("a1"); got != "expired:a1" {
		t.Fatalf("ExpiredID = %q", got)
	}
	long := string(make([]byte, 0)) + "x"
	for len(long) < events.MaxIDLen {
		long += "x"
	}
	if got := expiry.ExpiredID(long); len(got) > events.MaxIDLen || !events.ValidID(got) {
		t.Fatalf("ExpiredID(long) = %q", got)
	}
}

// TestRestartRebuildsSchedule: a timer that was not running when an action
// started waiting rebuilds its schedule from VIGIL_DERIVED and expires it;
// a decided action is never expired.
func TestRestartRebuildsSchedule(t *testing.T) {
	s, err := server.Start(t.Context(), server.Config{DataDir: t.TempDir(), NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
		Processors: func() ([]processors.Processor, error) {
			g, err := gate.New(gate.Options{})
			return []processors.Processor{g}, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	admin, err := s.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	cfg := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky}, ApprovalTimeout: "1s"}
	data, _ := events.ToData(cfg)
	now := time.Now().UTC()
	mk := func(id string) events.Event {
		return events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: "c1", Time: now,
			Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf /"}}}
	}
	if _, err := admin.AppendBatch(t.Context(), []events.Event{
		{V: 1, ID: "cfg", Kind: events.KindConfig, Time: now, Data: data}, mk("p1"), mk("p2"),
	}); err != nil {
		t.Fatal(err)
	}
	// p2 is decided by a person before any timer runs.
	if _, err := admin.Append(t.Context(), events.Event{V: 1, ID: "ap", Kind: events.KindApprovalDecision, Conversation: "c1", Time: now,
		Data: map[string]any{"action_id": "p2", "verdict": "deny"}}); err != nil {
		t.Fatal(err)
	}
	waitDecision(t, admin, "p2")
	time.Sleep(1100 * time.Millisecond) // p1's timeout passes while no timer runs
	timer, err := expiry.New(expiry.Config{Conn: s.Conn()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- timer.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	d := waitDecision(t, admin, "p1")
	if d.Outcome != events.OutcomeDeny || d.By != events.ByTimeout {
		t.Fatalf("p1 = %+v", d)
	}
	// Exactly one expiry was appended, for p1 only.
	var expired []string
	admin.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		if r.Event.Kind == events.KindApprovalExpired {
			expired = append(expired, r.Event.StringField("action_id"))
		}
		return nil
	})
	if len(expired) != 1 || expired[0] != "p1" {
		t.Fatalf("expiries appended for %v, want [p1]", expired)
	}
}

func waitDecision(t *testing.T, cl *client.Client, id string) events.GateDecided {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var out *events.GateDecided
		natsutil.ReadStream(t.Context(), cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{events.GatePrefix + ">"}},
			func(r natsutil.RawRecord) error {
				d, err := events.DecodeDerived(r.Data)
				if err != nil || d.Kind != events.KindGateDecided {
					return nil
				}
				if gd, err := events.DerivedDataAs[events.GateDecided](&d); err == nil && gd.ActionID == id {
					out = &gd
				}
				return nil
			})
		if out != nil {
			return *out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no decision on %s", id)
	return events.GateDecided{}
}
