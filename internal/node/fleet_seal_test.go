package node

import (
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/soak"
)

// TestFleetIdleStopsSealing: every node of a fleet seals a log that moved,
// but another node's seal is no move: once the log is idle, the fleet
// stops appending seals (it used to append one per node per interval
// forever, each node sealing the others' seals).
func TestFleetIdleStopsSealing(t *testing.T) {
	soak.Require(t, "a 3-node cluster left idle")
	const every = 100 * time.Millisecond
	nodes := startFleetWith(t, 3, func(c *Config) { c.SealInterval = every })
	c, err := nodes[0].Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, id := range []string{"idle-1", "idle-2"} {
		if _, err := c.Append(t.Context(), action(id, "c-idle", "ls")); err != nil {
			t.Fatal(err)
		}
	}
	seals := func() (n int, last uint64) {
		err := natsutil.ReadStream(t.Context(), nodes[0].JetStream(), natsutil.ReadOptions{Stream: events.StreamLog}, func(r natsutil.RawRecord) error {
			ev, err := events.DecodeMsgpack(r.Data)
			if err == nil && ev.Kind == events.KindAuditSeal {
				n++
			}
			last = r.Seq
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, last
	}
	// Wait until some node has sealed, then give the fleet many intervals.
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := seals(); n == 0; n, _ = seals() {
		if time.Now().After(deadline) {
			t.Fatal("no seal appended")
		}
		time.Sleep(every)
	}
	// Every node's sealer looks at the log n more times (however slow the
	// machine: a fixed sleep could end before a node looked at all).
	looked := func(n int64) {
		t.Helper()
		want := make([]int64, len(nodes))
		for i, nd := range nodes {
			want[i] = nd.sealLooks.Load() + n
		}
		deadline := time.Now().Add(60 * time.Second)
		for i, nd := range nodes {
			for nd.sealLooks.Load() < want[i] {
				if time.Now().After(deadline) {
					t.Fatalf("node %d's sealer looked %d times, want %d", i, nd.sealLooks.Load(), want[i])
				}
				time.Sleep(every)
			}
		}
	}
	// Settled: a seal of a seal would have been made by now.
	looked(5)
	n1, last1 := seals()
	looked(10)
	n2, last2 := seals()
	if n2 != n1 || last2 != last1 {
		t.Fatalf("an idle fleet went on sealing: %d seals (log at %d), then %d (log at %d)", n1, last1, n2, last2)
	}
	t.Logf("%d seals for an idle fleet of 3", n2)
}
