package replay

import (
	"reflect"
	"slices"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/risk"
)

// # Scoring ahead
//
// Risk scoring is most of a record's cost, and it is pure and per action:
// an action's assessment depends only on the action, the config in force
// and the conversation's environment. So replay scores actions ahead of
// the fold, in parallel, and the fold's risk processor takes each
// assessment instead of scoring again (risk.Processor.WithAhead), while
// the folds themselves stay sequential and unchanged.
//
// Which config and environment an action will be scored under is state of
// the fold; the reader predicts it with a config tracker of its own, fed
// the same records in the same order. A prediction is used only when its
// key (log seq, config event, environment) equals the one the fold's risk
// processor computes for itself, so a wrong prediction (a conversation
// the fold forgot as idle, a config that does not compile) costs a second
// scoring, never a different output.

// predictor assigns each action record the key and scorer it will most
// likely be scored with.
type predictor struct {
	tracker *processors.ConfigTracker
	scorers map[uint64]*risk.Scorer // nil: that config does not compile (the fold scores itself)
	// recent are the last distinct configs scored under, with their
	// scorers: a config event equal to an earlier one (an operator
	// setting the same config again) gets the same scorer, so actions
	// repeated across it stay repeats for the workers' memos.
	recent []scorerFor
}

type scorerFor struct {
	cfg events.Config
	s   *risk.Scorer
}

// maxRecentConfigs bounds predictor.recent.
const maxRecentConfigs = 16

func newPredictor() *predictor {
	return &predictor{tracker: processors.NewConfigTracker(), scorers: map[uint64]*risk.Scorer{}}
}

// scorer returns a scorer for cfg: one built for an equal config if there
// is one among the recent, else a new one (nil if cfg does not compile).
// Scorers are pure functions of their config, so either scores alike.
func (p *predictor) scorer(cfg events.Config) *risk.Scorer {
	for _, r := range p.recent {
		if reflect.DeepEqual(r.cfg, cfg) {
			return r.s
		}
	}
	s, err := risk.NewScorer(cfg)
	if err != nil {
		return nil
	}
	if len(p.recent) == maxRecentConfigs {
		p.recent = slices.Delete(p.recent, 0, 1)
	}
	p.recent = append(p.recent, scorerFor{cfg: cfg, s: s})
	return s
}

// observe follows d through the tracker and, for an action, sets its key
// and scorer; it reports whether d is to be scored ahead.
func (p *predictor) observe(d *decoded) bool {
	if d.err != nil {
		return false
	}
	ev := &d.rec.Event
	switch ev.Kind {
	case events.KindConfig, events.KindConversationStarted:
		_, _ = p.tracker.Observe(&d.rec)
		return false
	case events.KindAction:
	default:
		return false
	}
	cfg, seq := p.tracker.For(ev.Conversation)
	s, ok := p.scorers[seq]
	if !ok {
		s = p.scorer(cfg)
		p.scorers[seq] = s
	}
	if s == nil {
		return false
	}
	// The environment as risk.Processor.Step builds it.
	info := p.tracker.Conversation(ev.Conversation)
	env := risk.Env{Workspace: info.Workspace, Backend: info.Backend, Conversation: ev.Conversation, Agent: ev.Agent}
	if env.Workspace == "" {
		env.Workspace = cfg.Workspace
	}
	if env.Backend == "" {
		env.Backend = "local"
	}
	d.key, d.scorer = risk.MemoKey{Seq: d.rec.Seq, ConfigSeq: seq, Env: env}, s
	return true
}

// score scores the batch's predicted actions (on a worker), through the
// worker's memo when it has one.
func score(b *decodedBatch, m *scoreMemo) {
	for i := range b.items {
		d := &b.items[i]
		if d.scorer == nil {
			continue
		}
		d.a, d.repeat = m.score(d)
		d.scored = true
	}
	close(b.done)
}

// scoreMemo remembers, on one worker, the assessments of the actions it
// scored, by scorer (the config in force), environment and action body
// (actionBody: the record but for its id and time). Agents run the same
// commands again and again; a repeat is handed a copy of the first
// assessment instead of being parsed and analysed again. Scoring is pure,
// so the copy is what scoring would give. It holds at most max bodies,
// and forgets them all when full.
type scoreMemo struct {
	max, n int
	by     map[memoScope]map[string]risk.Assessment
	buf    []byte
}

type memoScope struct {
	s   *risk.Scorer
	env risk.Env
}

// newScoreMemo returns a memo of max bodies; nil (no memo) for max < 0.
func newScoreMemo(max int) *scoreMemo {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = defaultMemoEntries
	}
	return &scoreMemo{max: max, by: map[memoScope]map[string]risk.Assessment{}}
}

// defaultMemoEntries bounds a worker's memo: bodies of a few hundred bytes
// with their assessments, a few MB.
const defaultMemoEntries = 8192

// score scores d's action, and reports whether its assessment is a copy
// of a repeat's. The fold owns what it returns.
func (m *scoreMemo) score(d *decoded) (risk.Assessment, bool) {
	if m == nil {
		return d.scorer.ScoreAction(&d.rec.Event, d.key.Env), false
	}
	body, ok := actionBody(m.buf[:0], d.raw.Data)
	m.buf = body
	if !ok {
		return d.scorer.ScoreAction(&d.rec.Event, d.key.Env), false
	}
	sc := memoScope{s: d.scorer, env: d.key.Env}
	bodies := m.by[sc]
	if a, hit := bodies[string(body)]; hit {
		return a.Clone(), true
	}
	a := d.scorer.ScoreAction(&d.rec.Event, d.key.Env)
	if m.n >= m.max {
		clear(m.by)
		m.n, bodies = 0, nil
	}
	if bodies == nil {
		bodies = map[string]risk.Assessment{}
		m.by[sc] = bodies
	}
	bodies[string(body)] = a.Clone()
	m.n++
	return a, false
}

// taker implements risk.Ahead for the record the risk processor is
// folding, in the fold or beside it (beside.go): cur, set by the
// goroutine that steps it.
type taker struct {
	cur *decoded
	// ahead and repeats count the assessments taken, and those of them
	// a memo copied (Report.ScoredAhead, ScoredRepeats).
	ahead, repeats uint64
}

// Take implements risk.Ahead.
func (t *taker) Take(k risk.MemoKey) (risk.Assessment, bool) {
	d := t.cur
	if d == nil || !d.scored || d.key != k {
		return risk.Assessment{}, false
	}
	d.scored = false // once
	t.ahead++
	if d.repeat {
		t.repeats++
	}
	return d.a, true
}

var _ risk.Ahead = (*taker)(nil)
