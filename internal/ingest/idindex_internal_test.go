package ingest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPublishDeadline: a request may publish until the index's coverage
// plus JetStream's window (less the clock allowance); an index that lags
// more than the window allows makes the request wait, then fail with
// ErrIndexBehind, and one that catches up meanwhile lets it through.
func TestPublishDeadline(t *testing.T) {
	const w = 2 * time.Minute
	newIndex := func(behind time.Duration) *idIndex {
		return &idIndex{changed: make(chan struct{}), kick: make(chan struct{}, 1), jsWindow: w,
			maxWait: 300 * time.Millisecond, covered: time.Now().Add(-behind)}
	}
	cases := []struct {
		name   string
		behind time.Duration
		ok     bool
	}{
		{"caught up", 0, true},
		{"behind by half the window", w / 2, true},
		{"behind by the window less the allowance and the budget", w - maxSkew - minPublishBudget - time.Second, true},
		{"behind by the window less the allowance", w - maxSkew, false},
		{"behind by more than the window", 2 * w, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := newIndex(tc.behind)
			at, err := x.publishDeadline(context.Background())
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				want := x.covered.Add(w - maxSkew)
				if !at.Equal(want) {
					t.Fatalf("deadline %s, want %s", at, want)
				}
				return
			}
			if !errors.Is(err, ErrIndexBehind) {
				t.Fatalf("err %v, want ErrIndexBehind", err)
			}
		})
	}
	t.Run("catches up while the request waits", func(t *testing.T) {
		x := newIndex(2 * w)
		x.maxWait = 10 * time.Second
		go func() {
			<-x.kick // the request asked for a poll
			x.advanced(7, time.Now())
		}()
		at, err := x.publishDeadline(context.Background())
		if err != nil || time.Until(at) < w-maxSkew-time.Second {
			t.Fatalf("deadline %s, %v; want about %s from now", at, err, w-maxSkew)
		}
		if x.frontier() != 7 {
			t.Fatalf("frontier %d", x.frontier())
		}
	})
}
