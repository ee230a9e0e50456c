package events

// Config is the data of a config event: the whole analyzer and gate
// configuration, validated as one (see ValidateConfig). It is folded like
// any other event, so every decision is made under the config in force at
// that event's log position.
type Config struct {
	// Version is the config's own version number, chosen by the operator.
	Version int64 `msgpack:"version" json:"version" yaml:"version"`
	// Scope is "global" (the default) or "conversation"; a conversation
	// config overrides the global one for that conversation only.
	Scope        string `msgpack:"scope,omitempty" json:"scope,omitempty" yaml:"scope,omitempty"`
	Conversation string `msgpack:"conversation,omitempty" json:"conversation,omitempty" yaml:"conversation,omitempty"`

	Analyzers    Analyzers    `msgpack:"analyzers" json:"analyzers" yaml:"analyzers"`
	Confirmation Confirmation `msgpack:"confirmation" json:"confirmation" yaml:"confirmation"`
	// PolicyRules are user rules: CEL expressions over the action view.
	PolicyRules []PolicyRule `msgpack:"policy_rules,omitempty" json:"policy_rules,omitempty" yaml:"policy_rules,omitempty"`
	// DenyRules deny matching actions outright; they win over allowlists.
	DenyRules []PolicyRule      `msgpack:"deny_rules,omitempty" json:"deny_rules,omitempty" yaml:"deny_rules,omitempty"`
	Allowlist AllowlistSettings `msgpack:"allowlist" json:"allowlist" yaml:"allowlist"`
	Sandbox   SandboxSettings   `msgpack:"sandbox" json:"sandbox" yaml:"sandbox"`
	// ApprovalTimeout is how long an action may wait for a person, as a Go
	// duration ("5m"); then it is denied (fail closed).
	ApprovalTimeout string            `msgpack:"approval_timeout,omitempty" json:"approval_timeout,omitempty" yaml:"approval_timeout,omitempty"`
	Redaction       RedactionSettings `msgpack:"redaction" json:"redaction" yaml:"redaction"`
	// Workspace, when set, is the directory agents work in; paths outside it
	// score higher. Per conversation it comes from conversation.started.
	Workspace string `msgpack:"workspace,omitempty" json:"workspace,omitempty" yaml:"workspace,omitempty"`
}

// Analyzers switches the analyzers on and off.
type Analyzers struct {
	Rules     bool `msgpack:"rules" json:"rules" yaml:"rules"`
	Policy    bool `msgpack:"policy" json:"policy" yaml:"policy"`
	Injection bool `msgpack:"injection" json:"injection" yaml:"injection"`
	// LLMHint uses the agent's own security_risk, and only to raise a level.
	LLMHint bool `msgpack:"llm_hint" json:"llm_hint" yaml:"llm_hint"`
}

// Confirmation modes.
const (
	ModeAlways      = "always"
	ModeNever       = "never"
	ModeRisky       = "risky"
	ModeAnalyzeOnly = "analyze-only"
)

// Confirmation says when a person must approve an action.
type Confirmation struct {
	// Mode is always, never, risky or analyze-only.
	Mode string `msgpack:"mode" json:"mode" yaml:"mode"`
	// Threshold is the level from which risky mode asks (MEDIUM or HIGH).
	Threshold Risk `msgpack:"threshold,omitempty" json:"threshold,omitempty" yaml:"threshold,omitempty"`
	// Unknown is what an UNKNOWN level counts as: LOW, MEDIUM or HIGH.
	Unknown Risk `msgpack:"unknown,omitempty" json:"unknown,omitempty" yaml:"unknown,omitempty"`
}

// PolicyRule is one user rule.
type PolicyRule struct {
	Name string `msgpack:"name" json:"name" yaml:"name"`
	// Expr is a CEL expression over the action view that yields a bool.
	Expr   string `msgpack:"expr" json:"expr" yaml:"expr"`
	Level  Risk   `msgpack:"level,omitempty" json:"level,omitempty" yaml:"level,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty" yaml:"reason,omitempty"`
}

// AllowlistSettings controls approval scopes.
type AllowlistSettings struct {
	// DisableSession and DisableAlways refuse those verdicts when true.
	DisableSession bool `msgpack:"disable_session,omitempty" json:"disable_session,omitempty" yaml:"disable_session,omitempty"`
	DisableAlways  bool `msgpack:"disable_always,omitempty" json:"disable_always,omitempty" yaml:"disable_always,omitempty"`
}

// SandboxSettings says which backends count as sandboxed and what follows.
type SandboxSettings struct {
	Backends []string `msgpack:"backends,omitempty" json:"backends,omitempty" yaml:"backends,omitempty"`
	// Policy for sandboxed backends: "confirm" (same as elsewhere),
	// "allow-below-high" (only HIGH asks), or "allow" (never ask; still scored).
	Policy string `msgpack:"policy,omitempty" json:"policy,omitempty" yaml:"policy,omitempty"`
}

// RedactionSettings tunes the redaction step.
type RedactionSettings struct {
	ExtraRules []RedactionRule `msgpack:"extra_rules,omitempty" json:"extra_rules,omitempty" yaml:"extra_rules,omitempty"`
	// Allow lists literal values that are never redacted.
	Allow []string `msgpack:"allow,omitempty" json:"allow,omitempty" yaml:"allow,omitempty"`
	// EntropyThreshold is the Shannon entropy (bits per character) above which
	// a value assigned to a secret-looking name is redacted; 0 means default.
	EntropyThreshold float64 `msgpack:"entropy_threshold,omitempty" json:"entropy_threshold,omitempty" yaml:"entropy_threshold,omitempty"`
}

// RedactionRule is an extra secret pattern.
type RedactionRule struct {
	Name     string   `msgpack:"name" json:"name" yaml:"name"`
	Regex    string   `msgpack:"regex" json:"regex" yaml:"regex"`
	Keywords []string `msgpack:"keywords,omitempty" json:"keywords,omitempty" yaml:"keywords,omitempty"`
}

// DefaultConfig is in force when no config event was ever appended: risky
// mode with threshold HIGH, the rule and injection analyzers on, the LLM hint off.
func DefaultConfig() Config {
	return Config{
		Version:         0,
		Scope:           "global",
		Analyzers:       Analyzers{Rules: true, Policy: true, Injection: true},
		Confirmation:    Confirmation{Mode: ModeRisky, Threshold: RiskHigh, Unknown: RiskMedium},
		ApprovalTimeout: "10m",
		Sandbox:         SandboxSettings{Policy: "confirm"},
	}
}
