package gate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// TestGoneIDs: the forgotten-id set answers as a map of every id added
// would (the latest seq of an id forgotten twice), across merges and a
// snapshot round trip, and its snapshot pairs are sorted by hash, each
// hash once, so they encode the same whenever the merges happened.
func TestGoneIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var g goneIDs
	model := map[string]uint64{}
	const n = 3*goneMergeAt + 17
	for i := range n {
		id := fmt.Sprintf("act-%d", i)
		if i%50 == 0 && i > 0 { // forgotten again, with a later action
			id = fmt.Sprintf("act-%d", rng.IntN(i))
		}
		g.add(id, uint64(i+1))
		model[id] = uint64(i + 1)
	}
	check := func(g *goneIDs) {
		t.Helper()
		for id, want := range model {
			if got, ok := g.get(id); !ok || got != want {
				t.Fatalf("get(%s) = %d, %v; want %d", id, got, ok, want)
			}
		}
		for i := range 1000 {
			if _, ok := g.get(fmt.Sprintf("never-%d", i)); ok {
				t.Fatalf("never-%d is known", i)
			}
		}
	}
	check(&g)
	flat := slices.Clone(g.flat())
	if len(flat) != 2*len(model) {
		t.Fatalf("%d pairs, want %d", len(flat)/2, len(model))
	}
	restored, err := goneFrom(flat)
	if err != nil {
		t.Fatal(err)
	}
	check(&restored)
	// One more after the restore, then the same pairs as a set built in
	// one go: merge timing does not show.
	restored.add("late", n+1)
	model["late"] = n + 1
	check(&restored)
	var once goneIDs
	once.recent = map[uint64]uint64{}
	for id, seq := range model {
		once.recent[idHash(id)] = seq
	}
	if !slices.Equal(restored.flat(), once.flat()) {
		t.Fatal("pairs depend on when the merges happened")
	}
}

func TestGoneFromRefuses(t *testing.T) {
	for name, flat := range map[string][]uint64{
		"odd":       {1, 2, 3},
		"unsorted":  {5, 1, 3, 2},
		"duplicate": {5, 1, 5, 2},
	} {
		if _, err := goneFrom(flat); err == nil {
			t.Errorf("%s: accepted %v", name, flat)
		} else if !errors.Is(err, processors.ErrSnapshot) {
			t.Errorf("%s: %v does not wrap ErrSnapshot", name, err)
		}
	}
}

// TestSeenIDs: with the filter of ids seen in front of usedAt, every id
// decided is still found (in full, or forgotten into gone), across the
// filter's rebuilds as it grows and after a snapshot round trip, and no
// id never decided is.
func TestSeenIDs(t *testing.T) {
	p, err := New(Options{MaxDecided: 1000})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30000 // several rebuilds of the filter (8,192 ids at first)
	check := func(p *Processor, upTo int) {
		t.Helper()
		for i := range upTo {
			if seq, used := p.usedAt(fmt.Sprintf("act-%d", i)); !used || seq != uint64(i+1) {
				t.Fatalf("act-%d: usedAt = %d, %v; want %d", i, seq, used, i+1)
			}
		}
		for i := range 1000 {
			if _, used := p.usedAt(fmt.Sprintf("never-%d", i)); used {
				t.Fatalf("never-%d is used", i)
			}
		}
	}
	for i := range n {
		id := fmt.Sprintf("act-%d", i)
		if _, used := p.usedAt(id); used {
			t.Fatalf("%s is used before it is decided", id)
		}
		p.remember(events.GateDecided{ActionID: id, LogSeq: uint64(i + 1), DecisionSeq: uint64(i + 1)}, 0)
		if i%7919 == 0 {
			check(p, i+1)
		}
	}
	check(p, n)
	snap, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q, _ := New(Options{MaxDecided: 1000})
	if err := q.Restore(snap); err != nil {
		t.Fatal(err)
	}
	check(q, n)
}
