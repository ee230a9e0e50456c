package testnode_test

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode"
	"github.com/vigil-dev/vigil/processors/gate"
)

// TestStartNode: two nodes side by side each get a port of their own from
// the kernel (no port picked, closed and reused), and the gate runs: an
// appended event is checkpointed.
func TestStartNode(t *testing.T) {
	a := testnode.StartNode(t, testnode.Options{Processors: testnode.Gate(gate.Options{}), Expiry: true})
	b := testnode.StartNode(t, testnode.Options{})
	pa, pb := port(t, a.Info().NATSURL), port(t, b.Info().NATSURL)
	if pa == pb || pa == "0" || pb == "0" {
		t.Fatalf("ports %s and %s", pa, pb)
	}
	cl := testnode.Client(t, a, natsutil.RoleAgent)
	res, err := cl.Append(t.Context(), events.Event{V: 1, ID: "a1", Kind: events.KindAction, Conversation: "c1", Time: time.Now().UTC(),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "ls"}}})
	if err != nil {
		t.Fatal(err)
	}
	testnode.WaitCheckpoint(t, a.Driver(), res.Seq)
}

func port(t *testing.T, natsURL string) string {
	t.Helper()
	u, err := url.Parse(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStartNodeAgain: a node started on an earlier node's directory finds
// what it stored.
func TestStartNodeAgain(t *testing.T) {
	dir := t.TempDir()
	first := testnode.StartNode(t, testnode.Options{Dir: dir})
	cl := testnode.Client(t, first, natsutil.RoleAgent)
	if _, err := cl.Append(t.Context(), events.Event{V: 1, ID: "a1", Kind: events.KindAction, Conversation: "c1", Time: time.Now().UTC(),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "ls"}}}); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := testnode.StartNode(t, testnode.Options{Dir: dir})
	st, err := again.JetStream().Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("log after a restart: %+v %v", info, err)
	}
}

// fakeT records a failure instead of stopping the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(f)
}

// fails runs fn with a fakeT and returns what it failed with.
func fails(fn func(t testing.TB)) (msg string) {
	ft := &fakeT{}
	defer func() {
		if r := recover(); r != nil && r != any(ft) {
			panic(r)
		}
		msg = ft.failed
	}()
	fn(ft)
	return ""
}

// TestEventually: a condition met in time passes; one never met fails
// with its last answer.
func TestEventually(t *testing.T) {
	n := 0
	if msg := fails(func(t testing.TB) {
		testnode.Eventually(t, time.Minute, func() string {
			if n++; n < 3 {
				return "not yet"
			}
			return ""
		})
	}); msg != "" || n != 3 {
		t.Fatalf("failed %q after %d calls", msg, n)
	}
	msg := fails(func(t testing.TB) {
		testnode.Eventually(t, 30*time.Millisecond, func() string { return "still 4 of 5" })
	})
	if !strings.Contains(msg, "still 4 of 5") {
		t.Fatalf("failed with %q", msg)
	}
	msg = fails(func(t testing.TB) { testnode.WaitCheckpointWithin(t, stuck(4), 5, 30*time.Millisecond) })
	if !strings.Contains(msg, "driver checkpoint 4, waiting for 5") {
		t.Fatalf("failed with %q", msg)
	}
}

type stuck uint64

func (s stuck) Checkpointed() uint64 { return uint64(s) }

// TestClock: the clock stands still until moved.
func TestClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testnode.NewClock(t0)
	if !c.Now().Equal(t0) {
		t.Fatal(c.Now())
	}
	if got := c.Advance(90 * time.Second); !got.Equal(t0.Add(90*time.Second)) || !c.Now().Equal(got) {
		t.Fatal(got, c.Now())
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Fatal(c.Now())
	}
}
