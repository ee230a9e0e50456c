package ingest_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/driver"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors/gate"
)

// heldSink is a read model whose Apply blocks while it is held: the
// driver's committer waits in it, so nothing folded after the batch it
// holds is stored in VIGIL_DERIVED.
type heldSink struct {
	mu      sync.Mutex
	held    bool
	release chan struct{}
	entered chan struct{}
}

func (s *heldSink) Apply([]driver.Applied) error {
	s.mu.Lock()
	held := s.held
	s.held = false // only the first batch is held
	s.mu.Unlock()
	if held {
		close(s.entered)
		<-s.release
	}
	return nil
}

func (s *heldSink) Position() uint64 { return 0 }

// TestDecisionBeforeStored: an agent waiting for its decision gets it from
// the node's own driver as soon as it is folded, while VIGIL_DERIVED has
// not stored it (the driver's committer is held up behind an earlier
// batch); once stored, the stored decision is the one the agent got.
func TestDecisionBeforeStored(t *testing.T) {
	sink := &heldSink{held: true, release: make(chan struct{}), entered: make(chan struct{})}
	s := testnode.StartNode(t, testnode.Options{Processors: testnode.Gate(gate.Options{}),
		Configure: func(c *node.Config) { c.Sink = sink }})
	agent := testnode.Client(t, s, natsutil.RoleAgent)
	action := func(id, command string) events.Event {
		return events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: "c-before", Time: time.Now().UTC(),
			Data: map[string]any{"tool": "bash", "args": map[string]any{"command": command}}}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	first, err := agent.GateAndWait(ctx, action("before-1", "ls -la"), nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sink.entered:
	case <-ctx.Done():
		t.Fatal("the sink was never given the first batch")
	}
	defer func() {
		select {
		case <-sink.release:
		default:
			close(sink.release)
		}
	}()
	// The committer is held: the next decision reaches the agent unstored.
	second, err := agent.GateAndWait(ctx, action("before-2", "git status"), nil)
	if err != nil {
		t.Fatalf("no decision while VIGIL_DERIVED could not store it: %v", err)
	}
	if second.Seq <= first.Seq {
		t.Fatalf("second action at seq %d after the first at %d", second.Seq, first.Seq)
	}
	decided := func(seq uint64) []events.GateDecided {
		var out []events.GateDecided
		for _, d := range readDerived(t, s, events.StreamDerived, events.GateSubject("c-before")) {
			if d.Kind != events.KindGateDecided {
				continue
			}
			if gd, err := events.DerivedDataAs[events.GateDecided](&d); err == nil && gd.LogSeq == seq {
				out = append(out, gd)
			}
		}
		return out
	}
	if got := decided(second.Seq); len(got) != 0 {
		t.Fatalf("VIGIL_DERIVED holds the decision on seq %d while the committer is held: %+v", second.Seq, got)
	}
	close(sink.release)
	testnode.WaitCheckpoint(t, s.Driver(), second.Seq)
	got := decided(second.Seq)
	if len(got) != 1 {
		t.Fatalf("VIGIL_DERIVED holds %d decisions on seq %d, want 1", len(got), second.Seq)
	}
	gd := got[0]
	stored := [...]any{gd.Outcome, gd.By, gd.Level, gd.DecisionSeq, fmt.Sprint(gd.Reasons)}
	agentGot := [...]any{second.Outcome, second.By, second.Level, second.DecisionSeq, fmt.Sprint(second.Reasons)}
	if !reflect.DeepEqual(stored, agentGot) || gd.ActionID != "before-2" {
		t.Fatalf("stored decision %+v, the agent got %+v", gd, second)
	}
}
