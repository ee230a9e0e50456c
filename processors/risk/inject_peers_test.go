package risk

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// Peer injection suites: cases taken from other projects' own scanner tests
// (shared/corpora/peers/injection_*.jsonl, README there), with each
// project's label. docs/risk.md ("Injection, measured") reports these
// figures and argues the cases where Vigil and the peer disagree. The test
// skips when the files are absent; it fails below the targets
// (injection recall ≥ 85 %, clean flagged ≤ 5 %) on the Hermes suites.

type injPeerCase struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Scope  string `json:"scope"`
	Label  string `json:"label"`
	Test   string `json:"test"`
	Input  struct {
		Text string `json:"text"`
		Path string `json:"path"`
	} `json:"input"`
}

type injTally struct{ pos, hit, neg, flagged, sus, susFlagged, susSeen int }

func TestPeerInjectionSuites(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(*corpusDir, "peers", "injection_*.jsonl"))
	if len(files) == 0 {
		t.Skip("no peer injection suites")
	}
	groups := map[string]*injTally{}
	var order []string
	tally := func(name string) *injTally {
		if groups[name] == nil {
			groups[name] = &injTally{}
			order = append(order, name)
		}
		return groups[name]
	}
	for _, f := range files {
		cases := readJSONL[injPeerCase](t, filepath.Join("peers", filepath.Base(f)))
		for _, c := range cases {
			r := inject.Scan(c.Input.Text, c.Input.Path)
			names := []string{c.Source}
			if c.Scope != "" {
				names = append(names, c.Source+": "+c.Scope)
			}
			for _, name := range names {
				g := tally(name)
				switch c.Label {
				case "injection":
					g.pos++
					if r.Verdict == inject.VerdictInjection {
						g.hit++
					} else if *showMisses && name == c.Source {
						t.Logf("MISS %s: %q → %s %v", c.Source, core.TrimArg(c.Input.Text), r.Verdict, r.Findings)
					}
				case "clean":
					g.neg++
					if r.Verdict == inject.VerdictInjection {
						g.flagged++
						if *showMisses && name == c.Source {
							t.Logf("FP %s: %q → %v", c.Source, core.TrimArg(c.Input.Text), r.Findings)
						}
					}
				case "suspicious":
					g.sus++
					if r.Verdict == inject.VerdictInjection {
						g.susFlagged++
					}
					if r.Verdict != inject.VerdictClean {
						g.susSeen++
					}
				}
			}
		}
	}
	sort.Strings(order)
	var b strings.Builder
	fmt.Fprintf(&b, "| suite | injections | recall | clean | flagged | peer 'suspicious' flagged / seen |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, name := range order {
		g := groups[name]
		fmt.Fprintf(&b, "| %s | %d | %.1f %% (%d/%d) | %d | %.1f %% (%d/%d) | %d / %d of %d |\n", name, g.pos, pct(g.hit, g.pos), g.hit, g.pos,
			g.neg, pct(g.flagged, g.neg), g.flagged, g.neg, g.susFlagged, g.susSeen, g.sus)
	}
	t.Log("\n" + b.String())
	if g := groups["hermes-agent"]; g != nil {
		if r := pct(g.hit, g.pos); r < 85 {
			t.Errorf("hermes-agent injection recall %.1f %% is below the 85 %% target", r)
		}
		if f := pct(g.flagged, g.neg); f > 5 {
			t.Errorf("hermes-agent: %.1f %% of clean cases flagged, above the 5 %% target", f)
		}
	}
}

// TestScanDocsFile measures the verdicts on a JSONL file of real documents
// ({"text", "path"} per line) named by VIGIL_SCAN_DOCS: READMEs and
// contributor guides that hold no injection, to find false positives on
// text nobody wrote for a test. Skipped when the variable is unset.
func TestScanDocsFile(t *testing.T) {
	path := os.Getenv("VIGIL_SCAN_DOCS")
	if path == "" {
		t.Skip("VIGIL_SCAN_DOCS not set")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	counts := map[string]int{}
	for sc.Scan() {
		var d struct{ Text, Path string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		r := inject.Scan(d.Text, d.Path)
		counts[r.Verdict]++
		if r.Verdict == inject.VerdictInjection && *showMisses {
			for _, fd := range r.Findings {
				a, e := max(0, fd.Span[0]-30), min(len(d.Text), fd.Span[1]+30)
				t.Logf("%s %s strong=%v: %q", d.Path, fd.Rule, fd.Strong, d.Text[a:e])
			}
		}
	}
	n := counts[inject.VerdictClean] + counts[inject.VerdictSuspicious] + counts[inject.VerdictInjection]
	t.Logf("%d documents: %d clean, %d suspicious, %d injection (%.1f %%)", n, counts[inject.VerdictClean], counts[inject.VerdictSuspicious],
		counts[inject.VerdictInjection], pct(counts[inject.VerdictInjection], n))
}
