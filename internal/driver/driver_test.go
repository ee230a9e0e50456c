package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
)

func TestPlanGap(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		folded, delivered, firstHas uint64
		want                        gapPlan
	}{
		{"deliveries lost: the next record exists", 10, 15, 11, gapPlan{missingFrom: 11, missingTo: 10}},
		{"records absent up to the delivered one", 10, 15, 15, gapPlan{missingFrom: 11, missingTo: 14, fold: true}},
		{"some absent, then one not delivered", 10, 15, 13, gapPlan{missingFrom: 11, missingTo: 12}},
		{"a stale answer", 10, 15, 9, gapPlan{missingFrom: 11, missingTo: 0}},
		{"from the start", 0, 4, 4, gapPlan{missingFrom: 1, missingTo: 3, fold: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planGap(tc.folded, tc.delivered, tc.firstHas)
			if got.fold != tc.want.fold || got.missingFrom != tc.want.missingFrom ||
				(got.missingTo >= got.missingFrom || tc.want.missingTo >= tc.want.missingFrom) && got.missingTo != tc.want.missingTo {
				t.Fatalf("planGap(%d, %d, %d) = %+v, want %+v", tc.folded, tc.delivered, tc.firstHas, got, tc.want)
			}
		})
	}
}

func TestConsumerDiff(t *testing.T) {
	d, err := New(Config{JS: fakeJS{}, Processor: &recorder{}, Durable: "vigil-t"})
	if err != nil {
		t.Fatal(err)
	}
	want := d.consumerConfig(7)
	if diff := consumerDiff(want, want, true); diff != "" {
		t.Fatalf("same config differs: %s", diff)
	}
	pause := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		change func(*jetstream.ConsumerConfig)
		exact  bool
		want   string
	}{
		{"filter", func(c *jetstream.ConsumerConfig) { c.FilterSubject = "vigil.log.nothing-here" }, false, `filter subject "vigil.log.nothing-here"`},
		{"filters", func(c *jetstream.ConsumerConfig) { c.FilterSubjects = []string{"vigil.log.a"} }, false, "filter subjects"},
		{"deliver policy", func(c *jetstream.ConsumerConfig) { c.DeliverPolicy = jetstream.DeliverNewPolicy }, false, "deliver policy"},
		{"ack policy", func(c *jetstream.ConsumerConfig) { c.AckPolicy = jetstream.AckNonePolicy }, false, "ack policy"},
		{"headers only", func(c *jetstream.ConsumerConfig) { c.HeadersOnly = true }, false, "headers only"},
		{"paused", func(c *jetstream.ConsumerConfig) { c.PauseUntil = &pause }, false, "paused until 2030"},
		{"start seq, exact", func(c *jetstream.ConsumerConfig) { c.OptStartSeq = 1 }, true, "start sequence 1 (want 7)"},
		{"start seq, at start", func(c *jetstream.ConsumerConfig) { c.OptStartSeq = 1 }, false, ""},
		{"max waiting, exact", func(c *jetstream.ConsumerConfig) { c.MaxWaiting = 1 }, true, "max waiting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := want
			tc.change(&got)
			diff := consumerDiff(want, got, tc.exact)
			if tc.want == "" && diff != "" || !strings.Contains(diff, tc.want) {
				t.Fatalf("diff %q, want %q", diff, tc.want)
			}
		})
	}
}

// fakeJS satisfies New; the unit tests never call it.
type fakeJS struct{ jetstream.JetStream }

// recorder is a processor that remembers the log seqs it folded, emits one
// output per record (of size bytes when the record's id says "big"), and
// panics on records whose id starts with "boom".
type recorder struct {
	mu   sync.Mutex
	seqs []uint64
	size int
}

func (r *recorder) Name() string { return "rec" }

func (r *recorder) Step(rec events.Record) ([]processors.Output, error) {
	r.mu.Lock()
	r.seqs = append(r.seqs, rec.Seq)
	r.mu.Unlock()
	if strings.HasPrefix(rec.Event.ID, "boom") {
		var m map[string]bool
		//lint:ignore SA5000 a runtime panic, as a buggy processor would raise
		m["x"] = true
	}
	reason := "folded " + rec.Event.ID
	if strings.HasPrefix(rec.Event.ID, "big") {
		reason = strings.Repeat("b", r.size)
	}
	return []processors.Output{processors.NewOutput(r.Name(), &rec, 0, events.SubjectAlert, events.KindAlert,
		events.Alert{Severity: "low", Reason: reason, EventID: rec.Event.ID, LogSeq: rec.Seq})}, nil
}

func (r *recorder) folded() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seqs)
}

// env is an embedded JetStream server with Vigil's streams.
type env struct {
	js jetstream.JetStream
}

// envOptions change the test server: its stream definitions, its max payload.
type envOptions struct {
	streams    func([]jetstream.StreamConfig)
	maxPayload int32
}

// startEnv starts a server.
func startEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	s, err := natsutil.StartServer(natsutil.ServerConfig{StoreDir: t.TempDir(), Durability: natsutil.DurabilityInterval, MaxPayload: o.maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	nc, err := natsutil.ConnectInProcess(s, "", "driver-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfgs := natsutil.StreamConfigs(natsutil.StreamOptions{})
	if o.streams != nil {
		o.streams(cfgs)
	}
	for _, c := range cfgs {
		if _, err := js.CreateOrUpdateStream(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	return &env{js: js}
}

// append stores a message event with id in the log.
func (e *env) append(t *testing.T, id string) uint64 {
	t.Helper()
	ev := events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindMessage, Conversation: "c",
		Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Data: map[string]any{"role": "user", "content": "hi"}}
	b, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	ack, err := e.js.Publish(t.Context(), events.LogPrefix+"c", b, jetstream.WithMsgID(id))
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// derived returns VIGIL_DERIVED's events by id.
func (e *env) derived(t *testing.T) map[string]events.Derived {
	t.Helper()
	out := map[string]events.Derived{}
	err := natsutil.ReadStream(t.Context(), e.js, natsutil.ReadOptions{Stream: events.StreamDerived}, func(r natsutil.RawRecord) error {
		d, err := events.DecodeDerived(r.Data)
		if err != nil {
			return fmt.Errorf("derived seq %d: %w", r.Seq, err)
		}
		if err := d.Validate(); err != nil {
			return fmt.Errorf("derived %s: %w", d.ID, err)
		}
		out[d.ID] = d
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withPrefix returns the ids in m that start with prefix, sorted.
func withPrefix(m map[string]events.Derived, prefix string) []string {
	var ids []string
	for id := range m {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// running is a driver running in the background.
type running struct {
	d    *Driver
	stop context.CancelFunc
	done chan error
}

func (e *env) run(t *testing.T, cfg Config) *running {
	t.Helper()
	return e.runWith(t, cfg, nil)
}

// runWith is run, the driver's publisher replaced by wrap's answer for it.
func (e *env) runWith(t *testing.T, cfg Config, wrap func(outputPublisher) outputPublisher) *running {
	t.Helper()
	if cfg.JS == nil {
		cfg.JS = e.js
	}
	if cfg.Durable == "" {
		cfg.Durable = "vigil-test"
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		d.pub = wrap(d.pub)
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &running{d: d, stop: stop, done: make(chan error, 1)}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() { r.halt(t) })
	select {
	case <-d.Ready():
	case err := <-r.done:
		t.Fatalf("driver stopped before it was ready: %v", err)
	}
	return r
}

// halt stops the driver and checks it stopped cleanly.
func (r *running) halt(t *testing.T) {
	t.Helper()
	if r.stop == nil {
		return
	}
	r.stop()
	r.stop = nil
	if err := <-r.done; err != nil {
		t.Errorf("driver stopped with %v", err)
	}
}

// alive fails if the driver has stopped.
func (r *running) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		t.Fatalf("driver stopped: %v", err)
	default:
	}
}

// waitFolded waits until the driver has checkpointed seq.
func (r *running) waitFolded(t *testing.T, seq uint64) {
	t.Helper()
	wait.Eventually(t, wait.Default, func() string {
		r.alive(t)
		if got := r.d.Checkpointed(); got < seq {
			return fmt.Sprintf("driver checkpointed %d, waiting for %d", got, seq)
		}
		return ""
	})
}

// TestDriverRefusedOutput: an output the stream refuses for good (over
// VIGIL_DERIVED's message size limit, or over the server's max payload)
// is replaced by an alert; the driver goes on, and does again after a
// restart.
func TestDriverRefusedOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    envOptions
		says string
	}{
		{"stream max msg size", envOptions{streams: func(cfgs []jetstream.StreamConfig) {
			for i := range cfgs {
				if cfgs[i].Name == events.StreamDerived {
					cfgs[i].MaxMsgSize = 4096
				}
			}
		}}, "refused by VIGIL_DERIVED"},
		{"server max payload", envOptions{maxPayload: 6000}, "maximum payload exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, tc.o)
			r := e.run(t, Config{Processor: &recorder{size: 8000}})
			e.append(t, "small-1")
			e.append(t, "big-2")
			last := e.append(t, "small-3")
			r.waitFolded(t, last)
			got := e.derived(t)
			for _, id := range []string{"rec:1", "driver:refused:rec:2", "rec:3"} {
				if _, ok := got[id]; !ok {
					t.Fatalf("no %s in VIGIL_DERIVED: %v", id, withPrefix(got, ""))
				}
			}
			if _, ok := got["rec:2"]; ok {
				t.Fatal("the refused output was stored")
			}
			a, err := events.DerivedDataAs[events.Alert](ptr(got["driver:refused:rec:2"]))
			if err != nil || a.LogSeq != 2 || !strings.Contains(a.Reason, "output rec:2") || !strings.Contains(a.Reason, tc.says) {
				t.Fatalf("alert %+v (%v)", a, err)
			}
			r.halt(t)
			// A restart warms up over the record and goes live.
			r2 := e.run(t, Config{Processor: &recorder{size: 8000}})
			last = e.append(t, "big-4")
			r2.waitFolded(t, last)
			if _, ok := e.derived(t)["driver:refused:rec:4"]; !ok {
				t.Fatal("no alert for the second refused output")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestDriverPoisonRecord: a record that makes the processor panic, and one
// that makes it emit a 5 MB output, stop nothing, live or at warm-up.
func TestDriverPoisonRecord(t *testing.T) {
	e := startEnv(t, envOptions{})
	r := e.run(t, Config{Processor: &recorder{size: 5 << 20}})
	e.append(t, "ok-1")
	e.append(t, "boom-2")
	e.append(t, "big-3")
	last := e.append(t, "ok-4")
	r.waitFolded(t, last)
	got := e.derived(t)
	for _, id := range []string{"rec:1", "rec:2:panic", "rec:3", "rec:4"} {
		if _, ok := got[id]; !ok {
			t.Fatalf("no %s in VIGIL_DERIVED: %v", id, withPrefix(got, ""))
		}
	}
	r.halt(t)
	proc := &recorder{size: 5 << 20}
	r2 := e.run(t, Config{Processor: proc})
	if f := proc.folded(); !slices.Equal(f, []uint64{1, 2, 3, 4}) {
		t.Fatalf("warm-up folded %v", f)
	}
	last = e.append(t, "ok-5")
	r2.waitFolded(t, last)
	// A restart re-creates the consumer it left: that is no tampering.
	if ids := withPrefix(e.derived(t), "driver:"); len(ids) > 0 {
		t.Fatalf("driver alerts %v after a plain restart", ids)
	}
}

// lossyJS loses the first delivery of some log seqs, as deliveries in
// flight are lost when a consumer's leader dies.
type lossyJS struct {
	jetstream.JetStream
	mu   sync.Mutex
	lose map[uint64]bool
}

func (j *lossyJS) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	st, err := j.JetStream.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	return &lossyStream{Stream: st, j: j}, nil
}

// loses reports whether to lose this delivery of seq (once).
func (j *lossyJS) loses(seq uint64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lose[seq] {
		delete(j.lose, seq)
		return true
	}
	return false
}

type lossyStream struct {
	jetstream.Stream
	j *lossyJS
}

func (s *lossyStream) CreateOrUpdateConsumer(ctx context.Context, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := s.Stream.CreateOrUpdateConsumer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &lossyConsumer{Consumer: c, j: s.j}, nil
}

type lossyConsumer struct {
	jetstream.Consumer
	j *lossyJS
}

func (c *lossyConsumer) Messages(opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, error) {
	it, err := c.Consumer.Messages(opts...)
	if err != nil {
		return nil, err
	}
	return &lossyIter{MessagesContext: it, j: c.j}, nil
}

type lossyIter struct {
	jetstream.MessagesContext
	j *lossyJS
}

func (it *lossyIter) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	for {
		m, err := it.MessagesContext.Next(opts...)
		if err != nil {
			return m, err
		}
		if meta, err := m.Metadata(); err == nil && it.j.loses(meta.Sequence.Stream) {
			continue
		}
		return m, nil
	}
}

// TestDriverGapRedelivered: deliveries lost in flight are noticed (the
// next seq is not folded+1) and read again; every record is folded once,
// in order, and no alert is raised (nothing is missing from the log).
func TestDriverGapRedelivered(t *testing.T) {
	e := startEnv(t, envOptions{})
	var last uint64
	for i := 1; i <= 12; i++ {
		last = e.append(t, fmt.Sprintf("m-%d", i))
	}
	js := &lossyJS{JetStream: e.js, lose: map[uint64]bool{4: true, 5: true, 6: true, 11: true}}
	proc := &recorder{}
	r := e.run(t, Config{JS: js, Processor: proc, MaxBatch: 3})
	r.waitFolded(t, last)
	want := make([]uint64, 12)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	if f := proc.folded(); !slices.Equal(f, want) {
		t.Fatalf("folded %v, want %v", f, want)
	}
	if ids := withPrefix(e.derived(t), "driver:"); len(ids) > 0 {
		t.Fatalf("alerts %v for records that were only lost in flight", ids)
	}
}

// TestDriverMissingRecords: records absent from the log (deleted from a
// stream that allowed it) raise an alert and are passed over, live and at
// warm-up.
func TestDriverMissingRecords(t *testing.T) {
	e := startEnv(t, envOptions{streams: func(cfgs []jetstream.StreamConfig) {
		cfgs[0].DenyDelete = false // what a tampered stream allows
	}})
	for i := 1; i <= 6; i++ {
		e.append(t, fmt.Sprintf("m-%d", i))
	}
	st, err := e.js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{3, 4} {
		if err := st.DeleteMsg(t.Context(), seq); err != nil {
			t.Fatal(err)
		}
	}
	proc := &recorder{}
	r := e.run(t, Config{Processor: proc})
	r.waitFolded(t, 6)
	if f := proc.folded(); !slices.Equal(f, []uint64{1, 2, 5, 6}) {
		t.Fatalf("folded %v", f)
	}
	got := e.derived(t)
	d, ok := got["driver:vigil-test:missing:3-4"]
	if !ok {
		t.Fatalf("no alert for the missing records: %v", withPrefix(got, ""))
	}
	if a, _ := events.DerivedDataAs[events.Alert](&d); !strings.Contains(a.Reason, "log records 3 to 4 (2) are not in VIGIL_LOG") {
		t.Fatalf("alert %q", a.Reason)
	}
	r.halt(t)

	// Another record goes while the node is down: warm-up notices.
	if err := st.DeleteMsg(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	proc = &recorder{}
	r = e.run(t, Config{Processor: proc})
	if f := proc.folded(); !slices.Equal(f, []uint64{2, 5, 6}) {
		t.Fatalf("warm-up folded %v", f)
	}
	last := e.append(t, "m-7")
	r.waitFolded(t, last)
	got = e.derived(t)
	for _, id := range []string{"driver:vigil-test:missing:1-1", "rec:7"} {
		if _, ok := got[id]; !ok {
			t.Fatalf("no %s: %v", id, withPrefix(got, ""))
		}
	}
}

// TestDriverConsumerChanged: the driver's durable consumer changed (its
// filter), paused or deleted under it raises an alert and is restored;
// the driver folds what comes next.
func TestDriverConsumerChanged(t *testing.T) {
	e := startEnv(t, envOptions{})
	proc := &recorder{}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := e.run(t, Config{Processor: proc, CheckInterval: 20 * time.Millisecond, Now: func() time.Time { return now }})
	r.waitFolded(t, e.append(t, "m-1"))
	st, err := e.js.Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	tamper := []struct {
		name string
		do   func() error
		want string
	}{
		{"filter", func() error {
			c, err := st.Consumer(t.Context(), "vigil-test")
			if err != nil {
				return err
			}
			cfg := c.CachedInfo().Config
			cfg.FilterSubject = "vigil.log.nothing-here"
			_, err = st.CreateOrUpdateConsumer(t.Context(), cfg)
			return err
		}, `was changed: filter subject "vigil.log.nothing-here"`},
		{"pause", func() error {
			_, err := st.PauseConsumer(t.Context(), "vigil-test", time.Now().Add(time.Hour))
			return err
		}, "was changed: paused until"},
		{"delete", func() error { return st.DeleteConsumer(t.Context(), "vigil-test") }, "was deleted"},
	}
	seen := map[string]bool{}
	for i, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.do(); err != nil {
				t.Fatal(err)
			}
			var alert events.Alert
			wait.Eventually(t, wait.Default, func() string {
				for id, d := range e.derived(t) {
					if strings.HasPrefix(id, "driver:vigil-test:consumer:") && !seen[id] {
						seen[id] = true
						alert, _ = events.DerivedDataAs[events.Alert](&d)
					}
				}
				r.alive(t)
				if alert.Reason == "" {
					return "no consumer alert yet"
				}
				return ""
			})
			if !strings.Contains(alert.Reason, tc.want) {
				t.Fatalf("alert %q, want %q", alert.Reason, tc.want)
			}
			r.waitFolded(t, e.append(t, fmt.Sprintf("m-%d", i+2)))
		})
	}
	want := []uint64{1, 2, 3, 4}
	if f := proc.folded(); !slices.Equal(f, want) {
		t.Fatalf("folded %v, want %v", f, want)
	}
}
