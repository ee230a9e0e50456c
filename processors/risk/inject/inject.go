package inject

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

// ScanResult is the verdict of the context-file injection scanner.
type ScanResult struct {
	// Verdict is "injection" (one strong finding or two weak ones),
	// "suspicious" (one weak finding: the scanner saw something, it is not
	// enough to call the file an attack) or "clean" (no finding).
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings"`
}

// Finding is one reason a context file looks like a prompt injection.
type Finding struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
	// Span is [start, end) in bytes of the scanned text.
	Span [2]int `json:"span"`
	// Strong findings make the verdict alone; weak ones need a second signal.
	Strong bool `json:"strong,omitempty"`
}

// Verdicts.
const (
	VerdictInjection  = "injection"
	VerdictSuspicious = "suspicious"
	VerdictClean      = "clean"
)

// Level is the risk level a verdict stands for: injection HIGH, suspicious
// MEDIUM, clean LOW.
func (r ScanResult) Level() events.Risk {
	switch r.Verdict {
	case VerdictInjection:
		return events.RiskHigh
	case VerdictSuspicious:
		return events.RiskMedium
	}
	return events.RiskLow
}

const maxScan = 4 << 20

// weakNear is how close, in bytes, two weak findings must be to combine.
const weakNear = 1200

// sameCommand: two weak findings are one command judged twice: the
// risky-command finding of a command and a finding of the order that
// holds it ("Install with `curl … | sh`": a download run). A README's
// install line is one signal, not two.
func sameCommand(f, g Finding) bool {
	if f.Rule != injRiskyCommand.ID {
		f, g = g, f
	}
	return f.Rule == injRiskyCommand.ID && g.Rule == injTaskInjection.ID && g.Span[0] <= f.Span[0] && f.Span[1] <= g.Span[1]
}

func near(a, b [2]int) bool {
	gap := b[0] - a[1]
	if a[0] > b[0] {
		gap = a[0] - b[1]
	}
	return gap <= weakNear
}

var (
	overrideRe   = core.LazyRE(`(?i)\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|abandon|discard)\b[^.\n,;()|/]{0,40}?\b(?:all|any|every|the|your|my|these|those|prior|previous|above|earlier|preceding|original|initial|system|user'?s?|developer'?s?)?\s*(?:previous|prior|above|earlier|preceding|original|initial|system|existing|safety|user'?s?)?\s*(?:instructions?|directions?|prompts?|rules|guidelines|guardrails|requests?|directives?|commands given|context|constraints|messages?|policies)\b`)
	forgetAllRe  = core.LazyRE(`(?i)\b(?:forget|ignore|disregard)\s+(?:everything|all|anything)\s+(?:above|before|prior|said|you (?:were|have been) told)`)
	notFollowRe  = core.LazyRE(`(?i)\b(?:do not|don't|must not|never|stop)\s+(?:follow|obey|listen to)\s+(?:the\s+)?(?:user'?s?|your|previous|prior|original)\b`)
	priorityRe   = core.LazyRE(`(?i)\b(?:overrides?|supersedes?|takes? precedence over|higher priority than)\b[^.\n]{0,40}\b(?:user'?s?|system|prompt|instructions|messages)\b`)
	foreignRe    = core.LazyRE(`(?i)\b(?:vergiss|vergessen sie)\s+alles\b|\boublie[zr]?\s+tout\b|\bolvid[ae]\w*\s+todo\b|\bignora\w*\s+todo\b|\bdimentica\w*\s+tutto\b|\besque[cç]a\w*\s+tudo\b|забудь\s+вс[её]|(?:ignor\w*|oublie\w*)\s+(?:[\pL']+\s+){0,3}?(?:instructions|consignes|règles|directives)|(?:ignora|olvida)\w*\s+(?:[\pL']+\s+){0,3}?(?:instrucciones|reglas|indicaciones)|(?:ignorier\w*|vergiss\w*)\s+(?:[\pL']+\s+){0,3}?(?:anweisungen|instruktionen|regeln|vorgaben)|忽略.{0,12}(?:指令|指示|说明|提示)|(?:指示|命令).{0,12}無視|无视.{0,12}(?:指令|指示)|(?:игнорир\w*|забудь\w*)\s+(?:все\s+)?(?:предыдущие\s+)?(?:инструкци\w*|указани\w*)|(?:ignora|dimentica)\w*\s+(?:tutte\s+)?(?:le\s+)?istruzioni|(?:ignore|esqueça)\w*\s+(?:todas\s+)?(?:as\s+)?instruções`)
	roleRe       = core.LazyRE(`(?i)\bfrom now on,? you\b|\bdeveloper mode\b|\bjailbreak|\bDAN\b|\bno restrictions\b|\bunrestricted mode\b|\bpretend (?:to be|you are|the user)\b|\bact as (?:an? )?(?:unfiltered|unrestricted|evil|root|admin)|\brole-?play as\b|\byour (?:real|true|new) (?:instructions|task|goal|purpose|objective|mission|directive|assignment|priority|priorities)\b|\bnew (?:instructions|task|policy|rule|directive)s?\s*(?::|from|for)|\bsystem (?:override|notice|prompt override)\b|\b(?:begin|start) (?:admin|system|developer) (?:input|mode|message)\b|\bend of (?:user )?input\b|\bthis is (?:the )?(?:system administrator|your developer|anthropic|openai)\b|\bmessage from (?:anthropic|openai|the (?:system|developers?))\b|\b(?:safety|security) (?:guidelines|rules|checks) (?:are|have been) (?:disabled|lifted|removed|off)\b|\byou have been granted (?:root|admin)\b|\bthe previous context was a test\b`)
	roleTagRe    = core.LazyRE(`(?im)^\s*(?:\[(?:system|admin|developer|assistant)\]|<\|?(?:system|im_start|assistant)\|?>|</?system>|</context>|role:\s*system\b|###\s*(?:system|instruction)s?\s*:?\s*$)`)
	secrecyRe    = core.LazyRE(`(?i)\b(?:do not|don't|never|without)\s+(?:tell(?:ing)?|mention(?:ing)?|inform(?:ing)?|reveal(?:ing)?|notify(?:ing)?|alert(?:ing)?|let(?:ting)?)\b[^.\n]{0,30}\b(?:the user|the human|them|anyone|this)\b|\b(?:silently|secretly|covertly|quietly)\b|\bhidden instruction|\bdo not reveal the instructions|\bdon't mention it\b`)
	bypassRe     = core.LazyRE(`(?i)--dangerously-skip-permissions|\bauto-?approve\b|\b(?:without|never) ask(?:ing)?\b[^.\n]{0,30}\b(?:confirmation|approval|permission)|\bnever ask the user\b|\b(?:disable|turn off|skip|bypass)\b[^.\n]{0,20}\b(?:sandbox(?:ing)?|approvals?|confirmations?|safety checks?|pre-commit|hooks?|secret scanner)\b|\bpre-approved\b|\bconfirmations? (?:are|is) disabled\b|\bno longer requires? approval\b|\bask for confirmation\b[^.\n]{0,30}\bignore\b|core\.hooksPath\s+/dev/null`)
	agentAddrRe  = core.LazyRE(`(?i)\b(?:ai|llm|llms|assistant|agents?|claude|codex|copilot|gpt|chatgpt|gemini|model|automated agents?|coding agents?|bot)\b`)
	imgExfilRe   = core.LazyRE(`(?i)!\[[^\]]*\]\(\s*https?://[^)\s]*(?:\?|&)[^)\s]*=\s*(?:\{|\$\(|\$\{|\$[a-z_]|<[^>\s]{1,40}>|\[[a-z_ -]{2,40}\]|%s|\.\.\.|base64|secret|contents|conversation|history|summary|data\b|your_|the_|user_|api_?key|env\b|token\b)`)
	remoteInsRe  = core.LazyRE(`(?i)\b(?:your|new|real|actual|updated|latest|full|complete|additional|remaining|next|true)\s+(?:instructions?|tasks?|rules|orders|directives)\b[^.\n]{0,30}?\b(?:are|is|at|from|on)\b[^.\n]{0,12}https?://|\b(?:fetch|download|visit|open|curl|load|retrieve|get)\b[^.\n]{0,60}https?://\S+[^.\n]{0,60}\b(?:follow|obey|execute|run|apply)\b`)
	responseRe   = core.LazyRE(`(?i)\b(?:in|into|to|within)\s+(?:your|the)\s+(?:response|reply|answer|output|elucidation|summary|next response)\b|\byour (?:response|reply|answer)\b`)
	codeInsRevRe = core.LazyRE(`(?i)\byour\s+(?:code|codebase|implementation|solution|algorithm|program|response|reply|answer|logic|elucidation|functionality|code's|algorithm's)\b[^\n]{0,80}\b(?:following|below|subsequent)\s+(?:code|snippet|excerpt|block|section|lines?)\b`)
	concealActRe = core.LazyRE(`(?i)\b(?:run|execute|upload|send|visit|push|read|copy|post|fetch|curl|add|append|set|install|commit|include|email|open|delete)\b`)
	intentRe     = core.LazyRE(`(?i)\b(?:reverse|bind)[- ]shell|\bbackdoor\b|\bkeylogger\b|\bexfiltrat\w*|\bransomware\b|\bcrypto-?miner\b|\bdisable (?:the )?(?:antivirus|edr|firewall|defender)\b`)
	intentVerbRe = core.LazyRE(`(?i)\b(?:open|start|create|install|run|spawn|add|set up|establish|launch|deploy|write|plant|exfiltrate)\b`)
	rawIPURLRe   = core.LazyRE(`(?i)\b(?:https?|ftp|tcp|udp)://\d{1,3}(?:\.\d{1,3}){3}\b|/dev/tcp/\d`)
	urlSubstRe   = core.LazyRE(`(?i)https?://\S*\$\(`)
	urlSecretRe  = core.LazyRE(`(?i)\b(?:https?|wss?|ftp)://\S*\$\{?[a-z0-9_]*(?:key|token|secret|passw(?:or)?d|pass|pwd|creds?|credentials?|auth|cookie|session)[a-z0-9_]*\}?`)
	quotedCmdRe  = core.LazyRE(`"((?:curl|wget|bash|sh|rm|nc|python3?|node|sudo|chmod|cat|scp|ssh|eval|powershell)\s[^"]{3,})"`)
	pyHintRe     = core.LazyRE(`(?m)^\s*(?:import \w|from \S+ import|def \w+\(|class \w|with .+:\s*$|for .+ in .+:\s*$|while .+:\s*$|if .+:\s*$|print\(|\w+\s+=\s+\S)|os\.system\(|subprocess\.|requests\.|eval\(|exec\(`)
	insertVerbRe = core.LazyRE(`(?i)\b(?:add|insert|integrate|incorporate|embed|append|mention|suggest|promote|modify|hint|enhance|include)\b`)
	codeInsRe    = core.LazyRE(`(?i)\b(?:following|below|subsequent|this|these)\s+(?:code|snippet|excerpt|block|section|lines?)\b[^\n]{0,80}\b(?:your|the)\s+(?:code|codebase|implementation|solution|algorithm|program|response|reply|answer|logic|elucidation|functionality)`)
	deceiveRe    = core.LazyRE(`(?i)\b(?:tell|say|report|claim|state|respond|reply|assure)\b[^.\n]{0,60}\b(?:all tests passed|tests passed|no (?:known )?(?:security )?(?:issues|vulnerabilities|problems)|it only contains|success(?:ful)?)\b|\bregardless of (?:the )?(?:actual|real)\b|\bno matter what the\b|\breply only with\b|\bapprove it\b|\b(?:fabricated|false|misleading|fake|baseless|non-existent|too-good-to-be-true|unexpected lottery|scam)\b[^.\n]{0,60}\b(?:statistic|claim|statement|rumou?r|benefit|opportunity|winnings|antivirus|news)|\b(?:bank details|lottery winnings|transferring funds|claim your)\b`)
	tamperRe     = core.LazyRE(`(?i)authorized_keys|\bcrontab\b|\bsudoers\b|HISTFILE|ANTHROPIC_BASE_URL|OPENAI_(?:API_)?BASE(?:_URL)?|--index-url|--extra-index-url|registry=|"?(?:post|pre)install"?\s*:|credential\.helper|reverse shell|\bmirror\b[^.\n]{0,40}\bnever tell`)
	destructRe   = core.LazyRE(`(?i)\b(?:delete|remove|wipe|drop|destroy|erase|truncate|purge)\b[^.\n]{0,30}?\b(?:all|every|the|any|each)\s+(?:[\w-]+\s+){0,2}?(?:files?|data|tests?|databases?|tables?|repo(?:sitory|sitories)?|branches|production|backups?|logs?|history|commits?|records|users|accounts|buckets?|volumes?|disks?|directories|folders|everything|snapshots?|migrations|secrets|keys)\b|\bforce[- ]push\b|\bpush(?:ing)?\b[^.\n]{0,30}--force`)
	persistRe    = core.LazyRE(`(?i)\b(?:add|append|insert|put|write)\b[^\n]{0,60}\b(?:authorized_keys|crontab|sudoers)\b`)
	htmlCommRe   = core.LazyRE(`(?s)<!--(.*?)-->`)
	mdCommRe     = core.LazyRE(`(?m)^\s*\[(?://|comment)\]:\s*#\s*[("'](.*)[)"']\s*$`)
	hiddenCSSRe  = core.LazyRE(`(?is)<(\w+)[^>]*style\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.0+)?(?:px|em|rem|pt|%)?\s*(?:;|!|["'])|opacity\s*:\s*0(?:\.0+)?\s*(?:;|!|["'])|color\s*:\s*transparent|(?:height|width|max-height|max-width)\s*:\s*0(?:px)?\s*(?:;|!|["']))[^>]*>(.*?)</(\w+)>`)
	fenceRe      = core.LazyRE("(?s)```[ \\t]*([A-Za-z0-9_+-]*)[^\\n]*\\n(.*?)```")
)

type scanner struct {
	findings []Finding
	depth    int
	// hiddenCode is set while judging code read from a hidden channel
	// (reversed text, decoded payloads): any HIGH there is an attack.
	hiddenCode bool
	judged     map[string]codeVerdict // code spans already judged, by text
	memo       map[string][]Finding   // sentence rules already applied, by text
}

type codeVerdict struct {
	level events.Risk
	top   core.Finding
	// attack is the first HIGH finding whose rule is an attack in any
	// setting (see attackRules), when there is one
	attack *core.Finding
}

// findAllSub runs re over text only when text holds the literal every
// match must contain.
func findAllSub(re core.Matcher, text, must string, n int) [][]int {
	if !strings.Contains(text, must) {
		return nil
	}
	return re.FindAllStringSubmatchIndex(text, n)
}

// b64Blobs finds runs of 24 or more base64 characters that mix letters and
// digits or symbols (plain words never do).
func b64Blobs(text string, n int) [][]int {
	var out [][]int
	start := -1
	mixed := false
	for i := 0; i <= len(text); i++ {
		in := false
		if i < len(text) {
			c := text[i]
			in = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
			if in && (c >= '0' && c <= '9' || c == '+' || c == '=') {
				mixed = true
			}
		}
		if in {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 24 && mixed && !strings.Contains(text[start:i], "//") {
			out = append(out, []int{start, i})
			if len(out) >= n {
				return out
			}
		}
		start, mixed = -1, false
	}
	return out
}

func (s *scanner) add(rule *InjectRule, detail string, start, end int, strong bool) {
	if len(s.findings) >= 64 {
		return
	}
	s.findings = append(s.findings, Finding{Rule: rule.ID, Detail: detail, Span: [2]int{start, end}, Strong: strong})
}

// again reports a finding already made (by add, on the same text at
// another offset) once more, moved by off.
func (s *scanner) again(f Finding, off int) {
	if len(s.findings) >= 64 {
		return
	}
	f.Span = [2]int{off + f.Span[0], off + f.Span[1]}
	s.findings = append(s.findings, f)
}

// Scan looks for prompt injection in a context file (AGENTS.md,
// .cursorrules, README…). path is used only for messages and may be empty.
// Findings carry byte spans into text. A file is an injection when one strong
// finding or two weak ones are found.
func Scan(text, path string) ScanResult {
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	s := &scanner{}
	s.scan(text, 0)
	return s.result()
}

// result dedupes the findings and gives the verdict: one strong finding,
// or weak findings of two different rules near each other (weakNear
// bytes), make an injection; weak findings alone make the text
// suspicious, never clean. Two weak signals combine when they are about
// the same passage: a long README with an installer in one section and
// a "remove all listeners" in an API note elsewhere is two documents'
// worth of prose, not one instruction.
func (s *scanner) result() ScanResult {
	type key struct {
		rule string
		span [2]int
	}
	seen := map[key]bool{}
	uniq := s.findings[:0]
	for _, f := range s.findings {
		k := key{f.Rule, f.Span}
		if seen[k] {
			// a later pass may find the same span strong
			for i, g := range uniq {
				if f.Strong && !g.Strong && g.Rule == f.Rule && g.Span == f.Span {
					uniq[i] = f
				}
			}
			continue
		}
		// the same rule on an overlapping span, from another pass, is
		// the same finding (the strong one is kept)
		dup := false
		for i, g := range uniq {
			if g.Rule == f.Rule && f.Span[0] < g.Span[1] && g.Span[0] < f.Span[1] {
				if f.Strong && !g.Strong {
					uniq[i] = f
				}
				dup = true
				break
			}
		}
		seen[k] = true
		if !dup {
			uniq = append(uniq, f)
		}
	}
	s.findings = uniq
	strong, weak, pair := false, false, false
	for i, f := range s.findings {
		if f.Strong {
			strong = true
			continue
		}
		weak = true
		for _, g := range s.findings[i+1:] {
			if !g.Strong && g.Rule != f.Rule && near(f.Span, g.Span) && !sameCommand(f, g) {
				pair = true
			}
		}
	}
	res := ScanResult{Verdict: VerdictClean, Findings: s.findings}
	switch {
	case strong || pair:
		res.Verdict = VerdictInjection
	case weak:
		res.Verdict = VerdictSuspicious
	}
	if res.Findings == nil {
		res.Findings = []Finding{}
	}
	return res
}

// scan reports invisible characters on text as written, then reads the
// text with them removed and look-alike letters folded (foldText); spans
// of the second pass are mapped back to text.
func (s *scanner) scan(text string, base int) {
	s.invisible(text, base)
	folded, pos, changed := foldText(text)
	if !changed {
		s.body(text, base)
		return
	}
	sub := &scanner{depth: s.depth, judged: s.judged, memo: s.memo}
	sub.body(folded, 0)
	for _, f := range sub.findings {
		a, b := f.Span[0], f.Span[1]
		a = min(max(a, 0), len(folded))
		b = min(max(b, a), len(folded))
		f.Span = [2]int{base + int(pos[a]), base + int(pos[b])}
		s.findings = append(s.findings, f)
	}
}

// body runs every rule but the invisible-character ones on text.
func (s *scanner) body(text string, base int) {
	if s.depth > 3 {
		return
	}
	text = jsonUnescaped(text)
	s.depth++
	defer func() { s.depth-- }()
	// Hidden channels: their content is scanned as instructions too.
	s.hidden(text, base)
	s.boundaryRules(text, base)
	s.taskFrames(text, base)
	lt := asciiLower(text)
	s.agentDirectives(text, lt, base)
	s.dataDirectives(text, lt, base)
	// Visible text, outside comments.
	s.prose(text, base)
	s.code(text, base)
	s.encoded(text, base)
	s.collapsed(text, base)
}

// prose applies the sentence rules. A sentence ends at ". ", "? ", "! ",
// a blank line, or a line break before a new markdown block (list item,
// heading, table, fence): lines wrapped inside a paragraph are read as one
// sentence. Inside fenced code every line is its own unit, and only the
// rules that hold for code run on it (comment lines are read as prose).
func (s *scanner) prose(text string, base int) {
	g := newGate(asciiLower(text), text)
	fences := fenceRanges(text)
	// fences are in order and do not overlap: the first that ends after i
	// is the only one that can hold it
	inCode := func(i int) bool {
		k := sort.Search(len(fences), func(k int) bool { return fences[k][1] > i })
		return k < len(fences) && fences[k][0] <= i
	}
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) {
			brk := false
			switch text[i] {
			case '\n':
				brk = len(fences) > 0 && inCode(i) || sentenceEndsAtNewline(text, i)
			case '.', '?', '!':
				brk = i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\n') && !(text[i] == '.' && abbreviationEnds(text, i))
			case '"':
				brk = jsonValueEdge(text, i)
			}
			if !brk {
				continue
			}
		}
		if i > start {
			s.sentence(text[start:i], base+start, &g, len(fences) > 0 && inCode(start))
		}
		start = i + 1
	}
}

// abbreviations end with a period that ends no sentence (lower-cased,
// without their last period).
var abbreviations = map[string]bool{
	"p.s": true, "p.p.s": true, "e.g": true, "i.e": true, "cf": true, "vs": true,
	"mr": true, "mrs": true, "dr": true, "prof": true, "approx": true, "fig": true, "resp": true,
}

// abbreviationEnds: the period at i ends an abbreviation ("P.S. recommend
// …", "e.g. the …", "Dr. Smith"): the sentence goes on after it.
func abbreviationEnds(text string, i int) bool {
	j := i
	for j > 0 && i-j < 6 && (isWordByte(text[j-1]) || text[j-1] == '.') {
		j--
	}
	if j > 0 && isWordByte(text[j-1]) {
		return false // longer than any abbreviation
	}
	return j < i && abbreviations[asciiLower(text[j:i])]
}

// jsonValueEdge: the quote at i opens a JSON string value ("key": "…)
// or closes one before the next member or the end of its object or
// array, so the value is read as sentences of its own: an order at the
// start of a tweet's text is at the start of a sentence, not after
// `{"tweet": "`.
func jsonValueEdge(text string, i int) bool {
	j := i - 1
	for j >= 0 && (text[j] == ' ' || text[j] == '\t') {
		j--
	}
	if j >= 1 && text[j] == ':' {
		k := j - 1
		for k >= 0 && (text[k] == ' ' || text[k] == '\t') {
			k--
		}
		return k >= 0 && text[k] == '"'
	}
	k := i + 1
	for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
		k++
	}
	if k >= len(text) {
		return false
	}
	switch text[k] {
	case '}', ']':
		return true
	case ',':
		k++
		for k < len(text) && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n') {
			k++
		}
		return k < len(text) && (text[k] == '"' || text[k] == '{')
	}
	return false
}

// fenceRanges returns the byte ranges of fenced code blocks (``` or ~~~),
// fences included, in order and not overlapping.
func fenceRanges(text string) [][2]int {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return nil
	}
	var out [][2]int
	open := -1
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		tl := strings.TrimLeft(text[off:end], " \t")
		if strings.HasPrefix(tl, "```") || strings.HasPrefix(tl, "~~~") {
			if open < 0 {
				open = off
			} else {
				out = append(out, [2]int{open, end})
				open = -1
			}
		}
		off = end + 1
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(text)})
	}
	return out
}

// sentenceEndsAtNewline: a line break inside a paragraph continues the
// sentence; a blank line, a new block or a line that ends with ":" ends it.
func sentenceEndsAtNewline(text string, i int) bool {
	if i > 0 && (text[i-1] == ':' || text[i-1] == '\r' && i > 1 && text[i-2] == ':') {
		return true
	}
	j := i + 1
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	if j >= len(text) || text[j] == '\n' || text[j] == '\r' {
		return true
	}
	switch c := text[j]; c {
	case '-', '*', '+', '#', '>', '|', '`', '<', '~', '!', '[', '=':
		return true
	default:
		if c >= '0' && c <= '9' {
			k := j
			for k < len(text) && text[k] >= '0' && text[k] <= '9' {
				k++
			}
			return k < len(text) && (text[k] == '.' || text[k] == ')')
		}
	}
	// a heading, table row or list item ends at its line
	ls := strings.LastIndexByte(text[:i], '\n') + 1
	for ls < i && (text[ls] == ' ' || text[ls] == '\t') {
		ls++
	}
	if ls < i {
		switch text[ls] {
		case '#', '|', '<':
			return true
		}
		if thematicBreak(text[ls:i]) {
			return true
		}
	}
	// a field of a record ("Hours: 11-22", "Subject: …") ends at its line,
	// and so does the line before one
	return fieldLine(text[ls:i]) || fieldLine(text[j:min(len(text), j+40)])
}

// thematicBreak: a markdown rule line ("---", "***", "___", "==="),
// which ends the block above it and is no part of the sentence after it.
func thematicBreak(line string) bool {
	line = strings.TrimRight(line, " \t\r")
	if len(line) < 3 {
		return false
	}
	for i := 0; i < len(line); i++ {
		if line[i] != line[0] && line[i] != ' ' {
			return false
		}
	}
	return strings.IndexByte("-*_=", line[0]) >= 0
}

var turnLabels = core.LazySet("user", "assistant", "human", "ai", "system", "bot", "model", "agent", "developer", "tool")

// jsonUnescaped: text with the escapes of JSON strings (\n, \t, \",
// \/, \u00XX of ASCII) read as what they stand for, when text holds a JSON
// object: a tool's output that the model reads as lines and quotes, not
// as "nThe assistant must …". Each escape becomes its character padded
// with spaces before it to the escape's length, so every byte offset is
// kept and spans need no mapping.
func jsonUnescaped(text string) string {
	if !strings.Contains(text, "{\"") || strings.IndexByte(text, '\\') < 0 {
		return text
	}
	var b []byte
	for i := 0; i+1 < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		c, n := byte(0), 2
		switch text[i+1] {
		case 'n', 'r':
			c = '\n'
		case 't':
			c = ' '
		case '"', '/':
			c = text[i+1]
		case '\\':
			i++ // an escaped backslash: what follows is not an escape
			continue
		case 'u':
			if i+6 <= len(text) && text[i+2] == '0' && text[i+3] == '0' && isHex(text[i+4]) && isHex(text[i+5]) && hexVal(text[i+4]) < 8 {
				c, n = hexVal(text[i+4])<<4|hexVal(text[i+5]), 6
				if c < ' ' {
					c = ' '
				}
			}
		}
		if c == 0 {
			continue
		}
		if b == nil {
			b = []byte(text)
		}
		for k := i; k < i+n-1; k++ {
			b[k] = ' '
		}
		b[i+n-1] = c
		i += n - 1
	}
	if b == nil {
		return text
	}
	return string(b)
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// fieldLine: line starts with a short label and ": " (a field of a
// record, an e-mail header), not with a sentence.
func fieldLine(line string) bool {
	words := 0
	for k := 0; k < len(line) && k < 32; k++ {
		c := line[k]
		switch {
		case c == ':':
			// a turn of a transcript ("Assistant: …") is read as before
			return k > 0 && words < 4 && k+1 < len(line) && line[k+1] == ' ' && line[0] >= 'A' && line[0] <= 'Z' && !turnLabels()[strings.ToLower(line[:k])]
		case c == ' ':
			words++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '\'' || c == '_' || c == '#':
		default:
			return false
		}
	}
	return false
}

// commentLine strips a code comment marker; ok is false for a line of code.
func commentLine(t string) (string, bool) {
	tl := strings.TrimLeft(t, " \t")
	for _, p := range []string{"//", "#", "-- ", "/*", "*", ";", "%", "rem ", "REM "} {
		if strings.HasPrefix(tl, p) && !strings.HasPrefix(tl, "#!") && !strings.HasPrefix(tl, "#{") {
			return tl[len(p):], true
		}
	}
	return "", false
}

func (s *scanner) sentence(t string, off int, g *gate, code bool) {
	if len(strings.TrimSpace(t)) < 6 {
		return
	}
	key := t
	if code {
		if body, ok := commentLine(t); ok {
			off += len(t) - len(body)
			t, key, code = body, body, false
		} else {
			key = "\x00" + t
		}
	}
	// Repeated lines (tables, checklists) are judged once.
	if s.memo == nil {
		s.memo = map[string][]Finding{}
	}
	if fs, ok := s.memo[key]; ok {
		for _, f := range fs {
			s.again(f, off)
		}
		return
	}
	n := len(s.findings)
	if code {
		s.codeLineRules(t, off, g)
	} else {
		s.sentenceRules(t, off, g)
	}
	if len(s.memo) < 8192 {
		fs := make([]Finding, 0, len(s.findings)-n)
		for _, f := range s.findings[n:] {
			f.Span = [2]int{f.Span[0] - off, f.Span[1] - off}
			fs = append(fs, f)
		}
		s.memo[key] = fs
	}
}

// strictOverrideRe: the override phrase with its time word, which holds
// even inside code (a string literal the model reads).
var strictOverrideRe = core.LazyRE(`(?i)\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|original|system)\s+(?:instructions|prompts?|rules|directives|guidelines)\b`)

// codeLineRules are the sentence rules that hold for a line of code: a
// literal override phrase, role tags, URLs built to carry data.
func (s *scanner) codeLineRules(t string, off int, g *gate) {
	lt := asciiLower(t)
	add := func(loc []int, rule *InjectRule, detail string) {
		s.add(rule, detail, off+loc[0], off+loc[1], true)
	}
	if loc := findIf(g.override, strictOverrideRe, t); loc != nil {
		add(loc, injOverrideInstructions, "tells the agent to ignore its instructions")
	} else if loc := findForeign(t, lt, g); loc != nil {
		add(loc, injOverrideInstructions, "tells the agent to ignore its instructions (non-English)")
	}
	if loc := findIf(g.roleTag && anyOf(lt, trigRoleTag), roleTagRe, t); loc != nil {
		add(loc, injFakeRoleTag, "a fake system or role marker")
	}
	if loc := findIf(g.urlSubst && strings.Contains(lt, "$("), urlSubstRe, t); loc != nil {
		add(loc, injUrlExfiltration, "a URL that carries command output")
	}
	if loc := findIf(strings.Contains(lt, "://") && strings.Contains(lt, "$"), urlSecretRe, t); loc != nil {
		add(loc, injUrlExfiltration, "a URL that carries a secret from the environment")
	}
	if loc := findIf(g.img && strings.Contains(lt, "!["), imgExfilRe, t); loc != nil {
		add(loc, injMarkdownImageExfiltration, "an image URL built to carry data out")
	}
}

// orderAt reports whether the word starting at or containing byte i of
// the sentence is said as an order (see clauseView.imperative), and
// whether that order is negated.
func orderAt(v *clauseView, i int) (ok, neg bool) {
	if i > 0 && strings.IndexByte("-_/.$@=`", v.t[i-1]) >= 0 {
		return false, false // inside an identifier, a path or an option
	}
	for k := range v.ws {
		if v.ws[k].b > i {
			return v.imperativeAs(k, true)
		}
	}
	return false, false
}

func (s *scanner) sentenceRules(t string, off int, g *gate) {
	t = blankMentions(t)
	lt := asciiLower(t)
	if optionLine(t) {
		s.codeLineRules(t, off, g)
		return
	}
	span := func(loc []int) (int, int) {
		if loc == nil {
			return off, off + len(t)
		}
		return off + loc[0], off + loc[1]
	}
	words := wordsOf(lt)
	var cv *clauseView
	view := func() *clauseView {
		if cv == nil {
			cv = newClauseViewWords(t, lt, words)
		}
		return cv
	}
	// an order, not a description or a negation
	order := func(i int) bool {
		ok, neg := orderAt(view(), i)
		return ok && !neg
	}
	n0 := len(s.findings)
	tb := sentenceTrig(lt)
	anyT := func(bit int, list []string) bool { return tb&(1<<bit) != 0 && anyOf(lt, list) }
	if loc := findIf(g.override && anyT(tOverride, trigOverride) && anyT(tOverrideNoun, trigOverrideNoun), overrideRe, t); loc != nil && !benignIgnore(t) && order(loc[0]) && !scopedOverride(t[loc[1]:]) && !strings.Contains(lt[loc[0]:loc[1]], " such ") {
		a, b := span(loc)
		s.add(injOverrideInstructions, "tells the agent to ignore or replace its instructions", a, b, true)
	} else if loc := findIf(g.forget && anyT(tForget, trigForget), forgetAllRe, t); loc != nil && order(loc[0]) {
		a, b := span(loc)
		s.add(injOverrideInstructions, "tells the agent to forget what it was told", a, b, true)
	} else if loc := findIf(g.follow && anyT(tFollow, trigFollow), notFollowRe, t); loc != nil {
		a, b := span(loc)
		s.add(injOverrideInstructions, "tells the agent not to follow the user", a, b, true)
	} else if loc := findForeign(t, lt, g); loc != nil {
		a, b := span(loc)
		s.add(injOverrideInstructions, "tells the agent to ignore its instructions (non-English)", a, b, true)
	} else if loc := findIf(g.foreign && foreignLeakCandidate(t, lt), foreignLeakRe, t); loc != nil {
		a, b := span(loc)
		s.add(injPromptLeak, "asks the agent for a secret or its instructions (non-English)", a, b, true)
	} else if loc := findIf(g.priority && anyT(tPriority, trigPriority), priorityRe, t); loc != nil && (strings.Contains(lt, "user") || strings.Contains(lt, "prompt")) && !negatedBefore(t, loc[0]) && !capabilityBefore(lt[:loc[0]]) {
		a, b := span(loc)
		s.add(injOverrideInstructions, "claims priority over the user's instructions", a, b, true)
	}
	if loc := findIf(g.role && anyT(tRole, trigRole), roleRe, t); loc != nil && roleMatchHolds(t, lt, loc, view) {
		a, b := span(loc)
		s.add(injRoleOverride, "tries to change who the agent is or who is speaking", a, b, true)
	}
	if loc := findIf(g.roleTag && anyT(tRoleTag, trigRoleTag) && roleTagCandidate(t), roleTagRe, t); loc != nil && !(loc[1] < len(t) && (t[loc[1]] == '(' || t[loc[1]] == ':' && linkDefinition(t[loc[1]+1:]))) {
		a, b := span(loc)
		s.add(injFakeRoleTag, "a fake system or role marker", a, b, true)
	}
	negated := hasWord(words, negWords())
	if loc := findIf(g.bypass && anyT(tBypass, trigBypass), bypassRe, t); loc != nil && !negatedBefore(t, loc[0]) && bypassHolds(t, lt, loc, view) {
		a, b := span(loc)
		s.add(injApprovalBypass, "asks the agent to skip approvals, sandboxing or hooks", a, b, true)
	}
	if loc := findIf(g.secrecy && (anyT(tSecrecyAdv, trigSecrecyAdv) || anyT(tNeg, trigNeg) && anyT(tSecrecy, trigSecrecy)), secrecyRe, t); loc != nil {
		a, b := span(loc)
		m := strings.ToLower(t[loc[0]:loc[1]])
		adverb := !strings.Contains(m, " ")
		if adverb {
			// "silently send …", "quietly add …" as an order; "fails
			// silently" describes a program
			next := strings.Fields(t[loc[1]:])
			if len(next) > 0 && concealActRe.MatchString(next[0]) && !strings.HasSuffix(next[0], ",") && order(loc[0]) {
				s.add(injConcealFromUser, "asks the agent to act without the user noticing", a, b, true)
			}
		} else if !(loc[1] < len(t) && (t[loc[1]] == '\'' || strings.HasPrefix(t[loc[1]:], "’"))) {
			// "do not mention the user's e-mail" protects the user
			strong := concealActRe.MatchString(t) && !negatedBefore(t, loc[0])
			s.add(injConcealFromUser, "asks the agent to hide what it does from the user", a, b, strong)
		}
	}
	if loc := findIf(g.intent && anyT(tIntent, trigIntent), intentRe, t); loc != nil && intentVerbRe.MatchString(t) && !negatedBefore(t, loc[0]) && intentOrder(view()) {
		a, b := span(loc)
		s.add(injMaliciousIntent, "asks for a backdoor, reverse shell or exfiltration", a, b, true)
	}
	if loc := findIf(g.urlSubst && strings.Contains(lt, "$("), urlSubstRe, t); loc != nil {
		a, b := span(loc)
		s.add(injUrlExfiltration, "a URL that carries command output", a, b, true)
	}
	if objs := secretObjectsIf(g.secret, lt); objs != nil && !templateMention(lt) {
		s.secretRequest(t, off, lt, objs, words, view())
	}
	if loc := findIf(g.img && strings.Contains(lt, "!["), imgExfilRe, t); loc != nil {
		a, b := span(loc)
		s.add(injMarkdownImageExfiltration, "an image URL built to carry data out", a, b, true)
	}
	if loc := findIf(g.http && strings.Contains(lt, "http"), remoteInsRe, t); loc != nil && !negatedBefore(t, loc[0]) {
		a, b := span(loc)
		s.add(injRemoteInstructions, "tells the agent to fetch and follow instructions from a URL", a, b, true)
	}
	if loc := findIf(g.deceive && anyT(tDeceive, trigDeceive), deceiveRe, t); loc != nil && !negatedBefore(t, loc[0]) && !reportsCondition(t[loc[0]:loc[1]]) && deceiveHolds(view()) {
		a, b := span(loc)
		s.add(injDeceiveUser, "asks the agent to mislead the user", a, b, true)
	}
	yours := strings.Contains(lt, "your")
	if loc := findIf(g.codeIns && anyT(tCodeIns, trigCodeIns), codeInsRevRe, t); loc != nil && (yours || view().anyOrder()) {
		a, b := span(loc)
		s.add(injInsertContent, "asks the agent to put given code into its output", a, b, false)
	} else if loc := findIf(g.codeIns && anyT(tCodeIns, trigCodeIns), codeInsRe, t); loc != nil && (yours || view().anyOrder()) {
		a, b := span(loc)
		s.add(injInsertContent, "asks the agent to put given code or text into its output", a, b, false)
	} else if loc := findIf(g.response && anyT(tResponse, trigResponse), responseRe, t); loc != nil && (hasVerb(words, actVerbs()) || insertVerbRe.MatchString(t)) && (strings.Contains(strings.ToLower(t[loc[0]:loc[1]]), "your") || view().anyOrder()) && !readerOwnDetailRe.MatchString(t) {
		a, b := span(loc)
		s.add(injInsertContent, "asks the agent to change what it answers", a, b, false)
	}
	if loc := findIf(g.persist && anyT(tPersist, trigPersist), persistRe, t); loc != nil && !negated {
		a, b := span(loc)
		s.add(injPersistenceRequest, "asks the agent to add keys, jobs or start-up code", a, b, true)
	} else if loc := findIf(g.persist && anyT(tPersist, trigPersist), tamperRe, t); loc != nil && !negated && view().anyOrder() {
		a, b := span(loc)
		s.add(injConfigTampering, "touches start-up files, package sources or credentials helpers", a, b, false)
	}
	if loc := findIf(g.destroy && (anyT(tDestroy, trigDestroy) && anyT(tDestroyObj, trigDestroyObj) || strings.Contains(lt, "force")), destructRe, t); loc != nil && !negated && order(loc[0]) {
		a, b := span(loc)
		s.add(injDestructiveRequest, "asks for destructive changes", a, b, false)
	}
	if loc := findIf(strings.Contains(lt, "://") && strings.Contains(lt, "$"), urlSecretRe, t); loc != nil {
		a, b := span(loc)
		s.add(injUrlExfiltration, "a URL that carries a secret from the environment", a, b, true)
	}
	s.identityRules(t, off, lt)
	s.clauseRules(view(), off, n0)
	s.taskRules(view(), off)
	s.ownedOrders(view(), off)
	s.answerOrders(t, lt, off)
	s.paymentRedirect(t, lt, off)
	if nonASCIIOrPolite(lt) {
		s.foreignOrders(t, lt, off)
	}
	s.agentTaskFrame(t, lt, off)
	s.authorityRules(t, lt, off, view)
	s.socialRules(t, off, lt)
	if g.address && addressPhrase(lt) {
		loc := agentAddrRe.FindStringIndex(t)
		if loc == nil {
			loc = []int{0, len(t)}
		}
		a, b := span(loc)
		s.add(injAddressesAgent, "speaks to the AI agent directly", a, b, false)
		s.addressedOrder(view(), off)
	}
}

var genericSecretWords = wordSet("genericSecretWords")

// vocativeCandidate: lt holds what every vocativeRe match holds, a
// greeting or an agent's name right before "," or ":".
func vocativeCandidate(lt string) bool {
	if anyOf(lt, []string{"hey", "hi ", "hello", "dear", "attention", "psst", "yo ", "note to", "message to", "message for", "instructions for", "reminder for", "to the ", "to any ", "to all "}) {
		return true
	}
	if (strings.Contains(lt, " for ") || strings.Contains(lt, " to ")) && anyOf(lt, []string{" for ai", " for automated", " for autonomous", " for coding", " for assistant", " for agent", " for llm", " to ai", " to automated", " to assistant", " to agent", " to llm"}) {
		return true
	}
	for _, n := range agentNames {
		for i := 0; ; {
			j := strings.Index(lt[i:], n)
			if j < 0 {
				break
			}
			k := i + j + len(n)
			if k < len(lt) && (lt[k] == ',' || lt[k] == ':') {
				return true
			}
			i = k
		}
	}
	return false
}

// vocativeRe: the sentence calls the agent by what it is ("hey AI, …",
// "Assistant: please …", "attention, language model").
var vocativeRe = core.LazyRE(`(?:^|[.!?]\s+)\W{0,3}(?:(?:hey|hi|hello|dear|attention|psst|yo|(?:(?:security|urgent|important|official|private|special|quick|friendly|system|admin)\s+)?(?:note|message|instructions|reminder|memo|notice|alert|update|announcement|warning|directive)(?:\s+from\s+[^,.:;\n]{2,40}?)?\s+(?:to|for)|to)\s*,?\s+(?:the\s+|my\s+|any\s+|all\s+)?(?:automated\s+|autonomous\s+|coding\s+)?(?:ai(?:\s+(?:tools?|systems?|models?|assistants?|agents?))?|assistant|agent|model|language model|llm|bot|gpt[\w.-]*|claude|gemini|chatgpt|copilot)s?\b|(?:ai|assistant|ai assistant|ai agent|agent|model|bot|claude|gpt|chatgpt|gemini|copilot|llm)\s*[,:]\s+(?:please\s+|now\s+|you\s+)?[a-z]{3,})`)

// aiReaderRe: the sentence speaks of the AI that reads this very text
// ("AI tools that read this page must …", "language models processing
// this e-mail should …"): it is written to that reader.
var aiReaderRe = core.LazyRE(`(?i)\b(?:ai|llms?|language models?|assistants?|agents?|models?|bots?|chatbots?|ai tools?|ai systems?|crawlers?|scrapers?|summari[sz]ers?)\s+(?:that|which|who)\s+(?:read|reads|process|processes|summari[sz]es?|sees?|access(?:es)?|crawls?|index(?:es)?|parses?|ingests?)\s+(?:this|these)\b|\b(?:ai|llms?|language models?|assistants?|agents?|models?|bots?|ai tools?|ai systems?)\s+(?:reading|processing|summari[sz]ing|parsing|crawling|indexing|viewing|ingesting)\s+(?:this|these)\b`)

// aiReaderLits: one of them is in every aiReaderRe match.
var aiReaderLits = []string{" that ", " which ", " who ", "ing this", "ing these"}

var (
	trigOverride     = []string{"ignor", "disregard", "forget", "overrid", "overrul", "bypass", "skip", "abandon", "discard", "drop"}
	trigRole         = []string{"you are now", "you are no longer", "from now on", "developer mode", "jailbreak", "dan ", " dan", "no restrictions", "unrestricted", "pretend", "act as", "role-play", "roleplay", "role play", "your real", "your true", "your new", "new instruction", "new task", "new policy", "new rule", "new directive", "system override", "system notice", "system prompt override", "begin admin", "begin system", "begin developer", "start admin", "start system", "start developer", "end of input", "end of user", "this is the system", "this is your", "this is anthropic", "this is openai", "message from", "safety guidelines", "security guidelines", "safety rules", "security rules", "safety checks", "security checks", "granted root", "granted admin", "previous context"}
	trigBypass       = []string{"dangerously", "auto-approve", "autoapprove", "auto approve", "without ask", "never ask", "ask for confirmation", "disable", "turn off", "skip", "bypass", "pre-approved", "confirmations are", "confirmation is", "requires approval", "require approval", "hookspath"}
	trigSecrecy      = []string{"tell", "mention", "inform", "reveal", "notify", "alert", "let", "silently", "secretly", "covertly", "quietly", "hidden instruction"}
	trigSecret       = []string{".ssh", "id_", ".aws", "netrc", "npmrc", "pypirc", "credential", "docker/config", "kube", "hosts.yml", "history", "shadow", "gcloud", "auth.json", "api key", "api_key", "api-key", "apikey", "private key", "ssh key", "_key", "token", "password", "secret", "environment variable", "env var", "system prompt", "developer message", ".env", ".pem", ".kdbx", "keychain"}
	trigDeceive      = []string{"passed", "no known", "no security", "no vulnerab", "no issues", "no problems", "only contains", "success", "regardless", "no matter", "reply only", "approve it", "fabricat", "false", "misleading", "fake", "baseless", "non-existent", "too-good", "lottery", "scam", "bank details", "transferring funds", "claim your"}
	trigPersist      = []string{"authorized_keys", "crontab", "sudoers", "histfile", "base_url", "api_base", "index-url", "registry=", "postinstall", "preinstall", "shell profile", "bashrc", "zshrc", ".profile", "credential.helper", "reverse shell", "mirror"}
	trigOverrideNoun = []string{"instruction", "direction", "prompt", "rule", "guideline", "guardrail", "request", "directive", "commands given", "context", "constraint", "message", "polic"}
	trigSecrecyAdv   = []string{"silently", "secretly", "covertly", "quietly", "hidden instruction", "do not reveal", "don't mention"}
	trigNeg          = []string{"do not", "don't", "never", "without"}
	trigDestroy      = []string{"delete", "remove", "wipe", "drop", "destroy", "erase"}
	trigDestroyObj   = []string{"all", "every", "the test", "database", "repo", "branches", "production"}
	agentNames       = []string{"ai", "assistant", "agent", "model", "llm", "bot", "gpt", "claude", "gemini", "copilot"}
	addrPhrases      = []string{"if you are an ai", "note to the ai", "dear ai", "for llms only", "agents only", "ai agents reading this", "hey copilot", "note to agent", "hidden instruction"}
)

// find runs re on t only when the lower-cased text holds one of the
// triggers: most sentences of a clean file hold none, which keeps a 64 KB
// file well under the 5 ms budget.
func find(re core.Matcher, t, lt string, triggers ...string) []int {
	for _, tr := range triggers {
		if strings.Contains(lt, tr) {
			return re.FindStringIndex(t)
		}
	}
	return nil
}

// roleTagCandidate: t can match roleTagRe, every match of which starts
// at a line's start and, past spaces (\s, line breaks too), opens with
// '[', '<', 'r' or 'R' ("role:") or '#': some line's first byte that is
// not a space is one of them.
func roleTagCandidate(t string) bool {
	lineStart := true
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '\n':
			lineStart = true
		case ' ', '\t', '\f', '\r':
		default:
			if lineStart && (c == '[' || c == '<' || c == 'r' || c == 'R' || c == '#') {
				return true
			}
			lineStart = false
		}
	}
	return false
}

func findIf(ok bool, re core.Matcher, t string) []int {
	if !ok {
		return nil
	}
	return re.FindStringIndex(t)
}

func anyOf(lt string, words []string) bool {
	for _, w := range words {
		if strings.Contains(lt, w) {
			return true
		}
	}
	return false
}

func findForeign(t, lt string, g *gate) []int {
	if !g.foreign {
		return nil
	}
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 {
			return foreignRe.FindStringIndex(t)
		}
	}
	return find(foreignRe, t, lt, "ignorez", "ignora ", "ignoriere", "oubli", "olvid", "vergiss", "vergessen", "dimentic", "esque", "instrucciones", "anweisungen", "istruzioni", "instruções")
}

func addressPhrase(lt string) bool {
	if vocativeCandidate(lt) && vocativeRe.MatchString(lt) {
		return true
	}
	if strings.Contains(lt, " this") && anyOf(lt, aiReaderLits) && aiReaderRe.MatchString(lt) {
		return true
	}
	for _, p := range addrPhrases {
		if strings.Contains(lt, p) {
			return true
		}
	}
	return false
}

// asciiLower lower-cases ASCII letters only, so byte offsets are kept.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

var (
	secretLiterals = []string{"~/.ssh", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "~/.aws", ".aws/credentials", ".netrc", ".npmrc", ".pypirc",
		".git-credentials", ".docker/config.json", ".kube/config", "gh/hosts.yml", ".bash_history", "/etc/shadow", "credentials.json",
		".config/gcloud", "auth.json", "*.pem", "id_*", ".kdbx", "secrets.yaml", "secrets.yml", "keychain"}
	secretWords = []string{"api key", "api-key", "api_key", "access token", "auth token", "github token", "token", "password", "secret",
		"credentials", "private key", "ssh key", "cloud credentials", "environment variables", "env vars", "system prompt", "hidden developer messages"}
)

// secretObjects finds what a sentence names that holds secrets (lt is
// lower-cased ASCII). It is a hand-written matcher: a regular expression
// with this many alternatives costs too much per sentence.
func secretObjects(lt string) [][]int {
	var out [][]int
	addAll := func(w string, words bool) {
		for i := 0; len(out) < 8; {
			j := strings.Index(lt[i:], w)
			if j < 0 {
				return
			}
			a, b := i+j, i+j+len(w)
			if words {
				if b < len(lt) && lt[b] == 's' {
					b++
				}
				if (a > 0 && isWordByte(lt[a-1])) || (b < len(lt) && isWordByte(lt[b])) {
					i = a + 1
					continue
				}
			}
			out = append(out, []int{a, b})
			i = b
		}
	}
	for _, w := range secretLiterals {
		if strings.Contains(lt, w) {
			addAll(w, false)
		}
	}
	for _, w := range secretWords {
		if strings.Contains(lt, w) {
			addAll(w, true)
		}
	}
	// .env files: ".env" or ".env.production" starting a word.
	for i := 0; i < len(lt) && len(out) < 8; {
		j := strings.Index(lt[i:], ".env")
		if j < 0 {
			break
		}
		a, b := i+j, i+j+4
		okStart := a == 0 || strings.IndexByte(" \t`'\"(/", lt[a-1]) >= 0
		for b < len(lt) && (lt[b] == '.' || lt[b] >= 'a' && lt[b] <= 'z') && (lt[b] == '.' || lt[b-1] == '.' || b > a+4) {
			b++
		}
		if okStart && (b == len(lt) || !isWordByte(lt[b])) && (a+4 == len(lt) || !isWordByte(lt[a+4]) || lt[a+4] == '.') {
			out = append(out, []int{a, b})
		}
		i = a + 4
	}
	// Environment variables that name secrets: $GITHUB_TOKEN, OPENAI_API_KEY.
	for i := 0; i < len(lt); {
		for i < len(lt) && !isIdentByte(lt[i]) && lt[i] != '$' {
			i++
		}
		a := i
		for i < len(lt) && (isIdentByte(lt[i]) || lt[i] == '$' || lt[i] == '{') {
			i++
		}
		id := lt[a:i]
		if len(id) > 3 && (strings.Contains(id, "_") || strings.HasPrefix(id, "$")) && (strings.HasSuffix(id, "token") || strings.HasSuffix(id, "key") && !plainKey(id) || strings.HasSuffix(id, "secret") || strings.HasSuffix(id, "password") || strings.Contains(id, "api_key")) && len(out) < 8 {
			out = append(out, []int{a, i})
		}
		if i == a {
			i++
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.Slice(out, func(x, y int) bool { return out[x][0] < out[y][0] })
	return out
}

// plainKeys are kinds of key that are ids, not secrets
// (idempotency_key, primary_key, sort_key, public_key).
var plainKeys = core.LazySet("idempotency", "primary", "foreign", "sort", "partition", "cache", "dedup", "dedupe", "dedupl", "lookup", "row", "hash", "composite", "public", "object", "unique", "shard", "routing", "group", "order", "message", "event", "range", "index", "item", "entity", "map", "dict", "sorting", "natural", "surrogate", "join", "foreign", "lock", "idempotence", "correlation", "trace", "request", "cursor", "page", "pagination", "s3", "blob", "file", "bucket", "icon", "i18n", "translation", "locale", "label", "config", "setting", "hot", "short", "key")

// plainKey: the identifier id (lower-cased, ending in "key") names a
// key that is an id, not a secret.
func plainKey(id string) bool {
	id = strings.TrimSuffix(strings.TrimSuffix(strings.TrimLeft(id, "${"), "key"), "_")
	if i := strings.LastIndexByte(id, '_'); i >= 0 {
		id = id[i+1:]
	}
	return plainKeys()[id]
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isIdentByte(c byte) bool { return isWordByte(c) }

var (
	negWords     = wordSet("negWords")
	actVerbs     = wordSet("actVerbs")
	exfilVerbs   = wordSet("exfilVerbs")
	foreignVerbs = []string{"发", "读取", "出力", "отправь", "envía", "affichez", "lire"}
)

type word struct {
	w     string
	start int
}

// wordsOf splits lower-cased text into words (letters, digits, ' and -).
func wordsOf(lt string) []word {
	var out []word
	start := -1
	for i := 0; i <= len(lt); i++ {
		in := i < len(lt) && (lt[i] >= 'a' && lt[i] <= 'z' || lt[i] >= '0' && lt[i] <= '9' || lt[i] == '\'' || lt[i] == '-')
		if in && start < 0 {
			start = i
		} else if !in && start >= 0 {
			out = append(out, word{lt[start:i], start})
			start = -1
		}
	}
	return out
}

func hasWord(ws []word, m map[string]bool) bool {
	for _, w := range ws {
		if m[w.w] {
			return true
		}
	}
	return false
}

// stem strips the common English verb endings.
func verbMatch(w string, m map[string]bool) bool {
	if m[w] {
		return true
	}
	for _, suf := range []string{"s", "es", "ed", "ing", "d"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) && m[w[:len(w)-len(suf)]] {
			return true
		}
	}
	return false
}

func hasVerb(ws []word, m map[string]bool) bool {
	for _, w := range ws {
		if verbMatch(w.w, m) {
			return true
		}
	}
	return false
}

var (
	trigForget   = []string{"forget", "ignore", "disregard"}
	trigFollow   = []string{"follow", "obey", "listen to"}
	trigPriority = []string{"overrid", "supersede", "precedence", "priority"}
	trigRoleTag  = []string{"[", "<", "role:", "###"}
	trigIntent   = []string{"shell", "backdoor", "keylogger", "exfiltrat", "ransomware", "miner", "disable"}
	trigCodeIns  = []string{"following", "below", "subsequent", "this code", "these", "this snippet"}
	trigResponse = []string{"your response", "your reply", "your answer", "your output", "the response", "the reply", "the answer", "your elucidation", "your summary", "next response", "the output", "the summary", "the elucidation"}
	trigForeign  = []string{"ignorez", "ignora ", "ignoriere", "oubli", "olvid", "vergiss", "vergessen", "dimentic", "esque", "instrucciones", "anweisungen", "istruzioni", "instruções"}
)

// gate says which sentence rules can fire anywhere in a text: a rule whose
// trigger words appear nowhere is skipped for every sentence. One pass of
// substring searches per text replaces one per sentence.
type gate struct {
	override, forget, follow, foreign, priority, role, roleTag, bypass, secrecy, intent, urlSubst,
	secret, img, http, deceive, codeIns, response, persist, destroy, address bool
}

func newGate(lt, text string) gate {
	ws := prefixSet(lt)
	anyOf := func(lt string, trig []string) bool { return gateAny(lt, ws, trig) }
	all2 := func(lt string, a, b []string) bool { return anyOf(lt, a) && anyOf(lt, b) }
	nonASCII := false
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			nonASCII = true
			break
		}
	}
	return gate{
		override: all2(lt, trigOverride, trigOverrideNoun), forget: anyOf(lt, trigForget), follow: anyOf(lt, trigFollow),
		foreign: nonASCII || anyOf(lt, trigForeign), priority: anyOf(lt, trigPriority), role: anyOf(lt, trigRole),
		roleTag: anyOf(lt, trigRoleTag), bypass: anyOf(lt, trigBypass),
		secrecy: anyOf(lt, trigSecrecyAdv) || anyOf(lt, trigNeg) && anyOf(lt, trigSecrecy), intent: anyOf(lt, trigIntent),
		urlSubst: strings.Contains(lt, "$("), secret: anyOf(lt, trigSecret) || strings.ContainsAny(lt, "$"), img: strings.Contains(lt, "!["), http: strings.Contains(lt, "http"),
		deceive: anyOf(lt, trigDeceive), codeIns: anyOf(lt, trigCodeIns), response: anyOf(lt, trigResponse),
		persist: anyOf(lt, trigPersist), destroy: anyOf(lt, trigDestroy) || strings.Contains(lt, "force"), address: anyOf(lt, addrPhrases) || anyOf(lt, agentNames),
	}
}

// prefixSet is the set of 5-letter word prefixes of lt: one pass and a
// set, instead of one substring search per trigger over the whole text.
// It holds every word of lt shorter than 3 letters, and the first 3, 4
// and 5 letters (as many as it has) of every other, each packed by
// packPrefix.
func prefixSet(lt string) map[uint32]struct{} {
	m := make(map[uint32]struct{}, 256)
	start := -1
	for i := 0; i <= len(lt); i++ {
		in := i < len(lt) && lt[i] >= 'a' && lt[i] <= 'z'
		if in && start < 0 {
			start = i
		} else if !in && start >= 0 {
			w := lt[start:i]
			if len(w) < 3 {
				m[packPrefix(w)] = struct{}{}
			} else {
				p := packPrefix(w[:3])
				m[p] = struct{}{}
				for k := 3; k < len(w) && k < 5; k++ {
					p = p<<5 | uint32(w[k]-'a'+1)
					m[p] = struct{}{}
				}
			}
			start = -1
		}
	}
	return m
}

// packPrefix packs up to 5 lower-case ASCII letters into a number, 5
// bits a letter and none zero, so that no two prefixes share one.
func packPrefix(w string) uint32 {
	var p uint32
	for i := 0; i < len(w); i++ {
		p = p<<5 | uint32(w[i]-'a'+1)
	}
	return p
}

// gateAny reports whether any trigger may occur in lt: a trigger starting
// with a letter is looked up by the prefix of its first word (a superset
// test: the sentence rules check exactly), others by substring search.
func gateAny(lt string, ws map[uint32]struct{}, trig []string) bool {
	for _, t := range trig {
		if t == "" {
			continue
		}
		if t[0] >= 'a' && t[0] <= 'z' {
			w := t
			for i := 0; i < len(w); i++ {
				if w[i] < 'a' || w[i] > 'z' {
					w = w[:i]
					break
				}
			}
			if len(w) > 5 {
				w = w[:5]
			}
			if _, ok := ws[packPrefix(w)]; ok {
				return true
			}
			continue
		}
		if strings.Contains(lt, t) {
			return true
		}
	}
	return false
}

func secretObjectsIf(ok bool, lt string) [][]int {
	if !ok {
		return nil
	}
	return secretObjects(lt)
}

// negatedBefore reports whether a negation shortly precedes position i.
func negatedBefore(t string, i int) bool {
	start := i - 28
	if start < 0 {
		start = 0
	}
	return hasWord(wordsOf(asciiLower(t[start:i])), negWords()) || strings.Contains(asciiLower(t[start:i]), "do not") || strings.Contains(asciiLower(t[start:i]), "must not")
}

// benignIgnore recognises everyday uses of "ignore" in project rules.
func benignIgnore(t string) bool {
	l := strings.ToLower(t)
	if strings.Contains(l, "ignore them, the project") {
		return true
	}
	for _, w := range []string{"warning", "deprecation", "lint", "vendor", "files under", "directory", "generated", "benchmark", "failing test", "differences", ".gitignore", "whitespace"} {
		if strings.Contains(l, w) && !strings.Contains(l, "instruction") && !strings.Contains(l, "prompt") {
			return true
		}
	}
	return false
}

func templateMention(l string) bool {
	return strings.Contains(l, ".env.example") || strings.Contains(l, ".env.sample") || strings.Contains(l, ".env.template") ||
		strings.Contains(l, "never hardcode") || strings.Contains(l, "are loaded from") || strings.Contains(l, "fake keys") ||
		strings.Contains(l, "dummy") || strings.Contains(l, "parser lives") || safeSecretStore(l)
}

// code runs the shell analyzer on code spans and fenced blocks, and the code
// analyzer on fenced code in other languages.
func (s *scanner) code(text string, base int) {
	for _, m := range findAllSub(fenceRe, text, "```", 32) {
		lang := strings.ToLower(text[m[2]:m[3]])
		body := text[m[4]:m[5]]
		s.judgeCode(lang, body, base+m[4])
	}
	for _, m := range inlineSpans(text, 64) {
		body := text[m[0]:m[1]]
		if len(body) < 3 {
			continue
		}
		if !strings.ContainsAny(strings.TrimSpace(body), " \t|;&><$") && !shell.Ruled(shell.CanonicalName(strings.TrimSpace(body))) && !shell.IsShell(shell.CanonicalName(strings.TrimSpace(body))) {
			continue // an identifier or a path, not a command
		}
		s.judgeCode("sh", body, base+m[0])
	}
	for _, m := range findAllSub(quotedCmdRe, text, "\"", 16) {
		s.judgeCode("sh", text[m[2]:m[3]], base+m[2])
	}
	s.proseCommands(text, base)
	// Instructions such as "run: curl … | sh" outside backticks.
	var lt string
	if strings.IndexByte(text, ':') >= 0 {
		lt = asciiLower(text)
	}
	for _, key := range []string{"execute:", "run:", "command:", "exactly as written:"} {
		idx := strings.Index(lt, key)
		if idx >= 0 {
			rest := text[idx+len(key):]
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				rest = rest[:nl]
			}
			s.judgeCode("sh", strings.TrimSpace(rest), base+idx+len(key))
		}
	}
}

func (s *scanner) judgeCode(lang, body string, off int) {
	if len(strings.TrimSpace(body)) < 3 {
		return
	}
	if s.judged == nil {
		s.judged = map[string]codeVerdict{}
	}
	if v, ok := s.judged[lang+"\x00"+body]; ok {
		s.report(v, body, off)
		return
	}
	var fs []core.Finding
	switch lang {
	case "python", "py", "python3":
		fs = shell.CodeFindings("python", body, core.Env{})
	case "js", "javascript", "ts", "typescript", "node":
		fs = shell.CodeFindings("js", body, core.Env{})
	case "", "sh", "bash", "shell", "console", "zsh", "text":
		if pyHintRe.MatchString(body) {
			fs = shell.CodeFindings("python", body, core.Env{})
			break
		}
		fs, _ = shell.Findings(body, core.Env{})
	default:
		return
	}
	lvl := events.RiskLow
	var top core.Finding
	var attack *core.Finding
	for _, f := range fs {
		if f.Analyzer == core.AnalyzerParser {
			continue
		}
		if f.Level.Rank() > lvl.Rank() {
			lvl, top = f.Level, f
		}
		if f.Level == events.RiskHigh && attack == nil && attackRules()[f.ID()] {
			f := f
			attack = &f
		}
	}
	v := codeVerdict{level: lvl, top: top, attack: attack}
	if len(s.judged) < 4096 {
		s.judged[lang+"\x00"+body] = v
	}
	s.report(v, body, off)
}

func (s *scanner) report(v codeVerdict, body string, off int) {
	lvl, top := v.level, v.top
	switch {
	case v.attack != nil:
		s.add(injDangerousCommand, "code the agent is asked to run or include: "+v.attack.ID()+" ("+v.attack.Detail+")", off, off+len(body), true)
	case lvl == events.RiskHigh && (s.hiddenCode || rawIPURLRe.MatchString(body) || readsSecrets(body)):
		s.add(injDangerousCommand, "hidden code the agent is asked to run: "+top.ID()+" ("+top.Detail+")", off, off+len(body), true)
	case lvl == events.RiskHigh:
		// installers, sudo, package managers, cluster and SQL admin:
		// HIGH when the agent runs them (the gate asks), routine in a
		// README
		s.add(injRiskyCommand, "a high-risk command an operator might run: "+top.ID()+" ("+top.Detail+")", off, off+len(body), false)
	case lvl == events.RiskMedium && (top.Rule == shell.RuleSecretFileRead || top.Rule == shell.RuleCredentialSearch):
		s.add(injSecretReadCommand, "a command that prints secrets: "+top.ID()+" ("+top.Detail+")", off, off+len(body), false)
	case lvl == events.RiskMedium && top.Analyzer == core.AnalyzerCode:
		s.add(injSuspiciousCode, "code with side effects: "+top.ID()+" ("+top.Detail+")", off, off+len(body), false)
	}
}

// encoded decodes base64 blobs and scans the text they hide.
func (s *scanner) encoded(text string, base int) {
	for _, m := range b64Blobs(text, 16) {
		dec, ok := core.DecodeBase64(text[m[0]:m[1]])
		if !ok || !utf8.ValidString(dec) || !printable(dec) {
			continue
		}
		sub := &scanner{depth: s.depth + 1, judged: s.judged, hiddenCode: true}
		sub.prose(dec, 0)
		sub.code(dec, 0)
		// the decoded text may itself be a command line
		if !strings.Contains(dec, "\n\n") {
			sub.judgeCode("sh", strings.TrimSpace(dec), 0)
		}
		if len(sub.findings) > 0 {
			s.add(injEncodedInstructions, "base64 text that decodes to instructions ("+sub.findings[0].Rule+")", base+m[0], base+m[1], true)
		}
	}
}

func printable(s string) bool {
	if len(s) == 0 {
		return false
	}
	n := 0
	for _, r := range s {
		if r < 32 && r != '\n' && r != '\t' && r != '\r' {
			n++
		}
	}
	return n*10 < len(s)
}

// reportsCondition reports whether a "tell the user … tests passed" match
// asks for a report of a fact ("tell the user when tests passed", "say
// whether the build was successful") rather than a claim made whatever
// the facts: a conditional between the verb and the claim.
func reportsCondition(m string) bool {
	lm := " " + strings.ToLower(m) + " "
	for _, w := range []string{" when ", " if ", " whether ", " once ", " after ", " how ", " which ", " whenever "} {
		if strings.Contains(lm, w) {
			return true
		}
	}
	return false
}

// linkDefinition: after "[system]:" a URL or a path makes the line a
// markdown link reference definition, not a role marker.
func linkDefinition(rest string) bool {
	f := strings.Fields(rest)
	if len(f) == 0 {
		return true
	}
	return strings.Contains(f[0], "://") || strings.HasPrefix(f[0], "/") || strings.HasPrefix(f[0], "./") || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], "<")
}

// mentionCues introduce a quotation as an example of wording, not as
// words said to the reader: text like "…", such as "…", e.g. "…".
var mentionCues = []string{" like", " such as", " e.g.", " e.g.,", " for example", " for example,", " for instance", " for instance,", " as in",
	" the string", " the phrase", " the text", " the wording", " the line", " the sentence", " the payload", " strings", " phrases", " payloads", " lines"}

// hasSuffixFold is strings.HasSuffix with ASCII case folded.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// kindOfText names what a quotation can be an instance of.
var kindOfText = []string{"jailbreak", "injection", "attack", "payload", "example", "phrase", "prompt", "string", "pattern", "wording", "sample", "template"}

// blankMentions returns t with each quotation that a mention cue
// introduces ("attackers hide text like \"…\" in pages") replaced by blanks
// of the same length, so rules read the sentence that talks about the
// wording, not the wording; offsets are kept.
func blankMentions(t string) string {
	if !strings.ContainsAny(t, "\"`“") {
		return t
	}
	var b []byte
	for i := 0; i < len(t); {
		open, close := "", ""
		switch {
		case t[i] == '"', t[i] == '`':
			open, close = t[i:i+1], t[i:i+1]
		case strings.HasPrefix(t[i:], "“"):
			open, close = "“", "”"
		default:
			i++
			continue
		}
		j := strings.Index(t[i+len(open):], close)
		if j < 0 {
			break
		}
		end := i + len(open) + j + len(close)
		before := strings.TrimRight(t[max(0, i-24):i], " \t:")
		cued := false
		for _, c := range mentionCues {
			if hasSuffixFold(before, c) || len(before)+1 == len(c) && strings.EqualFold(before, c[1:]) {
				cued = true
				break
			}
		}
		if !cued && (hasSuffixFold(before, " is") || hasSuffixFold(before, " was") || strings.HasSuffix(strings.TrimRight(t[:i], " \t"), ":")) {
			// "a common jailbreak is \"…\"", "example payload: \"…\"": the
			// quotation is the instance of a kind of text the sentence names
			cued = anyOf(asciiLower(t[max(0, i-48):i]), kindOfText)
		}
		if cued {
			if b == nil {
				b = []byte(t)
			}
			for k := i + len(open); k < end-len(close); k++ {
				b[k] = ' '
			}
		}
		i = end
	}
	if b == nil {
		return t
	}
	return string(b)
}

// capabilityBefore reports whether the words before a match (lower-cased)
// describe what someone or something can do ("lets admins override …",
// "use this flag to override …"): a feature, not a claim of priority.
func capabilityBefore(before string) bool {
	before = " " + before[max(0, len(before)-32):]
	for _, w := range []string{" lets ", " let ", " allows ", " allow ", " can ", " may ", " enables ", " permits ", " to ", " will "} {
		if strings.Contains(before, w) {
			return true
		}
	}
	return false
}
