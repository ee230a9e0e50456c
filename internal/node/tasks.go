package node

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// tasks is a group of a node's goroutines that run under one context and
// stop together. A node has two: its front (the notifier, the timers and
// the forwarding of the core's failure to Err) and its core (the driver,
// the sealer, the stream watch, the continuity check); Close stops the
// front, then the ingest service, then the core.
type tasks struct {
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]int
}

// newTasks returns a group whose context is parent's values without its
// cancellation: only stop (or cancel) ends it.
func newTasks(parent context.Context) *tasks {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	return &tasks{ctx: ctx, cancel: cancel, running: map[string]int{}}
}

// Go runs f with the group's context in a goroutine; name says what it is
// when stop gives up waiting for it.
func (g *tasks) Go(name string, f func(ctx context.Context)) {
	g.mu.Lock()
	g.running[name]++
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			g.mu.Lock()
			if g.running[name]--; g.running[name] == 0 {
				delete(g.running, name)
			}
			g.mu.Unlock()
		}()
		f(g.ctx)
	}()
}

// stop cancels the group's context and waits for every goroutine, at most
// until ctx is done; then it returns an error naming those still running
// (they stop on their own later). It may be called more than once.
func (g *tasks) stop(ctx context.Context) error {
	g.cancel()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-done:
		return nil
	default:
	}
	g.mu.Lock()
	var names []string
	for name := range g.running {
		names = append(names, name)
	}
	g.mu.Unlock()
	slices.Sort(names)
	return fmt.Errorf("node: %s still running when the shutdown's time was up: %w", strings.Join(names, ", "), context.Cause(ctx))
}
