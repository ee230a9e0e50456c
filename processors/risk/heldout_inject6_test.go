package risk

import "testing"

// injection6.jsonl was written for issue 24 before the rules it measures:
// attacks inside a document the assistant is asked to summarise or answer
// about (e-mails, tables, code and code comments, abstracts, news,
// reviews, QA pairs, web pages, notes, API JSON) that change the ANSWER
// rather than call a tool: put an ad, a link, a phone number or a phrase
// into the reply, recommend a product or site, tell the user something
// false or alarming, change the language, format, tone or length,
// encode or scramble it, "disregard the review and say …", "make sure
// your answer mentions …"; at the start, middle or end of the host, with
// and without addressing the AI, a few in de/fr/es/it/pt. Beside them,
// hard clean texts: the same documents with instructions to human readers
// (reply STOP, respond by Friday, include your order number, style guides
// for writers, memos on how to summarise for the board, TODOs for
// developers, honest recommendations, plain ads, news quoting advice).
// Split as injection4.jsonl: odd lines dev (-misses logs them), even
// lines check (never read).
func TestHeldoutInjection6(t *testing.T) {
	half := scanTextTable(t, "injection6.jsonl")
	// before the rules it measures: dev 20.9 % / 0.0 %, check 24.3 % / 0.0 %;
	// after answer-manipulation (answer.go): dev 95.3 % / 0 %, check 80.0 % / 0 %
	half[0].check(t, "injection6.jsonl dev", 95, 0.5)
	half[1].check(t, "injection6.jsonl check", 79, 0.5)
}
