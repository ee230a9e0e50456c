package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// TestHeldoutShell4: shell4.jsonl was written before the rules it
// measures, from the documented commands of some hundred CLIs: the
// destructive subcommands and options of secret stores, backup tools,
// database, cloud, cluster, registry, DNS/CDN, CI and infrastructure-as-
// code CLIs, HTTP write calls to hosted APIs with credentials, argument
// templates (parallel :::, xargs -I/-J/--replace), git spelled unusually,
// and destructive verbs of CLIs Vigil has no table for; its not-high lines
// are the read-only, dry-run and help look-alikes of the same CLIs,
// temp-directory cleanups, sudo with read-only programs and ordinary builds.
// The table is split mechanically: its odd lines (1st, 3rd …) are the dev
// half, read while writing rules; its even lines are the check half, never
// read, whose figures are the estimate of how the rules generalize.
// shell5.jsonl, split the same way, was written after a first round of
// rules read shell4's dev half and scored once before a second round read
// its own dev half. The floors sit below what each half reached (shell4
// dev 98.8 %, check 95.1 %; shell5 dev 96.4 %, check 90.1 %; no false HIGH
// in either). shell6.jsonl (spellings that hide rm and its kin,
// persistence, exfiltration, vendor CLI packs) was written and scored once
// after that (dev 89.6 %, check 90.9 % HIGH; check false HIGH 1 of 38),
// then its dev half read (dev 100 %, check 92.4 %).
func TestHeldoutShell4(t *testing.T) {
	checkShellHalves(t, []shellHalf{{"shell4.jsonl", "dev", 0, 96, 2}, {"shell4.jsonl", "check", 1, 92, 2}, {"shell5.jsonl", "dev", 0, 93, 2}, {"shell5.jsonl", "check", 1, 86, 2},
		{"shell6.jsonl", "dev", 0, 97, 2}, {"shell6.jsonl", "check", 1, 88, 5}})
}

// shellHalf is one half of a held-out shell table and its floors.
type shellHalf struct {
	file          string
	name          string
	parity        int     // 0: odd lines (dev), 1: even lines (check)
	recall        float64 // HIGH recall floor, percent
	maxFalseHighP float64 // false HIGH ceiling, percent of not-high lines
}

// checkShellHalves scores each half under the default config and fails
// below its floors; -misses logs the dev halves' misses.
func checkShellHalves(t *testing.T, halves []shellHalf) {
	t.Helper()
	s := mustScorer(t, events.DefaultConfig())
	for _, half := range halves {
		lines := readHeldout[heldoutShell](t, half.file)
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
		t.Logf("held-out %s %s half: must-fire HIGH %.1f%% (%d/%d), MEDIUM+ %.1f%% (%d/%d); must-not-fire scored HIGH %.1f%% (%d/%d)",
			half.file, half.name, pct(c.fired, c.fire), c.fired, c.fire, pct(c.medPlus, c.fire), c.medPlus, c.fire, pct(c.falseHigh, c.quiet), c.falseHigh, c.quiet)
		if r := pct(c.fired, c.fire); r < half.recall {
			t.Errorf("%s %s half: HIGH recall %.1f%% is below the %.0f%% floor", half.file, half.name, r, half.recall)
		}
		if f := pct(c.falseHigh, c.quiet); f > half.maxFalseHighP {
			t.Errorf("%s %s half: false HIGH %.1f%% is above the %.0f%% ceiling", half.file, half.name, f, half.maxFalseHighP)
		}
	}
}
