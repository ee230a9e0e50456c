package replay

import (
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
}

func newPredictor() *predictor {
	return &predictor{tracker: processors.NewConfigTracker(), scorers: map[uint64]*risk.Scorer{}}
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
		s, _ = risk.NewScorer(cfg) // nil on a compile error
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

// score scores the batch's predicted actions (on a worker).
func score(b *decodedBatch) {
	for i := range b.items {
		d := &b.items[i]
		if d.scorer != nil {
			d.a, d.scored = d.scorer.ScoreAction(&d.rec.Event, d.key.Env), true
		}
	}
	close(b.done)
}

// Take implements risk.Ahead for the record being folded.
func (r *runner) Take(k risk.MemoKey) (risk.Assessment, bool) {
	d := r.cur
	if d == nil || !d.scored || d.key != k {
		return risk.Assessment{}, false
	}
	d.scored = false // once
	r.rep.ScoredAhead++
	return d.a, true
}

var _ risk.Ahead = (*runner)(nil)
