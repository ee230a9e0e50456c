package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// TestRequestsStoredAsTheDiskWants: on a single host whose server fsyncs
// every write, a request of natsutil.DefaultMinAtomicBatch events or more
// is stored as one atomic batch (one fsync); a smaller one, and any
// request under interval durability, as a chain (no file store a batch).
// The stored headers say which: a batch leaves Nats-Batch-Id on its
// messages, a chain Nats-Expected-Last-Msg-Id.
func TestRequestsStoredAsTheDiskWants(t *testing.T) {
	const batch, chain = "Nats-Batch-Id", "Nats-Expected-Last-Msg-Id"
	big, small := natsutil.DefaultMinAtomicBatch, 3
	for _, tc := range []struct {
		durability natsutil.Durability
		events     int
		want, not  string
	}{
		{natsutil.DurabilityFsync, big, batch, chain},
		{natsutil.DurabilityFsync, small, chain, batch},
		{natsutil.DurabilityInterval, big, chain, batch},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.durability, tc.events), func(t *testing.T) {
			s, err := Start(t.Context(), Config{
				DataDir:      t.TempDir(),
				NATSListen:   "127.0.0.1:-1",
				Durability:   tc.durability,
				NoExpiry:     true,
				NoProcessors: true,
			})
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			t.Cleanup(func() { s.Close(context.Background()) })
			c, err := s.Client(t.Context(), natsutil.RoleAgent)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var evs []events.Event
			for i := range tc.events {
				evs = append(evs, action(fmt.Sprintf("a%d", i), "c-1", "ls"))
			}
			rs, err := c.AppendBatch(t.Context(), evs)
			if err != nil {
				t.Fatal(err)
			}
			st, err := s.js.Stream(t.Context(), events.StreamLog)
			if err != nil {
				t.Fatal(err)
			}
			m, err := st.GetMsg(t.Context(), rs[len(rs)-1].Seq)
			if err != nil {
				t.Fatal(err)
			}
			if m.Header.Get(tc.want) == "" || m.Header.Get(tc.not) != "" {
				t.Errorf("the last of %d events with %s durability stored with headers %v, want %s and no %s", tc.events, tc.durability, m.Header, tc.want, tc.not)
			}
		})
	}
}
