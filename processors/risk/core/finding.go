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

// finding is one rule that fired, before it becomes an events.Reason.
type Finding struct {
	Analyzer string
	Rule     Decl
	Level    events.Risk
	Detail   string
	Span     [2]int
	Command  string // the command name the rule fired on ("" for none)
}

// ruleDecl is a rule's declaration in one of the package's registries
// (*ShellRule, *SelfRule), or a rule the config's policy names
// (policyRule): a finding takes one, so no emit site names a built-in rule
// by a string and its id, analyzer and docs come from one place.
type Decl interface{ RuleID() string }

// id is the rule id the finding reports ("" for none).
func (f Finding) ID() string {
	if f.Rule == nil {
		return ""
	}
	return f.Rule.RuleID()
}
