package replay

import (
	"slices"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// Dispositions: what the gate did with an action when it arrived.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
	// Pending is the final state of an action still waiting for a person
	// at the end of the replay: under a what-if config, an action that
	// was allowed outright has no approval in the log, so "would ask"
	// ends here.
	Pending = "pending"
)

// Outcome is what the gate did with one action.
type Outcome struct {
	// Disposition is allow, ask or deny: the gate's answer when the action
	// arrived. Final is allow, deny or pending: how it ended.
	Disposition string      `json:"disposition"`
	Final       string      `json:"final"`
	By          string      `json:"by,omitempty"`
	Approver    string      `json:"approver,omitempty"`
	Level       events.Risk `json:"level,omitempty"`
	// Rules are the rules behind the level or the decision.
	Rules  []string `json:"rules,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Would is, in mode analyze-only, what mode risky would have done.
	Would string `json:"would,omitempty"`
}

// String describes the outcome for people: "allowed (mode)", "asked,
// then allowed by alice", "denied (rule)", "asked, still pending".
func (o Outcome) String() string {
	by := func() string {
		if o.Approver != "" {
			return " by " + o.Approver
		}
		if o.By != "" {
			return " (" + o.By + ")"
		}
		return ""
	}
	switch {
	case o.Disposition == Ask && o.Final == Pending:
		return "asked, still pending"
	case o.Disposition == Ask:
		return "asked, then " + past(o.Final) + by()
	case o.Disposition == "":
		return "not decided"
	}
	s := past(o.Final) + by()
	if o.Would != "" {
		s += ", mode risky would " + o.Would
	}
	return s
}

func past(final string) string {
	switch final {
	case Allow:
		return "allowed"
	case Deny:
		return "denied"
	}
	return final
}

// ActionChange is one action whose fate differs under the what-if config.
type ActionChange struct {
	ActionID     string  `json:"action_id"`
	Conversation string  `json:"conversation"`
	Seq          uint64  `json:"seq"`
	Time         string  `json:"time,omitempty"`
	Tool         string  `json:"tool,omitempty"`
	Command      string  `json:"command,omitempty"`
	Was          Outcome `json:"was"`
	Would        Outcome `json:"would"`
	// Stopped: it ran, and would have been asked or denied. Loosened: it
	// was held or denied, and would have run without a person.
	Stopped  bool `json:"stopped,omitempty"`
	Loosened bool `json:"loosened,omitempty"`
}

// WhatIfReport compares the gate's decisions as recorded with those under
// another config.
type WhatIfReport struct {
	ConfigVersion int64 `json:"config_version"`
	// Actions counts the actions compared (those at or after From).
	Actions uint64 `json:"actions"`
	// Matrix counts actions by recorded disposition, then what-if
	// disposition: Matrix["allow"]["ask"] were allowed and would ask.
	Matrix map[string]map[string]uint64 `json:"matrix"`
	// Changed counts actions whose disposition or final outcome differs.
	Changed uint64 `json:"changed"`
	// Stopped counts actions that ran and would not have run without a
	// person (StoppedAsk) or at all (StoppedDeny); Loosened the reverse.
	Stopped     uint64 `json:"stopped"`
	StoppedAsk  uint64 `json:"stopped_ask"`
	StoppedDeny uint64 `json:"stopped_deny"`
	Loosened    uint64 `json:"loosened"`
	// LevelOnly counts actions decided the same way at a different level.
	LevelOnly uint64 `json:"level_only"`
	// Changes lists the first changed actions, in log order.
	Changes []ActionChange `json:"changes,omitempty"`
}

type whatIf struct {
	rep  WhatIfReport
	max  int
	open map[string]*pair // "<action id>@<log seq>"
	// onChange, when set, receives every changed action as it is settled.
	onChange func(ActionChange)
}

type pair struct {
	change   ActionChange
	was, alt *Outcome
}

func newWhatIf(cfg *events.Config, max int) *whatIf {
	w := &whatIf{max: max, open: map[string]*pair{}}
	w.rep.ConfigVersion = cfg.Version
	w.rep.Matrix = map[string]map[string]uint64{}
	return w
}

// gateView is what the what-if needs from a gate output.
type gateView struct {
	ActionID string          `msgpack:"action_id"`
	LogSeq   uint64          `msgpack:"log_seq"`
	Level    events.Risk     `msgpack:"level"`
	Reasons  []events.Reason `msgpack:"reasons"`
	Outcome  events.Outcome  `msgpack:"outcome"`
	By       string          `msgpack:"by"`
	Approver string          `msgpack:"approver"`
	Reason   string          `msgpack:"reason"`
	Would    string          `msgpack:"would"`
}

func viewGate(data any) (gateView, bool) {
	switch d := data.(type) {
	case events.GateDecided:
		return gateView{d.ActionID, d.LogSeq, d.Level, d.Reasons, d.Outcome, string(d.By), d.Approver, d.Reason, d.Would}, true
	case *events.GateDecided:
		return viewGate(*d)
	case events.GateRequested:
		return gateView{ActionID: d.ActionID, LogSeq: d.LogSeq, Level: d.Level, Reasons: d.Reasons}, true
	case *events.GateRequested:
		return viewGate(*d)
	}
	var v gateView
	b, err := msgpack.Marshal(data)
	if err != nil || msgpack.Unmarshal(b, &v) != nil || v.ActionID == "" {
		return gateView{}, false
	}
	return v, true
}

func pairKey(actionID string, seq uint64) string {
	return actionID + "@" + strconv.FormatUint(seq, 10)
}

// observe folds one record's outputs under both configs.
func (w *whatIf) observe(rec *events.Record, base, alt []processors.Output) {
	ev := &rec.Event
	if ev.Kind == events.KindAction && ev.ID != "" {
		cmd, _ := ev.Args()["command"].(string)
		w.open[pairKey(ev.ID, rec.Seq)] = &pair{
			change: ActionChange{ActionID: ev.ID, Conversation: ev.Conversation, Seq: rec.Seq,
				Time: rec.Event.Time.UTC().Format("2006-01-02T15:04:05Z07:00"), Tool: ev.Tool(), Command: clip(cmd, 200)},
			was: &Outcome{}, alt: &Outcome{},
		}
	}
	var touched []*pair
	for side, outs := range [][]processors.Output{base, alt} {
		for i := range outs {
			d := &outs[i].Event
			if d.Kind != events.KindGateRequested && d.Kind != events.KindGateDecided {
				continue
			}
			v, ok := viewGate(d.Data)
			if !ok {
				continue
			}
			p := w.open[pairKey(v.ActionID, v.LogSeq)]
			if p == nil {
				continue // an action before From
			}
			o := p.was
			if side == 1 {
				o = p.alt
			}
			apply(o, d.Kind, &v)
			touched = append(touched, p)
		}
	}
	for _, p := range touched {
		if w.open[pairKey(p.change.ActionID, p.change.Seq)] == p && p.was.Final != "" && p.alt.Final != "" {
			w.settle(p)
		}
	}
}

func apply(o *Outcome, kind events.Kind, v *gateView) {
	rules := func() []string {
		var rs []string
		for _, r := range v.Reasons {
			if r.Rule != "" && !slices.Contains(rs, r.Rule) {
				rs = append(rs, r.Rule)
			}
		}
		return rs
	}
	if kind == events.KindGateRequested {
		if o.Disposition == "" {
			o.Disposition, o.Level, o.Rules = Ask, v.Level, rules()
		}
		return
	}
	final := Deny
	if v.Outcome == events.OutcomeAllow {
		final = Allow
	}
	if o.Disposition == "" {
		o.Disposition, o.Level, o.Rules, o.Would = final, v.Level, rules(), v.Would
	}
	o.Final, o.By, o.Approver, o.Reason = final, v.By, v.Approver, v.Reason
}

func (w *whatIf) settle(p *pair) {
	delete(w.open, pairKey(p.change.ActionID, p.change.Seq))
	was, would := *p.was, *p.alt
	w.rep.Actions++
	row := w.rep.Matrix[was.Disposition]
	if row == nil {
		row = map[string]uint64{}
		w.rep.Matrix[was.Disposition] = row
	}
	row[would.Disposition]++
	if was.Disposition == would.Disposition && was.Final == would.Final {
		if was.Level != would.Level {
			w.rep.LevelOnly++
		}
		return
	}
	c := p.change
	c.Was, c.Would = was, would
	c.Stopped = was.Final == Allow && would.Final != Allow
	c.Loosened = was.Final != Allow && would.Disposition == Allow
	w.rep.Changed++
	if c.Stopped {
		w.rep.Stopped++
		if would.Disposition == Deny {
			w.rep.StoppedDeny++
		} else {
			w.rep.StoppedAsk++
		}
	}
	if c.Loosened {
		w.rep.Loosened++
	}
	if w.onChange != nil {
		w.onChange(c)
	}
	if len(w.rep.Changes) < w.max {
		w.rep.Changes = append(w.rep.Changes, c)
	}
}

// finish settles the actions still waiting, as pending.
func (w *whatIf) finish() {
	ps := make([]*pair, 0, len(w.open))
	for _, p := range w.open {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *pair) int { return cmpSeq(a.change.Seq, b.change.Seq) })
	for _, p := range ps {
		for _, o := range []*Outcome{p.was, p.alt} {
			if o.Final == "" {
				o.Final = Pending
			}
		}
		w.settle(p)
	}
	slices.SortStableFunc(w.rep.Changes, func(a, b ActionChange) int { return cmpSeq(a.Seq, b.Seq) })
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
