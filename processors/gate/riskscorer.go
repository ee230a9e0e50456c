package gate

import (
	"fmt"
	"slices"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk"
)

// riskScorer adapts the risk package's scorer, plus the config's deny rules
// compiled with the same CEL environment as policy rules (the variables of
// the action view; see docs/risk.md), to the gate's Scorer.
type riskScorer struct {
	s    *risk.Scorer
	deny *risk.RuleSet
	// actions maps deny rule names to their actions (deny or ask).
	actions map[string]string
}

// NewRiskScorer builds the gate's scorer for cfg: the risk scorer of cfg
// and its compiled deny rules. It is called once per config, never per
// action.
func NewRiskScorer(cfg events.Config) (Scorer, error) {
	s, err := risk.NewScorer(cfg)
	if err != nil {
		return nil, err
	}
	deny, err := risk.CompileRules(cfg.DenyRules)
	if err != nil {
		return nil, fmt.Errorf("config v%d: deny rules: %w", cfg.Version, err)
	}
	actions := make(map[string]string, len(cfg.DenyRules))
	for _, r := range cfg.DenyRules {
		a := r.Action
		if a == "" {
			a = events.DenyActionDeny
		}
		actions[r.Name] = a
	}
	return &riskScorer{s: s, deny: deny, actions: actions}, nil
}

func (r *riskScorer) Assess(ev *events.Event, env Env) Assessment {
	return r.from(r.s.ScoreAction(ev, risk.Env{Workspace: env.Workspace, Backend: env.Backend, Conversation: env.Conversation, Agent: env.Agent}))
}

// from builds the gate's assessment from a risk assessment: the shape, and
// the deny rules evaluated on its view. The reasons are copied: the risk
// processor's output holds the same slice.
func (r *riskScorer) from(a risk.Assessment) Assessment {
	out := Assessment{Level: a.Level, Reasons: slices.Clone(a.Reasons), Shape: r.s.Shape(a), Files: risk.EffectsOf(a)}
	if r.deny.Len() > 0 {
		matched, errs := r.deny.Match(risk.Activation(a.View, a.Level))
		for _, m := range matched {
			out.Deny = append(out.Deny, DenyHit{Rule: m.Name, Action: r.actions[m.Name], Reason: m.Reason})
		}
		for _, err := range errs {
			// A deny rule that cannot be evaluated on this action fails
			// closed: it asks a person.
			out.Deny = append(out.Deny, DenyHit{Rule: "evaluation-error", Action: events.DenyActionAsk, Reason: err.Error()})
		}
	}
	return out
}
