// Package testnode is the test harness for Vigil's packages: a real
// embedded node (NATS on a port the kernel picks, data in t.TempDir, always
// shut down), waits on the driver's checkpoint and on any condition with a
// bound, and a fake clock for the parts of Vigil that take one.
//
// It is meant for tests only; nothing outside _test.go files imports it.
// A package imported by internal/node cannot use StartNode from its own
// internal tests (an import cycle): those keep their smaller helpers, and
// take the waits from the leaf package internal/testnode/wait, as
// internal/node's own tests do.
//
// On the data path: tests: a real node of internal/node for the other
// packages' tests.
package testnode

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/expiry"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// Options say what node StartNode starts. The zero value is an ingest-only
// node (no processors) on a fresh directory.
type Options struct {
	// Dir is the data directory; empty means a new t.TempDir(). Pass the
	// same Dir to start a node again on what an earlier one stored.
	Dir string
	// Processors builds the processors the driver runs; nil runs none.
	// Gate builds the gate, as vigil serve runs it.
	Processors func() ([]processors.Processor, error)
	// Expiry runs the approval-expiry timer next to the node, as vigil
	// serve does, on Now's clock.
	Expiry bool
	// Now is the expiry timer's clock; nil means time.Now.
	Now func() time.Time
	// Configure changes anything else of the node's configuration
	// before the start (a sink, the durability, redaction …).
	Configure func(*node.Config)
	// AsServe starts the node with its own processors and expiry timer,
	// as vigil serve does (Processors and Expiry are then ignored).
	AsServe bool
}

// StartNode starts a node as o says, through node.Start, so with what
// serve runs: redaction and the whole-config check on (a test that must
// see raw text sets node.Config.UnsafeNoRedaction in Configure). It
// listens on 127.0.0.1 with a port the kernel picks (read the bound one
// from s.Info().NATSURL) and is shut down when the test ends, its expiry
// timer first.
func StartNode(t testing.TB, o Options) *node.Node {
	t.Helper()
	dir := o.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := node.Config{
		DataDir:    dir,
		NATSListen: "127.0.0.1:-1",
		Durability: natsutil.DurabilityInterval,
		Processors: o.Processors,
		// The timers run beside the node on Now's clock (Expiry).
		NoExpiry: true,
	}
	if o.AsServe {
		cfg.Processors, cfg.NoExpiry, o.Expiry = nil, false, false
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	if cfg.Processors == nil && !o.AsServe {
		cfg.NoProcessors = true // ingest only, not the node's own set
	}
	s, err := node.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("testnode: start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("testnode: close: %v", err)
		}
	})
	if o.Expiry {
		RunExpiry(t, s, o.Now)
	}
	return s
}

// Gate builds the gate processor with o, for Options.Processors.
func Gate(o gate.Options) func() ([]processors.Processor, error) {
	return func() ([]processors.Processor, error) {
		g, err := gate.New(o)
		if err != nil {
			return nil, err
		}
		return []processors.Processor{g}, nil
	}
}

// RunExpiry starts the approval-expiry timer on s with the clock now (nil:
// time.Now) and stops it when the test ends, before the node closes when
// the node was started first. A timer that fails is a test error.
func RunExpiry(t testing.TB, s *node.Node, now func() time.Time) {
	t.Helper()
	timer, err := expiry.New(expiry.Config{Conn: s.Conn(), Now: now})
	if err != nil {
		t.Fatalf("testnode: expiry timer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- timer.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("testnode: expiry timer: %v", err)
		}
	})
}

// Client returns a client of s with role's credentials, closed when the
// test ends.
func Client(t testing.TB, s *node.Node, role natsutil.Role) *client.Client {
	t.Helper()
	cl, err := s.Client(context.Background(), role)
	if err != nil {
		t.Fatalf("testnode: %s client: %v", role, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// DefaultWait bounds WaitCheckpoint and the waits of callers that have no
// better bound (wait.Default).
const DefaultWait = wait.Default

// WaitCheckpoint waits until d (a *driver.Driver: s.Driver()) has
// checkpointed log seq seq (its outputs stored, its sink applied),
// failing the test after DefaultWait.
func WaitCheckpoint(t testing.TB, d wait.Checkpointer, seq uint64) {
	t.Helper()
	wait.Checkpoint(t, d, seq)
}

// WaitCheckpointWithin is WaitCheckpoint with its own bound.
func WaitCheckpointWithin(t testing.TB, d wait.Checkpointer, seq uint64, within time.Duration) {
	t.Helper()
	wait.CheckpointWithin(t, d, seq, within)
}

// Eventually calls cond until it returns "" and fails the test with its
// last answer (what is still missing) once within has passed.
func Eventually(t testing.TB, within time.Duration, cond func() string) {
	t.Helper()
	wait.Eventually(t, within, cond)
}

// Clock is a fake clock: it stands still until the test moves it. Its Now
// is what Vigil's components take as their clock (expiry.Config.Now,
// driver.Config.Now …). Safe for concurrent use.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	reads int
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.now
}

// Reads is how many times Now was called: a test waits on it for a
// component's wake-ups instead of sleeping.
func (c *Clock) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Advance moves the clock d forward and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
