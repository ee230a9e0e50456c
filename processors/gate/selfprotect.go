package gate

import (
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// selfProtectRule prefixes the ask rule a self-protection finding becomes.
const selfProtectRule = "self-protection/"

// selfProtectHit returns the self-protection finding of a (an action that
// runs Vigil's person-side commands, reads a person's credential, changes
// Vigil's binary, data or hook settings, or stops the node) as an ask
// rule, or nil. An ask rule is what nothing but a person's verdict on this
// very action decides: session grants, allowlist entries and the sandbox
// policy are not consulted, and a grant made on it releases nothing else.
// Policy rules only ever raise a level, and the risk scorer keeps these
// findings when built-in rules are off, so no configuration lowers them
// short of mode analyze-only (which records what risky would do).
func selfProtectHit(a Assessment) *DenyHit {
	for _, r := range a.Reasons {
		if r.Analyzer == core.AnalyzerSelfProtect && r.Level == events.RiskHigh {
			return &DenyHit{Rule: selfProtectRule + r.Rule, Action: events.DenyActionAsk, Reason: r.Detail}
		}
	}
	return nil
}

// askReason is the reason a pending action carries for the ask rule h.
func askReason(h *DenyHit, level events.Risk) events.Reason {
	if rule, ok := strings.CutPrefix(h.Rule, selfProtectRule); ok {
		return events.Reason{Analyzer: core.AnalyzerSelfProtect, Rule: rule,
			Detail: "Vigil protects itself: only a person's verdict on this action lets it through (no session, allowlist or sandbox)", Level: level}
	}
	return events.Reason{Analyzer: "deny_rules", Rule: h.Rule, Detail: "a person must approve every match", Level: level}
}
