package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/gate"
)

// GateConfig configures RunGate (`vigil bench gate`).
type GateConfig struct {
	Rate          float64
	Duration      time.Duration
	Warmup        time.Duration
	Conversations int
	Durability    natsutil.Durability
	// Processors are the serve set; the gate is added if it is missing.
	Processors func() ([]processors.Processor, error)
	// Profile, when set, is called around the actions' sends (the warm-up
	// included): start before the first, the returned stop once the last
	// is decided.
	Profile func() (stop func(), err error)
}

// GateResult is what RunGate measured; `vigil bench gate --json` prints it.
type GateResult struct {
	Actions      int     `json:"actions"`
	Errors       int     `json:"errors"`
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	// AppendP50Ms and AppendP99Ms are the part of the latency spent until
	// the ingest service acknowledged the action (stored in VIGIL_LOG).
	AppendP50Ms float64 `json:"append_p50_ms"`
	AppendP99Ms float64 `json:"append_p99_ms"`
	// BareP50Ms and BareP99Ms are one bare JetStream publish (sync, TCP, to
	// a scratch stream, same server, same rate and durability), measured
	// in the same run: DESIGN.md's yardstick ("within 2 × one bare fsynced
	// publish"); RatioP50 is p50 / bare p50.
	BareP50Ms float64 `json:"bare_publish_p50_ms"`
	BareP99Ms float64 `json:"bare_publish_p99_ms"`
	RatioP50  float64 `json:"ratio_p50_to_bare"`
	// PacingP50Ms and PacingP99Ms are how late the load generator sent
	// actions (its sleep overshoots): not part of the latency, which runs
	// from the send. Every action is sent from its own goroutine, so a
	// slow server cannot delay later sends (no coordinated omission).
	PacingP50Ms   float64 `json:"pacing_lag_p50_ms"`
	PacingP99Ms   float64 `json:"pacing_lag_p99_ms"`
	P50Ms         float64 `json:"p50_ms"`
	P90Ms         float64 `json:"p90_ms"`
	P99Ms         float64 `json:"p99_ms"`
	MaxMs         float64 `json:"max_ms"`
	MeanMs        float64 `json:"mean_ms"`
	Durability    string  `json:"durability"`
	Conversations int     `json:"conversations"`
	Transport     string  `json:"transport"`
	Processors    string  `json:"processors"`
	Allowed       int     `json:"allowed"`
	Denied        int     `json:"denied"`
	// LogRecords and DerivedOutputs are what VIGIL_LOG and VIGIL_DERIVED
	// hold at the end (the config event and the warm-up included), once the
	// driver has stored everything; DerivedPerRecord is their ratio: each
	// derived output is one more fsynced write per action with fsync
	// durability (nats-server fsyncs every message of a sync_always stream).
	LogRecords       uint64  `json:"log_records"`
	DerivedOutputs   uint64  `json:"derived_outputs"`
	DerivedPerRecord float64 `json:"derived_per_record"`
	// CPUMicrosPerAction is the process's CPU time (user and system, the
	// server, the processors and the 16 agents included) per action sent,
	// and CoresUsed that CPU time over the wall time of the sends: an
	// action rate times CPUMicrosPerAction near the cores the process can
	// get means the append path is saturated and queues (zero where the
	// platform does not tell).
	CPUMicrosPerAction float64 `json:"cpu_us_per_action,omitempty"`
	CoresUsed          float64 `json:"cores_used,omitempty"`
	CPUs               int     `json:"cpus"`
	GoVersion          string  `json:"go_version"`
	Seconds            float64 `json:"seconds"`
}

// gateConfig is the config the benchmark runs under: risky, the
// pattern and policy analyzers on, a deny rule.
func gateConfig() events.Config {
	return events.Config{
		Version:   1,
		Analyzers: events.Analyzers{Rules: true, Policy: true},
		Confirmation: events.Confirmation{Mode: events.ModeRisky, Threshold: events.RiskHigh,
			Unknown: events.RiskMedium},
		PolicyRules: []events.PolicyRule{
			{Name: "no-internal-hosts", Expr: `hosts.exists(h, h.endsWith(".internal"))`, Level: events.RiskHigh},
			{Name: "package-installs", Expr: `commands.exists(c, c == "pip" || c == "npm") && command.contains("install")`, Level: events.RiskMedium},
		},
		DenyRules: []events.PolicyRule{
			{Name: "no-prod-db", Expr: `command.contains("prod-db")`, Reason: "production database"},
		},
	}
}

// gateCommands are commands an agent runs all day; the ones the gate
// would hold for a person under gateConfig are dropped at start.
var gateCommands = []string{
	"ls -la", "git status", "git diff --stat", "go test ./...", "cat README.md | head -50",
	"grep -rn TODO --include=*.go .", "npm run build", "npm install left-pad",
	"python3 -m pytest -q tests/", "make -j2", "docker ps", "find . -name '*.go' | wc -l",
	"psql -h prod-db.example.com -c 'select 1'", "curl -s https://example.com/api/health",
	"sed -n 1,40p main.go", "go vet ./...", "git log --oneline | head -20",
}

// RunGate starts a node in a temporary directory running cfg.Processors
// (the gate added when missing) under gateConfig, then appends actions
// from cfg.Conversations agents at cfg.Rate per second over TCP, each
// waiting for its decision (GateAndWait), and reports the latency from
// each send to its decision, with a bare JetStream publish measured on the
// same server for comparison.
func RunGate(ctx context.Context, cfg GateConfig) (GateResult, error) {
	res := GateResult{TargetRate: cfg.Rate, Durability: string(cfg.Durability), Conversations: cfg.Conversations,
		Transport: "tcp loopback", CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	dir, err := os.MkdirTemp("", "vigil-bench-gate-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	bc := gateConfig()
	procs := func() ([]processors.Processor, error) {
		ps, err := cfg.Processors()
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(ps, func(p processors.Processor) bool { return p.Name() == gate.Name }) {
			g, err := gate.New(gate.Options{})
			if err != nil {
				return nil, err
			}
			ps = append(ps, g)
		}
		return ps, nil
	}
	if ps, err := procs(); err == nil {
		for i, p := range ps {
			if i > 0 {
				res.Processors += ","
			}
			res.Processors += p.Name()
		}
	}
	s, err := node.Start(ctx, node.Config{DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: cfg.Durability,
		Processors: procs, ProjectionsDir: datadir.New(dir).Projections(),
	})
	if err != nil {
		return res, err
	}
	defer s.Close(context.Background())
	admin, err := s.Client(ctx, natsutil.RoleAdmin)
	if err != nil {
		return res, err
	}
	defer admin.Close()
	data, err := events.ToData(bc)
	if err != nil {
		return res, err
	}
	if _, err := admin.Append(ctx, events.Event{V: 1, ID: "bench-config", Kind: events.KindConfig, Time: time.Now().UTC(), Data: data}); err != nil {
		return res, fmt.Errorf("bench config: %w", err)
	}
	// Keep only commands decided at once under the config.
	sc, err := gate.NewRiskScorer(bc.WithDefaults())
	if err != nil {
		return res, err
	}
	var cmds []string
	for _, cmd := range gateCommands {
		ev := events.Event{Kind: events.KindAction, Data: map[string]any{"tool": "bash", "args": map[string]any{"command": cmd}}}
		if a := sc.Assess(&ev, gate.Env{Backend: "local"}); a.Level != events.RiskHigh || len(a.Deny) > 0 {
			cmds = append(cmds, cmd)
		}
	}
	if len(cmds) == 0 {
		return res, errors.New("bench: every sample command would wait for a person")
	}
	bare, err := barePublish(ctx, s.Info().NATSURL, datadir.New(dir).Creds().Seed(natsutil.RoleAdmin), cfg.Rate, min(cfg.Duration, 3*time.Second))
	if err != nil {
		return res, fmt.Errorf("bench: bare publish: %w", err)
	}
	res.BareP50Ms, res.BareP99Ms = bare[0], bare[1]
	agents := make([]*client.Client, cfg.Conversations)
	for i := range agents {
		cl, err := client.Connect(ctx, client.Options{URL: s.Info().NATSURL, CredsFile: datadir.New(dir).Creds().Seed(natsutil.RoleAgent), Name: fmt.Sprintf("bench-agent-%d", i)})
		if err != nil {
			return res, err
		}
		defer cl.Close()
		agents[i] = cl
	}
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	total := int((cfg.Warmup + cfg.Duration) / interval)
	warm := int(cfg.Warmup / interval)
	lat := make([]time.Duration, total)
	pacing := make([]time.Duration, total)
	appended := make([]time.Duration, total)
	outcome := make([]events.Outcome, total)
	errs := make([]bool, total)
	stop := func() {}
	if cfg.Profile != nil {
		if stop, err = cfg.Profile(); err != nil {
			return res, fmt.Errorf("bench: profile: %w", err)
		}
	}
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuNow()
	var measuredStart, lastDone time.Time
	var mu sync.Mutex
	for i := 0; i < total; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if i == warm {
			measuredStart = due
		}
		wg.Add(1)
		go func(i int, due time.Time) {
			defer wg.Done()
			conv := fmt.Sprintf("agent-%d", i%cfg.Conversations)
			ev := events.Event{V: 1, ID: fmt.Sprintf("bench-%09d", i), Kind: events.KindAction, Conversation: conv,
				Agent: conv, Time: time.Now().UTC(),
				Data: map[string]any{"tool": "bash", "args": map[string]any{"command": cmds[i%len(cmds)]}}}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			sent := time.Now()
			pacing[i] = sent.Sub(due)
			r, err := agents[i%cfg.Conversations].GateAndWait(cctx, ev, &client.GateOptions{
				OnAppended: func(client.Result) { appended[i] = time.Since(sent) }})
			done := time.Now()
			lat[i], outcome[i], errs[i] = done.Sub(sent), r.Outcome, err != nil
			mu.Lock()
			if done.After(lastDone) {
				lastDone = done
			}
			mu.Unlock()
		}(i, due)
	}
	wg.Wait()
	stop()
	if cpu := cpuNow() - cpu0; cpu0 > 0 && cpu > 0 {
		res.CPUMicrosPerAction = float64(cpu.Microseconds()) / float64(total)
		res.CoresUsed = cpu.Seconds() / time.Since(start).Seconds()
	}
	var ms, ams, pms []time.Duration
	var sum time.Duration
	for i := warm; i < total; i++ {
		if errs[i] {
			res.Errors++
			continue
		}
		ms = append(ms, lat[i])
		ams = append(ams, appended[i])
		pms = append(pms, pacing[i])
		sum += lat[i]
		if outcome[i] == events.OutcomeAllow {
			res.Allowed++
		} else {
			res.Denied++
		}
	}
	res.Actions = total - warm
	if len(ms) == 0 {
		return res, errors.New("bench: no action was decided")
	}
	slices.Sort(ms)
	slices.Sort(ams)
	slices.Sort(pms)
	pct := func(xs []time.Duration, p float64) float64 {
		i := int(p * float64(len(xs)-1))
		return float64(xs[i]) / 1e6
	}
	res.P50Ms, res.P90Ms, res.P99Ms, res.MaxMs = pct(ms, 0.50), pct(ms, 0.90), pct(ms, 0.99), float64(ms[len(ms)-1])/1e6
	res.AppendP50Ms, res.AppendP99Ms = pct(ams, 0.50), pct(ams, 0.99)
	res.PacingP50Ms, res.PacingP99Ms = pct(pms, 0.50), pct(pms, 0.99)
	if res.BareP50Ms > 0 {
		res.RatioP50 = res.P50Ms / res.BareP50Ms
	}
	res.MeanMs = float64(sum) / float64(len(ms)) / 1e6
	res.LogRecords, res.DerivedOutputs = streamCounts(ctx, s.Info().NATSURL, datadir.New(dir).Creds().Seed(natsutil.RoleAdmin))
	if res.LogRecords > 0 {
		res.DerivedPerRecord = float64(res.DerivedOutputs) / float64(res.LogRecords)
	}
	elapsed := lastDone.Sub(measuredStart)
	res.Seconds = elapsed.Seconds()
	res.AchievedRate = float64(len(ms)) / elapsed.Seconds()
	return res, nil
}

// barePublish measures sync JetStream publishes of 512 bytes over TCP to a
// scratch stream at rate per second for d, and returns p50 and p99 in ms.
func barePublish(ctx context.Context, url, creds string, rate float64, d time.Duration) ([2]float64, error) {
	var out [2]float64
	opt, err := natsutil.CredsOption(creds)
	if err != nil {
		return out, err
	}
	nc, err := nats.Connect(url, append([]nats.Option{opt}, natsutil.InboxOptions()...)...)
	if err != nil {
		return out, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return out, err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH_BARE", Subjects: []string{"bench.bare"}, Storage: jetstream.FileStorage}); err != nil {
		return out, err
	}
	defer js.DeleteStream(context.Background(), "BENCH_BARE")
	body := make([]byte, 512)
	interval := time.Duration(float64(time.Second) / rate)
	n := int(d / interval)
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sent := time.Now()
			if _, err := js.Publish(ctx, "bench.bare", body); err != nil {
				lat[i] = -1
				return
			}
			lat[i] = time.Since(sent)
		}(i)
	}
	wg.Wait()
	ok := lat[:0]
	for _, l := range lat {
		if l >= 0 {
			ok = append(ok, l)
		}
	}
	if len(ok) == 0 {
		return out, errors.New("no publish succeeded")
	}
	slices.Sort(ok)
	out[0] = float64(ok[len(ok)/2]) / 1e6
	out[1] = float64(ok[int(0.99*float64(len(ok)-1))]) / 1e6
	return out, nil
}

// streamCounts returns how many messages VIGIL_LOG and VIGIL_DERIVED hold
// once VIGIL_DERIVED has stopped growing (the driver stores outputs after
// the decisions reach the agents), waiting at most 10 s; zeros when they
// cannot be read.
func streamCounts(ctx context.Context, url, creds string) (logMsgs, derived uint64) {
	opt, err := natsutil.CredsOption(creds)
	if err != nil {
		return 0, 0
	}
	nc, err := nats.Connect(url, append([]nats.Option{opt}, natsutil.InboxOptions()...)...)
	if err != nil {
		return 0, 0
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, 0
	}
	count := func(name string) uint64 {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return 0
		}
		info, err := st.Info(ctx)
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}
	deadline := time.Now().Add(10 * time.Second)
	for last := uint64(0); ; last = derived {
		time.Sleep(500 * time.Millisecond)
		logMsgs, derived = count(events.StreamLog), count(events.StreamDerived)
		if derived == last || time.Now().After(deadline) || ctx.Err() != nil {
			return logMsgs, derived
		}
	}
}
