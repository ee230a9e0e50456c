package httpapi

import (
	"fmt"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// TestSlowSubscriberGetsAGap: a subscriber whose buffer is full is owed a
// gap naming the records it missed; it gets it only once it has read
// everything queued before, nothing is queued after it until then (the
// order holds), and then it goes on receiving.
func TestSlowSubscriberGetsAGap(t *testing.T) {
	h := newHub()
	sub := h.subscribe("", false)
	pending := func(seq uint64) streamEvent {
		return streamEvent{name: "pending", data: []byte(fmt.Sprint(seq)), seq: seq, waited: true}
	}
	for seq := uint64(1); seq <= subscriberBuffer+10; seq++ {
		h.publish(pending(seq))
	}
	if _, _, _, ok := sub.takeGap(); ok {
		t.Fatal("a gap was handed out before the queued events were read")
	}
	for i := 1; i <= subscriberBuffer; i++ {
		ev := <-sub.ch
		if ev.seq != uint64(i) {
			t.Fatalf("event %d has seq %d", i, ev.seq)
		}
		if i < subscriberBuffer {
			// Room again, but the gap is owed: nothing may overtake it.
			h.publish(pending(uint64(1000 + i)))
		}
	}
	from, to, n, ok := sub.takeGap()
	want := subscriberBuffer - 1 + 10
	if !ok || from != subscriberBuffer+1 || to != uint64(1000+subscriberBuffer-1) || n != want {
		t.Fatalf("gap %d..%d (%d, %v), want %d..%d (%d)", from, to, n, ok, subscriberBuffer+1, 1000+subscriberBuffer-1, want)
	}
	if len(sub.ch) != 0 {
		t.Fatalf("%d events overtook the gap", len(sub.ch))
	}
	h.publish(pending(5000))
	if ev := <-sub.ch; ev.seq != 5000 {
		t.Fatalf("after the gap: seq %d", ev.seq)
	}
}

// TestDecisionsNoOneWaitedOnAreCoalesced: decisions of actions that never
// waited are counted, not queued (unless the subscriber asked for all);
// a decision of an action that waited (requested, or by a person or a
// timeout) is queued.
func TestDecisionsNoOneWaitedOnAreCoalesced(t *testing.T) {
	h := newHub()
	sub := h.subscribe("", false)
	all := h.subscribe("", true)
	h.requested(waitKey{"w-1", 7})
	cases := []struct {
		id      string
		seq     uint64
		by      events.DecidedBy
		outcome events.Outcome
		waited  bool
	}{
		{"ls-1", 1, events.ByMode, events.OutcomeAllow, false},
		{"ls-2", 2, events.ByAllowlist, events.OutcomeAllow, false},
		{"rm-1", 3, events.ByRule, events.OutcomeDeny, false},
		{"w-1", 7, events.BySession, events.OutcomeAllow, true},
		{"h-1", 8, events.ByHuman, events.OutcomeDeny, true},
		{"t-1", 9, events.ByTimeout, events.OutcomeDeny, true},
	}
	for i, c := range cases {
		waited := h.decided(waitKey{c.id, c.seq}, c.by)
		if waited != c.waited {
			t.Errorf("%s by %s: waited %v, want %v", c.id, c.by, waited, c.waited)
		}
		h.publish(streamEvent{name: "decided", seq: uint64(100 + i), waited: waited, outcome: c.outcome})
	}
	if len(sub.ch) != 3 || len(all.ch) != 6 {
		t.Fatalf("queued %d (want the 3 a person waited on) and %d with decisions=all (want 6)", len(sub.ch), len(all.ch))
	}
	allow, deny, to := sub.takeSummary()
	if allow != 2 || deny != 1 || to != 102 {
		t.Fatalf("summary %d allowed, %d denied, to %d; want 2, 1, 102", allow, deny, to)
	}
	if a, d, _ := sub.takeSummary(); a+d != 0 {
		t.Fatal("a summary is handed out twice")
	}
}
