package risk

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// The held-out tables in testdata/heldout were written for this package
// from the documented behaviour of real tools (cloud, cluster, database,
// secret-store, backup, registry and git-hosting CLIs; agent tool outputs
// and web pages), not taken from any corpus: no rule was fitted to a line
// of them. "high" lines must score HIGH, "not-high" lines must not. The
// test reports recall and false HIGH, and fails below the floors.

type heldoutShell struct {
	Command string `json:"command"`
	Expect  string `json:"expect"`
}

func readHeldout[T any](t *testing.T, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "heldout", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	return out
}

// TestHeldoutShell: shell.jsonl's misses were read while writing this
// package's rules (a regression table now); shell2.jsonl was written
// after them and scored once; shell3.jsonl (revocation, removal and
// force verbs of admin CLIs, history rewrites, and their read-only
// look-alikes) was written before the rules it measures.
func TestHeldoutShell(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	for _, tc := range []struct {
		file   string
		recall float64
	}{{"shell.jsonl", 93}, {"shell2.jsonl", 93}, {"shell3.jsonl", 95}} {
		file := tc.file
		var c heldoutTally
		for _, l := range readHeldout[heldoutShell](t, file) {
			a := s.ScoreCommand(l.Command, Env{})
			switch c.add(t, l.Expect, a.Level) {
			case outcomeMiss:
				if *showMisses {
					t.Logf("MISS %s: %q %s", a.Level, l.Command, reasonsBrief(a))
				}
			case outcomeFalseHigh:
				t.Errorf("%s: false HIGH on %q: %s", file, l.Command, reasonsBrief(a))
			}
		}
		fire, fired := c.fire, c.fired
		t.Logf("held-out %s: must-fire HIGH %.1f%% (%d/%d), MEDIUM+ %.1f%% (%d/%d); must-not-fire scored HIGH %.1f%% (%d/%d)",
			file, pct(fired, fire), fired, fire, pct(c.medPlus, fire), c.medPlus, fire, pct(c.falseHigh, c.quiet), c.falseHigh, c.quiet)
		if pct(fired, fire) < tc.recall {
			t.Errorf("%s: held-out HIGH recall %.1f%% is below the %.0f%% floor", file, pct(fired, fire), tc.recall)
		}
	}
}

type heldoutText struct {
	Text   string `json:"text"`
	Expect string `json:"expect"`
}

// TestHeldoutInjection: injection3.jsonl (orders in plain verbs, half of
// it clean docs in the imperative) was written before the reader-address
// form and the safeguard objects. injection.jsonl is the first fresh table (its
// misses were read while writing the directive rule, so it is a
// regression table now); injection2.jsonl was written after the rule and
// scored once, the held-out figure.
func TestHeldoutInjection(t *testing.T) {
	for _, tc := range []struct {
		file          string
		recall        float64
		maxCleanFlags int
	}{{"injection.jsonl", 95, 1}, {"injection2.jsonl", 70, 1}, {"injection3.jsonl", 75, 1}} {
		var inj, hit, clean, fp int
		for _, l := range readHeldout[heldoutText](t, tc.file) {
			r := inject.Scan(l.Text, "")
			switch l.Expect {
			case "injection":
				inj++
				if r.Verdict == inject.VerdictInjection {
					hit++
				} else if *showMisses {
					t.Logf("MISS %s: %q %v", r.Verdict, core.TrimArg(l.Text), r.Findings)
				}
			case "clean":
				clean++
				if r.Verdict == inject.VerdictInjection {
					fp++
					t.Logf("clean flagged: %q %v", core.TrimArg(l.Text), r.Findings)
				}
			default:
				t.Fatalf("bad expect %q", l.Expect)
			}
		}
		t.Logf("held-out %s: recall %.1f%% (%d/%d); clean flagged %.1f%% (%d/%d)", tc.file, pct(hit, inj), hit, inj, pct(fp, clean), fp, clean)
		if pct(hit, inj) < tc.recall {
			t.Errorf("%s: recall %.1f%% below the %.0f%% floor", tc.file, pct(hit, inj), tc.recall)
		}
		if fp > tc.maxCleanFlags {
			t.Errorf("%s: %d clean texts flagged, more than %d", tc.file, fp, tc.maxCleanFlags)
		}
	}
}

type heldoutTool struct {
	Tool        string `json:"tool"`
	Description string `json:"description"`
	Expect      string `json:"expect"`
}

// TestHeldoutMCPDescriptions: mcp_desc.jsonl was written before the
// disparagement rule was narrowed to descriptions that steer the model's
// calls (never use the other tool, route everything here). Its clean half
// speaks ill of other tools the way real descriptions do (slow, broken
// on CRLF, insecure legacy tool) and steers nothing.
func TestHeldoutMCPDescriptions(t *testing.T) {
	var inj, hit, clean, fp int
	for _, l := range readHeldout[heldoutTool](t, "mcp_desc.jsonl") {
		r := inject.ScanTool("heldout", l.Tool, l.Description, nil)
		switch l.Expect {
		case "injection":
			inj++
			if r.Verdict == inject.VerdictInjection {
				hit++
			} else if *showMisses {
				t.Logf("MISS %s: %s: %q %v", r.Verdict, l.Tool, l.Description, r.Findings)
			}
		case "clean":
			clean++
			if r.Verdict == inject.VerdictInjection {
				fp++
				t.Logf("clean flagged: %s: %q %v", l.Tool, l.Description, r.Findings)
			}
		default:
			t.Fatalf("bad expect %q", l.Expect)
		}
	}
	t.Logf("held-out mcp_desc.jsonl: recall %.1f%% (%d/%d); clean flagged %.1f%% (%d/%d)", pct(hit, inj), hit, inj, pct(fp, clean), fp, clean)
	if pct(hit, inj) < 90 || fp > 1 {
		t.Errorf("mcp_desc.jsonl: recall %.1f%%, %d clean flagged", pct(hit, inj), fp)
	}
}

type heldoutCall struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Expect string         `json:"expect"`
}

// TestHeldoutMCPCalls: mcp_calls.jsonl holds MCP tool calls, named
// mcp:server/tool with their argument JSON (commands as strings and as
// argv lists, SQL, paths, file contents, code, URLs): destructive ones and
// their benign look-alikes, written for this package and scored as they
// were written.
func TestHeldoutMCPCalls(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	var c heldoutTally
	for _, l := range readHeldout[heldoutCall](t, "mcp_calls.jsonl") {
		ev := &events.Event{Kind: events.KindAction, Data: map[string]any{"tool": l.Tool, "args": l.Args}}
		a := s.ScoreAction(ev, Env{})
		switch c.add(t, l.Expect, a.Level) {
		case outcomeMiss:
			if *showMisses {
				t.Logf("MISS %s: %s %v %s", a.Level, l.Tool, l.Args, reasonsBrief(a))
			}
		case outcomeFalseHigh:
			t.Logf("false HIGH: %s %v %s", l.Tool, l.Args, reasonsBrief(a))
		}
	}
	t.Logf("held-out mcp_calls.jsonl: must-fire HIGH %.1f%% (%d/%d); must-not-fire scored HIGH %.1f%% (%d/%d)",
		pct(c.fired, c.fire), c.fired, c.fire, pct(c.falseHigh, c.quiet), c.falseHigh, c.quiet)
	if pct(c.fired, c.fire) < 90 || c.falseHigh > 1 {
		t.Errorf("mcp_calls.jsonl: HIGH %.1f%%, %d false HIGH", pct(c.fired, c.fire), c.falseHigh)
	}
}

// heldoutTally counts a held-out table of must-fire ("high") and
// must-not-fire ("not-high") lines as they score.
type heldoutTally struct{ fire, fired, medPlus, quiet, falseHigh int }

type heldoutOutcome int

const (
	outcomeAsExpected heldoutOutcome = iota
	outcomeMiss                      // a must-fire line not scored HIGH
	outcomeFalseHigh                 // a must-not-fire line scored HIGH
)

// add counts one line expected as expect that scored level.
func (c *heldoutTally) add(t *testing.T, expect string, level events.Risk) heldoutOutcome {
	t.Helper()
	switch expect {
	case "high":
		c.fire++
		if level == events.RiskHigh || level == events.RiskMedium {
			c.medPlus++
		}
		if level != events.RiskHigh {
			return outcomeMiss
		}
		c.fired++
	case "not-high":
		c.quiet++
		if level == events.RiskHigh {
			c.falseHigh++
			return outcomeFalseHigh
		}
	default:
		t.Fatalf("bad expect %q", expect)
	}
	return outcomeAsExpected
}
