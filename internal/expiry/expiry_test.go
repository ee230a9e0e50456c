package expiry_test

import (
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/expiry"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode"
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
	s := testnode.StartNode(t, testnode.Options{Processors: testnode.Gate(gate.Options{})})
	admin := testnode.Client(t, s, natsutil.RoleAdmin)
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
	// p1's timeout (1s) passes while no timer runs: the timer starts on a
	// clock a minute ahead of the server's, so no test waits for it.
	clock := testnode.NewClock(time.Now().Add(time.Minute))
	testnode.RunExpiry(t, s, clock.Now)
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
	var out *events.GateDecided
	testnode.Eventually(t, 10*time.Second, func() string {
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
		if out == nil {
			return "no decision on " + id
		}
		return ""
	})
	return *out
}
