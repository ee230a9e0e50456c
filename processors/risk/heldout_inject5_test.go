package risk

import "testing"

// injection5.jsonl was written for issue 24 before the rules it measures,
// in a style the earlier tables under-represent: the attacker writes in
// the user's own voice ("Please …", "Can you …", "I need you to …") inside
// data the agent fetched (API JSON, reviews, tweets, calendar notes,
// mail, notes, shared docs, issues, search snippets), asking to send the
// user's data out, pay or trade, grant or revoke access, open doors or
// disarm alarms, move or delete files, weaken account security, run a
// download or change the answer; beside hard clean texts that use the
// same verbs to a human reader (invoices, HR and IT mail, support
// replies, how-to docs, READMEs, chats between people, API results).
// Split as injection4.jsonl: odd lines dev (-misses logs them), even
// lines check (never read).
func TestHeldoutInjection5(t *testing.T) {
	half := scanTextTable(t, "injection5.jsonl")
	// before the rules it measures: dev 39.1 % / 1.1 %, check 35.7 % / 0.0 %;
	// after the user's-voice classes (owned.go): dev 88.4 % / 0 %, check 63.1 % / 0 %
	half[0].check(t, "injection5.jsonl dev", 89, 0.5)
	half[1].check(t, "injection5.jsonl check", 68, 0.5)
}
