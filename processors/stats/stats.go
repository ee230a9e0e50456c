// Package stats is the simplest real processor: per-conversation counts of
// events by kind, emitted as a stats event on a conversation's first record
// and every EmitEvery records after (not on every record: each output is a
// write on the path of every action). It shows the processor contract end
// to end and is a fixture of the live/replay identity test. It does no I/O.
package stats

import (
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// Name is the processor's name.
const Name = "stats"

// EmitEvery is how many records of a conversation pass between two stats
// outputs.
const EmitEvery = 100

// Processor folds records into per-conversation counts.
type Processor struct {
	convs map[string]*events.Stats
	// idle forgets conversations gone idle (in log time): a conversation
	// that comes back counts again from its next record.
	idle *processors.IdleConversations
}

// New returns an empty stats processor.
func New() *Processor { return NewWith(processors.Options{}) }

// NewWith returns an empty stats processor; opts.IdleAfter is how long a
// conversation may be silent before its totals are forgotten.
func NewWith(opts processors.Options) *Processor {
	return &Processor{convs: map[string]*events.Stats{}, idle: processors.NewIdleConversations(opts.IdleAfter)}
}

// Name returns "stats".
func (p *Processor) Name() string { return Name }

// Step counts rec and emits the conversation's new totals.
func (p *Processor) Step(rec events.Record) ([]processors.Output, error) {
	conv := rec.Event.SubjectToken()
	for _, k := range p.idle.Touch(conv, &rec) {
		delete(p.convs, k)
	}
	c, ok := p.convs[conv]
	if !ok {
		c = &events.Stats{ByKind: map[string]uint64{}, FirstSeq: rec.Seq, Conversation: conv}
		p.convs[conv] = c
	}
	c.Events++
	c.ByKind[string(rec.Event.Kind)]++
	if rec.Event.Kind == events.KindAction {
		c.Actions++
	}
	if len(rec.Event.Redactions) > 0 {
		c.Redacted++
	}
	c.LastSeq = rec.Seq
	if c.Events != 1 && c.Events%EmitEvery != 0 {
		return nil, nil
	}
	snapshot := *c
	snapshot.ByKind = make(map[string]uint64, len(c.ByKind))
	for k, v := range c.ByKind {
		snapshot.ByKind[k] = v
	}
	return []processors.Output{
		processors.NewOutput(Name, &rec, 0, events.StatsPrefix+conv, events.KindStats, snapshot),
	}, nil
}

// Get returns the totals of a conversation (for tests and read models).
func (p *Processor) Get(conversation string) (events.Stats, bool) {
	c, ok := p.convs[conversation]
	if !ok {
		return events.Stats{}, false
	}
	return *c, true
}
