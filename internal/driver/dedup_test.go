package driver

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
)

// derivedWindow is VIGIL_DERIVED's duplicate window in these tests: far
// shorter than any outage they simulate.
const derivedWindow = 200 * time.Millisecond

func shortDerivedWindow(cfgs []jetstream.StreamConfig) {
	for i := range cfgs {
		if cfgs[i].Name == events.StreamDerived {
			cfgs[i].Duplicates = derivedWindow
		}
	}
}

// idCounts counts VIGIL_DERIVED's messages per id.
func (e *env) idCounts(t *testing.T) map[string]int {
	t.Helper()
	n := map[string]int{}
	err := natsutil.ReadStream(t.Context(), e.js, natsutil.ReadOptions{Stream: events.StreamDerived}, func(r natsutil.RawRecord) error {
		d, err := events.DecodeDerived(r.Data)
		if err != nil {
			return err
		}
		n[d.ID]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkOnce fails unless every output of rec for log seqs 1..last is
// stored exactly once, and nothing else of rec is.
func checkOnce(t *testing.T, counts map[string]int, last uint64) {
	t.Helper()
	for s := uint64(1); s <= last; s++ {
		id := processors.OutputID("rec", s, 0)
		if counts[id] != 1 {
			t.Errorf("%s stored %d times, want once", id, counts[id])
		}
	}
	for id, c := range counts {
		if c != 1 {
			t.Errorf("%s stored %d times", id, c)
		}
	}
}

// TestDriverOutageLongerThanDerivedWindow: of two drivers (two nodes), one
// stops while the other folds on, and comes back after VIGIL_DERIVED has
// forgotten the ids stored meanwhile; it folds them without publishing
// them again, and then publishes alongside the other as before.
func TestDriverOutageLongerThanDerivedWindow(t *testing.T) {
	e := startEnv(t, envOptions{streams: shortDerivedWindow})
	a := e.run(t, Config{Processor: &recorder{}, Durable: "vigil-a", MaxBatch: 7})
	b := e.run(t, Config{Processor: &recorder{}, Durable: "vigil-b", MaxBatch: 7})
	var last uint64
	for i := range 20 {
		last = e.append(t, fmt.Sprintf("before-%d", i))
	}
	a.waitFolded(t, last)
	b.waitFolded(t, last)
	b.halt(t)
	for i := range 40 {
		last = e.append(t, fmt.Sprintf("during-%d", i))
	}
	a.waitFolded(t, last)
	time.Sleep(3 * derivedWindow) // the outage outlasts the duplicate window
	rb := &recorder{}
	b = e.run(t, Config{Processor: rb, Durable: "vigil-b", MaxBatch: 7})
	b.waitFolded(t, last)
	for i := range 10 {
		last = e.append(t, fmt.Sprintf("after-%d", i))
	}
	a.waitFolded(t, last)
	b.waitFolded(t, last)
	checkOnce(t, e.idCounts(t), last)
	if got := rb.folded(); len(got) == 0 || got[len(got)-1] != last {
		t.Fatalf("returning driver folded %v, want up to %d", got, last)
	}
}

// TestDriverDerivedFrontierByID: VIGIL_DERIVED holds outputs up to log
// seq 8 but not those of 6 and 7 (a node died mid-batch, or published out
// of order): a driver starting from scratch publishes exactly the missing
// ones, long after the others' duplicate window.
func TestDriverDerivedFrontierByID(t *testing.T) {
	e := startEnv(t, envOptions{streams: shortDerivedWindow})
	var last uint64
	for i := range 12 {
		last = e.append(t, fmt.Sprintf("r-%d", i))
	}
	rec := &recorder{}
	logSt, err := e.js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	for s := uint64(1); s <= 8; s++ {
		if s == 6 || s == 7 {
			continue
		}
		m, err := logSt.GetMsg(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		_, outs := processors.Feed(rec, s, m.Subject, m.Data)
		msg, err := outputMsg(&outs[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.js.PublishMsg(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * derivedWindow)
	r := e.run(t, Config{Processor: &recorder{}, Durable: "vigil-x", MaxBatch: 5})
	r.waitFolded(t, last)
	checkOnce(t, e.idCounts(t), last)
}

func TestStoredAlready(t *testing.T) {
	d := &Driver{derived: derivedState{read: true, upTo: 2000, below: 976, ids: map[string]struct{}{
		"rec:1500": {}, "rec:2000:1": {}, "driver:refused:rec:1600": {},
	}}}
	for _, tc := range []struct {
		id   string
		seq  uint64
		want bool
	}{
		{"rec:10", 10, true},       // far below the frontier: stored
		{"rec:975", 975, true},     // just below the checked range
		{"rec:976", 976, false},    // checked by id: absent
		{"rec:1500", 1500, true},   // checked by id: present
		{"rec:1600", 1600, true},   // refused, its alert is stored
		{"rec:2000", 2000, false},  // the frontier's first output is missing
		{"rec:2000:1", 2000, true}, // the frontier's second is there
		{"rec:2001", 2001, false},  // past the frontier
		{"dlq:0", 0, false},        // derived from no log record
	} {
		o := processors.Output{Event: events.Derived{ID: tc.id, Seq: tc.seq}}
		if got := d.storedAlready(&o); got != tc.want {
			t.Errorf("storedAlready(%s) = %v, want %v", tc.id, got, tc.want)
		}
	}
	d.derived.read = false
	if o := (processors.Output{Event: events.Derived{ID: "rec:10", Seq: 10}}); d.storedAlready(&o) {
		t.Error("a stale read must not skip anything")
	}
}

// ackLost stores what it is given, but the first lose calls to PublishAll
// never hear back: they return, as a publish whose ack is lost does, only
// after their deadline or slow, well past VIGIL_DERIVED's duplicate window.
type ackLost struct {
	outputPublisher
	lose, lost atomic.Int32
}

func (a *ackLost) PublishAll(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	acks, err := a.outputPublisher.PublishAll(ctx, msgs)
	if err != nil || a.lose.Add(-1) < 0 {
		return acks, err
	}
	a.lost.Add(1)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(3 * derivedWindow):
		return nil, nats.ErrTimeout
	}
}

// TestDriverAckLostPastWindow: the stream stores a batch but its ack never
// comes (a leader dies after committing it), and the answer takes longer
// than VIGIL_DERIVED's duplicate window: the driver reads what the stream
// holds before publishing again, and nothing is stored twice.
func TestDriverAckLostPastWindow(t *testing.T) {
	e := startEnv(t, envOptions{streams: shortDerivedWindow})
	lost := &ackLost{}
	lost.lose.Store(3)
	r := e.runWith(t, Config{Processor: &recorder{}, Durable: "vigil-a", MaxBatch: 4}, func(p outputPublisher) outputPublisher {
		lost.outputPublisher = p
		return lost
	})
	var last uint64
	for i := range 12 {
		last = e.append(t, fmt.Sprintf("lost-%d", i))
	}
	r.waitFolded(t, last)
	if lost.lost.Load() == 0 {
		t.Fatal("the test lost no ack")
	}
	checkOnce(t, e.idCounts(t), last)
}

// TestDriversStoreOnceOnDefaultStreams: two drivers (two nodes of a fleet)
// fold the same log at the same time on the streams as Vigil defines them,
// so VIGIL_DERIVED's duplicate window is natsutil.DerivedDedupWindow: each
// output is stored once, whichever driver publishes it first.
func TestDriversStoreOnceOnDefaultStreams(t *testing.T) {
	e := startEnv(t, envOptions{})
	ds, err := e.js.Stream(t.Context(), events.StreamDerived)
	if err != nil {
		t.Fatal(err)
	}
	if w := ds.CachedInfo().Config.Duplicates; w != natsutil.DerivedDedupWindow {
		t.Fatalf("VIGIL_DERIVED's duplicate window is %s, want %s", w, natsutil.DerivedDedupWindow)
	}
	ra, rb := &recorder{}, &recorder{}
	a := e.run(t, Config{Processor: ra, Durable: "vigil-a", MaxBatch: 7})
	b := e.run(t, Config{Processor: rb, Durable: "vigil-b", MaxBatch: 5})
	var last uint64
	for i := range 60 {
		last = e.append(t, fmt.Sprintf("fleet-%d", i))
	}
	a.waitFolded(t, last)
	b.waitFolded(t, last)
	checkOnce(t, e.idCounts(t), last)
	for name, r := range map[string]*recorder{"a": ra, "b": rb} {
		if got := r.folded(); len(got) == 0 || got[len(got)-1] != last {
			t.Fatalf("driver %s folded %v, want up to %d", name, got, last)
		}
	}
}
