package node

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// TestFleetClientSurvivesItsNode: agents connected to one node of three
// gate actions; that node dies with gates in flight, among them one
// waiting for a person. The client moves to another node and asks again
// with the same action: every gate is decided (the waiting one by the
// person who approves it through a survivor), every action is stored
// once and has exactly one gate.decided. Before the client asked again,
// the waiting gate was never answered (its waiter died with the node) and
// gates in flight waited their whole timeout.
func TestFleetClientSurvivesItsNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	nodes := startFleetWith(t, 3, func(c *Config) {
		c.Processors = func() ([]processors.Processor, error) {
			g, err := gate.New(gate.Options{})
			if err != nil {
				return nil, err
			}
			return []processors.Processor{g}, nil
		}
	})
	urls := make([]string, len(nodes))
	for i, s := range nodes {
		urls[i] = s.Info().NATSURL
	}
	creds := nodes[0].cfg.CredsDir
	dial := func(role natsutil.Role, order ...int) *client.Client {
		t.Helper()
		var list []string
		for _, i := range order {
			list = append(list, urls[i])
		}
		c, err := client.Connect(t.Context(), client.Options{URL: strings.Join(list, ","),
			CredsFile: datadir.CredsAt(creds).Seed(role), Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	admin := dial(natsutil.RoleAdmin, 0, 2)
	cfg := events.Config{Version: 1, Analyzers: events.Analyzers{Rules: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh}, ApprovalTimeout: "5m"}
	data, err := events.ToData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Append(t.Context(), events.Event{V: 1, ID: "cfg", Kind: events.KindConfig, Time: time.Now().UTC(), Data: data}); err != nil {
		t.Fatal(err)
	}

	// Every agent prefers node 1, the one that dies.
	const doomed = 1
	action := func(id, conv, command string) events.Event {
		return events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: conv, Agent: "agent",
			Time: time.Now().UTC(), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
	}

	// One action waits for a person.
	waiter := dial(natsutil.RoleAgent, doomed, 0, 2)
	requested := make(chan struct{})
	type gated struct {
		res client.GateResult
		err error
	}
	waited := make(chan gated, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		var once sync.Once
		res, err := waiter.GateAndWait(ctx, action("wait-1", "cw", "rm -rf /"), &client.GateOptions{
			OnRequested: func(events.GateRequested) { once.Do(func() { close(requested) }) }})
		waited <- gated{res, err}
	}()
	select {
	case <-requested:
	case g := <-waited:
		t.Fatalf("decided without a person: %+v, %v", g.res, g.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the gate never asked for a person")
	}
	if got := waiter.Conn().ConnectedServerName(); got != nodes[doomed].cfg.NodeName {
		t.Fatalf("the agent is connected to %q, want %q", got, nodes[doomed].cfg.NodeName)
	}

	// Agents gate harmless actions in a loop, through the doomed node.
	const agents = 3
	var (
		stop     atomic.Bool
		decided  atomic.Int64
		afterRun atomic.Int64 // decided after the kill
		killed   atomic.Bool
		killedAt time.Time
		first    atomic.Int64 // ns from the kill to the first decision after it
		ids      = make([][]string, agents)
		wg       sync.WaitGroup
		errc     = make(chan error, agents+1)
	)
	for a := range agents {
		c := dial(natsutil.RoleAgent, doomed, 0, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				id := fmt.Sprintf("ls-%d-%04d", a, i)
				ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
				res, err := c.GateAndWait(ctx, action(id, fmt.Sprintf("c%d", a), "ls -la"), nil)
				cancel()
				if err != nil {
					errc <- fmt.Errorf("agent %d, %s: %w", a, id, err)
					return
				}
				if res.Outcome != events.OutcomeAllow {
					errc <- fmt.Errorf("agent %d, %s: %+v", a, id, res)
					return
				}
				ids[a] = append(ids[a], id)
				decided.Add(1)
				if killed.Load() {
					if afterRun.Add(1) == 1 {
						first.Store(int64(time.Since(killedAt)))
					}
				}
			}
		}()
	}
	t.Logf("fleet up, the loop running")
	// A producer appends batches through the doomed node; its attempt
	// timeout is longer than the test, so only the move to another node
	// sends a request in flight again.
	producer := func() *client.Client {
		c, err := client.Connect(t.Context(), client.Options{URL: strings.Join([]string{urls[doomed], urls[0], urls[2]}, ","),
			CredsFile: datadir.CredsAt(creds).Seed(natsutil.RoleAgent), Timeout: 5 * time.Minute, AttemptTimeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}()
	var (
		appended   []string
		slowest    atomic.Int64 // ns, the longest append that spanned the kill
		producerWG sync.WaitGroup
	)
	producerWG.Add(1)
	go func() {
		defer producerWG.Done()
		for b := 0; !stop.Load(); b++ {
			var evs []events.Event
			for i := range 10 {
				evs = append(evs, events.Event{V: 1, ID: fmt.Sprintf("m-%04d-%d", b, i), Kind: events.KindMessage, Conversation: "cp",
					Time: time.Now().UTC(), Data: map[string]any{"role": "assistant", "content": "x"}})
			}
			began, before := time.Now(), killed.Load()
			rs, err := producer.AppendBatch(t.Context(), evs)
			if err != nil {
				errc <- fmt.Errorf("producer, batch %d: %w", b, err)
				return
			}
			if !before && killed.Load() {
				slowest.Store(int64(time.Since(began)))
			}
			for _, r := range rs {
				appended = append(appended, r.ID)
			}
		}
	}()
	wait.Eventually(t, 60*time.Second, func() string {
		if n := decided.Load(); n < 30 {
			return fmt.Sprintf("%d decisions before the kill, want 30", n)
		}
		return ""
	})

	// The node dies: its NATS server closes every connection at once, as
	// a killed process's sockets are closed.
	start := time.Now()
	killedAt = time.Now()
	killed.Store(true)
	nodes[doomed].NATS().Shutdown()
	closed := make(chan struct{})
	go func() { nodes[doomed].Close(context.Background()); close(closed) }()
	t.Cleanup(func() { <-closed })

	// A person approves the waiting action through a survivor.
	approver := dial(natsutil.RoleApprover, 0, 2)
	var p client.PendingAction
	wait.Eventually(t, 60*time.Second, func() string {
		if p, err = approver.FindPending(t.Context(), "wait-1"); err != nil {
			return fmt.Sprintf("the waiting action: %v", err)
		}
		return ""
	})
	if _, err := approver.Decide(t.Context(), p, events.VerdictOnce, client.DecideOptions{Approver: "alice", Wait: 60 * time.Second}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	approved := time.Now()
	g := <-waited
	t.Logf("kill → approval %v → the waiting gate's decision %v later", approved.Sub(start).Round(time.Millisecond), time.Since(approved).Round(time.Millisecond))
	if g.err != nil || g.res.Outcome != events.OutcomeAllow || g.res.By != events.ByHuman {
		t.Fatalf("the waiting gate after its node died: %+v, %v", g.res, g.err)
	}
	if got := waiter.Conn().ConnectedServerName(); got == nodes[doomed].cfg.NodeName || got == "" {
		t.Errorf("the agent is connected to %q after its node died", got)
	}

	// The loop goes on through the survivors, then stops.
	for afterRun.Load() < 30 {
		select {
		case err := <-errc:
			t.Fatal(err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	stop.Store(true)
	wg.Wait()
	producerWG.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}

	// Count: each action once in the log, one gate.decided each.
	want := map[string]bool{"wait-1": true}
	for a := range agents {
		for _, id := range ids[a] {
			want[id] = true
		}
	}
	stored := map[string]int{}
	seqOf := map[uint64]string{}
	if err := admin.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		if r.Event.Kind == events.KindAction {
			stored[r.Event.ID]++
			seqOf[r.Seq] = r.Event.ID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// An agent hears its decision as soon as a driver folds it, before it
	// is stored (docs/durability.md): read until every decision is stored.
	var decisions map[string]int
	for deadline := time.Now().Add(20 * time.Second); ; {
		decisions = map[string]int{}
		err = natsutil.ReadStream(t.Context(), admin.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived,
			Subjects: []string{events.GatePrefix + ">"}}, func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return err
			}
			if d.Kind != events.KindGateDecided {
				return nil
			}
			gd, err := events.DerivedDataAs[events.GateDecided](&d)
			if err != nil {
				return err
			}
			decisions[seqOf[gd.LogSeq]]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		missing := false
		for id := range want {
			missing = missing || decisions[id] == 0
		}
		if !missing || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for id := range want {
		if stored[id] != 1 || decisions[id] != 1 {
			t.Errorf("action %s: stored %d times, %d gate.decided; want 1 and 1", id, stored[id], decisions[id])
		}
	}
	messages := map[string]int{}
	for _, id := range appended {
		messages[id] = 0
	}
	if err := admin.Tail(t.Context(), client.TailOptions{Conversation: "cp"}, func(r events.Record) error {
		messages[r.Event.ID]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, n := range messages {
		if n != 1 {
			t.Errorf("message %s stored %d times", id, n)
		}
	}
	t.Logf("%d messages appended, each stored once; the append in flight at the kill took %v",
		len(appended), time.Duration(slowest.Load()).Round(time.Millisecond))
	if len(stored) != len(want) {
		t.Errorf("%d actions stored, %d acknowledged", len(stored), len(want))
	}
	if n := decisions[""]; n != 0 {
		t.Errorf("%d gate.decided about no stored action", n)
	}
	t.Logf("%d actions gated (%d after the kill, the first %v after it), each stored once and decided once",
		len(want), afterRun.Load(), time.Duration(first.Load()).Round(time.Millisecond))
}
