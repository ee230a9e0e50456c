package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

func startTest(t *testing.T, dir string) *Node {
	t.Helper()
	s, err := Start(t.Context(), Config{
		DataDir:    dir,
		NATSListen: "127.0.0.1:-1",
		Durability: natsutil.DurabilityInterval,
		NoExpiry:   true,
		Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil },
	})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func action(id, conv, cmd string) events.Event {
	return events.Event{V: 1, ID: id, Kind: events.KindAction, Conversation: conv, Agent: "coder-1",
		Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": cmd}}}
}

func TestAppendTailAndStats(t *testing.T) {
	s := startTest(t, t.TempDir())
	c, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var evs []events.Event
	for i := range 5 {
		evs = append(evs, action(fmt.Sprintf("a%d", i), "c-1", "ls"))
	}
	rs, err := c.AppendBatch(t.Context(), evs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Seq != uint64(i+1) || r.ID != evs[i].ID {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	// A retry of the same id is stored once.
	r, err := c.Append(t.Context(), evs[2])
	if err != nil {
		t.Fatal(err)
	}
	if !r.Duplicate || r.Seq != 3 {
		t.Fatalf("retry = %+v, want duplicate of seq 3", r)
	}
	admin, err := s.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var got []uint64
	if err := admin.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		got = append(got, r.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("tail got %v", got)
	}
	wait.Checkpoint(t, s.Driver(), 5)
}

func TestAgentCannotSendControl(t *testing.T) {
	s := startTest(t, t.TempDir())
	c, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Through the ingest service on the agent subject: refused with a reason.
	ev := events.Event{V: 1, ID: "ap-1", Kind: events.KindApprovalDecision, Conversation: "c-1",
		Time: time.Now(), Data: map[string]any{"action_id": "a1", "verdict": "once"}}
	err = c.Conn().Publish(events.IngestControlSubject("c-1"), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	// The permission violation surfaces asynchronously; a request must fail.
	if _, err := c.Conn().Request(events.IngestControlSubject("c-1"), []byte("x"), time.Second); err == nil {
		t.Fatal("agent request on a control subject succeeded")
	}
	// Nor may it announce a config change to the ingest services: the
	// server refuses the publish (nobody replies there, so a request would
	// fail either way; the violation is what shows the permission).
	if err := c.Conn().Publish(events.SubjectConfigStored, []byte("x")); err != nil {
		t.Fatal(err)
	}
	c.Conn().Flush()
	wait.Eventually(t, 5*time.Second, func() string {
		if err := c.Conn().LastError(); !strings.Contains(fmt.Sprint(err), events.SubjectConfigStored) {
			return fmt.Sprintf("no permissions violation for the config-stored subject; last error %v", err)
		}
		return ""
	})
	body, _ := ev.MarshalMsgpack()
	resp, err := c.Conn().Request(events.IngestAgentSubject("c-1"), body, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ParseReply(resp.Data, 1); err == nil {
		t.Fatal("control kind on an agent subject was accepted")
	}
}
