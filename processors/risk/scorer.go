package risk

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

// Assessment is the result of scoring one action.
type Assessment struct {
	Level   events.Risk
	Reasons []events.Reason
	// View is the parsed action: what the analyzers saw, and the input of
	// policy rules.
	View View
}

// Scorer scores actions under one configuration. Build one per config in
// force (policy rules are compiled once); it is safe for concurrent use.
type Scorer struct {
	cfg    events.Config
	policy *RuleSet
	an     *shell.Analyzer
}

// NewScorer compiles cfg's policy rules. The error names the rule and the
// position of a syntax error.
func NewScorer(cfg events.Config) (*Scorer, error) {
	rs, err := CompileRules(cfg.PolicyRules)
	if err != nil {
		return nil, fmt.Errorf("config v%d: %w", cfg.Version, err)
	}
	return &Scorer{cfg: cfg, policy: rs, an: shell.New()}, nil
}

// Config returns the configuration the scorer was built for.
func (s *Scorer) Config() events.Config { return s.cfg }

// ScoreCommand scores a shell command line.
func (s *Scorer) ScoreCommand(cmd string, env Env) Assessment {
	f, v := s.an.Command(cmd, env)
	v.Tool = "bash"
	return s.finish(f, v, env, nil)
}

// ScoreAction scores an action event. See the package documentation for how
// tools are dispatched. It reads neither ev.ID nor ev.Time: actions that
// differ only in them score alike (replay hands one's assessment to its
// repeats; TestScoreIgnoresIDAndTime).
func (s *Scorer) ScoreAction(ev *events.Event, env Env) Assessment {
	if env.Agent == "" {
		env.Agent = ev.Agent
	}
	if env.Conversation == "" {
		env.Conversation = ev.Conversation
	}
	if env.Backend == "" {
		env.Backend = ev.StringField("backend")
	}
	f, v := s.an.Action(ev, env)
	return s.finish(f, v, env, ev)
}

// finish applies the analyzer switches, policy rules and the agent's hint,
// and builds the assessment.
func (s *Scorer) finish(finds []core.Finding, v View, env Env, ev *events.Event) Assessment {
	v.Backend, v.Agent, v.Conversation, v.Workspace = env.Backend, env.Agent, env.Conversation, env.Workspace
	cfg := s.cfg
	var kept []core.Finding
	for _, f := range finds {
		if !cfg.Analyzers.Rules && f.Analyzer != core.AnalyzerTool && f.Analyzer != core.AnalyzerSelfProtect {
			continue
		}
		kept = append(kept, f)
	}
	codeSet := map[string]bool{}
	ruleSet := map[string]bool{}
	for _, f := range kept {
		ruleSet[f.ID()] = true
		if f.Analyzer == core.AnalyzerCode {
			codeSet[f.ID()] = true
		}
	}
	v.Findings = keys(ruleSet)
	v.CodeFindings = keys(codeSet)
	level := events.RiskUnknown
	analyzed := false
	for _, f := range kept {
		if f.Analyzer != core.AnalyzerTool {
			analyzed = true
		}
		level = events.Max(level, f.Level)
	}
	if cfg.Analyzers.Rules && level == events.RiskUnknown && !hasUnknownTool(kept) {
		level = events.RiskLow
		analyzed = true
	}
	if !cfg.Analyzers.Rules {
		kept = append(kept, core.Finding{Analyzer: core.AnalyzerRules, Rule: shell.RuleRulesDisabled, Level: "", Detail: "built-in rules are off in the config in force"})
	}
	_ = analyzed
	if cfg.Analyzers.Policy && s.policy.Len() > 0 {
		matched, errs := s.policy.Match(Activation(v, level))
		for _, r := range matched {
			lvl := r.Level
			if lvl == "" {
				lvl = events.RiskHigh
			}
			detail := r.Reason
			if detail == "" {
				detail = "matched " + r.Expr
			}
			kept = append(kept, core.Finding{Analyzer: core.AnalyzerPolicy, Rule: policyRule(r.Name), Level: lvl, Detail: detail})
			level = events.Max(level, lvl)
			if level == events.RiskUnknown {
				level = lvl
			}
		}
		for _, e := range errs {
			kept = append(kept, core.Finding{Analyzer: core.AnalyzerPolicy, Rule: shell.RulePolicyError, Detail: e.Error()})
		}
	}
	if ev != nil {
		if hint, raw, found := ev.SecurityRisk(); found {
			switch {
			case !cfg.Analyzers.LLMHint:
				kept = append(kept, core.Finding{Analyzer: core.AnalyzerLLMHint, Rule: shell.RuleHintIgnored,
					Detail: fmt.Sprintf("agent said %v; the llm_hint analyzer is off in the config in force", raw)})
			case hint == events.RiskUnknown:
				kept = append(kept, core.Finding{Analyzer: core.AnalyzerLLMHint, Rule: shell.RuleHintUnrecognised,
					Detail: fmt.Sprintf("agent said %v, which is not a level", raw)})
			case hint.Rank() > level.Rank():
				kept = append(kept, core.Finding{Analyzer: core.AnalyzerLLMHint, Rule: shell.RuleHintRaised, Level: hint,
					Detail: fmt.Sprintf("the agent rated its action %s, above the analyzers' %s", hint, level)})
				level = hint
			default:
				kept = append(kept, core.Finding{Analyzer: core.AnalyzerLLMHint, Rule: shell.RuleHintRating, Level: hint,
					Detail: fmt.Sprintf("the agent rated its action %s; it can only raise the level", hint)})
			}
		}
	}
	reasons, top := toReasons(kept, level)
	if top != nil {
		v.TopCommand, v.TopRule = top.Command, top.ID()
	}
	return Assessment{Level: level, Reasons: reasons, View: v}
}

func hasUnknownTool(fs []core.Finding) bool {
	for _, f := range fs {
		if f.Analyzer == core.AnalyzerTool && f.Level == events.RiskUnknown {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// toReasons sorts and de-duplicates findings: highest level first, then by
// position, then by rule name. It returns the deciding finding.
func toReasons(fs []core.Finding, level events.Risk) ([]events.Reason, *core.Finding) {
	type keyT struct{ a, r, d string }
	seen := map[keyT]bool{}
	var uniq []core.Finding
	for _, f := range fs {
		k := keyT{f.Analyzer, f.ID(), f.Detail}
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, f)
	}
	sort.SliceStable(uniq, func(i, j int) bool {
		if uniq[i].Level.Rank() != uniq[j].Level.Rank() {
			return uniq[i].Level.Rank() > uniq[j].Level.Rank()
		}
		if uniq[i].Span[0] != uniq[j].Span[0] {
			return uniq[i].Span[0] < uniq[j].Span[0]
		}
		return uniq[i].ID() < uniq[j].ID()
	})
	if len(uniq) > 64 {
		uniq = uniq[:64]
	}
	out := make([]events.Reason, 0, len(uniq))
	var top *core.Finding
	for i, f := range uniq {
		r := events.Reason{Analyzer: f.Analyzer, Rule: f.ID(), Detail: f.Detail, Level: f.Level}
		if f.Span != [2]int{} {
			r.Span = []int{f.Span[0], f.Span[1]}
		}
		out = append(out, r)
		if top == nil && f.Level == level && f.Level != "" && f.Analyzer != core.AnalyzerLLMHint {
			top = &uniq[i]
		}
	}
	return out, top
}

// Shape is the normalised shape of an action, used to scope "allow for this
// session" approvals: "<command>|<rule>", where <command> is the canonical
// name of the command the deciding rule fired on (the tool name for
// non-shell tools, "$?" for a command whose name could not be resolved) and
// <rule> is the name of that rule; "-" stands for no rule. Examples:
// "rm|destructive-delete-root", "git|git-force-push", "file_write|dotfile-write",
// "ls|-". The raw command line is never part of the shape, so approving
// "rm -rf ./build" for the session also approves "rm -rf ./dist" (same rule)
// but not "rm -rf ~" (a different rule).
func (s *Scorer) Shape(a Assessment) string {
	cmd := a.View.TopCommand
	rule := a.View.TopRule
	if rule == "" {
		rule = "-"
	}
	if cmd == "" {
		if len(a.View.Commands) > 0 {
			cmd = a.View.Commands[0].Name
		} else {
			cmd = strings.ToLower(a.View.Tool)
		}
	}
	if cmd == "" {
		cmd = "-"
	}
	return cmd + "|" + rule
}

// policyRule is a rule of the config's policy, named by the config.
type policyRule string

func (p policyRule) RuleID() string { return string(p) }

// Clone returns a deep copy of a: it shares no slice with a, so each may
// be changed (the fold appends to Reasons) or handed to another record
// without the other seeing it. Strings are shared; they are immutable.
func (a Assessment) Clone() Assessment {
	a.Reasons = slices.Clone(a.Reasons)
	for i := range a.Reasons {
		a.Reasons[i].Span = slices.Clone(a.Reasons[i].Span)
	}
	v := &a.View
	v.Commands = slices.Clone(v.Commands)
	for i := range v.Commands {
		v.Commands[i].Argv = slices.Clone(v.Commands[i].Argv)
		v.Commands[i].Via = slices.Clone(v.Commands[i].Via)
	}
	v.Paths = slices.Clone(v.Paths)
	v.Hosts = slices.Clone(v.Hosts)
	v.CodeFindings = slices.Clone(v.CodeFindings)
	v.Findings = slices.Clone(v.Findings)
	return a
}
