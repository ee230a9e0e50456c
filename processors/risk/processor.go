package risk

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/inject"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

// Processor is the risk fold. For every action record it emits one
// risk.assessed on vigil.risk.<conversation>, scored under the config in
// force at that position of the log (global config, overridden by a
// conversation-scoped one).
//
// For a context.loaded record, when the injection analyzer is on and the
// scanner finds an injection, it emits two outputs: a risk.assessed for the
// context.loaded event (action_id is that event's id, level HIGH, one reason
// per finding with its span), so the finding is kept with the other
// assessments and exported by audit; and an alert on vigil.alert so an
// operator sees it. A suspicious file (weak findings only) gets the
// risk.assessed at MEDIUM and no alert; a clean one produces no output. A
// context.loaded with data.source "mcp" is an MCP tool's description and
// schema (ScanTool; a description that changed since first seen is a
// finding, see processors/risk/inject/mcp.go). Consumers that
// key on pending actions (the gate) ignore assessments of ids they do not
// know.
//
// It does no I/O and reads no clock: outputs are a pure function of the log.
type Processor struct {
	tracker *processors.ConfigTracker
	// scorers caches one compiled Scorer per config event (keyed by the
	// log sequence of the config event; 0 is the built-in default).
	scorers map[uint64]*scorerEntry
	// memo, when set, receives every action's assessment (see Memo).
	memo *Memo
	// ahead, when set, holds assessments scored ahead of the fold (Ahead).
	ahead Ahead
	// idle forgets the conversations gone idle (in log time).
	idle *processors.IdleConversations
	// mcp remembers, per MCP server and tool, the digest of the
	// description first seen (inject.MCPMemory), to flag a later change.
	mcp *inject.MCPMemory
	// written remembers the files tools run from that each conversation
	// wrote, and at which risk (WrittenFiles).
	written *WrittenFiles
}

// WithMemo makes p record each action's assessment in m, for the gate of
// the same pipeline; it returns p.
func (p *Processor) WithMemo(m *Memo) *Processor {
	p.memo = m
	return p
}

// Memo returns the memo p records each action's assessment in
// (WithMemo), or nil.
func (p *Processor) Memo() *Memo { return p.memo }

// Ahead holds action assessments scored ahead of the fold, in parallel
// (replay does), each under the exact key it was scored for: the action's
// log seq, the log seq of the config event in force and the environment.
// Scoring is pure, so an assessment scored under the key Step would use
// is the one Step would compute.
type Ahead interface {
	Take(k MemoKey) (Assessment, bool)
}

// WithAhead makes p take an action's assessment from a when a holds one
// for the key p would score it under, instead of scoring it again; it
// returns p. A processor with a config override (what-if) scores itself.
func (p *Processor) WithAhead(a Ahead) *Processor {
	p.ahead = a
	return p
}

type scorerEntry struct {
	s   *Scorer
	err error
}

// NewProcessor returns a risk processor starting with the default config.
func NewProcessor() *Processor { return NewProcessorWith(processors.Options{}) }

// NewProcessorWith returns a risk processor; opts.ConfigOverride replaces
// every config event (what-if replay).
func NewProcessorWith(opts processors.Options) *Processor {
	t := processors.NewConfigTracker()
	t.Override = opts.ConfigOverride
	return &Processor{tracker: t, scorers: map[uint64]*scorerEntry{}, idle: processors.NewIdleConversations(opts.IdleAfter), mcp: inject.NewMCPMemory(), written: NewWrittenFiles()}
}

// Name is "risk".
func (p *Processor) Name() string { return "risk" }

func (p *Processor) scorer(conv string) (*Scorer, events.Config, error) {
	cfg, seq := p.tracker.For(conv)
	key := seq
	if p.tracker.Override != nil {
		key = ^uint64(0)
	}
	e, ok := p.scorers[key]
	if !ok {
		s, err := NewScorer(cfg)
		if err != nil {
			// Keep scoring with the built-in rules; report the bad policy.
			c2 := cfg
			c2.PolicyRules = nil
			s, _ = NewScorer(c2)
		}
		e = &scorerEntry{s: s, err: err}
		p.scorers[key] = e
	}
	return e.s, cfg, e.err
}

// Step folds one record.
func (p *Processor) Step(rec events.Record) ([]processors.Output, error) {
	ev := &rec.Event
	for _, c := range p.idle.Touch(ev.Conversation, &rec) {
		p.tracker.Forget(c)
		p.mcp.Forget(c)
		p.written.Forget(c)
	}
	switch ev.Kind {
	case events.KindConfig, events.KindConversationStarted:
		// A config that does not decode is ignored by the tracker (the
		// ingest service refuses invalid configs); nothing to output.
		_, _ = p.tracker.Observe(&rec)
		return nil, nil
	case events.KindAction:
		s, cfg, perr := p.scorer(ev.Conversation)
		info := p.tracker.Conversation(ev.Conversation)
		env := Env{Workspace: info.Workspace, Backend: info.Backend, Conversation: ev.Conversation, Agent: ev.Agent}
		if env.Workspace == "" {
			env.Workspace = cfg.Workspace
		}
		if env.Backend == "" {
			env.Backend = "local" // as the gate sees a conversation that never said
		}
		_, cfgSeq := p.tracker.For(ev.Conversation)
		var a Assessment
		ok := false
		if perr == nil && p.ahead != nil && p.tracker.Override == nil {
			a, ok = p.ahead.Take(MemoKey{Seq: rec.Seq, ConfigSeq: cfgSeq, Env: env})
		}
		if !ok {
			a = s.ScoreAction(ev, env)
		}
		a.Level, a.Reasons = p.mcp.Raise(ev.Conversation, ev.Tool(), a.Level, a.Reasons)
		fe := EffectsOf(a)
		a.Level, a.Reasons = p.written.Raise(ev.Conversation, fe, a.Level, a.Reasons)
		p.written.Observe(ev.Conversation, rec.Seq, fe, a.Level)
		if perr == nil && p.memo != nil {
			p.memo.Put(MemoKey{Seq: rec.Seq, ConfigSeq: cfgSeq, Env: env}, a)
		}
		if perr != nil {
			a.Reasons = append(a.Reasons, events.Reason{Analyzer: core.AnalyzerPolicy, Rule: shell.RulePolicyCompileError.ID, Detail: perr.Error()})
		}
		ra := events.RiskAssessed{ActionID: ev.ID, LogSeq: rec.Seq, ConfigVersion: cfg.Version, Level: a.Level, Reasons: a.Reasons}
		if ra.Reasons == nil {
			ra.Reasons = []events.Reason{}
		}
		return []processors.Output{processors.NewOutput(p.Name(), &rec, 0, events.RiskSubject(ev.Conversation), events.KindRiskAssessed, ra)}, nil
	case events.KindContextLoaded:
		_, cfg, _ := p.scorer(ev.Conversation)
		r, what := p.scanContext(&rec, cfg.Analyzers.Injection)
		if r.Verdict == inject.VerdictClean {
			return nil, nil
		}
		reasons := make([]events.Reason, 0, len(r.Findings))
		var rules []string
		for _, f := range r.Findings {
			lvl := events.RiskMedium
			if f.Strong {
				lvl = events.RiskHigh
			}
			reasons = append(reasons, events.Reason{Analyzer: core.AnalyzerInjection, Rule: f.Rule, Detail: f.Detail, Level: lvl, Span: []int{f.Span[0], f.Span[1]}})
			rules = append(rules, f.Rule)
		}
		sort.Strings(rules)
		ra := events.RiskAssessed{ActionID: ev.ID, LogSeq: rec.Seq, ConfigVersion: cfg.Version, Level: r.Level(), Reasons: reasons}
		if r.Verdict != inject.VerdictInjection {
			// suspicious: recorded with its reasons, no alert
			return []processors.Output{processors.NewOutput(p.Name(), &rec, 0, events.RiskSubject(ev.Conversation), events.KindRiskAssessed, ra)}, nil
		}
		alert := events.Alert{Severity: events.SeverityHigh, EventID: ev.ID, LogSeq: rec.Seq, Subject: rec.Subject,
			Reason: fmt.Sprintf("%s looks like a prompt injection (%s)", what, strings.Join(shell.UniqSorted(rules), ", "))}
		return []processors.Output{
			processors.NewOutput(p.Name(), &rec, 0, events.RiskSubject(ev.Conversation), events.KindRiskAssessed, ra),
			processors.NewOutput(p.Name(), &rec, 1, events.SubjectAlert, events.KindAlert, alert),
		}, nil
	}
	return nil, nil
}

var _ processors.Processor = (*Processor)(nil)

// scanContext scans a context.loaded record: a context file, or an MCP
// tool (data.source "mcp"). It always updates the MCP memory, whatever the
// config, so the fold state does not depend on which analyzers were on;
// it scans only when scan is set. what names the thing for an alert.
func (p *Processor) scanContext(rec *events.Record, scan bool) (r inject.ScanResult, what string) {
	ev := &rec.Event
	content := ev.StringField("content")
	path := ev.StringField("path")
	if ev.StringField("source") != inject.SourceMCP {
		if !scan {
			return inject.ScanResult{Verdict: inject.VerdictClean}, ""
		}
		return inject.Scan(content, path), fmt.Sprintf("context file %q", path)
	}
	return p.mcp.StepContext(rec, scan)
}
