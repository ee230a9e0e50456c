package processors

import (
	"fmt"
	"slices"
	"time"

	"github.com/vigil-dev/vigil/events"
)

// DefaultIdleAfter is how long, in log time, a conversation may go without
// a record before the processors forget what they keep about it (its
// backend and workspace, session approvals, totals): memory follows the
// conversations that are live, not every conversation ever seen.
const DefaultIdleAfter = 7 * 24 * time.Hour

// IdleSweepEvery is how many log records pass between two looks for idle
// conversations. A conversation must also have been silent for at least
// this many records to be forgotten, so a record with a forged time far
// ahead cannot make every conversation look idle at once.
const IdleSweepEvery = 4096

// IdleConversations tells a fold which conversations have gone idle, in
// log time: the clock is the latest event time folded so far (it never
// goes back), never the wall clock, so replay forgets exactly what the
// live node forgot. Forgetting only ever makes a decision stricter: a
// forgotten conversation is local and unplaced again, with no session
// approval; what must be remembered forever (decided action ids, the
// allowlist, conversation-scoped configs, pending actions) is not kept
// per conversation and is never forgotten here.
type IdleConversations struct {
	after time.Duration
	clock int64 // unix nanoseconds
	last  map[string]idleMark
}

type idleMark struct {
	at  int64
	seq uint64
}

// NewIdleConversations forgets conversations silent for after; zero means
// DefaultIdleAfter, negative never.
func NewIdleConversations(after time.Duration) *IdleConversations {
	if after == 0 {
		after = DefaultIdleAfter
	}
	return &IdleConversations{after: after, last: map[string]idleMark{}}
}

// After is the idle time in force (negative: never).
func (c *IdleConversations) After() time.Duration { return c.after }

// Touch notes a record of conversation conv (none when "") and returns
// the conversations that are idle now, sorted, forgetting them itself.
func (c *IdleConversations) Touch(conv string, rec *events.Record) []string {
	if c.after < 0 {
		return nil
	}
	if t := rec.Event.Time.UnixNano(); !rec.Event.Time.IsZero() && t > c.clock {
		c.clock = t
	}
	if conv != "" {
		c.last[conv] = idleMark{at: c.clock, seq: rec.Seq}
	}
	if rec.Seq%IdleSweepEvery != 0 {
		return nil
	}
	var idle []string
	for k, m := range c.last {
		if c.clock-m.at >= int64(c.after) && rec.Seq-m.seq >= IdleSweepEvery {
			idle = append(idle, k)
		}
	}
	slices.Sort(idle)
	for _, k := range idle {
		delete(c.last, k)
	}
	return idle
}

// IdleState is an IdleConversations' state, for snapshots.
type IdleState struct {
	After int64    `msgpack:"after"`
	Clock int64    `msgpack:"clock"`
	Convs []string `msgpack:"convs"`
	At    []int64  `msgpack:"at"`
	Seqs  []uint64 `msgpack:"seqs"`
}

// State returns the state, conversations sorted.
func (c *IdleConversations) State() IdleState {
	st := IdleState{After: int64(c.after), Clock: c.clock, Convs: sortedKeys(c.last)}
	for _, k := range st.Convs {
		st.At = append(st.At, c.last[k].at)
		st.Seqs = append(st.Seqs, c.last[k].seq)
	}
	return st
}

// SetState replaces the state; one taken with another idle time is
// refused (ErrSnapshot).
func (c *IdleConversations) SetState(st IdleState) error {
	if st.After != int64(c.after) {
		return fmt.Errorf("%w: taken with conversations forgotten after %s, not %s", ErrSnapshot, time.Duration(st.After), c.after)
	}
	if len(st.At) != len(st.Convs) || len(st.Seqs) != len(st.Convs) {
		return fmt.Errorf("%w: idle conversations: %d names, %d times, %d seqs", ErrSnapshot, len(st.Convs), len(st.At), len(st.Seqs))
	}
	last := make(map[string]idleMark, len(st.Convs))
	for i, k := range st.Convs {
		last[k] = idleMark{at: st.At[i], seq: st.Seqs[i]}
	}
	c.clock, c.last = st.Clock, last
	return nil
}

// Forget drops what the tracker knows about where a conversation runs
// (its conversation.started); a conversation-scoped config stays in force.
func (t *ConfigTracker) Forget(conversation string) { delete(t.convs, conversation) }
