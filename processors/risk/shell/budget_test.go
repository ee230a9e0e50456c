package shell

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
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
	an := New()
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
			w := newWalker(core.Env{})
			w.run(tc.cmd)
			if w.expanded > maxExpanded+len(tc.cmd) {
				t.Fatalf("expanded %d bytes, budget %d", w.expanded, maxExpanded)
			}
			// the scorer's level is the highest finding's
			finds, _ := an.Command(tc.cmd, core.Env{})
			got, level := false, events.RiskUnknown
			for _, f := range finds {
				got = got || f.Analyzer == core.AnalyzerParser && f.ID() == "analysis-budget"
				level = events.Max(level, f.Level)
			}
			if got != tc.stopped {
				t.Fatalf("analysis-budget reason %v, want %v: %+v", got, tc.stopped, finds)
			}
			if tc.stopped && level.Rank() < events.RiskMedium.Rank() {
				t.Fatalf("level %s after the budget ran out", level)
			}
		})
	}
}
