package expiry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/expiry"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors/gate"
	"github.com/vigil-dev/vigil/projections"
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

// lagging is read models that lag the stream: they reflect the log only up
// to pos (the driver applies a batch to them after storing its outputs),
// so they do not hold the requests derived after it.
type lagging struct {
	st  expiry.PendingSource
	pos uint64
}

func (l lagging) Position() uint64 { return l.pos }
func (l lagging) Pending() ([]projections.PendingApproval, error) {
	all, err := l.st.Pending()
	var out []projections.PendingApproval
	for _, p := range all {
		if p.Seq <= l.pos {
			out = append(out, p)
		}
	}
	return out, err
}

// TestStartReadsLiveState: after a restart, a timer bounded by the read
// models reads the gate outputs from the oldest pending action on, not the
// decided ones before it (counted), and still expires the pending action
// at its deadline (the request's stored time plus its timeout, never
// before); with read models that lag behind the action, or none, it
// finds the action as well.
func TestStartReadsLiveState(t *testing.T) {
	const before, after = 120, 3 // decided actions before and after p1
	cases := []struct {
		name string
		// source returns the timer's read models; nil reads everything.
		source func(s *node.Node, p1 uint64) expiry.PendingSource
		// bounded: the start reads a bounded number of gate outputs.
		bounded bool
	}{
		{"read models", func(s *node.Node, _ uint64) expiry.PendingSource { return s.Projections() }, true},
		{"read models behind the pending action", func(s *node.Node, p1 uint64) expiry.PendingSource {
			return lagging{st: s.Projections(), pos: p1 - 1}
		}, true},
		{"read models far behind", func(s *node.Node, p1 uint64) expiry.PendingSource {
			return lagging{st: s.Projections(), pos: 0}
		}, false},
		{"no read models", func(*node.Node, uint64) expiry.PendingSource { return nil }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := testnode.Options{Dir: dir, Processors: testnode.Gate(gate.Options{}),
				Configure: func(c *node.Config) { c.ProjectionsDir = filepath.Join(dir, "projections") }}
			s := testnode.StartNode(t, opts)
			admin := testnode.Client(t, s, natsutil.RoleAdmin)
			now := time.Now().UTC()
			cfg := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true},
				Confirmation: events.Confirmation{Mode: events.ModeRisky}, ApprovalTimeout: "1h"}
			data, _ := events.ToData(cfg)
			act := func(id, command string) events.Event {
				return events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: "c1", Time: now,
					Data: map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
			}
			// Decided actions: some risky and approved by a person (a
			// request and a decision each), the rest allowed at once.
			batch := []events.Event{{V: 1, ID: "cfg", Kind: events.KindConfig, Time: now, Data: data}}
			for i := range before {
				id := fmt.Sprintf("d%d", i)
				if i%4 == 0 {
					batch = append(batch, act(id, "rm -rf /"), events.Event{V: 1, ID: "ap-" + id, Kind: events.KindApprovalDecision,
						Conversation: "c1", Time: now, Data: map[string]any{"action_id": id, "verdict": "once"}})
					continue
				}
				batch = append(batch, act(id, "ls"))
			}
			if _, err := admin.AppendBatch(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
			waitDecision(t, admin, fmt.Sprintf("d%d", before-1))
			// p1 waits for a person, and more actions follow it.
			rs, err := admin.AppendBatch(t.Context(), []events.Event{act("p1", "rm -rf /")})
			if err != nil {
				t.Fatal(err)
			}
			p1 := rs[0].Seq
			var last uint64
			for i := range after {
				r, err := admin.Append(t.Context(), act(fmt.Sprintf("e%d", i), "ls"))
				if err != nil {
					t.Fatal(err)
				}
				last = r.Seq
			}
			testnode.WaitCheckpoint(t, s.Driver(), last)
			deadline := requestStored(t, admin, "p1").Add(time.Hour)
			total := countGateOutputs(t, admin)

			// Restart the node: the timer starts on what it stored.
			admin.Close()
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			s = testnode.StartNode(t, opts)
			admin = testnode.Client(t, s, natsutil.RoleAdmin)
			testnode.WaitCheckpoint(t, s.Driver(), last)

			// A clock a second before p1's deadline: nothing is due yet.
			clock := testnode.NewClock(deadline.Add(-time.Second))
			timer, err := expiry.New(expiry.Config{Conn: s.Conn(), Now: clock.Now, Pending: tc.source(s, p1),
				ClockSkew: -1, MaxWait: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- timer.Run(ctx) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("timer: %v", err)
				}
			})
			select {
			case <-timer.Ready():
			case <-time.After(testnode.DefaultWait):
				t.Fatal("timer never caught up")
			}
			info := timer.StartInfo()
			t.Logf("start: %+v; gate outputs stored: %d", info, total)
			if info.Waiting != 1 {
				t.Fatalf("waiting at start = %d, want 1 (p1)", info.Waiting)
			}
			if tc.bounded {
				// p1's request and the outputs of the actions after it.
				if info.ReadAll != "" || info.Bound != p1 || info.Read > 1+after {
					t.Fatalf("start %+v: want bound %d and at most %d outputs read of %d", info, p1, 1+after, total)
				}
			} else if info.ReadAll == "" || info.Read != uint64(total) {
				t.Fatalf("start %+v: want all %d outputs read", info, total)
			}
			// Dozens of the timer's wake-ups later (each reads the clock),
			// p1 is still undecided.
			r0 := clock.Reads()
			testnode.Eventually(t, testnode.DefaultWait, func() string {
				if n := clock.Reads() - r0; n < 30 {
					return fmt.Sprintf("the timer read the clock %d times", n)
				}
				return ""
			})
			if n := countKind(t, admin, events.KindApprovalExpired); n != 0 {
				t.Fatalf("%d expiries appended before p1's deadline", n)
			}
			clock.Set(deadline)
			d := waitDecision(t, admin, "p1")
			if d.Outcome != events.OutcomeDeny || d.By != events.ByTimeout {
				t.Fatalf("p1 = %+v", d)
			}
			if n := countKind(t, admin, events.KindApprovalExpired); n != 1 {
				t.Fatalf("%d expiries appended, want 1", n)
			}
		})
	}
}

// requestStored is the time VIGIL_DERIVED stored the gate.requested of
// action id.
func requestStored(t *testing.T, cl *client.Client, id string) time.Time {
	t.Helper()
	var seq uint64
	natsutil.ReadStream(t.Context(), cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{events.GatePrefix + ">"}},
		func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err == nil && d.Kind == events.KindGateRequested {
				if gr, err := events.DerivedDataAs[events.GateRequested](&d); err == nil && gr.ActionID == id && seq == 0 {
					seq = r.Seq
				}
			}
			return nil
		})
	if seq == 0 {
		t.Fatalf("no request for %s", id)
	}
	st, err := cl.JetStream().Stream(t.Context(), events.StreamDerived)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(t.Context(), seq)
	if err != nil {
		t.Fatal(err)
	}
	return m.Time
}

// countGateOutputs counts the gate outputs VIGIL_DERIVED holds.
func countGateOutputs(t *testing.T, cl *client.Client) int {
	t.Helper()
	n := 0
	if err := natsutil.ReadStream(t.Context(), cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{events.GatePrefix + ">"}},
		func(natsutil.RawRecord) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// countKind counts the log's events of kind k.
func countKind(t *testing.T, cl *client.Client, k events.Kind) int {
	t.Helper()
	n := 0
	if err := cl.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		if r.Event.Kind == k {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
