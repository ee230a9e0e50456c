package events

import (
	"fmt"
	"path"
	"slices"
	"time"
)

// This file holds what ValidateConfig checks beyond the shape of a config:
// combinations that are each well-formed but together make the gate do
// something other than what its author plainly meant (the agent-sdk's
// "never confirm + LLM analyzer"), and the defaults the gate reads unset
// fields as. Every message names the field and says what to do.

// Deny rule actions.
const (
	// DenyActionDeny denies a matching action outright (the default).
	DenyActionDeny = "deny"
	// DenyActionAsk makes a person approve every matching action, whatever
	// the mode, session approvals, allowlists or sandbox policy say.
	DenyActionAsk = "ask"
)

// Bounds of approval_timeout: shorter leaves no time for a person to
// answer, longer leaves actions (and the agents waiting on them) hanging.
const (
	MinApprovalTimeout = time.Second
	MaxApprovalTimeout = 7 * 24 * time.Hour
	// DefaultApprovalTimeout is used when a config leaves approval_timeout unset.
	DefaultApprovalTimeout = 10 * time.Minute
)

// WithDefaults returns c with every unset field the gate reads filled in:
// scope global; for the modes that compare levels (risky, analyze-only) a
// threshold of HIGH and UNKNOWN counted as MEDIUM; client_handoff record;
// approval_timeout 10m; sandbox policy confirm; deny rule action deny. It
// never changes a field that is set, and it leaves threshold and unknown
// empty for the modes that do not read them, so the result of a valid
// config is still valid.
func (c Config) WithDefaults() Config {
	if c.Scope == "" {
		c.Scope = ScopeGlobal
	}
	if comparesLevels(c.Confirmation.Mode) {
		if c.Confirmation.Threshold == "" {
			c.Confirmation.Threshold = RiskHigh
		}
		if c.Confirmation.Unknown == "" {
			c.Confirmation.Unknown = RiskMedium
		}
	}
	if c.Confirmation.ClientHandoff == "" {
		c.Confirmation.ClientHandoff = ClientHandoffRecord
	}
	if c.ApprovalTimeout == "" {
		c.ApprovalTimeout = DefaultApprovalTimeout.String()
	}
	if c.Sandbox.Policy == "" {
		c.Sandbox.Policy = SandboxConfirm
	}
	if len(c.DenyRules) > 0 {
		rules := slices.Clone(c.DenyRules)
		for i := range rules {
			if rules[i].Action == "" {
				rules[i].Action = DenyActionDeny
			}
		}
		c.DenyRules = rules
	}
	return c
}

// ApprovalTimeoutDuration is approval_timeout as a duration: the default
// when it is unset or unreadable (a config that passed validation always
// reads).
func (c Config) ApprovalTimeoutDuration() time.Duration {
	d, err := time.ParseDuration(c.ApprovalTimeout)
	if err != nil || d <= 0 {
		return DefaultApprovalTimeout
	}
	return d
}

// AsksSecurityRisk reports whether, under c, agents should ask their LLM for
// a security_risk on each tool call: only while the LLM hint analyzer is on,
// since otherwise the field is recorded and ignored. The field is always
// optional (see SecurityRiskSchema): runtimes that follow a mid-conversation
// switch late, or reload old actions carrying it, never break.
func (c Config) AsksSecurityRisk() bool { return c.Analyzers.LLMHint }

// SecurityRiskSchema is the JSON Schema fragment agent runtimes add to the
// "properties" of each tool's parameters while AsksSecurityRisk is true.
// It is never added to "required": a model that leaves it out gets UNKNOWN,
// which the config's confirmation.unknown decides.
const SecurityRiskSchema = `{"security_risk":{"type":"string","enum":["LOW","MEDIUM","HIGH"],` +
	`"description":"Your own estimate of this tool call's security risk: LOW (read-only, inside the workspace), ` +
	`MEDIUM (changes files or state inside the workspace), HIGH (deletes data, changes the system, ` +
	`touches credentials or the network in ways the user did not ask for). Optional."}}`

// comparesLevels reports whether mode reads the threshold and unknown fields.
func comparesLevels(mode string) bool { return mode == ModeRisky || mode == ModeAnalyzeOnly }

// analyzerReach is the highest level an enabled analyzer can give an
// action under c, and which analyzer gives it ("" when none can). The rule
// analyzers (shell parsing, files, network …) and the LLM hint can reach
// HIGH; the policy analyzer only the highest level of its rules (a rule
// without a level counts as HIGH). The injection analyzer judges context
// files (context.loaded), not actions, so it reaches nothing here. This
// table follows what processors/risk does; change both together.
func analyzerReach(c Config) (Risk, string) {
	switch {
	case c.Analyzers.Rules:
		return RiskHigh, "rules"
	case c.Analyzers.LLMHint:
		return RiskHigh, "llm_hint"
	}
	if !c.Analyzers.Policy {
		return "", ""
	}
	reach := Risk("")
	for _, r := range c.PolicyRules {
		l := r.Level
		if l == "" {
			l = RiskHigh
		}
		if reach == "" || l.Rank() > reach.Rank() {
			reach = l
		}
	}
	return reach, "policy"
}

// coherenceErrors returns what is incoherent about c. ValidateConfig calls
// it after the shape checks; each error is a *ValidationError naming a
// field under "data.".
func coherenceErrors(c Config) []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &ValidationError{"data." + field, fmt.Sprintf(format, args...)})
	}
	mode := c.Confirmation.Mode
	known := mode == ModeAlways || mode == ModeNever || mode == ModeRisky || mode == ModeAnalyzeOnly

	// Levels that only the level-comparing modes read.
	if known && !comparesLevels(mode) {
		if c.Confirmation.Threshold != "" {
			add("confirmation.threshold", "is %s, but mode %q never compares levels; drop the threshold, or use mode %q to ask from that level on", c.Confirmation.Threshold, mode, ModeRisky)
		}
		if c.Confirmation.Unknown != "" {
			add("confirmation.unknown", "is %s, but mode %q never compares levels; drop it, or use mode %q", c.Confirmation.Unknown, mode, ModeRisky)
		}
	}

	// A threshold no enabled analyzer can reach: risky would never ask,
	// analyze-only would never record a would-ask.
	if comparesLevels(mode) {
		threshold := c.Confirmation.Threshold
		if threshold == "" {
			threshold = RiskHigh
		}
		reach, by := analyzerReach(c)
		anyOn := c.Analyzers.Rules || c.Analyzers.Policy || c.Analyzers.Injection || c.Analyzers.LLMHint
		switch {
		case !anyOn:
			// reported by ValidateConfig
		case reach == "" && c.Analyzers.Policy:
			add("analyzers.policy", "is the only analyzer that scores actions, but policy_rules is empty, so every action would be UNKNOWN and mode %q would rest on confirmation.unknown alone; add policy rules, or turn on the rules analyzer", mode)
		case reach == "":
			add("analyzers.injection", "is the only analyzer on, and it judges context files, not actions, so every action would be UNKNOWN and mode %q would rest on confirmation.unknown alone; turn on the rules, policy or llm_hint analyzer, or use mode %q", mode, ModeAlways)
		case threshold.Valid() && threshold != RiskUnknown && reach.Rank() < threshold.Rank():
			add("confirmation.threshold", "is %s, but the only analyzer that scores actions (%s) gives at most %s, so mode %q would never ask; lower the threshold to %s, give a policy rule level %s, or turn on the rules analyzer", threshold, by, reach, mode, reach, threshold)
		}
	}

	// Policy rules need the policy analyzer.
	if len(c.PolicyRules) > 0 && !c.Analyzers.Policy {
		add("policy_rules", "has %d rules, but analyzers.policy is off, so none would ever run; turn analyzers.policy on or remove the rules", len(c.PolicyRules))
	}
	for i, r := range c.PolicyRules {
		if r.Action != "" {
			add(fmt.Sprintf("policy_rules[%d].action", i), "is %q, but only deny_rules have an action; policy rules give a level (move the rule to deny_rules, or drop action)", r.Action)
		}
	}

	// Deny rules that need a person, in modes where nobody is asked.
	for i, r := range c.DenyRules {
		at := fmt.Sprintf("deny_rules[%d].action", i)
		switch r.Action {
		case "", DenyActionDeny:
		case DenyActionAsk:
			if mode == ModeNever || mode == ModeAnalyzeOnly {
				add(at, "is %q (a person must approve every match), but mode %q never asks anyone; use action %q to deny matches outright, or use mode %q or %q", DenyActionAsk, mode, DenyActionDeny, ModeRisky, ModeAlways)
			}
		default:
			add(at, "is %q; it must be %q (deny outright, the default) or %q (a person must approve each match)", r.Action, DenyActionDeny, DenyActionAsk)
		}
	}

	// Sandboxed backends and their policy.
	seen := map[string]bool{}
	for i, b := range c.Sandbox.Backends {
		at := fmt.Sprintf("sandbox.backends[%d]", i)
		switch {
		case b == "":
			// reported by ValidateConfig
		case b == "local":
			add(at, `is "local": the agent's own host is not a sandbox; list only isolated backends (docker, singularity, modal, daytona …)`)
		case !ValidToken(b):
			add(at, "is %q; a backend name is letters, digits, - _ : @ as conversation.started sends it", b)
		case seen[b]:
			add(at, "%q is listed twice", b)
		}
		seen[b] = true
	}
	policy := c.Sandbox.Policy
	if policy != "" && policy != SandboxConfirm {
		switch {
		case len(c.Sandbox.Backends) == 0:
			add("sandbox.policy", "is %q but sandbox.backends is empty, so it applies to nothing; list the sandboxed backends or drop the policy", policy)
		case mode == ModeNever || mode == ModeAnalyzeOnly:
			add("sandbox.policy", "is %q, but mode %q never asks anyone, so it changes nothing; drop it", policy, mode)
		case policy == SandboxAllowBelowHigh && mode == ModeRisky && (c.Confirmation.Threshold == "" || c.Confirmation.Threshold == RiskHigh):
			add("sandbox.policy", "is %q, but with threshold HIGH only HIGH asks anyway, so it changes nothing; use %q, or lower confirmation.threshold", policy, SandboxAllow)
		}
	}

	// approval_timeout bounds (its syntax is checked by ValidateConfig).
	if d, err := time.ParseDuration(c.ApprovalTimeout); err == nil && d > 0 {
		if d < MinApprovalTimeout || d > MaxApprovalTimeout {
			add("approval_timeout", "is %s; it must be between %s (time for a person to answer) and %s (after which the action is denied anyway)", d, MinApprovalTimeout, "168h")
		}
	}

	if c.Workspace != "" && !path.IsAbs(c.Workspace) {
		add("workspace", "is %q; give an absolute path", c.Workspace)
	}
	return errs
}

// validateConfigEvent checks what only the event can tell: a global config
// belongs to no conversation. A global config sent on a conversation's
// subject would look, in that conversation's history, like a conversation
// config; send it on vigil.ingest.control._ instead.
func (e *Event) validateConfigEvent(c Config) error {
	if (c.Scope == "" || c.Scope == ScopeGlobal) && e.Conversation != "" {
		return &ValidationError{"conversation", fmt.Sprintf(`is %q but the config's scope is global; send global configs with no conversation (subject %s%s), or set scope "conversation" and conversation %q`, e.Conversation, IngestControlPrefix, GlobalScope, e.Conversation)}
	}
	return nil
}
