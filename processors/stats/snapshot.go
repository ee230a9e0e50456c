package stats

import (
	"fmt"
	"slices"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// snapshotVersion is the version of the stats processor's snapshot.
const snapshotVersion = 2

type snapshotState struct {
	V     int                  `msgpack:"v"`
	Convs []snapConv           `msgpack:"convs"`
	Idle  processors.IdleState `msgpack:"idle"`
}

// snapConv is events.Stats with its counts by kind as a sorted list (the
// events type encodes its map in whatever order Go iterates it).
type snapConv struct {
	Conversation string   `msgpack:"conversation"`
	Events       uint64   `msgpack:"events"`
	Kinds        []string `msgpack:"kinds"`
	Counts       []uint64 `msgpack:"counts"`
	Actions      uint64   `msgpack:"actions"`
	Redacted     uint64   `msgpack:"redacted"`
	FirstSeq     uint64   `msgpack:"first_seq"`
	LastSeq      uint64   `msgpack:"last_seq"`
}

// Snapshot encodes every conversation's totals, ordered by conversation.
func (p *Processor) Snapshot() ([]byte, error) {
	st := snapshotState{V: snapshotVersion, Convs: make([]snapConv, 0, len(p.convs)), Idle: p.idle.State()}
	for _, c := range p.convs {
		sc := snapConv{Conversation: c.Conversation, Events: c.Events, Actions: c.Actions, Redacted: c.Redacted, FirstSeq: c.FirstSeq, LastSeq: c.LastSeq}
		for k := range c.ByKind {
			sc.Kinds = append(sc.Kinds, k)
		}
		slices.Sort(sc.Kinds)
		for _, k := range sc.Kinds {
			sc.Counts = append(sc.Counts, c.ByKind[k])
		}
		st.Convs = append(st.Convs, sc)
	}
	slices.SortFunc(st.Convs, func(a, b snapConv) int {
		switch {
		case a.Conversation < b.Conversation:
			return -1
		case a.Conversation > b.Conversation:
			return 1
		}
		return 0
	})
	return processors.EncodeState(&st)
}

// Restore replaces the state with a snapshot's (see processors.Snapshotter).
func (p *Processor) Restore(b []byte) error {
	var st snapshotState
	if err := processors.DecodeState(b, &st); err != nil {
		return err
	}
	if st.V != snapshotVersion {
		return fmt.Errorf("%w: stats snapshot version %d, want %d", processors.ErrSnapshot, st.V, snapshotVersion)
	}
	idle := processors.NewIdleConversations(p.idle.After())
	if err := idle.SetState(st.Idle); err != nil {
		return err
	}
	convs := make(map[string]*events.Stats, len(st.Convs))
	for _, sc := range st.Convs {
		if len(sc.Kinds) != len(sc.Counts) {
			return fmt.Errorf("%w: stats of %q: %d kinds, %d counts", processors.ErrSnapshot, sc.Conversation, len(sc.Kinds), len(sc.Counts))
		}
		c := &events.Stats{Conversation: sc.Conversation, Events: sc.Events, ByKind: make(map[string]uint64, len(sc.Kinds)),
			Actions: sc.Actions, Redacted: sc.Redacted, FirstSeq: sc.FirstSeq, LastSeq: sc.LastSeq}
		for i, k := range sc.Kinds {
			c.ByKind[k] = sc.Counts[i]
		}
		convs[c.Conversation] = c
	}
	p.convs, p.idle = convs, idle
	return nil
}

var _ processors.Snapshotter = (*Processor)(nil)
