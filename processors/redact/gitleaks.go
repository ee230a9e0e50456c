package redact

import (
	_ "embed"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// gitleaksTOML is gitleaks' default rule file, config/gitleaks.toml from
// github.com/zricethezav/gitleaks/v8 v8.30.1, vendored unchanged as data
// (MIT licence, rules/LICENSE.gitleaks). See docs/redaction.md.
//
//go:embed rules/gitleaks.toml
var gitleaksTOML string

// GitleaksVersion names the vendored rule file.
const GitleaksVersion = "gitleaks v8.30.1 config/gitleaks.toml"

type tomlAllowlist struct {
	Description string   `toml:"description"`
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
	StopWords   []string `toml:"stopwords"`
}

type tomlRule struct {
	ID          string          `toml:"id"`
	Description string          `toml:"description"`
	Regex       string          `toml:"regex"`
	SecretGroup int             `toml:"secretGroup"`
	Entropy     float64         `toml:"entropy"`
	Keywords    []string        `toml:"keywords"`
	Path        string          `toml:"path"`
	Tags        []string        `toml:"tags"`
	SkipReport  bool            `toml:"skipReport"`
	Allowlists  []tomlAllowlist `toml:"allowlists"`
}

type tomlConfig struct {
	Title      string          `toml:"title"`
	MinVersion string          `toml:"minVersion"`
	Allowlist  *tomlAllowlist  `toml:"allowlist"`
	Allowlists []tomlAllowlist `toml:"allowlists"`
	Rules      []tomlRule      `toml:"rules"`
}

// regexFixes corrects known slips in the vendored data, applied at load and
// listed in docs/redaction.md. Gitleaks' global allowlist regex
// `(?i)^true|false|null$` means "starts with true, or contains false, or
// ends with null" because alternation binds loosest; a real key containing
// "false" would be let through. We apply what it was meant to say.
var regexFixes = map[string]string{
	`(?i)^true|false|null$`: `(?i)^(?:true|false|null)$`,
}

// gitleaksEnd is how gitleaks' rules end a secret: a quote, a blank, a
// semicolon, an escaped newline or the end. Agent text also puts secrets
// before punctuation (prose, markdown, escaped JSON: "key sk_…, then",
// `(ghp_…)`, \"ghp_…\"), where those rules would miss them; widerEnd adds
// the usual punctuation. Not for generic-api-key, whose value class
// ([\w.=-]) would then take in code such as self.request.headers.get(.
const (
	gitleaksEnd = `(?:[\x60'"\s;]|\\[nr]|$)`
	widerEnd    = `(?:[\x60'"\s;.,:)\]}>|&<!?*@#\\]|$)`
)

// SkippedRule is a rule of the vendored file that Vigil does not run.
type SkippedRule struct {
	ID     string
	Reason string
}

// ruleFile is the vendored rule file, loaded.
type ruleFile struct {
	rules   []*rule
	global  []allowlist
	skipped []SkippedRule // rules Vigil cannot honour, with why
	// published are values the file's allowlists name literally (a
	// literal regex on the secret, a key-shaped stopword): documented
	// examples and keys published on purpose, such as NuGet's example
	// passwords or Algolia's search-only key of the npm index that yarn
	// ships. No rule removes them, including those of skipped rules.
	published []string
}

// loadGitleaks parses the vendored rule file into rules and the global
// allowlists.
func loadGitleaks() (ruleFile, error) {
	var (
		cfg     tomlConfig
		f       ruleFile
		rules   []*rule
		global  []allowlist
		skipped []SkippedRule
	)
	md, err := toml.Decode(gitleaksTOML, &cfg)
	if err != nil {
		return f, fmt.Errorf("redact: parse vendored gitleaks rules: %w", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return f, fmt.Errorf("redact: vendored gitleaks rules use keys this loader does not know: %s", strings.Join(keys, ", "))
	}
	var globals []tomlAllowlist
	if cfg.Allowlist != nil {
		globals = append(globals, *cfg.Allowlist)
	}
	globals = append(globals, cfg.Allowlists...)
	for _, ta := range globals {
		a, ok, err := compileAllowlist(ta)
		if err != nil {
			return f, fmt.Errorf("redact: gitleaks global allowlist: %w", err)
		}
		if ok {
			global = append(global, a)
		}
	}
	for _, tr := range cfg.Rules {
		for _, ta := range tr.Allowlists {
			f.published = append(f.published, publishedValues(ta)...)
		}
		switch {
		case tr.Path != "":
			// Path rules judge a file name; an event string has none. The
			// content they target is covered by Vigil's own rules.
			skipped = append(skipped, SkippedRule{tr.ID, "needs a file path (path = " + tr.Path + ")"})
			continue
		case tr.Regex == "":
			skipped = append(skipped, SkippedRule{tr.ID, "has no regex"})
			continue
		case tr.SkipReport:
			skipped = append(skipped, SkippedRule{tr.ID, "is a helper rule (skipReport)"})
			continue
		}
		src := tr.Regex
		if tr.ID != "generic-api-key" {
			src = strings.ReplaceAll(src, gitleaksEnd, widerEnd)
		}
		fast, maxSecret := unboundLong(src, tr.SecretGroup)
		re, err := regexp.Compile(fast)
		if err != nil {
			skipped = append(skipped, SkippedRule{tr.ID, "regex does not compile with Go regexp: " + err.Error()})
			continue
		}
		if tr.SecretGroup > re.NumSubexp() {
			skipped = append(skipped, SkippedRule{tr.ID, fmt.Sprintf("secretGroup %d but the regex has %d groups", tr.SecretGroup, re.NumSubexp())})
			continue
		}
		ru := &rule{
			id:          tr.ID,
			description: tr.Description,
			source:      sourceGitleaks,
			re:          re,
			src:         src,
			secretGroup: tr.SecretGroup,
			entropy:     tr.Entropy,
			keywords:    lowerAll(tr.Keywords),
			prio:        prioSpecific,
		}
		if tr.ID == "generic-api-key" {
			ru.prio = prioGeneric
		}
		ru.maxSecret = maxSecret
		ru.check = gitleaksChecks[tr.ID]
		for _, ta := range tr.Allowlists {
			a, ok, err := compileAllowlist(ta)
			if err != nil {
				return f, fmt.Errorf("redact: gitleaks rule %s allowlist: %w", tr.ID, err)
			}
			if ok {
				ru.allow = append(ru.allow, a)
			}
		}
		rules = append(rules, ru)
	}
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].ID < skipped[j].ID })
	f.rules, f.global, f.skipped = rules, global, skipped
	return f, nil
}

// publishedValues returns the values an allowlist names literally: its
// regexes on the secret that are plain literals, and its key-shaped
// stopwords (isKeyShaped).
func publishedValues(ta tomlAllowlist) []string {
	var out []string
	if ta.RegexTarget == "" || ta.RegexTarget == "secret" {
		for _, src := range ta.Regexes {
			if v, ok := plainLiteral(src); ok && len(v) >= 8 {
				out = append(out, v)
			}
		}
	}
	for _, w := range ta.StopWords {
		if isKeyShaped(w) {
			out = append(out, w)
		}
	}
	return out
}

// plainLiteral returns the text a regex matches when it is a plain
// literal (metacharacters only escaped: hal\+9ooo_da!sY), unanchored.
func plainLiteral(src string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\':
			if i+1 >= len(src) || isAlnum(src[i+1]) {
				return "", false // \b, \d, \w …
			}
			i++
			b.WriteByte(src[i])
		case strings.IndexByte(".^$*+?()[]{}|", c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// isKeyShaped reports whether a stopword of a gitleaks allowlist is a
// key rather than a word: 20 bytes or more of letters and digits, with
// both. gitleaks lists such values because they are published on purpose
// (Algolia's search-only key of the npm index, which yarn ships).
func isKeyShaped(w string) bool {
	if len(w) < 20 {
		return false
	}
	letters, digits := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case isDigit(c):
			digits++
		case isAlnum(c):
			letters++
		default:
			return false
		}
	}
	return letters > 0 && digits > 0
}

// allowlist is a compiled gitleaks allowlist. Path and commit checks can
// never match an event string, so an allowlist made only of them is
// dropped, and an AND allowlist that has one is dropped too.
type allowlist struct {
	target    target
	and       bool
	res       []allowRegex // empty when the allowlist has no regexes
	stopwords *matcher     // nil when it has no stopwords
}

// allowRegex is one regex of an allowlist. Each is kept apart (gitleaks
// joins them with |) so that Go sees the anchors of the anchored ones.
type allowRegex struct {
	re *regexp.Regexp
	// needs, when set, holds literals one of which every match of re
	// contains: re only runs on text that has one.
	needs *matcher
	// weight is the work charged per byte re reads: its cost per byte
	// grows with its program (generic-api-key's allowlist, 648
	// instructions, costs 40 µs on a 27-byte match).
	weight int
}

// match reports whether re matches t, and the work it cost: the bytes it
// read times its weight. A short t goes to re as a string (Go's
// backtracker, the fastest there) and is charged whole; a long one goes
// through rd, which counts what re reads: an anchored regex stops at its
// first mismatch, as the global ones do on a long secret.
func (a *allowRegex) match(t string, rd *capReader) (bool, int) {
	cost := 0
	if a.needs != nil {
		cost = len(t)
		if !a.needs.contains(t) {
			return false, cost
		}
	}
	if len(t) <= allowReaderMin {
		return a.re.MatchString(t), cost + (len(t)+1)*a.weight
	}
	*rd = capReader{s: t, lim: len(t)}
	ok := a.re.MatchReader(rd)
	return ok, cost + (rd.i+1)*a.weight
}

// allowReaderMin is the longest text an allowlist regex is handed as a
// string.
const allowReaderMin = 256

type target uint8

const (
	targetSecret target = iota
	targetMatch
	targetLine
)

func compileAllowlist(ta tomlAllowlist) (allowlist, bool, error) {
	var a allowlist
	switch ta.RegexTarget {
	case "", "secret":
		a.target = targetSecret
	case "match":
		a.target = targetMatch
	case "line":
		a.target = targetLine
	default:
		return a, false, fmt.Errorf("unknown regexTarget %q", ta.RegexTarget)
	}
	switch strings.ToUpper(ta.Condition) {
	case "", "OR":
	case "AND":
		a.and = true
		if len(ta.Paths) > 0 || len(ta.Commits) > 0 {
			return a, false, nil
		}
	default:
		return a, false, fmt.Errorf("unknown condition %q", ta.Condition)
	}
	for _, s := range ta.Regexes {
		if f, ok := regexFixes[s]; ok {
			s = f
		}
		if _, err := regexp.Compile(s); err != nil {
			return a, false, fmt.Errorf("regex %q: %w", s, err)
		}
		for _, b := range alternatives(s) {
			ar, err := compileAllowRegex(b)
			if err != nil {
				return a, false, fmt.Errorf("regex %q: %w", s, err)
			}
			a.res = append(a.res, ar)
		}
	}
	if len(ta.StopWords) > 0 {
		a.stopwords = newMatcher(lowerAll(ta.StopWords))
	}
	if len(a.res) == 0 && a.stopwords == nil {
		return a, false, nil
	}
	return a, true, nil
}

// alternatives splits a regex that is an alternation at its top into its
// branches, each a regex of its own: a text matches the regex if it
// matches one of them. Each branch then has its own literal prefilter, so
// that of generic-api-key's allowlist of some forty phrases only those
// whose words occur in a match run on it, not all 648 instructions.
func alternatives(src string) []string {
	p, err := syntax.Parse(src, syntax.Perl)
	if err != nil || p.Op != syntax.OpAlternate {
		return []string{src}
	}
	out := make([]string, len(p.Sub))
	for i, sub := range p.Sub {
		out[i] = sub.String()
	}
	return out
}

// compileAllowRegex compiles one allowlist regex with its prefilter and
// weight.
func compileAllowRegex(src string) (allowRegex, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return allowRegex{}, err
	}
	ar := allowRegex{re: re, weight: 1}
	p, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return ar, nil
	}
	prog, err := syntax.Compile(p.Simplify())
	if err != nil {
		return ar, nil
	}
	ar.weight = 1 + len(prog.Inst)/16
	if prog.StartCond()&syntax.EmptyBeginText != 0 {
		return ar, nil // anchored: it stops at the first mismatch, sooner than a prefilter would
	}
	if lits, ok := requiredLiterals(p); ok {
		ar.needs = newMatcher(lits)
	}
	return ar, nil
}

// matches reports whether one of the allowlist's regexes matches t, the
// text its regexTarget names, and the work it cost.
func (a *allowlist) matches(t string, rd *capReader) (ok bool, cost int) {
	if t == "" {
		return false, 0
	}
	for i := range a.res {
		ok, c := a.res[i].match(t, rd)
		cost += c
		if ok {
			return true, cost
		}
	}
	return false, cost
}

// decide combines the stopword check on the secret with reOK, whether a
// regex matched the target text, as the allowlist's condition says.
func (a *allowlist) decide(secret string, reOK bool) bool {
	swOK := a.stopwords != nil && secret != "" && a.stopwords.contains(secret)
	if !a.and && swOK {
		return true
	}
	if a.and {
		return (len(a.res) == 0 || reOK) && (a.stopwords == nil || swOK)
	}
	return reOK
}

func lowerAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
