package node

import (
	"fmt"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
)

// TestDriverSurvivesConsumerLoss deletes the live driver's consumer (as a
// lost stream leader or an operator would) and checks the driver re-creates
// it and goes on folding the later records.
func TestDriverSurvivesConsumerLoss(t *testing.T) {
	s := startTest(t, t.TempDir())
	c, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor := func(seq uint64) {
		t.Helper()
		wait.Eventually(t, wait.Default, func() string {
			select {
			case err := <-s.Err():
				t.Fatalf("driver stopped: %v", err)
			default:
			}
			if got := s.Driver().Checkpointed(); got < seq {
				return fmt.Sprintf("driver checkpoint %d, waiting for %d", got, seq)
			}
			return ""
		})
	}
	appendN := func(from, n int) {
		for i := from; i < from+n; i++ {
			if _, err := c.Append(t.Context(), action(fmt.Sprintf("cl-%d", i), "c-loss", "ls")); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(0, 5)
	waitFor(5)
	st, err := s.JetStream().Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteConsumer(t.Context(), "vigil-local"); err != nil {
		t.Fatal(err)
	}
	appendN(5, 5)
	waitFor(10)
	// Redelivered records are skipped (the driver keeps the last sequence
	// it folded), so the checkpoint lands exactly on the log's end.
	if got := s.Driver().Checkpointed(); got != 10 {
		t.Fatalf("checkpoint %d, want 10", got)
	}
}
