package events

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"
)

// Config is the data of a config event: the whole analyzer and gate
// configuration, validated as one (see ValidateConfig and Event.Validate). It is folded like
// any other event, so every decision is made under the config in force at
// that event's log position.
type Config struct {
	// Version is the config's own version number, chosen by the operator.
	Version int64 `msgpack:"version" json:"version" yaml:"version"`
	// Scope is "global" (the default) or "conversation"; a conversation
	// config overrides the global one for that conversation only, and names
	// it in Conversation.
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
	// Notify lists where new pending actions are announced (notify.go).
	Notify *Notify `msgpack:"notify,omitempty" json:"notify,omitempty" yaml:"notify,omitempty"`
}

// Analyzers switches the analyzers on and off.
type Analyzers struct {
	Rules     bool `msgpack:"rules" json:"rules" yaml:"rules"`
	Policy    bool `msgpack:"policy" json:"policy" yaml:"policy"`
	Injection bool `msgpack:"injection" json:"injection" yaml:"injection"`
	// LLMHint uses the agent's own security_risk, and only to raise a level.
	LLMHint bool `msgpack:"llm_hint" json:"llm_hint" yaml:"llm_hint"`
}

// Scopes.
const (
	ScopeGlobal       = "global"
	ScopeConversation = "conversation"
)

// Sandbox policies.
const (
	SandboxConfirm        = "confirm"
	SandboxAllowBelowHigh = "allow-below-high"
	SandboxAllow          = "allow"
)

// Confirmation modes. "never" means no scoring at all (every analyzer off);
// "analyze-only" scores and audits but never asks. A config that says never
// with analyzers on is refused as an accident (see ValidateConfig).
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
	// Threshold is the level from which risky mode asks: LOW, MEDIUM or
	// HIGH (empty means HIGH). UNKNOWN is not ordered, so it is no threshold.
	Threshold Risk `msgpack:"threshold,omitempty" json:"threshold,omitempty" yaml:"threshold,omitempty"`
	// Unknown is what an UNKNOWN level counts as: LOW, MEDIUM or HIGH.
	Unknown Risk `msgpack:"unknown,omitempty" json:"unknown,omitempty" yaml:"unknown,omitempty"`
	// ClientHandoff says what a waiting action handed off to the agent's
	// client (an observation with status handed-off, then the tool
	// running) counts as: ClientHandoffRecord (the default) records it as
	// allowed, by client; ClientHandoffIgnore leaves it waiting for a
	// person or the expiry, and raises an alert that it ran. Either way it
	// is never a decision by a person: only the agent reports it.
	ClientHandoff string `msgpack:"client_handoff,omitempty" json:"client_handoff,omitempty" yaml:"client_handoff,omitempty"`
}

// Client hand-off policies (Confirmation.ClientHandoff).
const (
	ClientHandoffRecord = "record"
	ClientHandoffIgnore = "ignore"
)

// PolicyRule is one user rule.
type PolicyRule struct {
	Name string `msgpack:"name" json:"name" yaml:"name"`
	// Expr is a CEL expression over the action view that yields a bool.
	Expr   string `msgpack:"expr" json:"expr" yaml:"expr"`
	Level  Risk   `msgpack:"level,omitempty" json:"level,omitempty" yaml:"level,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty" yaml:"reason,omitempty"`
	// Action, for deny rules only: DenyActionDeny (the default) denies a
	// match outright; DenyActionAsk makes a person approve every match.
	Action string `msgpack:"action,omitempty" json:"action,omitempty" yaml:"action,omitempty"`
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
		Scope:           ScopeGlobal,
		Analyzers:       Analyzers{Rules: true, Policy: true, Injection: true},
		Confirmation:    Confirmation{Mode: ModeRisky, Threshold: RiskHigh, Unknown: RiskMedium},
		ApprovalTimeout: "10m",
		Sandbox:         SandboxSettings{Policy: SandboxConfirm},
	}
}

// ValidateConfig checks that a configuration is coherent as a whole, and
// reports every problem at once (errors.Join of *ValidationError, each
// naming its field under "data."). It checks what the config schema in
// schemas/ states (enums, required fields, the mode/analyzer pairing, the
// scope/conversation pairing) and what a schema cannot: policy and deny
// rule names are unique, redaction regexes compile, and approval_timeout is
// a positive Go duration.
func ValidateConfig(c Config) error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &ValidationError{"data." + field, fmt.Sprintf(format, args...)})
	}
	if c.Version < 0 {
		add("version", "is %d; it must not be negative", c.Version)
	}
	switch c.Scope {
	case "", ScopeGlobal:
		if c.Conversation != "" {
			add("conversation", `is set, but scope is not "conversation"; set scope to "conversation" or drop the field`)
		}
	case ScopeConversation:
		if !ValidToken(c.Conversation) {
			add("conversation", `must name the conversation a scope "conversation" config applies to (1-128 letters, digits, - _ : @)`)
		}
	default:
		add("scope", "is %q; it must be %q or %q", c.Scope, ScopeGlobal, ScopeConversation)
	}
	anyOn := c.Analyzers.Rules || c.Analyzers.Policy || c.Analyzers.Injection || c.Analyzers.LLMHint
	switch c.Confirmation.Mode {
	case ModeAlways:
	case ModeRisky, ModeAnalyzeOnly:
		if !anyOn {
			add("analyzers", "are all off, but confirmation mode %q needs a risk level; turn on an analyzer (rules, policy, injection or llm_hint) or use mode %q or %q", c.Confirmation.Mode, ModeAlways, ModeNever)
		}
	case ModeNever:
		if anyOn {
			add("confirmation.mode", "is %q but analyzers are on; to score and audit without ever asking, say so with mode %q", ModeNever, ModeAnalyzeOnly)
		}
	default:
		add("confirmation.mode", "is %q; it must be one of %s, %s, %s, %s", c.Confirmation.Mode, ModeAlways, ModeNever, ModeRisky, ModeAnalyzeOnly)
	}
	for _, l := range []struct {
		field string
		r     Risk
	}{{"confirmation.threshold", c.Confirmation.Threshold}, {"confirmation.unknown", c.Confirmation.Unknown}} {
		if l.r != "" && (l.r == RiskUnknown || !l.r.Valid()) {
			add(l.field, "is %q; it must be LOW, MEDIUM or HIGH", l.r)
		}
	}
	switch c.Confirmation.ClientHandoff {
	case "", ClientHandoffRecord, ClientHandoffIgnore:
	default:
		add("confirmation.client_handoff", "is %q; it must be %q (a client hand-off followed by the tool running is recorded as allowed, by client) or %q (it decides nothing: a person or the expiry does)", c.Confirmation.ClientHandoff, ClientHandoffRecord, ClientHandoffIgnore)
	}
	names := map[string]string{}
	for _, list := range []struct {
		field string
		rules []PolicyRule
	}{{"policy_rules", c.PolicyRules}, {"deny_rules", c.DenyRules}} {
		for i, r := range list.rules {
			at := fmt.Sprintf("%s[%d]", list.field, i)
			if r.Name == "" {
				add(at+".name", "is empty; name every rule so decisions can cite it")
			} else if prev, dup := names[r.Name]; dup {
				add(at+".name", "%q is also the name of %s; rule names must be unique", r.Name, prev)
			} else {
				names[r.Name] = at
			}
			if r.Expr == "" {
				add(at+".expr", "is empty; give a CEL expression that yields a bool")
			}
			if r.Level != "" && (r.Level == RiskUnknown || !r.Level.Valid()) {
				add(at+".level", "is %q; it must be LOW, MEDIUM or HIGH", r.Level)
			}
		}
	}
	for i, b := range c.Sandbox.Backends {
		if b == "" {
			add(fmt.Sprintf("sandbox.backends[%d]", i), "is empty")
		}
	}
	switch c.Sandbox.Policy {
	case "", SandboxConfirm, SandboxAllowBelowHigh, SandboxAllow:
	default:
		add("sandbox.policy", "is %q; it must be %s, %s or %s", c.Sandbox.Policy, SandboxConfirm, SandboxAllowBelowHigh, SandboxAllow)
	}
	if c.ApprovalTimeout != "" {
		d, err := time.ParseDuration(c.ApprovalTimeout)
		if err != nil || d <= 0 || !durationPattern.MatchString(c.ApprovalTimeout) {
			add("approval_timeout", "is %q; it must be a positive Go duration such as 90s, 10m or 1h30m", c.ApprovalTimeout)
		}
	}
	ruleNames := map[string]bool{}
	for i, r := range c.Redaction.ExtraRules {
		at := fmt.Sprintf("redaction.extra_rules[%d]", i)
		if r.Name == "" {
			add(at+".name", "is empty; redactions cite the rule by name")
		} else if ruleNames[r.Name] {
			add(at+".name", "%q is used twice; rule names must be unique", r.Name)
		}
		ruleNames[r.Name] = true
		if r.Regex == "" {
			add(at+".regex", "is empty")
		} else if _, err := regexp.Compile(r.Regex); err != nil {
			add(at+".regex", "does not compile (Go RE2 syntax): %v", err)
		}
	}
	if t := c.Redaction.EntropyThreshold; t < 0 || t > 8 || math.IsNaN(t) {
		add("redaction.entropy_threshold", "is %v; it must be between 0 (the default) and 8 bits per character", t)
	}
	errs = append(errs, notifyErrors(c.Notify)...) // notify.go
	errs = append(errs, coherenceErrors(c)...)     // configcheck.go
	return errors.Join(errs...)
}

// validateConfig checks a config event beyond its data's shape: the typed
// view must decode, the configuration must be coherent, and a conversation
// config sent on a conversation's subject must name that conversation.
func (e *Event) validateConfig() error {
	c, err := DataAs[Config](e)
	if err != nil {
		return err
	}
	if err := ValidateConfig(c); err != nil {
		return err
	}
	if c.Scope == ScopeConversation && e.Conversation != "" && e.Conversation != c.Conversation {
		return &ValidationError{"data.conversation", fmt.Sprintf("is %q but the event belongs to conversation %q; they must agree", c.Conversation, e.Conversation)}
	}
	return e.validateConfigEvent(c) // configcheck.go
}
