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
//     sandbox|human|client|timeout}: the final decision on an action (the
//     log record at log_seq, whose stored bytes digest names). An action
//     gets exactly one, ever.
//   - gate.requested: the action waits for a person; it carries the
//     approval timeout the expiry timer needs.
//   - alert: an approval for an action that does not exist or was already
//     decided, an approval sent on the wrong conversation, with agent
//     credentials, or for another log seq or digest than the waiting
//     action's; an action that ran before or despite its decision; a config
//     the scorer cannot compile; a conversation whose backend changed.
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
// # Who may say what
//
// Every event carries its Origin, stamped by the ingest service from the
// credential it arrived with. The gate trusts a claim only from an origin
// the agent cannot send as:
//
//   - By human: only an approval.decision with origin approver or admin;
//     one with any other origin (an old or foreign log: ingest refuses
//     control kinds from agents) decides nothing and raises an alert. The
//     same holds for allowlist.changed.
//   - By client: what the agent reports its own client did (status
//     handed-off then the tool running, under confirmation.client_handoff
//     record; or status denied-in-client). The approver is
//     "client:<name>", name one of the known clients (ClientName), never
//     the agent's free text.
//   - The sandbox: a backend counts for the sandbox policy only from a
//     conversation.started with origin runtime or admin. An agent's own
//     announcement is recorded as a claim (gate.requested backend_claimed)
//     and the conversation counts as local.
//   - Action ids: an id is the producer's claim. An action whose id is
//     waiting or was ever decided (beyond MaxDecided the gate keeps a
//     compact set of id hashes) is denied, by rule, and never inherits
//     the earlier decision; every decision names the stored bytes it is
//     about (digest), and an approval may name them too.
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
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// Name is the processor's name; it prefixes every output id.
const Name = "gate"

// Observation statuses an agent may send about its own action.
const (
	// StatusWithdrawn: the agent stopped waiting for a decision and will not
	// run the action. A pending action is denied, by timeout: an agent may
	// always make its own action's fate stricter.
	StatusWithdrawn = "withdrawn"
	// StatusHandedOff: the agent's client asks its own user instead (a hook
	// whose time budget ran out answered "ask"). The action stays pending;
	// what a later plain observation (the tool ran) means is the config's
	// confirmation.client_handoff: record (allow, by client) or ignore (an
	// alert; a person or the expiry still decides).
	StatusHandedOff = "handed-off"
	// StatusDeniedInClient: the client's own user refused the action (Claude
	// Code's PermissionDenied). A pending action is denied, by client, with
	// approver "client:<client>": refusing is never a privilege.
	StatusDeniedInClient = "denied-in-client"
)

// UnknownClient is the client name of a decision by client when the
// observation named no known client.
const UnknownClient = "unknown"

// ClientName returns the client an observation's "client" field names, if
// it is one Vigil's hooks send (claude-code, gemini, cursor, openhands),
// else UnknownClient. The field is the agent's claim: whatever it says,
// only these names reach a decision's approver.
func ClientName(s string) string {
	switch s {
	case "claude-code", "gemini", "cursor", "openhands":
		return s
	}
	return UnknownClient
}

// DefaultMaxDecided is how many decisions the gate remembers in full, to
// tell "already decided" from "unknown" and to catch actions that run
// despite a deny. Older decided ids stay in a compact set of id hashes
// (goneIDs), so an action reusing any decided id is denied.
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
	// Files is what the action writes of, and runs from, the files tools
	// run from (risk.EffectsOf); the zero value for scorers that do not say.
	Files risk.FileEffects
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
	// backends: where each conversation runs (see stepStarted).
	backends map[string]backendInfo
	pending  map[string]*pending
	decided  map[string]decidedInfo
	order    []decidedID // decided ids, oldest first, for eviction
	head     int
	// hashed is the last id usedAt hashed, kept so that remember need
	// not hash it again (a cache: never in outputs).
	hashed decidedID
	// seen filters the ids usedAt looks up (see seenIDs).
	seen seenIDs
	// gone remembers, compactly and forever, the ids evicted from decided
	// (see goneIDs): an action reusing one is still denied.
	gone     goneIDs
	sessions map[string]map[string]grant // conversation → shape → grant
	allow    *Allowlist
	// idle forgets the conversations gone idle, in log time (backend,
	// session grants; pending actions and decisions stay).
	idle *processors.IdleConversations
	// mcp remembers MCP tool descriptions and, per conversation, the tools
	// whose description was an injection or changed (inject.MCPMemory): a
	// call of one of them is HIGH in that conversation.
	mcp *inject.MCPMemory
	// written remembers, per conversation, the files tools run from that
	// the agent wrote and at which risk (risk.WrittenFiles): a later
	// command that runs one carries that risk.
	written *risk.WrittenFiles
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
	handedOff string // the client (ClientName) that asks its own user, if any
	reusedAt  uint64 // the latest log seq of another action with this id, if any
}

// decidedID is a decided id in the order of eviction, with its hash for
// gone (idHash) when it was computed already (hash 0: not yet).
type decidedID struct {
	id   string
	hash uint64
}

type decidedInfo struct {
	outcome   events.Outcome
	by        events.DecidedBy
	seq       uint64 // the record that decided
	actionSeq uint64 // the action's own record
	reusedAt  uint64 // the latest log seq of another action with this id, if any
}

// backendInfo is where a conversation's tools run, and who said so.
type backendInfo struct {
	backend string
	// trusted: announced by a conversation.started with origin runtime or
	// admin. Otherwise backend is only the agent's claim.
	trusted bool
}

// sandbox is the backend the sandbox policy and the scorer use: the
// announced one when trusted, else local.
func (b backendInfo) sandbox() string {
	if b.trusted && b.backend != "" {
		return b.backend
	}
	return "local"
}

// claimed is the agent's claim the gate did not take ("" when none, or
// when it is local anyway).
func (b backendInfo) claimed() string {
	if b.trusted || b.backend == "local" {
		return ""
	}
	return b.backend
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
		backends: map[string]backendInfo{},
		pending:  map[string]*pending{},
		decided:  map[string]decidedInfo{},
		sessions: map[string]map[string]grant{},
		allow:    NewAllowlist(),
		idle:     processors.NewIdleConversations(opts.IdleAfter),
		mcp:      inject.NewMCPMemory(),
		written:  risk.NewWrittenFiles(),
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

// outputs collects one record's outputs, numbering them. The outputs are
// behind a pointer of their own so that appending to them does not make
// Step's record escape to the heap (escape analysis does not tell the
// fields of a struct apart).
type outputs struct {
	rec *events.Record
	out *[]processors.Output
}

func (o *outputs) add(out processors.Output) { *o.out = append(*o.out, out) }

func (o *outputs) decided(conv string, d events.GateDecided) {
	o.add(processors.NewOutput(Name, o.rec, len(*o.out), events.GateSubject(conv), events.KindGateDecided, d))
}

func (o *outputs) requested(conv string, r events.GateRequested) {
	o.add(processors.NewOutput(Name, o.rec, len(*o.out), events.GateSubject(conv), events.KindGateRequested, r))
}

func (o *outputs) alert(severity events.Severity, reason string) {
	o.add(processors.NewOutput(Name, o.rec, len(*o.out), events.SubjectAlert, events.KindAlert, events.Alert{
		Severity: severity, Reason: reason, EventID: o.rec.Event.ID, LogSeq: o.rec.Seq, Subject: o.rec.Subject,
	}))
}

// Step folds one log record. It never returns an error for a record it can
// read: problems become alerts, so the fold never stalls.
func (p *Processor) Step(rec events.Record) ([]processors.Output, error) {
	var out []processors.Output
	o := &outputs{rec: &rec, out: &out}
	ev := &rec.Event
	for _, c := range p.idle.Touch(ev.Conversation, &rec) {
		delete(p.backends, c)
		delete(p.sessions, c)
		p.tracker.Forget(c)
		p.mcp.Forget(c)
		p.written.Forget(c)
	}
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
	case events.KindContextLoaded:
		if ev.StringField("source") == inject.SourceMCP {
			cfg, _ := p.tracker.For(ev.Conversation)
			p.mcp.StepContext(&rec, cfg.Analyzers.Injection)
		}
	}
	return out, nil
}

func (p *Processor) stepConfig(o *outputs) {
	if _, err := p.tracker.Observe(o.rec); err != nil {
		o.alert(events.SeverityHigh, fmt.Sprintf("config event %s at log seq %d is ignored: %v", o.rec.Event.ID, o.rec.Seq, err))
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
		o.alert(events.SeverityHigh, fmt.Sprintf("config v%d (event %s) cannot be compiled, so every action under it is denied: %v", cfg.Version, o.rec.Event.ID, err))
	}
}

// stepStarted records where a conversation runs. Only a conversation.started
// with origin runtime or admin places a conversation (in a sandbox or not);
// the agent's own is a claim: recorded, shown, never counted. The first
// trusted announcement wins, even over an earlier claim; after it nothing
// moves the conversation, and an attempt raises an alert, as does an agent
// changing its own claim.
func (p *Processor) stepStarted(o *outputs) {
	ev := &o.rec.Event
	p.tracker.Observe(o.rec)
	conv := ev.Conversation
	backend := ev.StringField("backend")
	if backend == "" {
		backend = "local"
	}
	trusted := ev.Origin == events.OriginRuntime || ev.Origin == events.OriginAdmin
	prev, ok := p.backends[conv]
	switch {
	case !ok:
		p.backends[conv] = backendInfo{backend: backend, trusted: trusted}
	case prev.trusted:
		if backend != prev.backend {
			o.alert(events.SeverityHigh, fmt.Sprintf("conversation %s: a conversation.started (origin %s) announced backend %q, but the runtime placed it on %q; the gate keeps %q (a conversation cannot move to loosen its policy)", conv, originName(ev.Origin), clipField(backend), prev.backend, prev.backend))
		}
	case trusted:
		p.backends[conv] = backendInfo{backend: backend, trusted: true}
		if prev.backend != backend && prev.backend != "local" {
			o.alert(events.SeverityMedium, fmt.Sprintf("conversation %s: the agent claimed backend %q, the runtime (origin %s) says %q; the gate takes the runtime's", conv, clipField(prev.backend), ev.Origin, backend))
		}
	case backend != prev.backend:
		o.alert(events.SeverityHigh, fmt.Sprintf("conversation %s announced backend %q but started on %q; the gate keeps %q (a conversation cannot move into a sandbox to loosen its policy)", conv, clipField(backend), clipField(prev.backend), clipField(prev.backend)))
	}
}

// originName names an origin in messages; empty (an old event) is agent.
func originName(o events.Origin) string {
	if o == "" {
		return string(events.OriginAgent) + " (none recorded)"
	}
	return string(o)
}

// maxField bounds a producer's string quoted in an alert or reason.
const maxField = 128

// clipField bounds a producer-chosen string quoted in an alert.
func clipField(s string) string {
	if len(s) <= maxField {
		return s
	}
	cut := maxField
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isPerson reports whether an event with origin o can speak for a person:
// only the approver and admin credentials can.
func isPerson(o events.Origin) bool {
	return o == events.OriginApprover || o == events.OriginAdmin
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
	where := p.backends[conv]
	backend := where.sandbox()
	d := events.GateDecided{
		ActionID: ev.ID, LogSeq: rec.Seq, DecisionSeq: rec.Seq, Level: events.RiskUnknown,
		ConfigVersion: cfg.Version, AskSecurityRisk: cfg.AsksSecurityRisk(),
		Digest: events.Digest(rec.Raw),
	}
	sc, err := p.scorer(cfgSeq, cfg)
	if prev, used := p.usedAt(ev.ID); used {
		// An id is the producer's claim: a second action under it is never
		// the first one, and inherits nothing from it. It is scored, so the
		// record shows what was attempted.
		if err == nil {
			a := p.assess(sc, rec, cfgSeq, cfg, where)
			d.Level, d.Reasons, d.Shape = levelOr(a.Level), a.Reasons, a.Shape
		}
		d.Outcome, d.By = events.OutcomeDeny, events.ByRule
		d.Reason = fmt.Sprintf("action id %s was already used at log seq %d; give every action a unique id", ev.ID, prev)
		p.markReused(ev.ID, rec.Seq)
		o.decided(conv, d) // not finish: the earlier action keeps its state
		return
	}
	if err != nil {
		d.Outcome, d.By = events.OutcomeDeny, events.ByRule
		d.Reason = fmt.Sprintf("config v%d cannot be compiled (fail closed): %v", cfg.Version, err)
		p.finish(o, conv, d)
		return
	}
	a := p.assess(sc, rec, cfgSeq, cfg, where)
	d.Level, d.Reasons, d.Shape = levelOr(a.Level), a.Reasons, a.Shape
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
	if askHit == nil {
		askHit = selfProtectHit(a)
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
		Agent: ev.Agent, Backend: backend, BackendClaimed: where.claimed(), Digest: d.Digest,
	}
	if askHit != nil {
		req.Reasons = append(slices.Clone(req.Reasons), askReason(askHit, d.Level))
	} else if claim := where.claimed(); claim != "" {
		if ok, _ := sandboxLets(cfg, claim, level); ok {
			// The claim would have let it through: say why it did not.
			req.Reasons = append(slices.Clone(req.Reasons), events.Reason{Analyzer: "sandbox", Rule: "unverified-backend",
				Detail: fmt.Sprintf("the agent's own conversation.started claims backend %s; only the runtime's or an admin's credential places a conversation in a sandbox, so it counts as local and a person decides", clipField(claim))})
		}
	}
	p.pending[ev.ID] = &pending{seq: rec.Seq, conv: conv, req: req, askRule: askHit != nil}
	p.sawID(p.hashOf(ev.ID))
	o.requested(conv, req)
}

// assess scores the action of rec under sc, reusing the risk processor's
// assessment when the memo holds it for the same record, config and
// environment.
func (p *Processor) assess(sc Scorer, rec *events.Record, cfgSeq uint64, cfg events.Config, where backendInfo) Assessment {
	ev := &rec.Event
	conv := ev.Conversation
	workspace := p.tracker.Conversation(conv).Workspace
	if workspace == "" {
		workspace = cfg.Workspace
	}
	env := Env{Workspace: workspace, Backend: where.sandbox(), Conversation: conv, Agent: ev.Agent}
	if rs, ok := sc.(*riskScorer); ok && p.opts.Memo != nil {
		key := risk.MemoKey{Seq: rec.Seq, ConfigSeq: cfgSeq, Env: risk.Env(env)}
		if ra, hit := p.opts.Memo.Get(key); hit {
			a := rs.from(ra) // the risk processor raised it for MCP taint already
			return p.rememberFiles(rec, a)
		}
	}
	var a Assessment
	if rs, ok := sc.(*riskScorer); ok {
		a = rs.Assess(ev, env)
	} else {
		// Another Scorer is an interface call, through which the event
		// would escape: it gets a copy, and the record stays on Step's
		// stack for the risk scorer.
		evc := *ev
		a = sc.Assess(&evc, env)
	}
	a.Level, a.Reasons = p.mcp.Raise(conv, ev.Tool(), a.Level, a.Reasons)
	return p.rememberFiles(rec, a)
}

// rememberFiles raises a by the files earlier actions of the conversation wrote
// that it runs, then records the files it writes at its level.
func (p *Processor) rememberFiles(rec *events.Record, a Assessment) Assessment {
	conv := rec.Event.Conversation
	a.Level, a.Reasons = p.written.Raise(conv, a.Files, a.Level, a.Reasons)
	p.written.Observe(conv, rec.Seq, a.Files, a.Level)
	return a
}

func levelOr(l events.Risk) events.Risk {
	if l == "" {
		return events.RiskUnknown
	}
	return l
}

// usedAt reports whether an action with id is waiting or was decided (and
// is still remembered), and the log seq of that action.
func (p *Processor) usedAt(id string) (uint64, bool) {
	p.hashed = decidedID{id: id, hash: idHash(id)}
	if !p.seenFilter().has(p.hashed.hash) {
		return 0, false
	}
	if pa, ok := p.pending[id]; ok {
		return pa.seq, true
	}
	if di, ok := p.decided[id]; ok {
		return di.actionSeq, true
	}
	if p.gone.empty() {
		return 0, false
	}
	return p.gone.getHash(p.hashed.hash)
}

// hashOf is idHash(id), from the last id usedAt hashed when it is id.
func (p *Processor) hashOf(id string) uint64 {
	if p.hashed.id == id {
		return p.hashed.hash
	}
	return idHash(id)
}

// sawID adds an id's hash to the filter of ids seen (building the filter
// again, larger, once it is full).
func (p *Processor) sawID(h uint64) {
	if p.seenFilter().add(h) {
		p.seen.bits = nil // built again, larger, on its next use
	}
}

// markReused notes that another action at seq reused id, so events about
// id (observations, hand-offs) are known to be ambiguous.
func (p *Processor) markReused(id string, seq uint64) {
	if pa, ok := p.pending[id]; ok {
		pa.reusedAt = seq
		return
	}
	if di, ok := p.decided[id]; ok {
		di.reusedAt = seq
		p.decided[id] = di
	}
}

func denyReason(h *DenyHit) string {
	if h.Reason != "" {
		return fmt.Sprintf("deny rule %s: %s", h.Rule, h.Reason)
	}
	return "deny rule " + h.Rule
}

// standing reports what, short of a new verdict, lets an action that needs
// a person through: a session approval, an allowlist entry, or the sandbox
// (backend is the one the gate trusts: backendInfo.sandbox).
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
	if ok, note := sandboxLets(cfg, backend, level); ok {
		return events.BySandbox, note, ""
	}
	return "", "", ""
}

// sandboxLets reports whether cfg's sandbox policy lets an action of level
// on backend through without a person, and says why.
func sandboxLets(cfg events.Config, backend string, level events.Risk) (bool, string) {
	if !slices.Contains(cfg.Sandbox.Backends, backend) {
		return false, ""
	}
	switch cfg.Sandbox.Policy {
	case events.SandboxAllow:
		return true, fmt.Sprintf("backend %s is sandboxed (policy allow)", backend)
	case events.SandboxAllowBelowHigh:
		if level != events.RiskHigh {
			return true, fmt.Sprintf("backend %s is sandboxed (policy allow-below-high)", backend)
		}
	}
	return false, ""
}

// finish records a decision and emits it.
func (p *Processor) finish(o *outputs, conv string, d events.GateDecided) {
	var reusedAt uint64
	if pa, ok := p.pending[d.ActionID]; ok {
		reusedAt = pa.reusedAt
	}
	delete(p.pending, d.ActionID)
	p.remember(d, reusedAt)
	o.decided(conv, d)
}

func (p *Processor) remember(d events.GateDecided, reusedAt uint64) {
	h := p.hashOf(d.ActionID)
	// An id the filter never saw is not decided: no lookup.
	fresh := !p.seenFilter().has(h)
	if !fresh {
		_, known := p.decided[d.ActionID]
		fresh = !known
	}
	if fresh {
		if len(p.order)-p.head >= p.opts.MaxDecided {
			old := p.order[p.head]
			if old.hash == 0 {
				old.hash = idHash(old.id)
			}
			p.gone.addHash(old.hash, p.decided[old.id].actionSeq)
			delete(p.decided, old.id)
			p.order[p.head] = decidedID{}
			p.head++
			if p.head > len(p.order)/2 {
				// Moved down in place: the array is reused.
				n := copy(p.order, p.order[p.head:])
				clear(p.order[n:])
				p.order, p.head = p.order[:n], 0
			}
		}
		p.order = append(p.order, decidedID{id: d.ActionID, hash: h})
		p.sawID(h)
	}
	p.decided[d.ActionID] = decidedInfo{outcome: d.Outcome, by: d.By, seq: d.DecisionSeq, actionSeq: d.LogSeq, reusedAt: reusedAt}
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
		Digest: pa.req.Digest,
	}
}

func (p *Processor) stepApproval(o *outputs) {
	ev := &o.rec.Event
	if !isPerson(ev.Origin) {
		// Ingest refuses control kinds from agents; this is an old or a
		// foreign log, or a bypass. Nothing an agent sends speaks for a person.
		o.alert(events.SeverityHigh, fmt.Sprintf("approval refused: approval.decision %s came with %s credentials; only approver or admin credentials decide (an agent never approves its own action)", ev.ID, originName(ev.Origin)))
		return
	}
	ad, err := events.DataAs[events.ApprovalDecision](ev)
	if err != nil || ad.ActionID == "" {
		o.alert(events.SeverityMedium, fmt.Sprintf("approval.decision %s is unreadable and was ignored", ev.ID))
		return
	}
	pa, ok := p.pending[ad.ActionID]
	if !ok {
		o.alert(events.SeverityHigh, "approval refused: "+p.notPending(ad.ActionID))
		return
	}
	if ev.Conversation != "" && ev.Conversation != pa.conv {
		o.alert(events.SeverityHigh, fmt.Sprintf("approval refused: action %s belongs to conversation %s, not %s", ad.ActionID, pa.conv, ev.Conversation))
		return
	}
	// A person approves exactly what they saw: the stored action, not an id.
	if ad.LogSeq != 0 && ad.LogSeq != pa.seq {
		o.alert(events.SeverityHigh, fmt.Sprintf("approval refused: it is for action %s at log seq %d, but the action waiting under that id is at log seq %d; decide again on what vigil pending shows", ad.ActionID, ad.LogSeq, pa.seq))
		return
	}
	if ad.Digest != "" && ad.Digest != pa.req.Digest {
		o.alert(events.SeverityHigh, fmt.Sprintf("approval refused: it names digest %s, but action %s (log seq %d) as stored is %s; decide again on what vigil pending shows", clipField(ad.Digest), ad.ActionID, pa.seq, pa.req.Digest))
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
		o.alert(events.SeverityMedium, fmt.Sprintf("approval.decision %s has verdict %q; it must be once, session, always or deny", ev.ID, ad.Verdict))
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
		severity := events.SeverityMedium
		if !isPerson(o.rec.Event.Origin) {
			severity = events.SeverityHigh
		}
		o.alert(severity, problem)
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
		client := ClientName(ev.StringField("client"))
		cfg, _ := p.configFor(pa.conv)
		d := decidedFrom(pa, o.rec, cfg)
		d.Outcome, d.By, d.Verdict = events.OutcomeDeny, events.ByClient, events.VerdictDeny
		d.Approver = "client:" + client
		d.Reason = fmt.Sprintf("refused in the %s client's own prompt (reported by the agent)", client)
		p.finish(o, pa.conv, d)
	case status == StatusHandedOff:
		if waiting {
			pa.handedOff = ClientName(ev.StringField("client"))
		}
	case waiting && pa.handedOff != "":
		// The client asked its own user and the tool ran. The agent says
		// so, and only the agent: at most a decision by client, and only
		// if the config counts hand-offs at all.
		cfg, _ := p.configFor(pa.conv)
		switch {
		case pa.reusedAt != 0:
			o.alert(events.SeverityHigh, fmt.Sprintf("action %s ran after a hand-off to the %s client, but its id was reused at log seq %d, so nobody can tell which action the client's user saw; it waits for a person or the expiry (observation %s)", id, pa.handedOff, pa.reusedAt, ev.ID))
		case cfg.Confirmation.ClientHandoff == events.ClientHandoffIgnore:
			o.alert(events.SeverityHigh, fmt.Sprintf("action %s ran after a hand-off to the %s client (observation %s); under confirmation.client_handoff %s that approves nothing: it waits for a person or the expiry", id, pa.handedOff, ev.ID, events.ClientHandoffIgnore))
		default:
			d := decidedFrom(pa, o.rec, cfg)
			d.Outcome, d.By, d.Verdict = events.OutcomeAllow, events.ByClient, events.VerdictOnce
			d.Approver = "client:" + pa.handedOff
			d.Reason = fmt.Sprintf("allowed in the %s client's own prompt after Vigil's wait ran out (reported by the agent; confirmation.client_handoff %s)", pa.handedOff, events.ClientHandoffRecord)
			p.finish(o, pa.conv, d)
		}
	case waiting:
		o.alert(events.SeverityHigh, fmt.Sprintf("action %s ran before Vigil decided on it (observation %s)", id, ev.ID))
	default:
		di, ok := p.decided[id]
		switch {
		case !ok || status != "":
		case di.outcome == events.OutcomeDeny:
			o.alert(events.SeverityHigh, fmt.Sprintf("action %s ran although Vigil denied it (by %s, log seq %d; observation %s)", id, di.by, di.seq, ev.ID))
		case di.reusedAt != 0:
			o.alert(events.SeverityHigh, fmt.Sprintf("action %s ran, but its id was also used by the action at log seq %d, which Vigil denied; nobody can tell which of them ran (observation %s)", id, di.reusedAt, ev.ID))
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
