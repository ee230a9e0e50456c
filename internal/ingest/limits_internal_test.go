package ingest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
)

func testLimits(l Limits) *limiter {
	l.EnsureDefaults()
	return newLimiter(l)
}

// TestLimiterConversations: past the cap a new conversation is refused
// (one alert, then none within a minute), a live one is still served, an
// idle one is forgotten, and people's credentials are not capped.
func TestLimiterConversations(t *testing.T) {
	l := testLimits(Limits{Conversations: 3, IdleAfter: time.Minute})
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, c := range []string{"a", "b", "c"} {
		if r := l.admit(events.OriginAgent, c, 0, t0.Add(time.Duration(i)*time.Second)); r != nil {
			t.Fatalf("conversation %s refused under the cap: %s", c, r.reason)
		}
	}
	r := l.admit(events.OriginAgent, "d", 0, t0.Add(3*time.Second))
	if r == nil || r.cap != "conversations" || !r.alert || !strings.Contains(r.reason, "3 live conversations") {
		t.Fatalf("fourth conversation: %+v", r)
	}
	if r := l.admit(events.OriginAgent, "e", 0, t0.Add(4*time.Second)); r == nil || r.alert {
		t.Fatalf("fifth conversation: %+v (want refused, no second alert)", r)
	}
	if r := l.admit(events.OriginAgent, "b", 0, t0.Add(5*time.Second)); r != nil {
		t.Fatalf("a live conversation refused: %s", r.reason)
	}
	if r := l.admit(events.OriginRuntime, "x", 0, t0.Add(5*time.Second)); r != nil {
		t.Fatalf("another credential refused: %s", r.reason)
	}
	if r := l.admit(events.OriginAdmin, "y", 0, t0.Add(5*time.Second)); r != nil {
		t.Fatalf("admin refused: %s", r.reason)
	}
	// a and c idle for a minute: forgotten; b was seen at 5 s.
	at := t0.Add(63 * time.Second)
	if r := l.admit(events.OriginAgent, "d", 0, at); r != nil {
		t.Fatalf("after a and c went idle: %s", r.reason)
	}
	if n := l.liveConversations(events.OriginAgent); n != 2 {
		t.Errorf("live conversations = %d, want 2 (b, d)", n)
	}
}

// TestLimiterActions: actions past the burst are refused until the rate
// refills the bucket; a refused request takes nothing.
func TestLimiterActions(t *testing.T) {
	l := testLimits(Limits{ActionsPerSecond: 10, ActionBurst: 20})
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if r := l.admit(events.OriginAgent, "c", 20, t0); r != nil {
		t.Fatalf("the burst refused: %s", r.reason)
	}
	if r := l.admit(events.OriginAgent, "c", 1, t0); r == nil || r.cap != "actions" {
		t.Fatalf("past the burst: %+v", r)
	}
	if r := l.admit(events.OriginAgent, "c", 0, t0); r != nil {
		t.Fatalf("a request without actions refused: %s", r.reason)
	}
	if r := l.admit(events.OriginAgent, "c", 5, t0.Add(500*time.Millisecond)); r != nil {
		t.Fatalf("after half a second at 10/s: %s", r.reason)
	}
	if r := l.admit(events.OriginAgent, "c", 1, t0.Add(500*time.Millisecond)); r == nil {
		t.Fatal("the bucket refilled beyond the rate")
	}
	off := testLimits(Limits{ActionsPerSecond: -1, Conversations: -1})
	for i := range 100 {
		if r := off.admit(events.OriginAgent, string(rune('a'+i%26))+strings.Repeat("x", i), 1000, t0); r != nil {
			t.Fatalf("caps off, refused: %s", r.reason)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	l := Limits{ActionsPerSecond: 5, ActionBurst: -1, IdleAfter: time.Millisecond}
	l.EnsureDefaults()
	err := l.Validate()
	if !errors.Is(err, ErrInvalidLimits) {
		t.Fatalf("err = %v", err)
	}
	for _, f := range []string{"ActionBurst", "IdleAfter"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error does not name %s: %v", f, err)
		}
	}
	var d Limits
	d.EnsureDefaults()
	if err := d.Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}
