package core

import "github.com/vigil-dev/vigil/events"

// Env is what the fold knows about the action's context.
type Env struct {
	Workspace    string
	Backend      string
	Conversation string
	Agent        string
}

// View is the parsed view of an action. Its fields are also the variables
// policy rules (CEL) are written against; see docs/risk.md.
type View struct {
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
	// Commands are every simple command found, in the order they appear,
	// including those inside bash -c, eval, $(…), ssh, find -exec, code.
	Commands     []CommandView `json:"commands,omitempty"`
	Paths        []string      `json:"paths,omitempty"`
	Hosts        []string      `json:"hosts,omitempty"`
	CodeFindings []string      `json:"code_findings,omitempty"`
	// Findings are the names of every rule that fired, sorted, unique.
	Findings     []string `json:"findings,omitempty"`
	Backend      string   `json:"backend,omitempty"`
	Agent        string   `json:"agent,omitempty"`
	Conversation string   `json:"conversation,omitempty"`
	Workspace    string   `json:"workspace,omitempty"`
	ParseError   string   `json:"parse_error,omitempty"`
	// TopCommand and TopRule name the command and the rule that decided the
	// level (the first highest-level reason); empty when no rule fired.
	TopCommand string `json:"top_command,omitempty"`
	TopRule    string `json:"top_rule,omitempty"`
	// RunRisk is, for a file write, the level of running what was written
	// when the write's own findings were capped ("written, not run").
	RunRisk events.Risk `json:"run_risk,omitempty"`
}

// CommandView is one command found in an action.
type CommandView struct {
	Name  string   `json:"name"`
	Argv  []string `json:"argv,omitempty"`
	Via   []string `json:"via,omitempty"`
	Depth int      `json:"depth,omitempty"`
	Sudo  bool     `json:"sudo,omitempty"`
	Span  [2]int   `json:"span"`
}
