// Package gate is Vigil's approval gate: a deterministic fold that decides,
// for every action in the log, under the config in force at that action's
// log position, whether it is allowed, denied, or must wait for a person,
// and that resolves waiting actions from approval.decision,
// approval.expired, allowlist.changed and observation events.
//
// It does no I/O, reads no clock and no randomness, and never lets map
// order reach its outputs: the live driver and replay produce the same
// bytes. Time-based outcomes come in as events (the expiry timer in
// internal/expiry appends approval.expired), as raft's Tick does.
//
// # Outputs
//
// Every output goes to events.GateSubject(conversation), except alerts,
// which go to events.SubjectAlert. For one log record, in order:
//
//   - gate.decided {outcome allow|deny, by rule|mode|session|allowlist|
//     sandbox|human|timeout}: the final decision on an action. An action
//     gets exactly one, ever.
//   - gate.requested: the action waits for a person; it carries the
//     approval timeout the expiry timer needs.
//   - alert: an approval for an action that does not exist or was already
//     decided, an approval sent on the wrong conversation, an action that
//     ran before or despite its decision, a config the scorer cannot
//     compile, a conversation whose backend changed.
//
// # How an action is decided
//
// With cfg the config in force for the action's conversation and level the
// scorer's level (UNKNOWN counted as cfg.confirmation.unknown):
//
//  1. A deny rule with action deny matches: deny, by rule. Deny rules win
//     over everything, allowlists included.
//  2. Mode never: allow, by mode. Mode analyze-only: allow, by mode, with
//     Would saying what mode risky would have done.
//  3. The action needs a person when a deny rule with action ask matches,
//     or the mode is always, or the mode is risky and level ≥ threshold.
//     Otherwise: allow, by mode.
//  4. Unless an ask rule matched: a session approval for the same shape in
//     this conversation allows it (by session); an allowlist entry for the
//     same shape allows it (by allowlist); a sandboxed backend whose policy
//     lets it through allows it (by sandbox). Sandboxing never hides an
//     action: it is scored and the decision recorded like any other.
//  5. Otherwise gate.requested: it waits for a verdict (once, session,
//     always, deny), an expiry (deny, by timeout), or the agent withdrawing
//     it (deny, by timeout).
//
// # Shapes
//
// A session or always approval does not match the raw command string but
// its shape, from the scorer: the command name plus the highest-level rule
// that fired ("rm:shell.recursive-delete-root"), so approving `rm -rf
// build/` for the session does not approve `rm -rf /`, and quoting or
// variable tricks that change the string but not what runs do not escape
// an approval's scope either. An action whose scorer gives no shape is
// never matched by a session or allowlist approval.
package gate

import (
	"fmt"
	"slices"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk"
)

// Name is the processor's name; it prefixes every output id.
const Name = "gate"

// Observation statuses an agent may send about its own action.
const (
	// StatusWithdrawn: the agent stopped waiting for a decision and will not
	// run the action. A pending action is denied, by timeout: an agent may
	// always make its own action's fate stricter.
	StatusWithdrawn = "withdrawn"
	// StatusHandedOff: the agent's client asks its own person instead (a hook
	// whose time budget ran out answered "ask"). The action stays pending;
	// a later plain observation (the tool ran) is recorded as the person's
	// approval in that client.
	StatusHandedOff = "handed-off"
	// StatusDeniedInClient: the client's own user refused the action (Claude
	// Code's PermissionDenied). A pending action is denied, by human, with
	// approver "client:<client>": refusing is never a privilege.
	StatusDeniedInClient = "denied-in-client"
)

// DefaultMaxDecided is how many decided action ids the gate remembers, to
// tell "already decided" from "unknown" and to catch actions that run
// despite a deny.
const DefaultMaxDecided = 100_000

// Env is what the scorer knows about where an action runs.
type Env struct {
	Workspace    string
	Backend      string
	Conversation string
	Agent        string
}

// DenyHit is a deny rule that matched an action.
type DenyHit struct {
	Rule   string
	Action string // events.DenyActionDeny or events.DenyActionAsk
	Reason string
}

// Assessment is what the gate needs to know about one action.
type Assessment struct {
	Level   events.Risk
	Reasons []events.Reason
	// Shape is the normalised shape session and allowlist approvals match;
	// "" means none can.
	Shape string
	// Deny lists the deny rules that matched, in config order.
	Deny []DenyHit
}

// Scorer assesses actions under one config. It must be deterministic.
type Scorer interface {
	Assess(ev *events.Event, env Env) Assessment
}

// Options configure a gate.
type Options struct {
	processors.Options
	// NewScorer builds the scorer for a config. It is called once per config
	// event (never per action). Default: the risk package's scorer.
	NewScorer func(events.Config) (Scorer, error)
	// MaxDecided bounds the decided ids remembered; 0 means DefaultMaxDecided.
	MaxDecided int
	// Memo, when set, is shared with the risk processor running before the
	// gate in the same pipeline: the gate reuses the assessment it recorded
	// for the same record, config and environment instead of scoring the
	// action again (a miss scores as usual). See risk.Memo.
	Memo *risk.Memo
}

// Processor is the gate fold.
type Processor struct {
	opts    Options
	tracker *processors.ConfigTracker
	// scorers caches one scorer per config, keyed by the config event's log
	// sequence (0 = the built-in default or the override).
	scorers map[uint64]scorerEntry
	// backends: the first backend each conversation announced.
	backends map[string]string
	pending  map[string]*pending
	decided  map[string]decidedInfo
	order    []string // decided ids, oldest first, for eviction
	head     int
	sessions map[string]map[string]grant // conversation → shape → grant
	allow    *Allowlist
}

type scorerEntry struct {
	s   Scorer
	err error
}

type pending struct {
	seq       uint64
	conv      string
	req       events.GateRequested
	askRule   bool   // an ask deny rule matched: only a verdict decides
	handedOff string // the client that asks its own person, if any
}

type decidedInfo struct {
	outcome events.Outcome
	by      events.DecidedBy
	seq     uint64
}

type grant struct {
	approver string
	seq      uint64
}

// New returns a gate with no history: the default config in force.
func New(opts Options) (*Processor, error) {
	if opts.NewScorer == nil {
		opts.NewScorer = NewRiskScorer
	}
	if opts.MaxDecided <= 0 {
		opts.MaxDecided = DefaultMaxDecided
	}
	t := processors.NewConfigTracker()
	t.Override = opts.ConfigOverride
	p := &Processor{
		opts:     opts,
		tracker:  t,
		scorers:  map[uint64]scorerEntry{},
		backends: map[string]string{},
		pending:  map[string]*pending{},
		decided:  map[string]decidedInfo{},
		sessions: map[string]map[string]grant{},
		allow:    NewAllowlist(),
	}
	// Build the default (or override) config's scorer now, so a broken
	// override fails the constructor instead of every action.
	cfg, seq := t.For("")
	if _, err := p.scorer(seq, cfg.WithDefaults()); err != nil {
		return nil, fmt.Errorf("gate: config: %w", err)
	}
	return p, nil
}

// Name returns "gate".
func (p *Processor) Name() string { return Name }

// outputs collects one record's outputs, numbering them.
type outputs struct {
	rec *events.Record
	out []processors.Output
}

func (o *outputs) decided(conv string, d events.GateDecided) {
	o.out = append(o.out, processors.NewOutput(Name, o.rec, len(o.out), events.GateSubject(conv), events.KindGateDecided, d))
}

func (o *outputs) requested(conv string, r events.GateRequested) {
	o.out = append(o.out, processors.NewOutput(Name, o.rec, len(o.out), events.GateSubject(conv), events.KindGateRequested, r))
}

func (o *outputs) alert(severity, reason string) {
	o.out = append(o.out, processors.NewOutput(Name, o.rec, len(o.out), events.SubjectAlert, events.KindAlert, events.Alert{
		Severity: severity, Reason: reason, EventID: o.rec.Event.ID, LogSeq: o.rec.Seq, Subject: o.rec.Subject,
	}))
}

// Step folds one log record. It never returns an error for a record it can
// read: problems become alerts, so the fold never stalls.
func (p *Processor) Step(rec events.Record) ([]processors.Output, error) {
	o := &outputs{rec: &rec}
	ev := &rec.Event
	switch ev.Kind {
	case events.KindConfig:
		p.stepConfig(o)
	case events.KindConversationStarted:
		p.stepStarted(o)
	case events.KindAction:
		p.stepAction(o)
	case events.KindApprovalDecision:
		p.stepApproval(o)
	case events.KindApprovalExpired:
		p.stepExpired(o)
	case events.KindAllowlistChanged:
		p.stepAllowlist(o)
	case events.KindObservation:
		p.stepObservation(o)
	}
	return o.out, nil
}

func (p *Processor) stepConfig(o *outputs) {
	if _, err := p.tracker.Observe(o.rec); err != nil {
		o.alert("high", fmt.Sprintf("config event %s at log seq %d is ignored: %v", o.rec.Event.ID, o.rec.Seq, err))
		return
	}
	if p.tracker.Override != nil {
		return
	}
	cfg, err := events.DataAs[events.Config](&o.rec.Event)
	if err != nil {
		return // Observe already refused it
	}
	if _, err := p.scorer(o.rec.Seq, cfg.WithDefaults()); err != nil {
		o.alert("high", fmt.Sprintf("config v%d (event %s) cannot be compiled, so every action under it is denied: %v", cfg.Version, o.rec.Event.ID, err))
	}
}

func (p *Processor) stepStarted(o *outputs) {
	ev := &o.rec.Event
	p.tracker.Observe(o.rec)
	backend := ev.StringField("backend")
	if backend == "" {
		backend = "local"
	}
	prev, ok := p.backends[ev.Conversation]
	switch {
	case !ok:
		p.backends[ev.Conversation] = backend
	case prev != backend:
		o.alert("high", fmt.Sprintf("conversation %s announced backend %q but started on %q; the gate keeps %q (a conversation cannot move into a sandbox to loosen its policy)", ev.Conversation, backend, prev, prev))
	}
}

// scorer returns the scorer of the config from the config event at seq.
func (p *Processor) scorer(seq uint64, cfg events.Config) (Scorer, error) {
	if e, ok := p.scorers[seq]; ok {
		return e.s, e.err
	}
	s, err := p.opts.NewScorer(cfg)
	p.scorers[seq] = scorerEntry{s, err}
	return s, err
}

// configFor returns the config in force for conv, with defaults filled.
func (p *Processor) configFor(conv string) (events.Config, uint64) {
	cfg, seq := p.tracker.For(conv)
	return cfg.WithDefaults(), seq
}

func (p *Processor) stepAction(o *outputs) {
	rec := o.rec
	ev := &rec.Event
	conv := ev.Conversation
	cfg, cfgSeq := p.configFor(conv)
	backend := p.backends[conv]
	if backend == "" {
		backend = "local"
	}
	d := events.GateDecided{
		ActionID: ev.ID, LogSeq: rec.Seq, DecisionSeq: rec.Seq, Level: events.RiskUnknown,
		ConfigVersion: cfg.Version, AskSecurityRisk: cfg.AsksSecurityRisk(),
	}
	if _, dup := p.pending[ev.ID]; dup {
		d.Outcome, d.By = events.OutcomeDeny, events.ByRule
		d.Reason = fmt.Sprintf("action id %s is already waiting for a decision; give every action a unique id", ev.ID)
		o.decided(conv, d)
		return
	}
	sc, err := p.scorer(cfgSeq, cfg)
	if err != nil {
		d.Outcome, d.By = events.OutcomeDeny, events.ByRule
		d.Reason = fmt.Sprintf("config v%d cannot be compiled (fail closed): %v", cfg.Version, err)
		p.finish(o, conv, d)
		return
	}
	workspace := p.tracker.Conversation(conv).Workspace
	if workspace == "" {
		workspace = cfg.Workspace
	}
	env := Env{Workspace: workspace, Backend: backend, Conversation: conv, Agent: ev.Agent}
	var a Assessment
	fromMemo := false
	if rs, ok := sc.(*riskScorer); ok && p.opts.Memo != nil {
		key := risk.MemoKey{Seq: rec.Seq, ConfigSeq: cfgSeq, Env: risk.Env(env)}
		if ra, hit := p.opts.Memo.Get(key); hit {
			a, fromMemo = rs.from(ra), true
		}
	}
	if !fromMemo {
		a = sc.Assess(ev, env)
	}
	d.Level, d.Reasons, d.Shape = a.Level, a.Reasons, a.Shape
	if d.Level == "" {
		d.Level = events.RiskUnknown
	}
	level := d.Level
	if level == events.RiskUnknown && cfg.Confirmation.Unknown != "" {
		level = cfg.Confirmation.Unknown
	}
	mode := cfg.Confirmation.Mode
	var denyHit, askHit *DenyHit
	for i := range a.Deny {
		h := &a.Deny[i]
		if h.Action == events.DenyActionAsk {
			if askHit == nil {
				askHit = h
			}
		} else if denyHit == nil {
			denyHit = h
		}
	}
	overThreshold := cfg.Confirmation.Threshold != "" && level.Rank() >= cfg.Confirmation.Threshold.Rank()

	// 1. Deny rules win over everything.
	if denyHit != nil && mode != events.ModeAnalyzeOnly {
		d.Outcome, d.By, d.Reason = events.OutcomeDeny, events.ByRule, denyReason(denyHit)
		p.finish(o, conv, d)
		return
	}
	// 2. Modes that never ask.
	switch mode {
	case events.ModeNever:
		if askHit == nil {
			d.Outcome, d.By = events.OutcomeAllow, events.ByMode
			p.finish(o, conv, d)
			return
		}
		// An ask rule under never cannot pass validation; a foreign log
		// gets the fail-closed reading: a person decides.
	case events.ModeAnalyzeOnly:
		d.Outcome, d.By = events.OutcomeAllow, events.ByMode
		switch {
		case denyHit != nil:
			d.Would, d.Reason = "deny", "analyze-only; mode risky would deny: "+denyReason(denyHit)
		case askHit != nil || overThreshold:
			d.Would, d.Reason = "ask", fmt.Sprintf("analyze-only; mode risky (threshold %s) would ask a person", cfg.Confirmation.Threshold)
		}
		p.finish(o, conv, d)
		return
	}
	// 3. Does it need a person?
	needs := askHit != nil || overThreshold || mode != events.ModeRisky // always, and unknown modes: fail closed
	if !needs {
		d.Outcome, d.By = events.OutcomeAllow, events.ByMode
		p.finish(o, conv, d)
		return
	}
	// 4. Approvals already given, and the sandbox policy.
	if askHit == nil {
		if by, note, entry := p.standing(cfg, conv, a.Shape, backend, level); by != "" {
			d.Outcome, d.By, d.Reason, d.EntryID = events.OutcomeAllow, by, note, entry
			p.finish(o, conv, d)
			return
		}
	}
	// 5. Wait for a person.
	req := events.GateRequested{
		ActionID: ev.ID, LogSeq: rec.Seq, Level: d.Level, Reasons: d.Reasons,
		Tool: ev.Tool(), Command: Summary(ev), Shape: a.Shape,
		Timeout: cfg.ApprovalTimeoutDuration().String(), ConfigVersion: cfg.Version,
		Agent: ev.Agent, Backend: backend,
	}
	if askHit != nil {
		req.Reasons = append(slices.Clone(req.Reasons), events.Reason{Analyzer: "deny_rules", Rule: askHit.Rule, Detail: "a person must approve every match", Level: d.Level})
	}
	p.pending[ev.ID] = &pending{seq: rec.Seq, conv: conv, req: req, askRule: askHit != nil}
	o.requested(conv, req)
}

func denyReason(h *DenyHit) string {
	if h.Reason != "" {
		return fmt.Sprintf("deny rule %s: %s", h.Rule, h.Reason)
	}
	return "deny rule " + h.Rule
}

// standing reports what, short of a new verdict, lets an action that needs
// a person through: a session approval, an allowlist entry, or the sandbox.
func (p *Processor) standing(cfg events.Config, conv, shape, backend string, level events.Risk) (events.DecidedBy, string, string) {
	if shape != "" {
		if g, ok := p.sessions[conv][shape]; ok && !cfg.Allowlist.DisableSession {
			return events.BySession, fmt.Sprintf("shape %s approved for this conversation by %s (log seq %d)", shape, g.approver, g.seq), ""
		}
		if !cfg.Allowlist.DisableAlways {
			if e := p.allow.forShape(shape); e != nil {
				return events.ByAllowlist, fmt.Sprintf("allowlist entry %s (shape %s)", e.ID, shape), e.ID
			}
		}
	}
	if slices.Contains(cfg.Sandbox.Backends, backend) {
		switch cfg.Sandbox.Policy {
		case events.SandboxAllow:
			return events.BySandbox, fmt.Sprintf("backend %s is sandboxed (policy allow)", backend), ""
		case events.SandboxAllowBelowHigh:
			if level != events.RiskHigh {
				return events.BySandbox, fmt.Sprintf("backend %s is sandboxed (policy allow-below-high)", backend), ""
			}
		}
	}
	return "", "", ""
}

// finish records a decision and emits it.
func (p *Processor) finish(o *outputs, conv string, d events.GateDecided) {
	delete(p.pending, d.ActionID)
	p.remember(d)
	o.decided(conv, d)
}

func (p *Processor) remember(d events.GateDecided) {
	if _, ok := p.decided[d.ActionID]; !ok {
		if len(p.order)-p.head >= p.opts.MaxDecided {
			delete(p.decided, p.order[p.head])
			p.order[p.head] = ""
			p.head++
			if p.head > len(p.order)/2 {
				p.order = append([]string(nil), p.order[p.head:]...)
				p.head = 0
			}
		}
		p.order = append(p.order, d.ActionID)
	}
	p.decided[d.ActionID] = decidedInfo{outcome: d.Outcome, by: d.By, seq: d.DecisionSeq}
}

// notPending explains why an event about an action that is not waiting
// cannot decide it.
func (p *Processor) notPending(id string) string {
	if di, ok := p.decided[id]; ok {
		return fmt.Sprintf("action %s was already decided (%s, by %s, log seq %d)", id, di.outcome, di.by, di.seq)
	}
	return fmt.Sprintf("there is no action %s waiting for a decision (unknown, or decided long ago)", id)
}

// decidedFrom returns the decision on pending action pa, made by rec.
func decidedFrom(pa *pending, rec *events.Record, cfg events.Config) events.GateDecided {
	return events.GateDecided{
		ActionID: pa.req.ActionID, LogSeq: pa.seq, DecisionSeq: rec.Seq,
		Level: pa.req.Level, Reasons: pa.req.Reasons, Shape: pa.req.Shape,
		ConfigVersion: cfg.Version, AskSecurityRisk: cfg.AsksSecurityRisk(),
	}
}

func (p *Processor) stepApproval(o *outputs) {
	ev := &o.rec.Event
	ad, err := events.DataAs[events.ApprovalDecision](ev)
	if err != nil || ad.ActionID == "" {
		o.alert("medium", fmt.Sprintf("approval.decision %s is unreadable and was ignored", ev.ID))
		return
	}
	pa, ok := p.pending[ad.ActionID]
	if !ok {
		o.alert("high", "approval refused: "+p.notPending(ad.ActionID))
		return
	}
	if ev.Conversation != "" && ev.Conversation != pa.conv {
		o.alert("high", fmt.Sprintf("approval refused: action %s belongs to conversation %s, not %s", ad.ActionID, pa.conv, ev.Conversation))
		return
	}
	cfg, _ := p.configFor(pa.conv)
	d := decidedFrom(pa, o.rec, cfg)
	d.By, d.Verdict, d.Reason = events.ByHuman, ad.Verdict, ad.Reason
	d.Approver = ad.Approver
	if d.Approver == "" {
		d.Approver = ev.Agent
	}
	var release func()
	switch ad.Verdict {
	case events.VerdictDeny:
		d.Outcome = events.OutcomeDeny
	case events.VerdictOnce:
		d.Outcome = events.OutcomeAllow
	case events.VerdictSession:
		d.Outcome = events.OutcomeAllow
		switch {
		case cfg.Allowlist.DisableSession:
			d.Reason = joinNote(d.Reason, fmt.Sprintf("session approvals are off in config v%d: allowed once", cfg.Version))
		case pa.req.Shape == "":
			d.Reason = joinNote(d.Reason, "this action has no command shape to approve for the session: allowed once")
		default:
			if p.sessions[pa.conv] == nil {
				p.sessions[pa.conv] = map[string]grant{}
			}
			p.sessions[pa.conv][pa.req.Shape] = grant{approver: d.Approver, seq: o.rec.Seq}
			release = func() { p.release(o, pa.conv, pa.req.Shape, "") }
		}
	case events.VerdictAlways:
		d.Outcome = events.OutcomeAllow
		switch {
		case cfg.Allowlist.DisableAlways:
			d.Reason = joinNote(d.Reason, fmt.Sprintf("allowlist approvals are off in config v%d: allowed once", cfg.Version))
		case pa.req.Shape == "":
			d.Reason = joinNote(d.Reason, "this action has no command shape to allowlist: allowed once")
		default:
			e := p.allow.forAction(ad.ActionID)
			if e == nil {
				// The entry is the allowlist.changed event that must come
				// before the verdict (vigil approve --scope always sends both
				// in one request): global, reviewable, revocable.
				d.Reason = joinNote(d.Reason, "no allowlist.changed entry names this action, so nothing was added to the allowlist: allowed once")
				break
			}
			d.EntryID = e.ID
			release = func() { p.release(o, "", pa.req.Shape, "") }
		}
	default:
		o.alert("medium", fmt.Sprintf("approval.decision %s has verdict %q; it must be once, session, always or deny", ev.ID, ad.Verdict))
		return
	}
	p.finish(o, pa.conv, d)
	if release != nil {
		release()
	}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// release decides the pending actions a new session grant (conv set) or
// allowlist entry (conv "") now lets through, oldest first, except the
// action the entry was made for: its own verdict follows.
func (p *Processor) release(o *outputs, conv, shape, except string) {
	var ids []*pending
	for _, pa := range p.pending {
		if pa.req.Shape == shape && !pa.askRule && (conv == "" || pa.conv == conv) && pa.req.ActionID != except {
			ids = append(ids, pa)
		}
	}
	slices.SortFunc(ids, func(a, b *pending) int { return cmpUint(a.seq, b.seq) })
	for _, pa := range ids {
		cfg, _ := p.configFor(pa.conv)
		by, note, entry := p.standing(cfg, pa.conv, shape, pa.req.Backend, pa.req.Level)
		if by != events.BySession && by != events.ByAllowlist {
			continue
		}
		d := decidedFrom(pa, o.rec, cfg)
		d.Outcome, d.By, d.Reason, d.EntryID = events.OutcomeAllow, by, note, entry
		p.finish(o, pa.conv, d)
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *Processor) stepExpired(o *outputs) {
	ex, err := events.DataAs[events.ApprovalExpired](&o.rec.Event)
	if err != nil {
		return
	}
	pa, ok := p.pending[ex.ActionID]
	if !ok {
		return // decided meanwhile: timers race with people, and lose quietly
	}
	cfg, _ := p.configFor(pa.conv)
	d := decidedFrom(pa, o.rec, cfg)
	d.Outcome, d.By = events.OutcomeDeny, events.ByTimeout
	d.Reason = ex.Reason
	if d.Reason == "" {
		d.Reason = "no decision within " + pa.req.Timeout + " (fail closed)"
	}
	p.finish(o, pa.conv, d)
}

func (p *Processor) stepAllowlist(o *outputs) {
	added, problem := p.allow.Apply(o.rec)
	if problem != "" {
		o.alert("medium", problem)
	}
	if added != nil {
		p.release(o, "", added.Shape, added.ActionID)
	}
}

func (p *Processor) stepObservation(o *outputs) {
	ev := &o.rec.Event
	id := ev.StringField("action_id")
	if id == "" {
		return
	}
	status := ev.StringField("status")
	pa, waiting := p.pending[id]
	if waiting && ev.Conversation != pa.conv {
		return // only the action's own conversation speaks for it
	}
	switch {
	case status == StatusWithdrawn:
		if !waiting {
			return
		}
		cfg, _ := p.configFor(pa.conv)
		d := decidedFrom(pa, o.rec, cfg)
		d.Outcome, d.By = events.OutcomeDeny, events.ByTimeout
		d.Reason = "the agent stopped waiting for a decision (fail closed)"
		if s, ok := ev.Data["content"].(string); ok && s != "" {
			d.Reason = s
		}
		p.finish(o, pa.conv, d)
	case status == StatusDeniedInClient:
		if !waiting {
			return
		}
		client := ev.StringField("client")
		if client == "" {
			client = "the agent's client"
		}
		cfg, _ := p.configFor(pa.conv)
		d := decidedFrom(pa, o.rec, cfg)
		d.Outcome, d.By, d.Verdict = events.OutcomeDeny, events.ByHuman, events.VerdictDeny
		d.Approver = "client:" + client
		d.Reason = fmt.Sprintf("refused in %s's own prompt (reported by the agent)", client)
		p.finish(o, pa.conv, d)
	case status == StatusHandedOff:
		if waiting {
			pa.handedOff = ev.StringField("client")
			if pa.handedOff == "" {
				pa.handedOff = "the agent's client"
			}
		}
	case waiting && pa.handedOff != "":
		// The client asked its own person and the tool ran: that person
		// approved it. Recorded as such, never as a Vigil approver's verdict.
		cfg, _ := p.configFor(pa.conv)
		d := decidedFrom(pa, o.rec, cfg)
		d.Outcome, d.By, d.Verdict = events.OutcomeAllow, events.ByHuman, events.VerdictOnce
		d.Approver = "client:" + pa.handedOff
		d.Reason = fmt.Sprintf("approved in %s's own prompt after Vigil's wait ran out (reported by the agent)", pa.handedOff)
		p.finish(o, pa.conv, d)
	case waiting:
		o.alert("high", fmt.Sprintf("action %s ran before Vigil decided on it (observation %s)", id, ev.ID))
	default:
		if di, ok := p.decided[id]; ok && di.outcome == events.OutcomeDeny && status == "" {
			o.alert("high", fmt.Sprintf("action %s ran although Vigil denied it (by %s, log seq %d; observation %s)", id, di.by, di.seq, ev.ID))
		}
	}
}

// Pending returns the actions waiting for a person, oldest first.
func (p *Processor) Pending() []events.GateRequested {
	ps := make([]*pending, 0, len(p.pending))
	for _, pa := range p.pending {
		ps = append(ps, pa)
	}
	slices.SortFunc(ps, func(a, b *pending) int { return cmpUint(a.seq, b.seq) })
	out := make([]events.GateRequested, len(ps))
	for i, pa := range ps {
		out[i] = pa.req
	}
	return out
}

// Allowlist returns the allowlist entries in force, oldest first.
func (p *Processor) Allowlist() []Entry { return p.allow.Entries() }

// Hint answers, for a conversation, whether its agent's tools should ask
// the LLM for security_risk right now (the read model DESIGN.md asks for).
func (p *Processor) Hint(conversation string) Hint {
	cfg, seq := p.configFor(conversation)
	return HintFor(cfg, seq)
}
