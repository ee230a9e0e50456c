package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/audit"
)

// TestSealerCheckpointsAQuietLog: three events are far from the audit
// interval, yet the sealer's audit.seal makes the audit processor sign a
// checkpoint covering them.
func TestSealerCheckpointsAQuietLog(t *testing.T) {
	dir := t.TempDir()
	signer, _, err := auditkey.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
		SealInterval: 50 * time.Millisecond, NoExpiry: true,
		Processors: func() ([]processors.Processor, error) {
			a, err := audit.New(audit.Config{Signer: signer})
			return []processors.Processor{a}, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	c, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, id := range []string{"q1", "q2", "q3"} {
		if _, err := c.Append(t.Context(), action(id, "c-quiet", "ls")); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	st, err := s.JetStream().Stream(t.Context(), events.StreamDerived)
	if err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Default, func() string {
		m, err := st.GetLastMsgForSubject(t.Context(), events.SubjectCheckpoint)
		if err != nil {
			return "no checkpoint yet: " + err.Error()
		}
		d, err := events.DecodeDerived(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if size, _ := d.Data.(map[string]any)["tree_size"].(int64); size < 4 { // 3 events + the seal
			return fmt.Sprintf("no checkpoint covers the quiet log: the newest covers %d records, want 4", size)
		}
		return ""
	})
}
