package replay

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/audit"
	"github.com/vigil-dev/vigil/processors/risk"
)

// TestScoringAheadIsIdentical: scoring actions ahead of the fold, in
// parallel, changes no byte of any output, nor the comparison with the
// record, whatever the number of workers (the fixture has configs, a
// conversation-scoped one, what-if and approvals; the synthetic log a
// config change mid-log).
func TestScoringAheadIsIdentical(t *testing.T) {
	fixture := loadFixture(t, "testdata/conversation.jsonl")
	l := newSynthLog(t)
	var synth Records
	for seq := uint64(1); seq <= 3000; seq++ {
		synth = append(synth, l.record(seq, make([]byte, 0, 512)))
	}
	for _, tc := range []struct {
		name  string
		recs  Records
		build func(processors.Options) ([]processors.Processor, error)
	}{
		{"fixture", fixture, builder(t)},
		{"synthetic", synth, builderEvery(t, audit.DefaultInterval)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorded := live(t, tc.recs, tc.build)
			run := func(workers int) ([]byte, *Report) {
				var out bytes.Buffer
				rep, err := Run(t.Context(), Config{Source: tc.recs, Build: tc.build, Recorded: recorded, Workers: workers,
					Sink: func(batch []processors.Applied) error {
						for _, a := range batch {
							for _, o := range a.Outputs {
								b, err := o.Event.Marshal()
								if err != nil {
									return err
								}
								fmt.Fprintf(&out, "%d %s %x\n", a.Record.Seq, o.Subject, b)
							}
						}
						return nil
					}})
				if err != nil {
					t.Fatal(err)
				}
				return out.Bytes(), rep
			}
			seq, seqRep := run(1)
			if seqRep.ScoredAhead != 0 || !seqRep.Identical() {
				t.Fatalf("sequential: %d scored ahead, identical %v", seqRep.ScoredAhead, seqRep.Identical())
			}
			for _, workers := range []int{2, 4} {
				par, parRep := run(workers)
				if !bytes.Equal(par, seq) {
					t.Fatalf("%d workers: outputs differ from the sequential replay's", workers)
				}
				if !parRep.Identical() || parRep.Matched != seqRep.Matched || parRep.Outputs != seqRep.Outputs {
					t.Fatalf("%d workers: report %+v, sequential %+v", workers, parRep, seqRep)
				}
				if parRep.ScoredAhead == 0 {
					t.Fatalf("%d workers: no action scored ahead", workers)
				}
				t.Logf("%d workers: %d of the actions scored ahead, %d outputs identical", workers, parRep.ScoredAhead, parRep.Matched)
			}
		})
	}
}

// wrongAhead hands the fold a wrong assessment for every action, under
// the key it asks for: a scoring-ahead bug the key check cannot see.
type wrongAhead struct{ taken int }

func (w *wrongAhead) Take(risk.MemoKey) (risk.Assessment, bool) {
	w.taken++
	return risk.Assessment{Level: events.RiskLow, Reasons: []events.Reason{{Analyzer: "wrong", Rule: "ahead"}}}, true
}

// TestWrongAheadIsCaught: the comparisons TestScoringAheadIsIdentical
// relies on do fail when an assessment taken ahead is wrong: the replay
// reports the changed outputs, and the bytes differ from the live ones.
func TestWrongAheadIsCaught(t *testing.T) {
	l := newSynthLog(t)
	var recs Records
	for seq := uint64(1); seq <= 400; seq++ {
		recs = append(recs, l.record(seq, nil))
	}
	build := builderEvery(t, audit.DefaultInterval)
	recorded := live(t, recs, build)
	wrong := &wrongAhead{}
	// Workers 1: Run attaches no Ahead of its own; this build attaches the wrong one.
	rep, err := Run(t.Context(), Config{Source: recs, Recorded: recorded, Workers: 1,
		Build: func(o processors.Options) ([]processors.Processor, error) {
			procs, err := build(o)
			for _, p := range procs {
				if rp, ok := p.(*risk.Processor); ok {
					rp.WithAhead(wrong)
				}
			}
			return procs, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if wrong.taken == 0 {
		t.Fatal("the fold took no assessment ahead")
	}
	if rep.Identical() || rep.Changed == 0 {
		t.Fatalf("a wrong assessment ahead went unnoticed: %+v", rep)
	}
}
