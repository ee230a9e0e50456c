package risk

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// The corpora live outside the repository (../../../shared/corpora from this
// package); tests skip when they are absent.
var (
	corpusDir  = flag.String("corpus", "../../../shared/corpora", "directory holding the labeled corpora")
	showMisses = flag.Bool("misses", false, "log every misclassified corpus line")
)

type shellLine struct {
	Command string `json:"command"`
	Expect  string `json:"expect"`
	Source  string `json:"source"`
}

func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join(*corpusDir, name))
	if err != nil {
		t.Skipf("corpus %s not available: %v", name, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	return out
}

type shellStats struct {
	high, highHit, low, lowHigh, medium, mediumHigh, mediumLow int
	hermesHighHit, hermesLowFlag                               int
	// the same figures without the fail-closed rules (legacyLevel), and
	// benign lines left LOW now and then
	legacyHighHit, legacyLowHigh, lowLow, legacyLowLow int
}

// failClosedRules are the rules that fail closed: without them (and with
// the could-not-judge rules back at MEDIUM) the level is what the analyzer
// gave before it failed closed. Rules of programs found only by the new
// unwrapping still count in the legacy figure, so it is a lower bound of
// the change.
var (
	failClosedNew    = core.SetOf("not-known-safe", "code-not-known-safe", "glob-command", "env-command", "template-exec", "git-exec-config", "computed-call", "browser-exfiltration", "redaction-hid-content")
	failClosedRaised = core.SetOf("unparsable", "unparsable-nested", "analysis-budget", "input-too-large", "unresolved-command")
)

// legacyLevel is a's level as scored before failing closed.
func legacyLevel(a Assessment) events.Risk {
	lvl := events.RiskLow
	for _, r := range a.Reasons {
		if failClosedNew[r.Rule] || r.Level == "" {
			continue
		}
		l := r.Level
		if failClosedRaised[r.Rule] && l == events.RiskHigh {
			l = events.RiskMedium
		}
		lvl = events.Max(lvl, l)
	}
	if a.Level == events.RiskUnknown {
		return a.Level
	}
	return lvl
}

func scoreShellCorpus(t *testing.T, name string) shellStats {
	lines := readJSONL[shellLine](t, name)
	s, err := NewScorer(events.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var st shellStats
	for _, l := range lines {
		a := s.ScoreCommand(l.Command, Env{})
		legacy := legacyLevel(a)
		h := hermesMatch(l.Command) != ""
		switch l.Expect {
		case "high":
			st.high++
			if legacy == events.RiskHigh {
				st.legacyHighHit++
			}
			if a.Level == events.RiskHigh {
				st.highHit++
			} else if *showMisses {
				t.Logf("MISS high->%s: %s", a.Level, l.Command)
			}
			if h {
				st.hermesHighHit++
			}
		case "low":
			st.low++
			if legacy == events.RiskHigh {
				st.legacyLowHigh++
			}
			if legacy == events.RiskLow {
				st.legacyLowLow++
			}
			if a.Level == events.RiskLow {
				st.lowLow++
			}
			if a.Level == events.RiskHigh {
				st.lowHigh++
				if *showMisses {
					t.Logf("FP low->HIGH: %s  [%s]", l.Command, reasonsBrief(a))
				}
			}
			if h {
				st.hermesLowFlag++
			}
		case "medium":
			st.medium++
			if a.Level == events.RiskHigh {
				st.mediumHigh++
				if *showMisses {
					t.Logf("medium->HIGH: %s  [%s]", l.Command, reasonsBrief(a))
				}
			}
			if a.Level == events.RiskLow {
				st.mediumLow++
				if *showMisses {
					t.Logf("medium->LOW: %s", l.Command)
				}
			}
		}
	}
	return st
}

func reasonsBrief(a Assessment) string {
	var parts []string
	for _, r := range a.Reasons {
		if r.Level == a.Level {
			parts = append(parts, r.Rule+": "+r.Detail)
		}
	}
	return strings.Join(parts, "; ")
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

func TestShellCorpus(t *testing.T) {
	for _, name := range []string{"shell.jsonl", "shell_gtfobins.jsonl"} {
		t.Run(name, func(t *testing.T) {
			st := scoreShellCorpus(t, name)
			recall := pct(st.highHit, st.high)
			fp := pct(st.lowHigh, st.low)
			t.Logf("%s: HIGH recall %.1f%% (%d/%d); benign scored HIGH %.1f%% (%d/%d); medium scored HIGH %d/%d, LOW %d/%d",
				name, recall, st.highHit, st.high, fp, st.lowHigh, st.low, st.mediumHigh, st.medium, st.mediumLow, st.medium)
			t.Logf("%s: fail-closed cost, same run: benign scored HIGH %d/%d before, %d/%d after; benign left LOW %d/%d before, %d/%d after; HIGH recall %d/%d before, %d/%d after",
				name, st.legacyLowHigh, st.low, st.lowHigh, st.low, st.legacyLowLow, st.low, st.lowLow, st.low, st.legacyHighHit, st.high, st.highHit, st.high)
			t.Logf("%s: Hermes table baseline: flags %.1f%% of HIGH (%d/%d) and %.1f%% of benign (%d/%d)",
				name, pct(st.hermesHighHit, st.high), st.hermesHighHit, st.high, pct(st.hermesLowFlag, st.low), st.hermesLowFlag, st.low)
			if recall < 95 {
				t.Errorf("HIGH recall %.1f%% is below the 95%% target", recall)
			}
			if st.low > 0 && fp > 3 {
				t.Errorf("%.1f%% of benign lines scored HIGH, above the 3%% target", fp)
			}
		})
	}
}

type injLine struct {
	Text   string `json:"text"`
	Expect string `json:"expect"`
	Source string `json:"source"`
}

func TestInjectionCorpus(t *testing.T) {
	lines := readJSONL[injLine](t, "injection.jsonl")
	var inj, hit, clean, fp int
	for _, l := range lines {
		r := inject.Scan(l.Text, "")
		if l.Expect == "injection" {
			inj++
			if r.Verdict == inject.VerdictInjection {
				hit++
			} else if *showMisses {
				t.Logf("MISS: %q %v", core.TrimArg(l.Text), r.Findings)
			}
		} else {
			clean++
			if r.Verdict == inject.VerdictInjection {
				fp++
				if *showMisses {
					t.Logf("FP: %q %v", l.Text, r.Findings)
				}
			}
		}
	}
	recall, fpr := pct(hit, inj), pct(fp, clean)
	t.Logf("injection.jsonl: recall %.1f%% (%d/%d); clean flagged %.1f%% (%d/%d)", recall, hit, inj, fpr, fp, clean)
	if recall < 90 {
		t.Errorf("injection recall %.1f%% is below the 90%% target", recall)
	}
	if fpr > 5 {
		t.Errorf("%.1f%% of clean files flagged, above the 5%% target", fpr)
	}
}
