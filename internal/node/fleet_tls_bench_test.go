package node

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// TestFleetTLSCost measures what TLS costs a three-node fleet on one
// machine, with and without TLS in the same run (VIGIL_TLS_BENCH=1; the
// figures are in BENCHMARKS.md, "Fleet: the cost of TLS"): the latency
// of one append (ingest, stored on a quorum, acknowledged) and of one
// gate (an action appended to its decision), one at a time, and the
// rate of appends from three producers on three nodes.
func TestFleetTLSCost(t *testing.T) {
	if os.Getenv("VIGIL_TLS_BENCH") == "" {
		t.Skip("set VIGIL_TLS_BENCH=1: starts 3-node fleets, ~1 min")
	}
	const seq, producers, perProducer, batch = 300, 3, 2000, 50
	for round := range 2 {
		for _, mode := range []string{TLSAuto, TLSOff} {
			name := map[string]string{TLSAuto: "tls", TLSOff: "plain"}[mode]
			nodes := startFleetWith(t, 3, func(c *Config) {
				c.TLSMode, c.InsecureLab = mode, true
				c.Processors = func() ([]processors.Processor, error) {
					g, err := gate.New(gate.Options{})
					if err != nil {
						return nil, err
					}
					return []processors.Processor{g}, nil
				}
			})
			var urls []string
			for _, s := range nodes {
				urls = append(urls, s.Info().NATSURL)
			}
			creds := datadir.CredsAt(nodes[0].cfg.CredsDir).Seed(natsutil.RoleAgent)
			dial := func(first int) *client.Client {
				c, err := client.Connect(t.Context(), client.Options{URL: strings.Join(append([]string{urls[first]}, urls...), ","), CredsFile: creds, Timeout: 30 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			c := dial(0)
			var app, gt []time.Duration
			for i := range seq {
				ev := events.Event{V: 1, ID: fmt.Sprintf("%s%d-a%d", name, round, i), Kind: events.KindMessage, Conversation: "cost-" + name,
					Time: time.Unix(1_800_000_000, 0), Data: map[string]any{"role": "user", "content": "hello"}}
				start := time.Now()
				if _, err := c.Append(t.Context(), ev); err != nil {
					t.Fatal(err)
				}
				app = append(app, time.Since(start))
				start = time.Now()
				if _, err := c.GateAndWait(t.Context(), action(fmt.Sprintf("%s%d-g%d", name, round, i), "cost-gate-"+name, "ls -la"), nil); err != nil {
					t.Fatal(err)
				}
				gt = append(gt, time.Since(start))
			}
			c.Close()
			var wg sync.WaitGroup
			start := time.Now()
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pc := dial(p)
					defer pc.Close()
					for i := 0; i < perProducer; i += batch {
						var evs []events.Event
						for j := i; j < i+batch; j++ {
							evs = append(evs, events.Event{V: 1, ID: fmt.Sprintf("%s%d-p%d-%d", name, round, p, j), Kind: events.KindMessage,
								Conversation: fmt.Sprintf("cost-%s-%d", name, p), Time: time.Unix(1_800_000_000, 0), Data: map[string]any{"role": "user", "content": "hello"}})
						}
						if _, err := pc.AppendBatch(t.Context(), evs); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			rate := float64(producers*perProducer) / time.Since(start).Seconds()
			t.Logf("round %d %-5s: append p50 %v p99 %v; gate p50 %v p99 %v; %d producers: %.0f events/s",
				round, name, pct(app, 50), pct(app, 99), pct(gt, 50), pct(gt, 99), producers, rate)
			for _, s := range nodes {
				s.Close(t.Context())
			}
		}
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(10 * time.Microsecond)
}
