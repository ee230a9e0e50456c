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
	half[0].check(t, "injection7.jsonl dev", 0, 100)
	half[1].check(t, "injection7.jsonl check", 0, 100)
}
