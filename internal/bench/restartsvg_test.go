package bench

import (
	"encoding/xml"
	"strings"
	"testing"
)

// TestRestartSVG: the plot is well-formed XML with a dot per run and a
// line per series once there are two log lengths.
func TestRestartSVG(t *testing.T) {
	rs := []RestartResult{
		{Events: 1_000_000, Runs: []RestartRun{{DecisionSeconds: 4, RSSMB: 200, HWMMB: 230, CPUSeconds: 3, SettledRSSMB: 210, SettledHWMMB: 240}}},
		{Events: 300_000, Runs: []RestartRun{{DecisionSeconds: 2, RSSMB: 150, HWMMB: 160, CPUSeconds: 1}, {DecisionSeconds: 3, RSSMB: 155, HWMMB: 170, CPUSeconds: 1.2}}},
	}
	b := RestartSVG(rs, "restart <test>")
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		_, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("not well-formed: %v\n%s", err, b)
		}
	}
	if n := strings.Count(string(b), "<circle"); n != 3*4+1 {
		t.Fatalf("%d dots, want 13 (3 runs × 4 series, and one settled RSS)", n)
	}
	if n := strings.Count(string(b), "<polyline"); n != 4 {
		t.Fatalf("%d lines, want 4", n)
	}
	if got := niceStep(0.7); got != 1 {
		t.Fatalf("niceStep(0.7) = %v", got)
	}
}
