package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/soak"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/stats"
)

// startFleet starts n clustered nodes on loopback sharing one credentials
// directory, with every stream replicated n times.
func startFleet(t *testing.T, n int) []*Node {
	t.Helper()
	return startFleetWith(t, n, nil)
}

// startFleetWith is startFleet with each node's Config changed by change.
//
// No port is chosen in advance (a port found free can be taken before the
// node binds it): every node listens on ports the kernel picks, and the
// nodes start one after the other, each with routes to the nodes started
// before it, whose cluster addresses their logs give as they bind. The
// first node is the seed the others join; NATS tells each node of the
// others, so the routes become a full mesh. change sees the routes, so a
// node started again with its Config finds the nodes started before it.
func startFleetWith(t *testing.T, n int, change func(*Config)) []*Node {
	t.Helper()
	creds := t.TempDir()
	if _, err := natsutil.EnsureCreds(creds); err != nil {
		t.Fatal(err)
	}
	nodes := make([]*Node, n)
	errs := make([]error, n)
	var routes []string
	// Cancelled if a node fails before the fleet forms: the ones started
	// would wait for the others.
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	var wg sync.WaitGroup
	for i := range n {
		cfg := Config{
			DataDir:    filepath.Join(t.TempDir(), fmt.Sprintf("n%d", i)),
			CredsDir:   creds,
			NATSListen: "127.0.0.1:-1",
			Durability: natsutil.DurabilityInterval,
			NodeName:   fmt.Sprintf("n%d", i),
			Cluster:    natsutil.ClusterConfig{Name: "vigil-test", Listen: "127.0.0.1:-1", Routes: slices.Clone(routes)},
			Replicas:   n,
			NoExpiry:   true,
			Processors: func() ([]processors.Processor, error) { return []processors.Processor{stats.New()}, nil },
		}
		if change != nil {
			change(&cfg)
		}
		bound := make(chan string, 1)
		inner := slog.DiscardHandler
		if cfg.Logger != nil {
			inner = cfg.Logger.Handler()
		}
		cfg.Logger = slog.New(&routeListenHandler{Handler: inner, bound: bound})
		started := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(started)
			nodes[i], errs[i] = Start(ctx, cfg)
		}()
		// A clustered node's Start returns once the fleet has formed, so
		// wait only for its route listener before starting the next.
		select {
		case addr := <-bound:
			routes = append(routes, "nats-route://"+addr)
		case <-started:
			if errs[i] == nil {
				errs[i] = errors.New("started without logging its cluster address")
			}
		case <-time.After(wait.Default):
			errs[i] = errors.New("no route listener after " + wait.Default.String())
		}
		if errs[i] != nil {
			cancel()
			break
		}
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range nodes {
			if s != nil {
				s.Close(context.Background())
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	return nodes
}

// routeListenHandler passes records on and sends the address of the
// route listener ("Listening for route connections on ADDR", logged by
// nats-server as it binds) on bound, once.
type routeListenHandler struct {
	slog.Handler
	bound chan string
}

// Enabled implements slog.Handler: the listener's record is at info level.
func (h *routeListenHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.Handler.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *routeListenHandler) Handle(ctx context.Context, r slog.Record) error {
	if addr, ok := strings.CutPrefix(r.Message, "Listening for route connections on "); ok {
		select {
		case h.bound <- strings.TrimSpace(addr):
		default:
		}
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *routeListenHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &routeListenHandler{Handler: h.Handler.WithAttrs(as), bound: h.bound}
}

// WithGroup implements slog.Handler.
func (h *routeListenHandler) WithGroup(name string) slog.Handler {
	return &routeListenHandler{Handler: h.Handler.WithGroup(name), bound: h.bound}
}

// TestFleetNodeKilledMidLoad: three clustered nodes, streams with three
// replicas; producers append through any node; one node is killed halfway.
// Every acknowledged event must be in the log exactly once, and gating
// (a decision derived from a new action) must resume.
func TestFleetNodeKilledMidLoad(t *testing.T) {
	soak.Require(t, "a 3-node cluster losing a node mid-load, ~1 min")
	nodes := startFleet(t, 3)
	var urls []string
	for _, s := range nodes {
		urls = append(urls, s.Info().NATSURL)
	}
	credsDir := nodes[0].cfg.CredsDir
	const total, producers, batch = 3000, 3, 20
	var acked atomic.Int64
	ackedIDs := make([][]string, producers)
	half := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errc := make(chan error, producers)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each producer prefers a different node; all know every node.
			order := append([]string{urls[p]}, urls...)
			c, err := client.Connect(t.Context(), client.Options{URL: strings.Join(order, ","), CredsFile: datadir.CredsAt(credsDir).Seed(natsutil.RoleAgent), Timeout: 2 * time.Second})
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			per := total / producers
			for start := 0; start < per; start += batch {
				var evs []events.Event
				for i := start; i < start+batch; i++ {
					evs = append(evs, events.Event{V: 1, ID: fmt.Sprintf("f%d-%05d", p, i), Kind: events.KindMessage, Conversation: fmt.Sprintf("fleet-%d", p),
						Time: time.Unix(1_800_000_000, 0), Data: map[string]any{"role": "assistant", "content": "x"}})
				}
				deadline := time.Now().Add(60 * time.Second)
				for {
					rs, err := c.AppendBatch(t.Context(), evs)
					if err == nil {
						for _, r := range rs {
							ackedIDs[p] = append(ackedIDs[p], r.ID)
						}
						if acked.Add(int64(len(rs))) >= total/2 {
							once.Do(func() { close(half) })
						}
						time.Sleep(10 * time.Millisecond) // keep the load going while a node dies
						break
					}
					if time.Now().After(deadline) {
						errc <- fmt.Errorf("producer %d gave up: %w", p, err)
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	<-half
	killed := time.Now()
	t.Logf("killing node n1 after %d acknowledged events", acked.Load())
	nodes[1].NATS().Shutdown() // abrupt: the node's NATS server goes away mid-load
	closed := make(chan struct{})
	go func() { nodes[1].Close(context.Background()); close(closed) }()
	t.Cleanup(func() { <-closed })
	// Gating resumes: a new action appended through a survivor is folded
	// by the survivors' drivers and its derived output published.
	survivor := nodes[0]
	probeStart := time.Now()
	c, err := survivor.Client(t.Context(), natsutil.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	probe := events.Event{V: 1, ID: "probe-after-kill", Kind: events.KindMessage, Conversation: "fleet-probe", Time: time.Unix(1_800_000_001, 0), Data: map[string]any{"role": "user", "content": "x"}}
	// A producer with no reply retries with the same id (stored once): the
	// probe follows that contract like the producers above.
	var r client.Result
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		r, err = c.Append(actx, probe)
		cancel()
		if err == nil {
			break
		}
		if time.Since(probeStart) > 90*time.Second {
			t.Fatalf("probe not stored after %d attempts: %v", attempt, err)
		}
		t.Logf("probe attempt %d: %v; retrying with the same id", attempt, err)
	}
	wait.Eventually(t, 60*time.Second-time.Since(killed), func() string {
		select {
		case err := <-survivor.Err():
			t.Fatalf("survivor driver: %v", err)
		default:
		}
		if got := survivor.Driver().Checkpointed(); got < r.Seq {
			return fmt.Sprintf("survivor driver stuck at %d, waiting for %d", got, r.Seq)
		}
		return ""
	})
	t.Logf("an action appended %v after the kill had its derived output published %v later",
		probeStart.Sub(killed).Round(time.Millisecond), time.Since(probeStart).Round(time.Millisecond))
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}

	seen := map[string]int{}
	if err := c.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		seen[r.Event.ID]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for p := range producers {
		for _, id := range ackedIDs[p] {
			if seen[id] != 1 {
				t.Errorf("acknowledged %s seen %d times", id, seen[id])
			}
		}
	}
	if len(seen) != total+1 {
		t.Errorf("log holds %d distinct events, want %d", len(seen), total+1)
	}
}
