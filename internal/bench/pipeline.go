// Package bench measures Vigil against bare JetStream on the same machine,
// in the same run, with the same storage and fsync setting, so the ratio
// means something on any hardware. `vigil bench` prints its results.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/processors"
)

// PipelineConfig configures the pipeline benchmark.
type PipelineConfig struct {
	Events     int
	Durability natsutil.Durability
	// Producers send concurrently; each sends batches of Batch events.
	Producers int
	Batch     int
	// Processors are what the Vigil side runs (the serve set).
	Processors func() ([]processors.Processor, error)
	Redactor   ingest.Redactor
	// NewRedactor follows config changes, as in serve.
	NewRedactor func(events.RedactionSettings) (ingest.Redactor, error)
	Logger      *slog.Logger
	// Progress, when set, is told the phase being measured.
	Progress func(phase string)
	// Profile, when set, is called around the Vigil phase only: start
	// before the first event is sent, and the returned stop once the last
	// one is checkpointed (a CPU profile of what the pipeline costs).
	Profile func() (stop func(), err error)
}

// PipelineResult is what `vigil bench pipeline --json` prints.
type PipelineResult struct {
	Events          int     `json:"events"`
	Durability      string  `json:"durability"`
	MeanEventBytes  int     `json:"mean_event_bytes"`
	BareEventsPerS  float64 `json:"bare_events_per_s"`
	VigilEventsPerS float64 `json:"vigil_events_per_s"`
	Ratio           float64 `json:"ratio"`
	BareSeconds     float64 `json:"bare_seconds"`
	VigilSeconds    float64 `json:"vigil_seconds"`
	// IngestSeconds is the part of VigilSeconds until the last append
	// was acknowledged; the rest is the driver catching up.
	IngestSeconds    float64 `json:"ingest_seconds"`
	DerivedPublished uint64  `json:"derived_published"`
	// BareCPUMicros and VigilCPUMicros are the process's CPU time (user
	// and system, servers included) per event in each phase: what each
	// side costs, which the machine's load changes far less than the
	// rates (zero where the platform does not tell).
	BareCPUMicros  float64 `json:"bare_cpu_us_per_event,omitempty"`
	VigilCPUMicros float64 `json:"vigil_cpu_us_per_event,omitempty"`
	CPUs           int     `json:"cpus"`
	GoVersion      string  `json:"go_version"`
}

// SampleEvents returns n realistic agent events: a conversation's mix of
// actions (shell commands, file writes), observations and messages.
func SampleEvents(n int) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		out[i] = SampleEvent(i)
	}
	return out
}

// sampleCommands are the shell commands of SampleEvent's actions.
var sampleCommands = []string{
	"ls -la", "go test ./...", "git status", "cat README.md | head -50",
	"grep -rn \"TODO\" --include=*.go .", "npm run build", "rm -rf ./build",
	"curl -s https://example.com/api/health", "python3 -m pytest -q tests/",
	"find . -name '*.pyc' -delete", "docker ps", "make -j2",
}

// SampleEvent is event i of SampleEvents, made on its own (a long stream
// of them needs no memory): a third bash actions, a third their
// observations, a third messages, over 8 conversations.
func SampleEvent(i int) events.Event {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	conv := fmt.Sprintf("bench-%d", i%8)
	ev := events.Event{V: 1, ID: fmt.Sprintf("bench-%08d", i), Conversation: conv, Agent: "coder-1",
		Time: t0.Add(time.Duration(i) * time.Millisecond)}
	switch i % 3 {
	case 0:
		ev.Kind = events.KindAction
		ev.Data = map[string]any{"tool": "bash", "args": map[string]any{"command": sampleCommands[i%len(sampleCommands)]},
			"security_risk": "LOW", "thought": "Run the next step of the plan to check the build."}
	case 1:
		ev.Kind = events.KindObservation
		ev.Data = map[string]any{"action_id": fmt.Sprintf("bench-%08d", i-1), "exit_code": int64(0),
			"content": "total 48\ndrwxr-xr-x  6 dev dev 4096 Nov 22 10:00 .\n-rw-r--r--  1 dev dev 1234 Nov 22 09:58 go.mod\n-rw-r--r--  1 dev dev 5678 Nov 22 09:58 main.go\nok  \texample.com/app\t0.412s\n"}
	default:
		ev.Kind = events.KindMessage
		ev.Data = map[string]any{"role": "assistant", "content": "The tests pass. Next I will update the changelog and open a pull request with the fix for the race in the worker pool."}
	}
	return ev
}

// RunPipeline measures bare JetStream and Vigil, one after the other, on
// fresh embedded servers in temporary directories.
func RunPipeline(ctx context.Context, cfg PipelineConfig) (PipelineResult, error) {
	if cfg.Events <= 0 {
		cfg.Events = 100000
	}
	if cfg.Durability == "" {
		cfg.Durability = natsutil.DurabilityFsync
	}
	if cfg.Producers == 0 {
		cfg.Producers = 4
	}
	if cfg.Batch == 0 {
		cfg.Batch = 100
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	evs := SampleEvents(cfg.Events)
	bodies := make([][]byte, len(evs))
	total := 0
	for i := range evs {
		b, err := evs[i].MarshalMsgpack()
		if err != nil {
			return PipelineResult{}, err
		}
		bodies[i] = b
		total += len(b)
	}
	res := PipelineResult{Events: cfg.Events, Durability: string(cfg.Durability), MeanEventBytes: total / len(bodies),
		CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}

	progress("bare JetStream")
	bare, bareCPU, err := runBare(ctx, cfg, bodies)
	if err != nil {
		return res, fmt.Errorf("bare: %w", err)
	}
	progress("Vigil pipeline")
	stop := func() {}
	if cfg.Profile != nil {
		if stop, err = cfg.Profile(); err != nil {
			return res, fmt.Errorf("profile: %w", err)
		}
	}
	vig, ingested, derived, vigCPU, err := runVigil(ctx, cfg, evs)
	stop()
	if err != nil {
		return res, fmt.Errorf("vigil: %w", err)
	}
	if bareCPU > 0 && vigCPU > 0 {
		perEvent := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(cfg.Events) }
		res.BareCPUMicros, res.VigilCPUMicros = perEvent(bareCPU), perEvent(vigCPU)
	}
	res.BareSeconds, res.VigilSeconds, res.IngestSeconds = bare.Seconds(), vig.Seconds(), ingested.Seconds()
	res.BareEventsPerS = float64(cfg.Events) / bare.Seconds()
	res.VigilEventsPerS = float64(cfg.Events) / vig.Seconds()
	res.Ratio = res.VigilEventsPerS / res.BareEventsPerS
	res.DerivedPublished = derived
	return res, nil
}

// runBare: producers async-publish the same bodies over TCP while an
// in-process pull consumer acks each; the clock stops at the last ack.
func runBare(ctx context.Context, cfg PipelineConfig, bodies [][]byte) (_, cpu time.Duration, err error) {
	dir, err := os.MkdirTemp("", "vigil-bench-bare-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	ns, err := natsutil.StartServer(natsutil.ServerConfig{StoreDir: dir, Listen: "127.0.0.1:-1", Durability: cfg.Durability})
	if err != nil {
		return 0, 0, err
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	sub, err := natsutil.ConnectInProcess(ns, "", "bench-consumer")
	if err != nil {
		return 0, 0, err
	}
	defer sub.Close()
	js, err := jetstream.New(sub)
	if err != nil {
		return 0, 0, err
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench.>"}, Storage: jetstream.FileStorage, Duplicates: time.Hour})
	if err != nil {
		return 0, 0, err
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "bench", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 100000})
	if err != nil {
		return 0, 0, err
	}
	done := make(chan error, 1)
	start, cpu0 := time.Now(), cpuNow()
	go func() {
		it, err := cons.Messages(jetstream.PullMaxMessages(1024))
		if err != nil {
			done <- err
			return
		}
		defer it.Stop()
		for n := 0; n < len(bodies); {
			m, err := it.Next()
			if errors.Is(err, jetstream.ErrNoHeartbeat) {
				continue // a stall on a busy machine; the iterator recovers
			}
			if err != nil {
				done <- err
				return
			}
			n++
			if err := m.Ack(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Producers)
	per := (len(bodies) + cfg.Producers - 1) / cfg.Producers
	for p := 0; p < cfg.Producers; p++ {
		lo, hi := p*per, min((p+1)*per, len(bodies))
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := nats.Connect(ns.ClientURL())
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			pjs, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
			if err != nil {
				errs <- err
				return
			}
			for i := lo; i < hi; i++ {
				msg := &nats.Msg{Subject: fmt.Sprintf("bench.%d", i%8), Data: bodies[i], Header: nats.Header{}}
				msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("bench-%08d", i))
				if _, err := pjs.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute)); err != nil {
					errs <- err
					return
				}
			}
			select {
			case <-pjs.PublishAsyncComplete():
			case <-ctx.Done():
				errs <- ctx.Err()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, 0, err
	}
	select {
	case err := <-done:
		if err != nil {
			return 0, 0, err
		}
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	return time.Since(start), cpuNow() - cpu0, nil
}

// runVigil: producers append batches through the ingest service over TCP
// as agents would; the clock stops when the live driver has folded,
// published and checkpointed the last event.
func runVigil(ctx context.Context, cfg PipelineConfig, evs []events.Event) (elapsed, ingested time.Duration, derived uint64, cpu time.Duration, err error) {
	dir, err := os.MkdirTemp("", "vigil-bench-pipeline-*")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer os.RemoveAll(dir)
	// The node as serve builds it (read models, config check, expiry
	// timer); the processors and redaction are the caller's if set.
	s, err := node.Start(ctx, node.Config{
		DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: cfg.Durability,
		Processors: cfg.Processors, Redactor: cfg.Redactor, NewRedactor: cfg.NewRedactor, Logger: cfg.Logger,
		ProjectionsDir: datadir.New(dir).Projections(),
		// Throughput is measured, not a credential's cap (one agent
		// credential sends every event here): the caps are off.
		IngestLimits: ingest.Limits{Conversations: -1, ActionsPerSecond: -1},
	})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer s.Close(context.Background())
	if s.Driver() == nil {
		return 0, 0, 0, 0, errors.New("no processors configured")
	}
	start, cpu0 := time.Now(), cpuNow()
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Producers)
	per := (len(evs) + cfg.Producers - 1) / cfg.Producers
	for p := 0; p < cfg.Producers; p++ {
		lo, hi := p*per, min((p+1)*per, len(evs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(ctx, client.Options{URL: s.Info().NATSURL, CredsFile: datadir.New(dir).Creds().Seed(natsutil.RoleAgent), Timeout: time.Minute})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := lo; i < hi; i += cfg.Batch {
				if _, err := c.AppendBatch(ctx, evs[i:min(i+cfg.Batch, hi)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, 0, 0, 0, err
	}
	ingested = time.Since(start)
	want := uint64(len(evs))
	for s.Driver().Checkpointed() < want {
		select {
		case <-ctx.Done():
			return 0, 0, 0, 0, ctx.Err()
		case err := <-s.Err():
			return 0, 0, 0, 0, err
		case <-time.After(time.Millisecond):
		}
	}
	elapsed, cpu = time.Since(start), cpuNow()-cpu0
	if st, err := s.JetStream().Stream(ctx, events.StreamDerived); err == nil {
		if info, err := st.Info(ctx); err == nil {
			derived = info.State.Msgs
		}
	}
	return elapsed, ingested, derived, cpu, nil
}
