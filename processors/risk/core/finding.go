package core

import "github.com/vigil-dev/vigil/events"

// Analyzer names, as they appear in events.Reason.Analyzer.
const (
	AnalyzerShell     = "shell"
	AnalyzerCode      = "code"
	AnalyzerSQL       = "sql"
	AnalyzerFiles     = "files"
	AnalyzerNetwork   = "network"
	AnalyzerInjection = "injection"
	AnalyzerPolicy    = "policy"
	AnalyzerLLMHint   = "llm_hint"
	AnalyzerRedaction = "redaction"
	AnalyzerParser    = "parser"
	AnalyzerTool      = "tool"
	AnalyzerRules     = "rules"
	// AnalyzerSelfProtect names the self-protection findings.
	AnalyzerSelfProtect = "selfprotect"
)

// Finding is one rule that fired, before the scorer makes it an
// events.Reason. Rule is the rule's declaration, never an id written at
// the emit site.
type Finding struct {
	Analyzer string
	Rule     Decl
	Level    events.Risk
	Detail   string
	Span     [2]int
	Command  string // the command name the rule fired on ("" for none)
}

// Decl is a rule's declaration in an analyzer's registry
// (*shell.ShellRule, *shell.SelfRule, *inject.InjectRule), or a rule the
// config's policy names (the scorer's): a finding takes one, so no emit
// site names a built-in rule by a string and its id, analyzer and docs
// come from one place (the scorer's TestRuleHandles reads every emit site
// of every analyzer through the type checker).
type Decl interface{ RuleID() string }

// ID is the rule id the finding reports ("" for none).
func (f Finding) ID() string {
	if f.Rule == nil {
		return ""
	}
	return f.Rule.RuleID()
}
