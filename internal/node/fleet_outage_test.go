package node

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

// TestFleetOutageLongerThanDuplicateWindow: a node of a fleet stops while
// the others fold on, stays away longer than every duplicate window
// (VIGIL_DERIVED's included), and comes back on its data: it refolds what
// it missed without storing any output a second time, and then publishes
// alongside the others as before.
func TestFleetOutageLongerThanDuplicateWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	const window = time.Second
	var mu sync.Mutex
	cfgs := map[string]Config{}
	nodes := startFleetWith(t, 3, func(c *Config) {
		c.DedupWindow = window
		mu.Lock()
		cfgs[c.NodeName] = *c
		mu.Unlock()
	})
	c, err := nodes[0].Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	appendN := func(prefix string, n int) uint64 {
		var last uint64
		for i := range n {
			// A conversation each: stats derives an output for its first event.
			r, err := c.Append(t.Context(), action(fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("c-%s-%d", prefix, i), "ls"))
			if err != nil {
				t.Fatal(err)
			}
			last = r.Seq
		}
		return last
	}
	waitAll := func(seq uint64, ns ...*Node) {
		t.Helper()
		wait.Eventually(t, 60*time.Second, func() string {
			for _, s := range ns {
				if got := s.Driver().Checkpointed(); got < seq {
					return fmt.Sprintf("node %s checkpointed %d, waiting for %d", s.cfg.NodeName, got, seq)
				}
			}
			return ""
		})
	}
	waitAll(appendN("before", 50), nodes...)
	away := nodes[2]
	if err := away.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitAll(appendN("during", 200), nodes[0], nodes[1])
	time.Sleep(3 * window) // away longer than every duplicate window
	back, err := Start(t.Context(), cfgs[away.cfg.NodeName])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { back.Close(context.Background()) })
	nodes[2] = back
	last := appendN("after", 50)
	waitAll(last, nodes...)

	counts := map[string]int{}
	err = natsutil.ReadStream(t.Context(), nodes[0].JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived}, func(r natsutil.RawRecord) error {
		d, err := events.DecodeDerived(r.Data)
		if err != nil {
			return err
		}
		counts[d.ID]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every output a fold of the log derives is stored exactly once.
	fold := stats.New()
	want := 0
	err = natsutil.ReadStream(t.Context(), nodes[0].JetStream(), natsutil.ReadOptions{Stream: events.StreamLog}, func(r natsutil.RawRecord) error {
		_, outs := processors.Feed(fold, r.Seq, r.Subject, r.Data)
		for _, o := range outs {
			want++
			if counts[o.Event.ID] != 1 {
				t.Errorf("%s stored %d times, want once", o.Event.ID, counts[o.Event.ID])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want < 10 {
		t.Fatalf("the fold derives only %d outputs", want)
	}
	for id, n := range counts {
		if n != 1 {
			t.Errorf("%s stored %d times", id, n)
		}
	}
}
