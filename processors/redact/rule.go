package redact

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// ruleSource says where a rule comes from (docs/redaction.md lists them).
type ruleSource uint8

const (
	sourceGitleaks ruleSource = iota // vendored gitleaks rule file (MIT)
	sourceVigil                      // Vigil's own rules for agent traffic
	sourceConfig                     // extra_rules of the config event in force
)

func (s ruleSource) String() string {
	switch s {
	case sourceGitleaks:
		return "gitleaks"
	case sourceVigil:
		return "vigil"
	default:
		return "config"
	}
}

// Priorities decide which rule names a span found by several rules:
// the lowest wins, then the rule id.
const (
	prioSpecific = 0 // a format with a vendor prefix or fixed shape
	prioContext  = 1 // Vigil's context rules (assignments, headers, URLs)
	prioGeneric  = 2 // gitleaks' generic-api-key
)

// rule is one compiled detection rule. Either re is set (a regex rule, run
// in windows around its keyword hits) or detect is (a Vigil detector written
// in Go, given the text and the hits).
type rule struct {
	id          string
	description string
	source      ruleSource
	prio        int
	keywords    []string // lowercased; none means the rule runs on every string
	// analyzed is set by the build that analyzed the rule (analyze, spanOnly).
	analyzed bool

	re          *regexp.Regexp
	src         string // the regex as written (re may be rewritten, see unboundLongRepeats)
	secretGroup int    // 0: first non-empty group, or the whole match
	// wholeMatch: the first group sits under a repetition (([a-z0-9]{4}-){3}
	// in a webhook URL), so it is a fragment, not the secret: with no
	// secretGroup the whole match is removed.
	wholeMatch bool
	entropy    float64 // gitleaks: drop a secret whose entropy is <= this
	// maxSecret, when above 0, is the longest secret the regex as written
	// can capture, kept when unboundLongRepeats widened a repetition: a
	// longer secret is dropped, so the rewrite speeds the search up without
	// widening what the rule removes (azure-ad-client-secret's {31,34}).
	maxSecret int
	allow     []allowlist

	// width is the longest match the regex can produce, in bytes, or -1 when
	// unbounded; span says how far across lines a match may reach. Both set
	// the window of text around a keyword hit that the regex runs on.
	width int
	span  spanKind
	// assign marks gitleaks' generated "NAME <op> VALUE" rules: a keyword
	// hit counts only when an assignment operator follows it closely. Such
	// a rule is run as two anchored regexes at each hit, kwRe (the name)
	// then tailRe (operator, value, terminator): the same language as the
	// whole regex, without scanning the line for where a match could start.
	assign   bool
	kwRe     *regexp.Regexp
	tailRe   *regexp.Regexp
	kwGroups int
	// spanOnly: whether a candidate is kept depends only on its span, not
	// on where the rule's match starts (no generic filters, no allowlist
	// that reads the match or the line), so hits that lead to the same
	// span need not each be tried.
	spanOnly bool
	// kwWidth and tailWidth are the longest matches of kwRe and tailRe
	// (-1: unbounded), which bound the text each is handed.
	kwWidth, tailWidth int

	// anchored is set for rules whose every match starts with one of their
	// keywords (\b?(KEYWORD…)…): the regex, anchored, is tried at each hit
	// instead of searched for in a window. wordStart: it begins with \b.
	anchored  *regexp.Regexp
	wordStart bool
	// anchorWidth is the longest match of anchored (-1: unbounded); scanRe
	// is anchored without the anchor, for scanRest.
	anchorWidth int
	scanRe      *regexp.Regexp

	// ctxValue applies the full placeholder policy (isPlaceholderValue) to
	// the secret: for rules that pick a value by its context, not its shape.
	ctxValue bool
	// shape: the secret is known by its shape, so isMasked (which takes a
	// leading $ for a reference) does not apply.
	shape bool
	// check, when set, must accept the secret (e.g. it decodes to user:pass).
	check func(secret string) bool

	detect func(sc *scan, hits []ruleHit)
}

// RuleInfo describes one rule the Redactor runs.
type RuleInfo struct {
	ID          string
	Source      string // "gitleaks", "vigil" or "config"
	Description string
}

// spanKind is how many lines a rule's match may cover.
type spanKind uint8

const (
	// spanLine: within the hit's line. Gitleaks' \s classes can match a
	// newline, but its rules describe one line ("KEY = value"), so lines
	// bound the search. A line-end acts as the $ or \s that ends a value.
	spanLine spanKind = iota
	// spanContinued: the hit's line and up to 5 continuation lines (ending
	// in a backslash): the curl rules, whose flags follow on such lines.
	spanContinued
	// spanBlock: from the hit's line up to blockAhead bytes on: rules with
	// (?s) or [\s\S] that match blocks (PEM keys).
	spanBlock
)

// Pieces of gitleaks' generated assignment rules:
// templatePrefix + (?:KEYWORDS) + templateMiddle + operator, value, end.
const (
	templatePrefix = `(?i)[\w.-]{0,50}?`
	templateMiddle = `(?:[ \t\w.-]{0,20})`
)

// splitTemplate prepares kwRe and tailRe for a generated assignment rule.
// A rule that does not split cleanly is run as one regex.
func (ru *rule) splitTemplate(src string) {
	rest, ok := strings.CutPrefix(src, templatePrefix)
	if !ok {
		return
	}
	i := strings.Index(rest, templateMiddle+assignTemplate)
	if i <= 0 {
		return
	}
	kw, err1 := regexp.Compile(`(?i)^` + rest[:i])
	tail, err2 := regexp.Compile(unboundLongRepeats(`(?i)^` + rest[i:]))
	if err1 != nil || err2 != nil || kw.NumSubexp()+tail.NumSubexp() != ru.re.NumSubexp() {
		return
	}
	if p, err := syntax.Parse(tail.String(), syntax.Perl); err != nil || p.Op == syntax.OpAlternate {
		// NAME = VALUE | OTHER (atlassian-api-token's ATATT3… branch):
		// OTHER is not anchored where the name ends, and would be searched
		// for from every hit on to the end of the line. Run as one regex,
		// once per line.
		return
	}
	ru.kwRe, ru.tailRe, ru.kwGroups = kw, tail, kw.NumSubexp()
	ru.kwWidth, ru.tailWidth = compiledWidth(kw), compiledWidth(tail)
}

// compiledWidth is regexWidth of a compiled regexp's source: the longest
// match in bytes, or -1 when unbounded (or unknown).
func compiledWidth(re *regexp.Regexp) int {
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return -1
	}
	w, _ := regexWidth(p)
	return w
}

// assignTemplate is the operator part of gitleaks' generated rules
// (cmd/generate/config/utils/generate.go in gitleaks).
const assignTemplate = `[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

func (ru *rule) analyze() {
	ru.width = -1
	if ru.re == nil {
		return
	}
	src := ru.src
	if src == "" {
		src = ru.re.String()
	}
	switch {
	case strings.Contains(src, "(?s") || strings.Contains(src, `[\s\S`):
		ru.span = spanBlock
	case strings.Contains(src, `\r`):
		ru.span = spanContinued
	}
	ru.assign = strings.Contains(src, assignTemplate)
	if ru.assign {
		ru.splitTemplate(src)
	}
	p, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return
	}
	if found, repeated := firstCaptureRepeated(p, false); found && repeated && ru.secretGroup == 0 {
		ru.wholeMatch = true
	}
	ru.width, _ = regexWidth(p)
	if ru.kwRe == nil && ru.span == spanLine {
		ru.anchorAtKeyword(p, src)
	}
}

// firstCaptureRepeated finds the first capture group of p (in the order
// of its opening parenthesis) and reports whether it sits under a
// repetition (*, +, ?, {n,m}).
func firstCaptureRepeated(p *syntax.Regexp, under bool) (found, repeated bool) {
	switch p.Op {
	case syntax.OpCapture:
		return true, under
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		under = true
	}
	for _, sub := range p.Sub {
		if found, repeated = firstCaptureRepeated(sub, under); found {
			return found, repeated
		}
	}
	return false, false
}

// anchorAtKeyword sets anchored when the regex is \b? followed (through
// groups) by a literal that starts with every keyword of the rule.
func (ru *rule) anchorAtKeyword(p *syntax.Regexp, src string) {
	if len(ru.keywords) == 0 {
		return
	}
	wb := false
	for {
		switch p.Op {
		case syntax.OpConcat:
			if len(p.Sub) > 1 && p.Sub[0].Op == syntax.OpWordBoundary && !wb {
				wb = true
				if len(p.Sub) == 2 {
					p = p.Sub[1]
				} else {
					p = &syntax.Regexp{Op: syntax.OpConcat, Sub: p.Sub[1:]}
				}
				continue
			}
			p = p.Sub[0]
			continue
		case syntax.OpCapture:
			p = p.Sub[0]
			continue
		case syntax.OpLiteral:
			lit := strings.ToLower(string(p.Rune))
			for _, k := range ru.keywords {
				if !strings.HasPrefix(lit, k) || (wb && !isWordByte(k[0])) {
					return
				}
			}
			re, err := regexp.Compile(unboundLongRepeats(`^(?:` + src + `)`))
			if err != nil || re.NumSubexp() != ru.re.NumSubexp() {
				return
			}
			scanRe, err := regexp.Compile(unboundLongRepeats(src))
			if err != nil || scanRe.NumSubexp() != re.NumSubexp() {
				return
			}
			ru.anchored, ru.wordStart, ru.scanRe = re, wb, scanRe
			ru.anchorWidth = compiledWidth(re)
		}
		return
	}
}

// longRepeat is the bound above which a counted repetition x{m,n} is run
// as x{m,}: Go's regexp unrolls x{m,n} into n copies of x, and the NFA then
// carries up to n threads per byte (generic-api-key's [\w.=-]{10,150} made
// it the slowest rule by far). The search then also finds values longer
// than n; where a delimiter must follow the secret, rule.maxSecret drops
// them again, so the rule removes what it removed as written.
const longRepeat = 32

func unboundLongRepeats(src string) string {
	out, _ := unboundLong(src, 0)
	return out
}

// unboundLong is unboundLongRepeats that also returns, when it widened a
// repetition, the longest secret the regex as written captures in group g
// (secretWidth), or 0 when it changed nothing.
func unboundLong(src string, g int) (string, int) {
	p, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return src, 0
	}
	long := func(r *syntax.Regexp) bool { return r.Op == syntax.OpRepeat && r.Max > longRepeat && r.Max > r.Min }
	var walk func(r *syntax.Regexp, f func(*syntax.Regexp))
	walk = func(r *syntax.Regexp, f func(*syntax.Regexp)) {
		f(r)
		for _, sub := range r.Sub {
			walk(sub, f)
		}
	}
	changed := false
	walk(p, func(r *syntax.Regexp) { changed = changed || long(r) })
	if !changed {
		return p.String(), 0
	}
	w := secretWidth(p, g)
	walk(p, func(r *syntax.Regexp) {
		if long(r) {
			r.Max = -1
		}
	})
	return p.String(), w
}

// secretWidth returns the longest secret, in bytes, that the regex p
// captures in group g (0: its only group) when a delimiter must follow the
// group, or -1 when that is unbounded, not known, or nothing follows.
func secretWidth(p *syntax.Regexp, g int) int {
	n := p.MaxCap()
	if g == 0 && n > 1 {
		return -1 // the first non-empty group of several: decided per match
	}
	if g == 0 {
		g = 1
	}
	// Only a group that something must follow: a regex that ends with its
	// secret matches a prefix of a longer run (hooks.slack.com/…{43,56}),
	// which the widened regex removes whole.
	if p.Op != syntax.OpConcat {
		return -1
	}
	var target *syntax.Regexp
	var find func(*syntax.Regexp)
	find = func(r *syntax.Regexp) {
		if r.Op == syntax.OpCapture && r.Cap == g {
			target = r
		}
		for _, sub := range r.Sub {
			find(sub)
		}
	}
	for _, sub := range p.Sub[:len(p.Sub)-1] {
		find(sub)
	}
	if target == nil {
		return -1
	}
	w, _ := regexWidth(target)
	return w
}

// requiredLiterals returns strings (lowercased) one of which occurs in
// every match of p, or false when there is no such set of at least two
// bytes each. It serves as a cheap prefilter in front of a regex.
func requiredLiterals(p *syntax.Regexp) ([]string, bool) {
	switch p.Op {
	case syntax.OpLiteral:
		if len(p.Rune) < 2 {
			return nil, false
		}
		return []string{strings.ToLower(string(p.Rune))}, true
	case syntax.OpCapture:
		return requiredLiterals(p.Sub[0])
	case syntax.OpPlus:
		return requiredLiterals(p.Sub[0])
	case syntax.OpRepeat:
		if p.Min >= 1 {
			return requiredLiterals(p.Sub[0])
		}
	case syntax.OpAlternate:
		var all []string
		for _, sub := range p.Sub {
			l, ok := requiredLiterals(sub)
			if !ok {
				return nil, false
			}
			all = append(all, l...)
		}
		return all, true
	case syntax.OpConcat:
		var best []string
		bestLen := 0
		for _, sub := range p.Sub {
			l, ok := requiredLiterals(sub)
			if !ok {
				continue
			}
			short := len(l[0])
			for _, x := range l {
				short = min(short, len(x))
			}
			if best == nil || short > bestLen {
				best, bestLen = l, short
			}
		}
		return best, best != nil
	}
	return nil, false
}

func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// regexWidth returns the maximum match length in bytes (-1 if unbounded) and
// whether the expression can match a newline.
func regexWidth(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, false
	case syntax.OpLiteral:
		w, nl := 0, false
		for _, r := range re.Rune {
			w += utf8.RuneLen(r)
			if r == '\n' {
				nl = true
			}
		}
		if re.Flags&syntax.FoldCase != 0 {
			w = len(re.Rune) * utf8.UTFMax
		}
		return w, nl
	case syntax.OpCharClass:
		maxr, nl := rune(0), false
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				nl = true
			}
			if hi > maxr {
				maxr = hi
			}
		}
		if maxr > utf8.MaxRune {
			maxr = utf8.MaxRune
		}
		return utf8.RuneLen(maxr), nl
	case syntax.OpAnyCharNotNL:
		return utf8.UTFMax, false
	case syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture:
		return regexWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		w, nl := regexWidth(re.Sub[0])
		if w == 0 {
			return 0, nl
		}
		return -1, nl
	case syntax.OpQuest:
		return regexWidth(re.Sub[0])
	case syntax.OpRepeat:
		w, nl := regexWidth(re.Sub[0])
		if w == 0 {
			return 0, nl
		}
		if w < 0 || re.Max < 0 {
			return -1, nl
		}
		return w * re.Max, nl
	case syntax.OpConcat:
		total, anyNL := 0, false
		for _, s := range re.Sub {
			w, nl := regexWidth(s)
			anyNL = anyNL || nl
			if w < 0 || total < 0 {
				total = -1
				continue
			}
			total += w
		}
		return total, anyNL
	case syntax.OpAlternate:
		most, anyNL := 0, false
		for _, s := range re.Sub {
			w, nl := regexWidth(s)
			anyNL = anyNL || nl
			if w < 0 || most < 0 {
				most = -1
				continue
			}
			if w > most {
				most = w
			}
		}
		return most, anyNL
	}
	return -1, true
}
