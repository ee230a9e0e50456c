package replay

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// TestUnpublishedIsNoDifference: on a live log, the outputs of records
// after what is known stored (the drivers' checkpoint, or the derived
// stream's frontier) may simply not be published yet. Replayed up to
// there (--to past the checkpoint), an output the record lacks is
// counted as not published, never as missing; up to the bound, one the
// record lacks is missing.
func TestUnpublishedIsNoDifference(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	build := builder(t)
	all := live(t, recs, build)
	const stored = 8 // outputs of records 1..stored are in the record
	var prefix recordedSlice
	later := uint64(0)
	for _, o := range all {
		if o.Seq <= stored {
			prefix = append(prefix, o)
		} else {
			later++
		}
	}
	if later == 0 || len(prefix) == 0 {
		t.Fatalf("fixture: %d outputs up to %d, %d after", len(prefix), stored, later)
	}
	pub := func(n uint64) *uint64 { return &n }
	for _, tc := range []struct {
		name           string
		published      *uint64
		recorded       recordedSlice
		identical      bool
		missing, unpub uint64
	}{
		{"bound at what is stored", pub(stored), prefix, true, 0, later},
		{"no bound: absent is missing", nil, prefix, false, later, 0},
		{"an output up to the bound dropped", pub(stored), prefix[:len(prefix)-1], false, 1, later},
		{"everything stored", pub(uint64(len(recs))), all, true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := &Frontier{Seq: uint64(len(recs)), By: FrontierTo, Published: tc.published, PublishedBy: FrontierCheckpoint}
			rep, err := Run(t.Context(), Config{Source: recs, Build: build, Recorded: tc.recorded, Frontier: fr})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Identical() != tc.identical || rep.Missing != tc.missing || rep.Unpublished != tc.unpub {
				t.Fatalf("identical %v, missing %d, unpublished %d; want %v, %d, %d (%+v)", rep.Identical(), rep.Missing, rep.Unpublished,
					tc.identical, tc.missing, tc.unpub, rep.Differences)
			}
		})
	}
}

// TestLiveFrontier: on a node, the frontier is the driver's checkpoint;
// --to past it keeps the checkpoint as what is known stored; with no
// driver's consumer left it is the derived stream's frontier; a replay
// up to each is identical.
func TestLiveFrontier(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS")
	}
	dir := t.TempDir()
	build := builder(t)
	n := startNode(t, dir, build)
	last := appendVaried(t, n, 0, 80)
	n.waitCheckpoint(t, last)
	js := n.srv.JetStream()
	replayTo := func(fr *Frontier) *Report {
		t.Helper()
		rep, err := Run(t.Context(), Config{Source: Stream{JS: js}, Build: build, Recorded: DerivedStream{JS: js}, To: fr.Seq, Frontier: fr})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Identical() || rep.Matched == 0 {
			t.Fatalf("frontier %+v: not identical: %+v%s", fr, rep, diffs(rep))
		}
		return rep
	}

	fr, err := LiveFrontier(t.Context(), js, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fr.By != FrontierCheckpoint || fr.Seq != last || fr.Published == nil || *fr.Published != last || fr.LogEnd != last || fr.Detail != "durable vigil-local" {
		t.Fatalf("checkpoint frontier %+v, want %d", fr, last)
	}
	replayTo(fr)

	fr, err = LiveFrontier(t.Context(), js, last+10)
	if err != nil {
		t.Fatal(err)
	}
	if fr.By != FrontierTo || fr.Seq != last+10 || fr.Published == nil || *fr.Published != last || fr.PublishedBy != FrontierCheckpoint || fr.Detail == "" {
		t.Fatalf("--to frontier %+v", fr)
	}
	replayTo(fr)

	// No driver's consumer: the node runs without processors and the
	// consumer is gone.
	n.stop()
	n = startNode(t, dir, nil)
	js = n.srv.JetStream()
	st, err := js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteConsumer(t.Context(), "vigil-local"); err != nil {
		t.Fatal(err)
	}
	fr, err = LiveFrontier(t.Context(), js, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fr.By != FrontierDerived || fr.Seq == 0 || fr.Seq > last || fr.Published == nil || *fr.Published != fr.Seq || fr.PublishedBy != FrontierDerived {
		t.Fatalf("derived frontier %+v (log end %d)", fr, last)
	}
	replayTo(fr)
}
