package risk

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Peer suites: cases taken from other projects' own shell-safety tests, with
// each project's label (shared/corpora/peers, README there). Nobody on this
// project wrote the labels, so they measure the rules against outside
// judgement; docs/risk.md ("Shell, measured") reports these figures and argues
// the disagreements where Vigil is right. The test skips when the files are
// absent.

type peerCase struct {
	ID     string            `json:"id"`
	Source string            `json:"source"`
	Label  string            `json:"label"`
	Test   string            `json:"test"`
	Input  map[string]string `json:"input"`
}

var peerShellFiles = []string{"shell_hermes.jsonl", "shell_continue.jsonl", "shell_gemini.jsonl", "shell_codex.jsonl"}

// peerPositive and peerNegative follow shared/corpora/peers/score.py.
var (
	peerPositive = core.SetOf("dangerous", "catastrophic")
	peerNegative = core.SetOf("safe", "readonly-safe")
)

type levelCount struct{ n, high, med, low int }

func (c *levelCount) add(l events.Risk) {
	c.n++
	switch l {
	case events.RiskHigh:
		c.high++
	case events.RiskMedium:
		c.med++
	default:
		c.low++
	}
}

func TestPeerShellSuites(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	targets := map[string]string{"hermes-agent": "catastrophic", "continue": "catastrophic"}
	for _, name := range peerShellFiles {
		t.Run(name, func(t *testing.T) {
			cases := readJSONL[peerCase](t, filepath.Join("peers", name))
			byLabel := map[string]*levelCount{}
			var pos, neg, legPos, legNeg levelCount
			for _, c := range cases {
				a := s.ScoreCommand(c.Input["command"], Env{})
				lc := byLabel[c.Label]
				if lc == nil {
					lc = &levelCount{}
					byLabel[c.Label] = lc
				}
				lc.add(a.Level)
				if peerPositive[c.Label] {
					pos.add(a.Level)
					legPos.add(legacyLevel(a))
				}
				if peerNegative[c.Label] {
					neg.add(a.Level)
					legNeg.add(legacyLevel(a))
				}
				if *showMisses && (peerPositive[c.Label] && a.Level != events.RiskHigh || peerNegative[c.Label] && a.Level != events.RiskLow) {
					t.Logf("%s %-12s %-6s %q [%s]", c.ID, c.Label, a.Level, core.TrimArg(c.Input["command"]), reasonsBrief(a))
				}
			}
			labels := make([]string, 0, len(byLabel))
			for l := range byLabel {
				labels = append(labels, l)
			}
			sort.Strings(labels)
			var b strings.Builder
			for _, l := range labels {
				c := byLabel[l]
				fmt.Fprintf(&b, "\n  %-20s n=%3d HIGH %3d MEDIUM %3d LOW %3d", l, c.n, c.high, c.med, c.low)
			}
			t.Logf("%s: positives %d: HIGH %.1f%% (%d), HIGH-or-MEDIUM %.1f%% (%d); negatives %d: HIGH %d, HIGH-or-MEDIUM %d%s",
				name, pos.n, pct(pos.high, pos.n), pos.high, pct(pos.high+pos.med, pos.n), pos.high+pos.med, neg.n, neg.high, neg.high+neg.med, b.String())
			t.Logf("%s: fail-closed cost, same run: negatives HIGH %d before, %d after; negatives LOW %d before, %d after; positives HIGH %d before, %d after",
				name, legNeg.high, neg.high, legNeg.low, neg.low, legPos.high, pos.high)
			if len(cases) == 0 {
				return
			}
			if lbl, ok := targets[cases[0].Source]; ok {
				if c := byLabel[lbl]; c != nil && pct(c.high, c.n) < 95 {
					t.Errorf("%s %s at HIGH: %.1f%% (%d/%d), below the 95%% target", cases[0].Source, lbl, pct(c.high, c.n), c.high, c.n)
				}
			}
		})
	}
}
