package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTasksStopBoundedByContext(t *testing.T) {
	g := newTasks(t.Context())
	release := make(chan struct{})
	g.Go("stubborn", func(context.Context) { <-release }) // ignores its context
	g.Go("polite", func(ctx context.Context) { <-ctx.Done() })
	g.Go("polite", func(ctx context.Context) { <-ctx.Done() })

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := g.stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stubborn still running") {
		t.Fatalf("stop with a goroutine that does not stop: %v, want it named and DeadlineExceeded", err)
	}
	if strings.Contains(err.Error(), "polite") {
		t.Fatalf("stop named goroutines that had stopped: %v", err)
	}
	close(release)
	if err := g.stop(context.Background()); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestTasksContextOutlivesParent(t *testing.T) {
	parent, cancel := context.WithCancel(t.Context())
	g := newTasks(parent)
	cancel()
	if g.ctx.Err() != nil {
		t.Fatal("the group's context ended with its parent's; only stop ends it")
	}
	if err := g.stop(context.Background()); err != nil || g.ctx.Err() == nil {
		t.Fatalf("stop: %v, ctx %v", err, g.ctx.Err())
	}
}
