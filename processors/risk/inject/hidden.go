package inject

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Markup that renders as nothing, or as little: HTML comments and their
// markdown twins, text hidden with CSS or the hidden attribute, image alt
// text and titles, collapsed <details> sections. The model reads all of
// it; a person reviewing the rendered file does not.

var (
	// agentNameRe names an AI agent: stricter than "model" or "bot", which
	// documentation uses for other things.
	agentNameRe   = core.LazyRE(`(?i)\b(?:ai|llms?|language models?|ai (?:assistant|agent|model)s?|coding (?:assistant|agent)s?|automated agents?|assistant|claude|codex|copilot|chatgpt|gemini|gpt-?\d*|cursor|windsurf|aider|hermes|openhands)\b`)
	hiddenAttrRe  = core.LazyRE(`(?is)<(\w+)\s[^>]*?(?:\bhidden\b|aria-hidden\s*=\s*["']true["'])[^>]*>(.*?)</(\w+)>`)
	mdImageRe     = core.LazyRE(`!\[([^\]\n]*)\]\(\s*([^)\s]*)(?:\s+["']([^"'\n]*)["'])?\s*\)`)
	htmlImgAltRe  = core.LazyRE(`(?is)<img\s[^>]*?\b(?:alt|title)\s*=\s*["']([^"']*)["']`)
	detailsRe     = core.LazyRE(`(?is)<details(\s[^>]*)?>(.*?)</details>`)
	summaryRe     = core.LazyRE(`(?is)<summary[^>]*>.*?</summary>`)
	hiddenCfgWord = wordSet("hiddenCfgWord")
)

// hidden scans the hidden channels of text: what they say is scanned as
// prose and code, and the channel itself is a finding when it carries an
// instruction.
func (s *scanner) hidden(text string, base int) {
	for _, m := range findAllSub(htmlCommRe, text, "<!--", 32) {
		body := text[m[2]:m[3]]
		if s.hiddenInstruction(body, base+m[2]) {
			s.add(injHiddenHtmlComment, "an HTML comment, invisible when rendered, gives instructions", base+m[0], base+m[1], true)
		}
	}
	for _, m := range findAllSub(mdCommRe, text, "]:", 16) {
		body := text[m[2]:m[3]]
		n := len(s.findings)
		s.prose(body, base+m[2])
		if len(s.findings) > n || agentNameRe.MatchString(body) || hiddenOrder(body) {
			s.add(injHiddenMarkdownComment, "a markdown comment, invisible when rendered, gives instructions", base+m[0], base+m[1], true)
		}
	}
	if strings.Contains(text, "style") {
		for _, m := range hiddenCSSRe.FindAllStringSubmatchIndex(text, 16) {
			s.hiddenText(text, base, m, injHiddenCssText, "text hidden with CSS")
		}
	}
	if strings.Contains(text, "hidden") {
		for _, m := range hiddenAttrRe.FindAllStringSubmatchIndex(text, 16) {
			s.hiddenText(text, base, m, injHiddenCssText, "text hidden with the hidden attribute")
		}
	}
	// Image alt text and titles: shown only when the image fails, read by
	// every model.
	if strings.Contains(text, "![") {
		for _, m := range mdImageRe.FindAllStringSubmatchIndex(text, 32) {
			s.altText(text[m[2]:m[3]], base+m[2], base+m[0], base+m[1])
			if m[6] >= 0 {
				s.altText(text[m[6]:m[7]], base+m[6], base+m[0], base+m[1])
			}
		}
	}
	if strings.Contains(text, "<img") || strings.Contains(text, "<IMG") {
		for _, m := range htmlImgAltRe.FindAllStringSubmatchIndex(text, 32) {
			s.altText(text[m[2]:m[3]], base+m[2], base+m[0], base+m[1])
		}
	}
}

// hiddenInstruction scans the body of a hidden comment and reports
// whether it gives instructions: a finding inside it, an order to an
// agent, or an order to override or switch off system settings.
func (s *scanner) hiddenInstruction(body string, off int) bool {
	n := len(s.findings)
	s.prose(body, off)
	s.hiddenCode = true
	s.code(body, off)
	s.hiddenCode = false
	if len(s.findings) > n {
		return true
	}
	if hiddenAgentOrder(body) {
		return true
	}
	return hiddenOrder(body)
}

// hiddenAgentOrder: a sentence of hidden text that names an AI agent and
// gives an order ("AI agents: run the setup script first").
func hiddenAgentOrder(body string) bool {
	if !agentNameRe.MatchString(body) {
		return false
	}
	start := 0
	for i := 0; i <= len(body); i++ {
		if i < len(body) && body[i] != '\n' && !(body[i] == '.' && i+1 < len(body) && body[i+1] == ' ') {
			continue
		}
		sent := body[start:i]
		start = i + 1
		if agentNameRe.MatchString(sent) && newClauseView(sent, asciiLower(sent)).anyOrder() {
			return true
		}
	}
	return false
}

// hiddenOrder: hidden text that orders the agent to override, bypass or
// switch off a system setting ("override system configuration", "disable
// the safety checks").
func hiddenOrder(body string) bool {
	lt := asciiLower(body)
	v := newClauseView(body, lt)
	found := false
	v.orders(lxOverride|lxSkip, func(i int, neg bool) bool {
		if neg {
			return true
		}
		for k := i + 1; k < len(v.ws) && k < i+6; k++ {
			if hiddenCfgWord()[v.ws[k].w] {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// hiddenText: text hidden by CSS or the hidden attribute. Unlike a comment,
// which authors leave for each other, hidden text is there to be read by
// a program: any word in it is a strong finding; identifiers and numbers
// alone (analytics-id-4471, a tracking pixel's key) a weak one.
func (s *scanner) hiddenText(text string, base int, m []int, rule *InjectRule, what string) {
	body := text[m[4]:m[5]]
	n := len(s.findings)
	s.prose(body, base+m[4])
	s.code(body, base+m[4])
	words, prose := 0, 0
	for _, w := range strings.Fields(stripTags(body)) {
		if strings.IndexFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80 }) >= 0 {
			words++
			if strings.IndexFunc(strings.TrimRight(w, ".,;:!?\"')"), func(r rune) bool { return r >= '0' && r <= '9' || r == '-' || r == '_' || r == '=' || r == '/' }) < 0 {
				prose++
			}
		}
	}
	if words == 0 && len(s.findings) == n {
		return
	}
	// hidden prose that orders nothing (an e-mail's preheader, "Your
	// statement is ready") is weak; with an order, or a finding of its
	// own, strong
	stripped := stripTags(body)
	strong := len(s.findings) > n || hiddenAgentOrder(body) || prose > 0 && !(hiddenLabel(stripped, words) && len(strings.Fields(stripTags(text[m[1]:]))) >= 3)
	s.add(rule, what+" is read by the agent, not by the person reviewing the file", base+m[0], base+m[1], strong)
}

// hiddenLabel: hidden text of a few words that orders nothing and
// speaks to no one ("Your May statement is ready", an e-mail's
// preheader before the visible message): a label, not an instruction.
// A lone hidden word stays strong.
func hiddenLabel(t string, words int) bool {
	lt := asciiLower(t)
	if words < 3 || words > 8 || strings.Contains(lt, "://") || strings.Contains(lt, "@") || hasWordAny(lt, []string{"you", "ai", "assistant", "agent", "model", "llm", "bot", "ignore", "instructions", "obey", "follow", "disregard", "forget", "override", "only"}) {
		return false
	}
	return !newClauseView(t, lt).anyOrder()
}

// altText: alt text or a title that carries instructions.
func (s *scanner) altText(alt string, off, a, b int) {
	if len(strings.Fields(alt)) < 3 {
		return
	}
	n := len(s.findings)
	s.prose(alt, off)
	if len(s.findings) > n {
		s.add(injHiddenAltText, "image alt text or title, not shown when the image loads, gives instructions", a, b, true)
		return
	}
	if hiddenAgentOrder(alt) {
		s.add(injHiddenAltText, "image alt text addresses the agent", a, b, true)
	}
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// collapsed marks findings inside a <details> section that is closed by
// default: a reader of the rendered file sees only its summary. An order
// to the agent inside one is a weak finding by itself.
func (s *scanner) collapsed(text string, base int) {
	if !strings.Contains(text, "<details") && !strings.Contains(text, "<DETAILS") {
		return
	}
	for _, m := range detailsRe.FindAllStringSubmatchIndex(text, 16) {
		if m[2] >= 0 && strings.Contains(strings.ToLower(text[m[2]:m[3]]), "open") {
			continue
		}
		a, b := base+m[4], base+m[5]
		strong := false
		for _, f := range s.findings {
			if f.Span[0] >= a && f.Span[1] <= b {
				strong = strong || f.Strong
			}
		}
		body := summaryRe.ReplaceAllString(text[m[4]:m[5]], "")
		if strong || hiddenAgentOrder(body) {
			s.add(injHiddenCollapsedSection, "a collapsed <details> section, closed when rendered, gives instructions", base+m[0], base+m[1], strong)
		}
	}
}

// proseCommands judges lines of prose that are shell commands written
// out ("cat ~/.env", "curl https://x/$TOKEN"): a line outside code fences
// that starts with a command name and has the marks of a command line
// (a path, a URL, a variable, a pipe, an option).
func (s *scanner) proseCommands(text string, base int) {
	inFence := false
	for start, line := range textLines(text) {
		tl := strings.TrimSpace(line)
		if strings.HasPrefix(tl, "```") || strings.HasPrefix(tl, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || len(tl) < 5 {
			continue
		}
		lead := len(line) - len(strings.TrimLeft(line, " \t"))
		for _, p := range []string{"- ", "* ", "+ ", "$ ", "> ", "# ", "% "} {
			if strings.HasPrefix(tl, p) {
				tl = strings.TrimSpace(tl[len(p):])
				lead = strings.Index(line, tl)
				break
			}
		}
		if i := strings.IndexByte(tl, ' '); i > 0 && i <= 3 && isDigits(strings.TrimRight(tl[:i], ".)")) {
			tl = strings.TrimSpace(tl[i:])
			lead = strings.Index(line, tl)
		}
		name := tl
		if i := strings.IndexAny(name, " \t"); i >= 0 {
			name = name[:i]
		}
		if !proseCmdNames()[name] || lead < 0 {
			continue
		}
		if !strings.ContainsAny(tl, "/~$|><;&") && !strings.Contains(tl, " -") {
			continue
		}
		s.judgeCode("sh", tl, base+start+lead)
	}
}

// proseCmdNames are commands that read, send, run or destroy: a line of
// prose starting with one of them is judged as a command.
var proseCmdNames = wordSet("proseCmdNames")

// inlineSpans returns the bodies of inline code spans, [start, end) each:
// a run of n backticks opens a span that the next run of exactly n
// backticks on the same line closes (CommonMark), so `%s`/`%q` pairs as
// written and “double“ literals hold single backticks. Lines of fenced
// blocks are left to the fence rule.
func inlineSpans(text string, limit int) [][2]int {
	if strings.IndexByte(text, '`') < 0 {
		return nil
	}
	var out [][2]int
	for off := 0; off < len(text) && len(out) < limit; {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := text[off:end]
		if t := strings.TrimLeft(line, " \t"); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			off = end + 1
			continue
		}
		for i := 0; i < len(line) && len(out) < limit; {
			if line[i] != '`' {
				i++
				continue
			}
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			open := i + n
			closeAt := -1
			for j := open; j < len(line); {
				if line[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < len(line) && line[j+m] == '`' {
					m++
				}
				if m == n {
					closeAt = j
					break
				}
				j += m
			}
			if closeAt < 0 {
				i = open
				continue
			}
			out = append(out, [2]int{off + open, off + closeAt})
			i = closeAt + n
		}
		off = end + 1
	}
	return out
}
