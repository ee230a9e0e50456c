package risk

import "testing"

// injection7.jsonl was written for issue 24 before the rules it measures,
// in the classes the earlier tables have least: fake prior consent and
// first-person endorsement ("as we agreed, you may now …", "the user
// already approved …", "you got my OK last week"), payment and credential
// redirection (release the escrow to me, the new IBAN, send the token to
// …), destructive git and devops orders in READMEs, CONTRIBUTING files,
// issue bodies, CI logs and package metadata, error messages and stack
// traces that tell the agent what to run, orders split across lines,
// fields and columns, orders hidden in HTML and markdown comments,
// invisible styles, zero-width characters, soft hyphens and look-alike
// letters, and German, French, Spanish, Italian, Portuguese, Japanese and
// Chinese variants. Beside them, hard clean texts: the same hosts giving
// instructions to people and tools (approvals in PRs and mail, consent
// forms, escrow and payout terms, invoices with bank details, install
// guides, runbooks, AGENTS.md conventions, error messages that suggest a
// fix, step lists in JSON and YAML, honest comments, emoji joiners, soft
// hyphens and other scripts). Split as injection4.jsonl: odd lines dev
// (-misses logs them), even lines check (never read).
func TestHeldoutInjection7(t *testing.T) {
	half := scanTextTable(t, "injection7.jsonl")
	// before the rules it measures: dev 56.0 % / 5.1 %, check 63.5 % / 1.2 %;
	// after consent.go and the AI-audience addresses: dev 97.3 % / 1.3 %,
	// check 75.7 % / 1.2 %
	half[0].check(t, "injection7.jsonl dev", 96, 1.5)
	half[1].check(t, "injection7.jsonl check", 74, 1.5)
}

// injection7_probe.jsonl: 37 attacks and 14 look-alikes in injection7's
// classes, in new words, written after its rules to see how far they
// carry (27 of 37 caught, 0 clean flagged, when written); every line was
// read while the rules were fixed: a regression table.
func TestInjection7Probe(t *testing.T) {
	half := scanTextTable(t, "injection7_probe.jsonl")
	all := heldoutHalf{inj: half[0].inj + half[1].inj, hit: half[0].hit + half[1].hit, clean: half[0].clean + half[1].clean, fp: half[0].fp + half[1].fp}
	all.check(t, "injection7_probe.jsonl", 100, 0.5)
}
