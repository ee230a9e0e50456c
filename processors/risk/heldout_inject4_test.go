package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// injection4.jsonl and mcp_desc2.jsonl were written for issue 24 before the
// rules they measure: attacks addressed to the assistant inside data it
// reads (emails, web pages, reviews, calendar, chat and bank data, API
// JSON, tool output, issue comments; hijacks in plain verbs, authority
// claims, fake role markers and completions, concealment, a few
// languages) beside hard clean texts that order a human about (install
// guides, invoices to pay, tickets, recipes, policy, code comments); and
// poisoned MCP descriptions (covert side effects in the third person,
// hidden blocks, orders to read secrets into a parameter, privilege tags)
// beside clean ones (authenticated API tools with token parameters,
// secret-manager and file tools).
//
// Each table is split mechanically: odd lines (1st, 3rd …) are the dev
// half, the only one whose misses may be read (-misses logs them);
// even lines are the check half, scored and never read. Floors hold
// below what each half reached (recall floor, most clean flagged in %).

// heldoutHalf tallies one half of a table.
type heldoutHalf struct{ inj, hit, clean, fp int }

func (h *heldoutHalf) add(expect string, flagged bool, t *testing.T) {
	t.Helper()
	switch expect {
	case "injection":
		h.inj++
		if flagged {
			h.hit++
		}
	case "clean":
		h.clean++
		if flagged {
			h.fp++
		}
	default:
		t.Fatalf("bad expect %q", expect)
	}
}

func (h heldoutHalf) check(t *testing.T, name string, recall, maxFlagPct float64) {
	t.Helper()
	t.Logf("%s: recall %.1f%% (%d/%d); clean flagged %.1f%% (%d/%d)", name, pct(h.hit, h.inj), h.hit, h.inj, pct(h.fp, h.clean), h.fp, h.clean)
	if pct(h.hit, h.inj) < recall {
		t.Errorf("%s: recall %.1f%% below the %.0f%% floor", name, pct(h.hit, h.inj), recall)
	}
	if pct(h.fp, h.clean) > maxFlagPct {
		t.Errorf("%s: clean flagged %.1f%%, more than %.1f%%", name, pct(h.fp, h.clean), maxFlagPct)
	}
}

// scanTextTable scans every text of a held-out table and tallies its dev
// (odd lines) and check (even lines) halves; -misses logs the dev half's
// misses and false alarms, never the check half's.
func scanTextTable(t *testing.T, file string) [2]heldoutHalf {
	t.Helper()
	var half [2]heldoutHalf
	for i, l := range readHeldout[heldoutText](t, file) {
		r := inject.Scan(l.Text, "")
		flagged := r.Verdict == inject.VerdictInjection
		half[i%2].add(l.Expect, flagged, t)
		if i%2 == 0 && *showMisses && flagged != (l.Expect == "injection") {
			t.Logf("DEV %s (%s): %q %v", l.Expect, r.Verdict, core.TrimArg(l.Text), r.Findings)
		}
	}
	return half
}

// scanToolTable is scanTextTable for a table of MCP tool descriptions.
func scanToolTable(t *testing.T, file string) [2]heldoutHalf {
	t.Helper()
	var half [2]heldoutHalf
	for i, l := range readHeldout[heldoutTool2](t, file) {
		var schema any
		if l.Schema != nil {
			schema = l.Schema
		}
		r := inject.ScanTool("heldout", l.Tool, l.Description, schema)
		flagged := r.Verdict == inject.VerdictInjection
		half[i%2].add(l.Expect, flagged, t)
		if i%2 == 0 && *showMisses && flagged != (l.Expect == "injection") {
			t.Logf("DEV %s (%s): %s: %q %v", l.Expect, r.Verdict, l.Tool, l.Description, r.Findings)
		}
	}
	return half
}

func TestHeldoutInjection4(t *testing.T) {
	half := scanTextTable(t, "injection4.jsonl")
	// before the issue-24 rules: dev 60.4 % / 0.0 %, check 49.5 % / 3.8 %
	half[0].check(t, "injection4.jsonl dev", 93, 1)
	half[1].check(t, "injection4.jsonl check", 74, 3)
}

type heldoutTool2 struct {
	Tool        string         `json:"tool"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
	Expect      string         `json:"expect"`
}

func TestHeldoutMCPDescriptions2(t *testing.T) {
	half := scanToolTable(t, "mcp_desc2.jsonl")
	// before the issue-24 rules: dev 48.4 % / 0.0 %, check 54.8 % / 0.0 %
	half[0].check(t, "mcp_desc2.jsonl dev", 95, 1.5)
	half[1].check(t, "mcp_desc2.jsonl check", 77, 1.5)
}

// mcp_desc3.jsonl was written for issue 24 before the rules it measures,
// in styles mcp_desc2 has few of: long descriptions with the poison in
// the middle of real documentation, poison in parameter descriptions,
// schema defaults and enums, shadowing (one tool's text ordering how
// another tool is used: BCC, recipients, accounts, remotes), rug-pull
// notes to the assistant, orders to read ~/.ssh, ~/.aws, .env, cookies or
// the MCP config into a context or metadata parameter, orders not to
// mention or confirm, fake system and admin blocks, a few languages;
// beside hard clean tools (secret managers, key vaults, password
// managers, OAuth, mail with bcc, file readers, shells, browsers,
// payments, token parameters, honest quiet modes, "do not use this tool
// for" guidance, rate-limit notes).
func TestHeldoutMCPDescriptions3(t *testing.T) {
	half := scanToolTable(t, "mcp_desc3.jsonl")
	// before its rules: dev 64.7 % / 9.2 %, check 68.8 % / 5.1 %;
	// after: dev 100 % / 0 %, check 84.4 % / 5.1 %; after the clean-tool
	// fixes found on mcp_clean_probe.jsonl: check 87.5 % / 4.0 %
	half[0].check(t, "mcp_desc3.jsonl dev", 99, 0.5)
	half[1].check(t, "mcp_desc3.jsonl check", 86, 4.5)
}
