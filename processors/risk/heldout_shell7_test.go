package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

func TestHeldoutShell7(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	for _, half := range []struct {
		name          string
		parity        int
		recall        float64
		maxFalseHighP float64
	}{{"dev", 0, 84, 13}, {"check", 1, 80, 10}} {
		lines := readHeldout[heldoutShell](t, "shell7.jsonl")
		var c heldoutTally
		for i, l := range lines {
			if i%2 != half.parity {
				continue
			}
			a := s.ScoreCommand(l.Command, Env{})
			switch c.add(t, l.Expect, a.Level) {
			case outcomeMiss:
				if *showMisses && half.parity == 0 {
					t.Logf("MISS %s: %q %s", a.Level, l.Command, reasonsBrief(a))
				}
			case outcomeFalseHigh:
				if *showMisses && half.parity == 0 {
					t.Logf("FALSE HIGH: %q %s", l.Command, reasonsBrief(a))
				}
			}
		}
		t.Logf("held-out shell7.jsonl %s half: must-fire HIGH %.1f%% (%d/%d), MEDIUM+ %.1f%% (%d/%d); must-not-fire scored HIGH %.1f%% (%d/%d)",
			half.name, pct(c.fired, c.fire), c.fired, c.fire, pct(c.medPlus, c.fire), c.medPlus, c.fire, pct(c.falseHigh, c.quiet), c.falseHigh, c.quiet)
		if r := pct(c.fired, c.fire); r < half.recall {
			t.Errorf("shell7.jsonl %s half: HIGH recall %.1f%% is below the %.0f%% floor", half.name, r, half.recall)
		}
		if f := pct(c.falseHigh, c.quiet); f > half.maxFalseHighP {
			t.Errorf("shell7.jsonl %s half: false HIGH %.1f%% is above the %.0f%% ceiling", half.name, f, half.maxFalseHighP)
		}
	}
}
