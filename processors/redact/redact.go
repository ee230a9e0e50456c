package redact

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/vigil-dev/vigil/events"
)

// DefaultEntropyThreshold is the Shannon entropy, in bits per character,
// from which a value assigned to a secret-looking name (token, api_key, …)
// counts as a generated secret, when the config in force sets none.
// Password-like names need no entropy: any non-placeholder value is removed.
const DefaultEntropyThreshold = 3.0

// Marker is what a secret becomes: Marker + rule + "]".
const Marker = "[REDACTED:"

// Limits on the settings of a config event.
const (
	maxExtraRules = 256
	maxRuleName   = 64
	maxKeywords   = 32
	maxAllow      = 4096
)

// Config configures a Redactor.
type Config struct {
	// Settings are the redaction settings of the config event in force
	// (events.Config.Redaction); the zero value gives the defaults.
	Settings events.RedactionSettings
	// Budget bounds the work of one string and of one event; the zero
	// value gives the defaults.
	Budget Budget
}

// EnsureDefaults fills in every zero field.
func (c *Config) EnsureDefaults() {
	if c.Settings.EntropyThreshold == 0 {
		c.Settings.EntropyThreshold = DefaultEntropyThreshold
	}
	c.Budget.ensureDefaults()
}

// ErrInvalidConfig is wrapped by every error Validate and New return for a
// bad setting, so callers can tell a config mistake from an internal one.
var ErrInvalidConfig = errors.New("redact: invalid redaction settings")

// ConfigError names the setting that is wrong and what to do about it.
type ConfigError struct {
	Field  string // e.g. "redaction.extra_rules[2].regex"
	Rule   string // the extra rule's name, when the error is about one
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Rule != "" {
		return fmt.Sprintf("redact: %s (rule %q): %s", e.Field, e.Rule, e.Reason)
	}
	return fmt.Sprintf("redact: %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

var ruleNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate checks the settings and reports every problem at once. It never
// echoes an allowed value (they may be near-secrets).
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, rule, reason string) {
		errs = append(errs, &ConfigError{Field: field, Rule: rule, Reason: reason})
	}
	c.Budget.validate(bad)
	st := c.Settings
	if t := st.EntropyThreshold; math.IsNaN(t) || t < 0 || t > 8 {
		bad("redaction.entropy_threshold", "", fmt.Sprintf("%v is out of range; give bits per character between 0 and 8 (0 means the default, %v)", t, DefaultEntropyThreshold))
	}
	if len(st.ExtraRules) > maxExtraRules {
		bad("redaction.extra_rules", "", fmt.Sprintf("%d rules; at most %d are allowed", len(st.ExtraRules), maxExtraRules))
	}
	builtin := builtinIDs()
	seen := map[string]int{}
	for i, er := range st.ExtraRules {
		field := fmt.Sprintf("redaction.extra_rules[%d]", i)
		switch {
		case er.Name == "":
			bad(field+".name", "", "is empty; name the rule (it appears in [REDACTED:<name>])")
		case len(er.Name) > maxRuleName || !ruleNameRE.MatchString(er.Name):
			bad(field+".name", er.Name, fmt.Sprintf("use at most %d letters, digits, '.', '_' or '-', starting with a letter or digit", maxRuleName))
		case builtin[er.Name]:
			bad(field+".name", er.Name, "is already a built-in rule; choose another name")
		default:
			if j, dup := seen[er.Name]; dup {
				bad(field+".name", er.Name, fmt.Sprintf("is also the name of extra_rules[%d]; names must be unique", j))
			}
			seen[er.Name] = i
		}
		if er.Regex == "" {
			bad(field+".regex", er.Name, "is empty; give a Go (RE2) regular expression")
		} else if re, err := regexp.Compile(er.Regex); err != nil {
			bad(field+".regex", er.Name, "does not compile as a Go (RE2) regular expression: "+err.Error())
		} else if re.MatchString("") {
			bad(field+".regex", er.Name, "matches the empty string; it must match the secret itself")
		}
		if len(er.Keywords) > maxKeywords {
			bad(field+".keywords", er.Name, fmt.Sprintf("%d keywords; at most %d are allowed", len(er.Keywords), maxKeywords))
		}
		for k, kw := range er.Keywords {
			if strings.TrimSpace(kw) == "" {
				bad(fmt.Sprintf("%s.keywords[%d]", field, k), er.Name, "is empty; remove it or give a word that every match contains")
			}
		}
	}
	if len(st.Allow) > maxAllow {
		bad("redaction.allow", "", fmt.Sprintf("%d values; at most %d are allowed", len(st.Allow), maxAllow))
	}
	for i, a := range st.Allow {
		if a == "" {
			bad(fmt.Sprintf("redaction.allow[%d]", i), "", "is empty; remove it")
		}
	}
	return errors.Join(errs...)
}

// Redactor removes secrets from strings and events. It is immutable once
// built and safe for concurrent use by any number of goroutines.
type Redactor struct {
	rules     []*rule   // sorted by id
	kw        *matcher  // all keywords of all rules
	kwRules   [][]int32 // keyword id -> rules using it
	always    []int32   // rules without keywords (extra rules only)
	global    []allowlist
	allowed   map[string]struct{}
	threshold float64
	skipped   []SkippedRule
	budget    Budget
	pool      sync.Pool // *scan
	base      *builtin  // what With builds on
}

// Finding is one secret removed from a string: the rule that named it and
// its byte offsets in the original string.
type Finding struct {
	Rule  string `json:"rule"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// New builds a Redactor: it parses and compiles the vendored gitleaks rules,
// Vigil's rules and the extra rules of cfg. Build one per config and reuse
// it, or derive the next from it with With. The error names every bad
// setting.
func New(cfg Config) (*Redactor, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	gf, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	vr, err := compileVigilRules()
	if err != nil {
		return nil, fmt.Errorf("redact: built-in rules: %w", err)
	}
	b := &builtin{rules: append(slices.Clip(gf.rules), vr...), gf: gf}
	return b.with(cfg)
}

// With builds the Redactor New(cfg) would, reusing r's compiled built-in
// rules: only cfg's extra rules are compiled. r is not changed, and both
// stay safe for concurrent use.
func (r *Redactor) With(cfg Config) (*Redactor, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return r.base.with(cfg)
}

// builtin is what every Redactor of a process shares: the compiled
// built-in rules (analyzed by the first build, read-only after) and the
// rule file's allowlists.
type builtin struct {
	rules []*rule
	gf    ruleFile
}

// with builds a Redactor of the built-in rules and cfg's extra rules
// (cfg has its defaults and is valid).
func (b *builtin) with(cfg Config) (*Redactor, error) {
	rules := make([]*rule, 0, len(b.rules)+len(cfg.Settings.ExtraRules))
	rules = append(rules, b.rules...)
	for _, er := range cfg.Settings.ExtraRules {
		re := regexp.MustCompile(er.Regex) // Validate compiled it
		rules = append(rules, &rule{
			id: er.Name, description: "extra rule from the config in force",
			source: sourceConfig, prio: prioSpecific, keywords: lowerAll(er.Keywords), re: re,
		})
	}
	r, err := build(cfg, rules, b.gf)
	if err != nil {
		return nil, err
	}
	r.base = b
	return r, nil
}

// build makes a Redactor of rules, with the global allowlists, skipped
// rules and published values of the rule file gf (cfg has its defaults and
// is valid).
func build(cfg Config, rules []*rule, gf ruleFile) (*Redactor, error) {
	global, skipped := gf.global, gf.skipped
	slices.SortFunc(rules, func(a, b *rule) int { return strings.Compare(a.id, b.id) })
	for i := 1; i < len(rules); i++ {
		if rules[i].id == rules[i-1].id {
			return nil, fmt.Errorf("redact: two built-in rules are named %q", rules[i].id)
		}
	}
	r := &Redactor{
		rules:     rules,
		global:    global,
		threshold: cfg.Settings.EntropyThreshold,
		skipped:   skipped,
		budget:    cfg.Budget,
	}
	for _, a := range cfg.Settings.Allow {
		r.allow(a)
	}
	for _, a := range gf.published {
		r.allow(a)
	}
	kwID := map[string]int32{}
	var kws []string
	for i, ru := range rules {
		// A built-in rule is analyzed by the first build of its process's
		// rules and only read after: other Redactors may be scanning with it.
		if !ru.analyzed {
			ru.analyze()
			ru.spanOnly = ru.prio != prioGeneric && !readsMatch(global) && !readsMatch(ru.allow)
			ru.analyzed = true
		}
		if len(ru.keywords) == 0 {
			r.always = append(r.always, int32(i))
			continue
		}
		for _, k := range slices.Compact(slices.Sorted(slices.Values(ru.keywords))) {
			id, ok := kwID[k]
			if !ok {
				id = int32(len(kws))
				kwID[k] = id
				kws = append(kws, k)
				r.kwRules = append(r.kwRules, nil)
			}
			r.kwRules[id] = append(r.kwRules[id], int32(i))
		}
	}
	r.kw = newMatcher(kws)
	r.pool.New = func() any { return &scan{r: r} }
	return r, nil
}

// allow adds a value that no rule removes.
func (r *Redactor) allow(v string) {
	if r.allowed == nil {
		r.allowed = map[string]struct{}{}
	}
	r.allowed[v] = struct{}{}
}

// readsMatch reports whether an allowlist among as reads a rule's whole
// match or its line, not only the secret.
func readsMatch(as []allowlist) bool {
	for _, a := range as {
		if a.target != targetSecret {
			return true
		}
	}
	return false
}

// Rules lists the rules the Redactor runs, sorted by id.
func (r *Redactor) Rules() []RuleInfo {
	out := make([]RuleInfo, len(r.rules))
	for i, ru := range r.rules {
		out[i] = RuleInfo{ID: ru.id, Source: ru.source.String(), Description: ru.description}
	}
	return out
}

// Skipped lists the vendored gitleaks rules that are not run, and why.
func (r *Redactor) Skipped() []SkippedRule { return slices.Clone(r.skipped) }

// RedactString returns s with every secret replaced by [REDACTED:<rule>],
// and the findings, sorted by offset, with offsets into s. The same s always
// gives the same result.
//
// Redaction fails closed: should it ever panic, the whole string is
// replaced by [REDACTED:redaction-error] rather than passed on, and should
// it cost more than the work budget (Config.Budget), the whole string is
// replaced by [REDACTED:vigil.budget] (finding rule RuleBudget).
func (r *Redactor) RedactString(s string) (out string, findings []Finding) {
	defer func() {
		if p := recover(); p != nil {
			out, findings = failClosed(s)
		}
	}()
	return r.redactString(s)
}

const ruleRedactionError = "redaction-error"

func failClosed(s string) (string, []Finding) {
	f := []Finding{{Rule: ruleRedactionError, Start: 0, End: len(s)}}
	return Marker + ruleRedactionError + "]", f
}

func (r *Redactor) redactString(s string) (string, []Finding) {
	fs, _, ok := r.find(s, r.budget.stringLimit(len(s)))
	if !ok {
		return overBudget(s)
	}
	if len(fs) == 0 {
		return s, nil
	}
	return apply(s, fs), fs
}

// find returns the merged findings of s and the work spent on it. ok is
// false when the work would pass limit: the scan stopped there, and the
// findings must not be used (the caller replaces s whole).
func (r *Redactor) find(s string, limit int64) (fs []Finding, work int64, ok bool) {
	if s == "" {
		return nil, 0, true
	}
	sc := r.pool.Get().(*scan)
	sc.reset(s, limit)
	sc.find()
	if !sc.over {
		fs = sc.merge()
	}
	work, ok = sc.work, !sc.over
	sc.reset("", 0)
	if cap(sc.rhits) <= 1<<14 && cap(sc.cands) <= 1<<12 && cap(sc.nls) <= 1<<14 {
		r.pool.Put(sc)
	}
	return fs, work, ok
}

// apply replaces each finding's span of s by its marker. fs must be sorted
// and disjoint.
func apply(s string, fs []Finding) string {
	var b strings.Builder
	n := len(s)
	for _, f := range fs {
		n += len(Marker) + len(f.Rule) + 1 - (f.End - f.Start)
	}
	b.Grow(max(n, 0))
	prev := 0
	for _, f := range fs {
		b.WriteString(s[prev:f.Start])
		b.WriteString(Marker)
		b.WriteString(f.Rule)
		b.WriteByte(']')
		prev = f.End
	}
	b.WriteString(s[prev:])
	return b.String()
}

// mergeFindings sorts fs and joins overlapping spans, keeping the first
// rule (in sorted order) of each joined group.
func mergeFindings(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	slices.SortFunc(fs, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Start <= last.End {
			last.End = max(last.End, f.End)
			continue
		}
		out = append(out, f)
	}
	return out
}

func builtinIDs() map[string]bool {
	ids := map[string]bool{ruleRedactionError: true, RuleBudget: true, RuleUnsafeSpan: true}
	for _, v := range vigilRegexes {
		ids[v.id] = true
	}
	for _, d := range vigilDetectors {
		ids[d.id] = true
	}
	// Gitleaks ids (run or skipped) are reserved too.
	for line := range strings.Lines(gitleaksTOML) {
		if rest, ok := strings.CutPrefix(line, "id = \""); ok {
			if id, _, ok := strings.Cut(rest, "\""); ok {
				ids[id] = true
			}
		}
	}
	return ids
}
