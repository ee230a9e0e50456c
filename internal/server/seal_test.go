package server

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/natsutil"
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
		SealInterval: 50 * time.Millisecond,
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m, err := st.GetLastMsgForSubject(t.Context(), events.SubjectCheckpoint); err == nil {
			d, err := events.DecodeDerived(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if size, _ := d.Data.(map[string]any)["tree_size"].(int64); size >= 4 { // 3 events + the seal
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint covers the quiet log")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
