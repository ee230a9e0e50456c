package natsutil

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
)

// TestDerivedWindowBoundsRestart: nats-server rebuilds a stream's
// duplicate table at every start by loading each message stored within
// its duplicate window, before it listens. VIGIL_DERIVED takes about 0.7
// outputs a log record, all of a fold's burst, so its window is never
// longer than VIGIL_LOG's default (1 minute), nor than DedupWindow; and
// never zero (nats-server would take its own default), since it is what
// collapses the outputs a fleet's drivers publish at the same time.
func TestDerivedWindowBoundsRestart(t *testing.T) {
	for _, o := range []StreamOptions{
		{},
		{Replicas: 3},
		{DedupWindow: 24 * time.Hour},
		{DedupWindow: time.Minute},
		{DedupWindow: time.Second, LogStreamWindow: time.Hour},
	} {
		var derived *jetstream.StreamConfig
		cfgs := StreamConfigs(o)
		for i := range cfgs {
			if cfgs[i].Name == events.StreamDerived {
				derived = &cfgs[i]
			}
		}
		if derived == nil {
			t.Fatalf("%+v: no %s", o, events.StreamDerived)
		}
		dedup := o.DedupWindow
		if dedup == 0 {
			dedup = DefaultDedupWindow
		}
		if w := derived.Duplicates; w <= 0 || w > DefaultLogStreamWindow || w > dedup {
			t.Errorf("%+v: %s's duplicate window is %s, want in (0, min(%s, %s)]", o, events.StreamDerived, w, DefaultLogStreamWindow, dedup)
		}
	}
}
