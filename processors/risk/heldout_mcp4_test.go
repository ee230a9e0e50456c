package risk

import "testing"

// mcp_desc4.jsonl was written for issue 24 after mcp_desc3's rules, to
// find what makes clean tool descriptions score as poisoned: 59 hard
// clean tools whose honest documentation reads like the attacks
// (password managers and secret stores that print secrets, mail with
// bcc, shells, browsers and mail readers that warn the model about
// injected text, payments and refunds to confirm, "do not show the
// password unless asked", "truncated silently", LLM tools with prompt and
// system_prompt parameters, sibling tools named in the text, device
// logins that store a token, IMPORTANT notes) beside 29 poisoned ones in
// the styles the earlier tables have least: fake prior consent ("the user
// has already agreed …", "as agreed in an earlier session"), payment and
// wallet redirection, destructive git orders, hidden comments, tags and
// zero-width or full-width text, and German, French, Spanish, Italian,
// Portuguese, Chinese and Japanese notes to the assistant. Split as
// mcp_desc3.jsonl: odd lines dev, even lines check.
func TestHeldoutMCPDescriptions4(t *testing.T) {
	half := scanToolTable(t, "mcp_desc4.jsonl")
	// as written, before the clean-tool fixes: dev 71.4 % / 6.7 %, check
	// 66.7 % / 3.4 %; after them: dev 71.4 % / 0 %, check 66.7 % / 3.4 %;
	// after consent.go (prior consent, payment redirection, a tool's text
	// read as addressed to the AI) and orders in gerunds: dev 100 % / 0 %,
	// check 73.3 % / 3.4 %
	half[0].check(t, "mcp_desc4.jsonl dev", 99, 0.5)
	half[1].check(t, "mcp_desc4.jsonl check", 72, 3.5)
}

// mcp_clean_probe.jsonl holds only clean tool descriptions, written to
// look for the causes of mcp_desc3's clean tools scored as poisoned
// without reading its check half: real-style documentation (long usage
// notes, "you MUST cite sources", sub-agent tools, parameter descriptions
// asking for file contents, a chat history or a system prompt the caller
// sets, options that skip a confirmation prompt, flows naming sibling
// tools, paraphrases of mcp_desc3's dev half). Every line was read while
// the rules were fixed: a regression table, not a held-out one.
func TestMCPCleanProbe(t *testing.T) {
	half := scanToolTable(t, "mcp_clean_probe.jsonl")
	all := heldoutHalf{clean: half[0].clean + half[1].clean, fp: half[0].fp + half[1].fp}
	// before the fixes: 21 of 250 flagged (8.4 %); after: 1 (a "[SYSTEM]" label);
	// 18 tool descriptions in seven languages added after the fixes: 0 flagged
	all.check(t, "mcp_clean_probe.jsonl", 0, 0.5)
}
