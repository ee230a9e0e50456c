package risk

import (
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"github.com/vigil-dev/vigil/events"
)

// ErrPolicy is wrapped by every policy-rule compilation error.
var ErrPolicy = errors.New("risk: invalid policy rule")

// RuleError names the rule that does not compile and why (the CEL message
// carries the line and column).
type RuleError struct {
	Index int
	Name  string
	Err   string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("policy rule %d %q: %s", e.Index+1, e.Name, e.Err)
}

func (e *RuleError) Unwrap() error { return ErrPolicy }

// RuleSet is a compiled list of policy rules. It is safe for concurrent use.
type RuleSet struct {
	rules []compiledRule
}

type compiledRule struct {
	rule events.PolicyRule
	prg  cel.Program
}

// celEnv declares the action view as CEL variables. See docs/risk.md for the
// list; the names are part of the configuration contract.
func celEnv() (*cel.Env, error) {
	strList := cel.ListType(cel.StringType)
	return cel.NewEnv(
		cel.Variable("tool", cel.StringType),
		cel.Variable("command", cel.StringType),
		cel.Variable("commands", strList),
		cel.Variable("argv", cel.ListType(strList)),
		cel.Variable("paths", strList),
		cel.Variable("hosts", strList),
		cel.Variable("backend", cel.StringType),
		cel.Variable("agent", cel.StringType),
		cel.Variable("conversation", cel.StringType),
		cel.Variable("workspace", cel.StringType),
		cel.Variable("findings", strList),
		cel.Variable("code_findings", strList),
		cel.Variable("level", cel.StringType),
		cel.Variable("sudo", cel.BoolType),
	)
}

// CompileRules compiles rules once. The error names the first rule that is
// wrong, with the position CEL reports; every rule is checked, and all
// problems are joined.
func CompileRules(rules []events.PolicyRule) (*RuleSet, error) {
	rs := &RuleSet{}
	if len(rules) == 0 {
		return rs, nil
	}
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("risk: policy environment: %w", err)
	}
	var errs []error
	for i, r := range rules {
		if strings.TrimSpace(r.Name) == "" {
			errs = append(errs, &RuleError{Index: i, Name: r.Name, Err: "has no name; give every rule a name so decisions can cite it"})
			continue
		}
		if r.Level != "" && r.Level != events.RiskLow && r.Level != events.RiskMedium && r.Level != events.RiskHigh {
			errs = append(errs, &RuleError{Index: i, Name: r.Name, Err: fmt.Sprintf("level %q is not LOW, MEDIUM or HIGH", r.Level)})
			continue
		}
		ast, iss := env.Compile(r.Expr)
		if iss != nil && iss.Err() != nil {
			errs = append(errs, &RuleError{Index: i, Name: r.Name, Err: strings.ReplaceAll(iss.Err().Error(), "\n", " ")})
			continue
		}
		if ast.OutputType() != cel.BoolType {
			errs = append(errs, &RuleError{Index: i, Name: r.Name, Err: "expression yields " + ast.OutputType().String() + ", not a bool"})
			continue
		}
		prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			errs = append(errs, &RuleError{Index: i, Name: r.Name, Err: err.Error()})
			continue
		}
		rs.rules = append(rs.rules, compiledRule{rule: r, prg: prg})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rs, nil
}

// Len is the number of rules.
func (rs *RuleSet) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

// Activation builds the CEL input for a view. level is the built-in level
// before policy rules.
func Activation(v View, level events.Risk) map[string]any {
	names := make([]string, 0, len(v.Commands))
	argv := make([][]string, 0, len(v.Commands))
	sudo := false
	for _, c := range v.Commands {
		names = append(names, c.Name)
		argv = append(argv, append([]string{c.Name}, c.Argv...))
		sudo = sudo || c.Sudo
	}
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return map[string]any{
		"tool": v.Tool, "command": v.Command, "commands": names, "argv": argv,
		"paths": orEmpty(v.Paths), "hosts": orEmpty(v.Hosts), "backend": v.Backend, "agent": v.Agent,
		"conversation": v.Conversation, "workspace": v.Workspace, "findings": orEmpty(v.Findings),
		"code_findings": orEmpty(v.CodeFindings), "level": string(level), "sudo": sudo,
	}
}

// Match returns the rules that hold for the activation, in rule order. A
// rule whose evaluation fails (a runtime type error) does not match; its
// error is returned alongside so the caller can report it.
func (rs *RuleSet) Match(act map[string]any) ([]events.PolicyRule, []error) {
	if rs == nil {
		return nil, nil
	}
	var out []events.PolicyRule
	var errs []error
	for _, r := range rs.rules {
		val, _, err := r.prg.Eval(act)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy rule %q: %w", r.rule.Name, err))
			continue
		}
		if b, ok := val.Value().(bool); ok && b {
			out = append(out, r.rule)
		}
	}
	return out, errs
}
