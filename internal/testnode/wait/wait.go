// Package wait holds the test harness's bounded waits: on a driver's
// checkpoint and on any condition. It imports nothing of Vigil, so the
// internal tests of every package can use it, internal/node's included
// (internal/testnode itself imports internal/node; it forwards these).
//
// It is meant for tests only; nothing outside _test.go files imports it.
package wait

import (
	"fmt"
	"testing"
	"time"
)

// Default bounds Checkpoint and the waits of callers that have no better
// bound: long, because a loaded 2-core CI machine is slow, and only ever
// reached by a test that fails anyway.
const Default = 30 * time.Second

// pollEvery is how often waits look again.
const pollEvery = 10 * time.Millisecond

// Checkpointer is what has a checkpoint: a *driver.Driver (s.Driver()).
type Checkpointer interface {
	Checkpointed() uint64
}

// Checkpoint waits until d has checkpointed log seq seq (its outputs
// stored, its sink applied), failing the test after Default.
func Checkpoint(t testing.TB, d Checkpointer, seq uint64) {
	t.Helper()
	CheckpointWithin(t, d, seq, Default)
}

// CheckpointWithin is Checkpoint with its own bound.
func CheckpointWithin(t testing.TB, d Checkpointer, seq uint64, within time.Duration) {
	t.Helper()
	Eventually(t, within, func() string {
		if got := d.Checkpointed(); got < seq {
			return fmt.Sprintf("driver checkpoint %d, waiting for %d", got, seq)
		}
		return ""
	})
}

// Eventually calls cond until it returns "" and fails the test with its
// last answer (what is still missing) once within has passed. cond runs
// at least once.
func Eventually(t testing.TB, within time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, why)
		}
		time.Sleep(pollEvery)
	}
}
