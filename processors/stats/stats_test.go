package stats

import (
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
)

func TestCounts(t *testing.T) {
	p := New()
	var outputs []uint64
	for i := 1; i <= 250; i++ {
		kind := events.KindMessage
		if i%2 == 0 {
			kind = events.KindAction
		}
		ev := events.Event{V: 1, ID: "e", Kind: kind, Conversation: "c", Time: time.Unix(1_800_000_000, 0)}
		if i == 3 {
			ev.Redactions = []events.Redaction{{Rule: "aws-access-token", Path: "data.args.command"}}
		}
		outs, err := p.Step(events.Record{Seq: uint64(i), Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			outputs = append(outputs, o.Event.Seq)
		}
	}
	if len(outputs) != 3 || outputs[0] != 1 || outputs[1] != 100 || outputs[2] != 200 {
		t.Fatalf("outputs at seqs %v, want [1 100 200]", outputs)
	}
	c, ok := p.Get("c")
	if !ok || c.Events != 250 || c.Actions != 125 || c.ByKind["message"] != 125 || c.Redacted != 1 || c.FirstSeq != 1 || c.LastSeq != 250 {
		t.Fatalf("counts %+v", c)
	}
	if _, ok := p.Get("other"); ok {
		t.Fatal("counts for a conversation never seen")
	}
}

// TestOutputMatchesTheContract: what the processor publishes validates as
// the stats kind (events' data check, the contract schemas/ describes).
func TestOutputMatchesTheContract(t *testing.T) {
	p := New()
	ev := events.Event{V: 1, ID: "e1", Kind: events.KindMessage, Conversation: "c", Time: time.Unix(1_800_000_000, 0)}
	outs, err := p.Step(events.Record{Seq: 1, Event: ev})
	if err != nil || len(outs) != 1 {
		t.Fatalf("outputs %v, %v", outs, err)
	}
	b, err := outs[0].Event.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	d, err := events.DecodeDerived(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("a stats output does not validate: %v", err)
	}
	got, err := events.DerivedDataAs[events.Stats](&d)
	if err != nil || got.Events != 1 || got.ByKind["message"] != 1 || got.Conversation != "c" {
		t.Fatalf("typed view %+v, %v", got, err)
	}
}
