package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
)

// logBuffer collects a node's log lines for a test to read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the lines logged so far that contain s, and forgets all.
func (b *logBuffer) take(s string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for l := range strings.Lines(b.buf.String()) {
		if strings.Contains(l, s) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	b.buf.Reset()
	return out
}

// jsWindow is VIGIL_LOG's JetStream duplicate window in these tests; the
// logical window (the id index's) is an hour.
const jsWindow = time.Second

// startIndexed starts a node on dir with a 1-second JetStream window and a
// 1-hour logical one, logging into logs.
func startIndexed(t *testing.T, dir string, logs *logBuffer) *node.Node {
	t.Helper()
	return testnode.StartNode(t, testnode.Options{Dir: dir, Configure: func(c *node.Config) {
		c.DedupWindow = time.Hour
		c.LogStreamWindow = jsWindow
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}})
}

func message(id, conv, content string) events.Event {
	return events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindMessage, Conversation: conv,
		Time: time.Now().UTC(), Data: map[string]any{"role": "user", "content": content}}
}

// publishRaw stores ev straight into VIGIL_LOG with its id as
// Nats-Msg-Id, as another node's ingest service does, and returns the ack.
func publishRaw(t *testing.T, js jetstream.JetStream, ev events.Event) *jetstream.PubAck {
	t.Helper()
	body, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	m := &nats.Msg{Subject: events.LogSubject(ev.Conversation), Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, ev.ID)
	ack, err := js.PublishMsg(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	return ack
}

func appendOne(t *testing.T, s *node.Node, ev events.Event) (client.Result, error) {
	t.Helper()
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	return agent.Append(t.Context(), ev)
}

// TestIndexRecognisesRetriesAfterStreamWindow: once JetStream's own window
// has passed, a retry of an acknowledged id is answered from the id index
// as a duplicate with the original seq, and nothing is stored; that holds
// for an id stored through another node (fed from the log, not from this
// service's publishes), after a restart (the index persists and reads
// only what the log grew by), and after the index was lost (rebuilt from
// the whole log at start). Other content under a known id is refused.
func TestIndexRecognisesRetriesAfterStreamWindow(t *testing.T) {
	dir := t.TempDir()
	var logs logBuffer
	s := startIndexed(t, dir, &logs)
	first := message("m-1", "c-1", "hello")
	r, err := appendOne(t, s, first)
	if err != nil || r.Seq != 1 || r.Duplicate {
		t.Fatalf("first append: %+v, %v", r, err)
	}
	peer := message("m-peer", "c-2", "stored through another node")
	peer.Origin = events.OriginAgent // as an ingest service stores it
	if ack := publishRaw(t, s.JetStream(), peer); ack.Sequence != 2 || ack.Duplicate {
		t.Fatalf("peer's record: %+v", ack)
	}
	time.Sleep(3 * jsWindow) // JetStream forgets both ids

	retry := func(s *node.Node, ev events.Event, seq uint64) {
		t.Helper()
		ev.Time = time.Now().UTC() // a retry may be rebuilt with a new time
		r, err := appendOne(t, s, ev)
		if err != nil || !r.Duplicate || r.Seq != seq {
			t.Fatalf("retry of %s: %+v, %v; want duplicate of seq %d", ev.ID, r, err, seq)
		}
	}
	retry(s, first, 1)
	retry(s, peer, 2)
	var refused *client.RefusedError
	if _, err := appendOne(t, s, message("m-1", "c-1", "rm -rf /")); !errors.As(err, &refused) ||
		!strings.Contains(refused.Reason, "already stored with different content") {
		t.Fatalf("other content under a known id: %v; want refused as an id conflict", err)
	}
	if n := logCount(t, s); n != 2 {
		t.Fatalf("log holds %d records, want 2", n)
	}
	// The window has passed indeed: JetStream alone takes the id again.
	first.Origin = events.OriginAgent
	if ack := publishRaw(t, s.JetStream(), first); ack.Duplicate {
		t.Fatalf("JetStream still remembers m-1 after %s: the test proves nothing", 3*jsWindow)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Restart: the index reads what follows its frontier, not the log.
	logs.take("")
	s = startIndexed(t, dir, &logs)
	for _, l := range logs.take("id index reading the log") {
		if strings.Contains(l, "from=1 ") {
			t.Errorf("a restart read the whole log into the index: %s", l)
		}
	}
	retry(s, peer, 2)
	retry(s, first, 3) // the newest record with the id
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Lost index: rebuilt from the whole log before anything is answered.
	if err := os.RemoveAll(datadir.New(dir).IngestIndex()); err != nil {
		t.Fatal(err)
	}
	s = startIndexed(t, dir, &logs)
	if got := logs.take("id index"); len(got) < 2 || !strings.Contains(got[0], "from=1 to=3") || !strings.Contains(got[len(got)-1], "caught up") {
		t.Errorf("rebuilding the index logged %q; want reading from 1 to 3, then caught up", got)
	}
	retry(s, peer, 2)
	if n := logCount(t, s); n != 3 {
		t.Fatalf("log holds %d records, want 3", n)
	}
}

// TestIndexOfAnotherLogIsRebuilt: an index built from a VIGIL_LOG that
// was deleted and recreated (another creation time) is thrown away and
// rebuilt from the new log; its ids are not answered for the new log.
func TestIndexOfAnotherLogIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	var logs logBuffer
	s := startIndexed(t, dir, &logs)
	if _, err := appendOne(t, s, message("m-old", "c-1", "old log")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Replace the log: a node started on a copy of the data directory
	// without the stream files, accepting the new log.
	if err := os.RemoveAll(filepath.Join(dir, "jetstream")); err != nil {
		t.Fatal(err)
	}
	s = testnode.StartNode(t, testnode.Options{Dir: dir, Configure: func(c *node.Config) {
		c.DedupWindow = time.Hour
		c.LogStreamWindow = jsWindow
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.AcceptNewLog = true
	}})
	if got := logs.take("id index rebuilt"); len(got) != 1 || !strings.Contains(got[0], "another VIGIL_LOG") {
		t.Errorf("index of the old log: logged %q; want it rebuilt", got)
	}
	r, err := appendOne(t, s, message("m-old", "c-1", "new log, other content"))
	if err != nil || r.Duplicate || r.Seq != 1 {
		t.Fatalf("the old log's id on the new log: %+v, %v; want stored at 1", r, err)
	}
}
