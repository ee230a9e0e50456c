package notify

// Readers of each format's text, for the attack test of package
// notify_test (which starts a real node, and so cannot be in package
// notify).
var (
	ReadSlack    = readSlackForTest
	ReadMarkdown = readMarkdownForTest
)

// SlackRead is a Slack text as Slack reads it.
type SlackRead struct {
	Bold, Links, Other, Blocks []string
}

func readSlackForTest(s string) SlackRead {
	var out SlackRead
	for _, sp := range renderSlack(s) {
		switch sp.kind {
		case "bold":
			out.Bold = append(out.Bold, sp.text)
		case "link":
			out.Links = append(out.Links, sp.text)
		case "italic", "strike":
			out.Other = append(out.Other, sp.text)
		case "block":
			out.Blocks = append(out.Blocks, unentity(sp.text))
		}
	}
	return out
}

// MarkdownRead is a Markdown text as CommonMark + GFM reads it.
type MarkdownRead struct {
	Strong, Blocks []string
	Spans          int
}

func readMarkdownForTest(s string) (MarkdownRead, error) {
	m, err := readMarkdown(s)
	return MarkdownRead{Strong: m.strong, Blocks: m.blocks, Spans: m.spans}, err
}
