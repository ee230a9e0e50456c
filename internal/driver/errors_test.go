package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// The driver's error paths with function-field fakes: what it does when
// storing an output, acknowledging, handing a batch to the sink, finding a
// gap's next record or reading its consumer back fails. The same paths
// against a real server (and a real refusal) are in driver_test.go.

// fakePub stands in for the natsutil.Publisher: publish and publishAll say
// what each call answers; every message given to it is recorded.
type fakePub struct {
	publish    func(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error)
	publishAll func(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error)

	mu     sync.Mutex
	one    []string // ids given to Publish, one per call
	all    []string // ids given to PublishAll
	stored []string // ids a call answered without an error
}

func (f *fakePub) Publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	id := msg.Header.Get(jetstream.MsgIDHeader)
	f.mu.Lock()
	f.one = append(f.one, id)
	f.mu.Unlock()
	ack, err := &jetstream.PubAck{}, error(nil)
	if f.publish != nil {
		ack, err = f.publish(ctx, msg)
	}
	if err == nil {
		f.mu.Lock()
		f.stored = append(f.stored, id)
		f.mu.Unlock()
	}
	return ack, err
}

func (f *fakePub) PublishAll(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.Header.Get(jetstream.MsgIDHeader))
	}
	f.mu.Lock()
	f.all = append(f.all, ids...)
	f.mu.Unlock()
	if f.publishAll != nil {
		if acks, err := f.publishAll(ctx, msgs); err != nil {
			return acks, err
		}
	}
	f.mu.Lock()
	f.stored = append(f.stored, ids...)
	f.mu.Unlock()
	return make([]*jetstream.PubAck, len(msgs)), nil
}

func (f *fakePub) storedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.stored)
}

// fakeMsg is one delivered log record.
type fakeMsg struct {
	jetstream.Msg
	seq       uint64
	data      []byte
	metaErr   error
	doubleAck func(context.Context) error
	acked     *[]uint64
}

func (m *fakeMsg) Metadata() (*jetstream.MsgMetadata, error) {
	if m.metaErr != nil {
		return nil, m.metaErr
	}
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq}}, nil
}
func (m *fakeMsg) Subject() string { return events.LogSubject("c1") }
func (m *fakeMsg) Data() []byte    { return m.data }
func (m *fakeMsg) DoubleAck(ctx context.Context) error {
	if m.acked != nil {
		*m.acked = append(*m.acked, m.seq)
	}
	if m.doubleAck != nil {
		return m.doubleAck(ctx)
	}
	return nil
}

// fakeLog is VIGIL_LOG as the gap check sees it.
type fakeLog struct {
	jetstream.Stream
	getMsg func(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error)
}

func (s *fakeLog) GetMsg(ctx context.Context, seq uint64, _ ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	return s.getMsg(ctx, seq)
}

// fakeConsumer is the driver's durable consumer as the check reads it.
type fakeConsumer struct {
	jetstream.Consumer
	info func(ctx context.Context) (*jetstream.ConsumerInfo, error)
}

func (c *fakeConsumer) Info(ctx context.Context) (*jetstream.ConsumerInfo, error) { return c.info(ctx) }

// fakeSink is a read model.
type fakeSink struct {
	apply func([]Applied) error
	got   []uint64
}

func (s *fakeSink) Apply(batch []Applied) error {
	for _, a := range batch {
		s.got = append(s.got, a.Record.Seq)
	}
	if s.apply != nil {
		return s.apply(batch)
	}
	return nil
}
func (s *fakeSink) Position() uint64 { return 0 }

// fakeDriver is a driver over fakes, past its read of VIGIL_DERIVED (it
// holds none of the outputs), clock fixed.
func fakeDriver(t *testing.T, pub *fakePub, sink Sink) *Driver {
	t.Helper()
	cfg := Config{JS: fakeJS{}, Processor: &recorder{}, Durable: "vigil-t",
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if sink != nil {
		cfg.Sink = sink
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.pub = pub
	d.derived = derivedState{read: true, at: time.Now(), every: time.Hour}
	return d
}

// logRecord is the stored form of agent event id.
func logRecord(t *testing.T, id string) []byte {
	t.Helper()
	ev := events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindAction, Conversation: "c1",
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "ls"}}}
	b, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applied folds log records 1..n with d's processor.
func applied(t *testing.T, d *Driver, n int) []Applied {
	t.Helper()
	var out []Applied
	for i := 1; i <= n; i++ {
		rec, outs := processors.Feed(d.cfg.Processor, uint64(i), events.LogSubject("c1"), logRecord(t, fmt.Sprintf("e%d", i)))
		out = append(out, Applied{Record: rec, Outputs: outs})
	}
	return out
}

func outID(seq uint64) string { return processors.OutputID("rec", seq, 0) }

var errStreamRefused = &jetstream.APIError{Code: 400, ErrorCode: 10054, Description: "message size exceeds maximum allowed"}

// TestStoreErrors: when PublishAll fails the driver stores the outputs one
// at a time to find which fails: a refused output is replaced by an alert
// and the driver goes on; a closed connection stops it; what may pass is
// retried; ctx ends it.
func TestStoreErrors(t *testing.T) {
	failAll := func(context.Context, []*nats.Msg) ([]*jetstream.PubAck, error) {
		return nil, errors.New("some output not stored")
	}
	for _, tc := range []struct {
		name    string
		publish func(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error)
		wantErr func(error) bool
		stored  []string
	}{
		{
			name: "one output refused: an alert instead",
			publish: func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
				if m.Header.Get(jetstream.MsgIDHeader) == outID(2) {
					return nil, errStreamRefused
				}
				return &jetstream.PubAck{}, nil
			},
			stored: []string{outID(1), "driver:refused:" + outID(2), outID(3)},
		},
		{
			name: "over the max payload: an alert instead",
			publish: func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
				if m.Header.Get(jetstream.MsgIDHeader) == outID(1) {
					return nil, nats.ErrMaxPayload
				}
				return &jetstream.PubAck{}, nil
			},
			stored: []string{"driver:refused:" + outID(1), outID(2), outID(3)},
		},
		{
			name: "the output and its alert refused: logged, the driver goes on",
			publish: func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
				if id := m.Header.Get(jetstream.MsgIDHeader); id == outID(3) || strings.HasPrefix(id, "driver:refused:") {
					return nil, errStreamRefused
				}
				return &jetstream.PubAck{}, nil
			},
			stored: []string{outID(1), outID(2)},
		},
		{
			name: "connection closed: fatal",
			publish: func(context.Context, *nats.Msg) (*jetstream.PubAck, error) {
				return nil, nats.ErrConnectionClosed
			},
			wantErr: func(err error) bool {
				var f *fatalError
				return errors.As(err, &f) && errors.Is(err, nats.ErrConnectionClosed)
			},
		},
		{
			name: "not stored yet: retried",
			publish: func() func(context.Context, *nats.Msg) (*jetstream.PubAck, error) {
				failed := map[string]bool{}
				return func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
					id := m.Header.Get(jetstream.MsgIDHeader)
					if id == outID(2) && !failed[id] {
						failed[id] = true
						return nil, context.DeadlineExceeded
					}
					return &jetstream.PubAck{}, nil
				}
			}(),
			stored: []string{outID(1), outID(2), outID(3)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub := &fakePub{publish: tc.publish, publishAll: failAll}
			d := fakeDriver(t, pub, nil)
			err := d.store(t.Context(), applied(t, d, 3))
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("store = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("store = %v, want the driver to go on", err)
			}
			if got := pub.storedIDs(); !slices.Equal(got, tc.stored) {
				t.Fatalf("stored %v, want %v", got, tc.stored)
			}
		})
	}
	t.Run("ctx done while retrying", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		pub := &fakePub{publishAll: failAll, publish: func(context.Context, *nats.Msg) (*jetstream.PubAck, error) {
			cancel()
			return nil, nats.ErrTimeout
		}}
		d := fakeDriver(t, pub, nil)
		if err := d.store(ctx, applied(t, d, 2)); !errors.Is(err, context.Canceled) {
			t.Fatalf("store = %v, want context.Canceled", err)
		}
	})
	t.Run("refused alert names the output", func(t *testing.T) {
		var alert *nats.Msg
		pub := &fakePub{publishAll: failAll, publish: func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
			if m.Header.Get(jetstream.MsgIDHeader) == outID(1) {
				return nil, errStreamRefused
			}
			alert = m
			return &jetstream.PubAck{}, nil
		}}
		d := fakeDriver(t, pub, nil)
		if err := d.store(t.Context(), applied(t, d, 1)); err != nil {
			t.Fatal(err)
		}
		if alert == nil || alert.Subject != events.SubjectAlert {
			t.Fatalf("alert %+v", alert)
		}
		dv, err := events.DecodeDerived(alert.Data)
		if err != nil {
			t.Fatal(err)
		}
		a, err := events.DerivedDataAs[events.Alert](&dv)
		if err != nil || a.Severity != "high" || a.LogSeq != 1 || !strings.Contains(a.Reason, outID(1)) || !strings.Contains(a.Reason, "maximum allowed") {
			t.Fatalf("alert %+v (%v)", a, err)
		}
	})
}

// msgs delivers log records from..to.
func msgs(t *testing.T, from, to uint64, acked *[]uint64) []jetstream.Msg {
	var out []jetstream.Msg
	for s := from; s <= to; s++ {
		out = append(out, &fakeMsg{seq: s, data: logRecord(t, fmt.Sprintf("e%d", s)), acked: acked})
	}
	return out
}

// TestProcessErrors: what a batch of deliveries does when the sink fails,
// the checkpoint ack fails, or a record's metadata cannot be read.
func TestProcessErrors(t *testing.T) {
	t.Run("sink fails: fatal, no checkpoint", func(t *testing.T) {
		var acked []uint64
		sink := &fakeSink{apply: func([]Applied) error { return errors.New("disk full") }}
		d := fakeDriver(t, &fakePub{}, sink)
		err := d.process(t.Context(), nil, msgs(t, 1, 3, &acked))
		var f *fatalError
		if !errors.As(err, &f) || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("process = %v, want a fatal sink error", err)
		}
		if len(acked) != 0 || d.Checkpointed() != 0 {
			t.Fatalf("acked %v, checkpoint %d after a failed sink", acked, d.Checkpointed())
		}
	})
	t.Run("outputs stored before the sink, the sink before the ack", func(t *testing.T) {
		var order []string
		var acked []uint64
		pub := &fakePub{publishAll: func(_ context.Context, m []*nats.Msg) ([]*jetstream.PubAck, error) {
			order = append(order, fmt.Sprintf("store %d", len(m)))
			return nil, nil
		}}
		sink := &fakeSink{apply: func(b []Applied) error {
			order = append(order, fmt.Sprintf("sink %d", len(b)))
			return nil
		}}
		d := fakeDriver(t, pub, sink)
		if err := d.process(t.Context(), nil, msgs(t, 1, 3, &acked)); err != nil {
			t.Fatal(err)
		}
		if strings.Join(order, ", ") != "store 3, sink 3" || !slices.Equal(acked, []uint64{3}) || d.Checkpointed() != 3 {
			t.Fatalf("order %v, acked %v, checkpoint %d", order, acked, d.Checkpointed())
		}
	})
	t.Run("ack fails: logged, checkpoint kept", func(t *testing.T) {
		ms := msgs(t, 1, 2, nil)
		ms[1].(*fakeMsg).doubleAck = func(context.Context) error { return nats.ErrTimeout }
		d := fakeDriver(t, &fakePub{}, nil)
		if err := d.process(t.Context(), nil, ms); err != nil {
			t.Fatalf("process = %v: a lost ack is covered by the next one", err)
		}
		if d.Checkpointed() != 2 || d.folded != 2 {
			t.Fatalf("checkpoint %d, folded %d", d.Checkpointed(), d.folded)
		}
	})
	t.Run("metadata unreadable: what came before is stored", func(t *testing.T) {
		var acked []uint64
		ms := msgs(t, 1, 3, &acked)
		ms[2].(*fakeMsg).metaErr = jetstream.ErrNotJSMessage
		pub := &fakePub{}
		d := fakeDriver(t, pub, nil)
		err := d.process(t.Context(), nil, ms)
		if !errors.Is(err, jetstream.ErrNotJSMessage) {
			t.Fatalf("process = %v", err)
		}
		if !slices.Equal(pub.storedIDs(), []string{outID(1), outID(2)}) || !slices.Equal(acked, []uint64{2}) || d.folded != 2 {
			t.Fatalf("stored %v, acked %v, folded %d", pub.storedIDs(), acked, d.folded)
		}
	})
	t.Run("redelivered records are acked, not folded again", func(t *testing.T) {
		var acked []uint64
		pub := &fakePub{}
		d := fakeDriver(t, pub, nil)
		d.folded = 2
		if err := d.process(t.Context(), nil, msgs(t, 1, 3, &acked)); err != nil {
			t.Fatal(err)
		}
		if got := d.cfg.Processor.(*recorder).folded(); !slices.Equal(got, []uint64{3}) {
			t.Fatalf("folded %v, want [3]", got)
		}
		if !slices.Equal(pub.storedIDs(), []string{outID(3)}) || !slices.Equal(acked, []uint64{3}) {
			t.Fatalf("stored %v, acked %v", pub.storedIDs(), acked)
		}
	})
}

// TestProcessGaps: a delivery that skips log seqs asks the stream for the
// next record it holds: records it lacks are alerted as missing and passed;
// a record it holds but did not deliver re-creates the consumer; a failed
// lookup is an error that is not fatal.
func TestProcessGaps(t *testing.T) {
	for _, tc := range []struct {
		name      string
		next      func(seq uint64) (*jetstream.RawStreamMsg, error)
		wantErr   func(error) bool
		folded    uint64
		stored    []string
		wantAsked uint64
	}{
		{
			name:   "records 1-2 not in the log: alert, fold 3",
			next:   func(uint64) (*jetstream.RawStreamMsg, error) { return &jetstream.RawStreamMsg{Sequence: 3}, nil },
			folded: 4, stored: []string{"driver:vigil-t:missing:1-2", outID(3), outID(4)}, wantAsked: 1,
		},
		{
			name: "record 1 in the log but not delivered: re-create",
			next: func(uint64) (*jetstream.RawStreamMsg, error) { return &jetstream.RawStreamMsg{Sequence: 1}, nil },
			wantErr: func(err error) bool {
				var f *fatalError
				return errors.Is(err, errRecreate) && !errors.As(err, &f)
			},
			folded: 0, stored: nil, wantAsked: 1,
		},
		{
			name: "1 missing, 2 not delivered: alert, then re-create",
			next: func(uint64) (*jetstream.RawStreamMsg, error) { return &jetstream.RawStreamMsg{Sequence: 2}, nil },
			wantErr: func(err error) bool {
				return errors.Is(err, errRecreate)
			},
			folded: 1, stored: []string{"driver:vigil-t:missing:1-1"}, wantAsked: 1,
		},
		{
			name: "lookup fails",
			next: func(uint64) (*jetstream.RawStreamMsg, error) { return nil, nats.ErrTimeout },
			wantErr: func(err error) bool {
				var f *fatalError
				return errors.Is(err, nats.ErrTimeout) && !errors.Is(err, errRecreate) && !errors.As(err, &f)
			},
			folded: 0, stored: nil, wantAsked: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []uint64
			st := &fakeLog{getMsg: func(_ context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
				asked = append(asked, seq)
				return tc.next(seq)
			}}
			pub := &fakePub{}
			d := fakeDriver(t, pub, nil)
			err := d.process(t.Context(), st, msgs(t, 3, 4, nil))
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !tc.wantErr(err) {
				t.Fatalf("process = %v", err)
			}
			if d.folded != tc.folded {
				t.Errorf("folded %d, want %d", d.folded, tc.folded)
			}
			if got := pub.storedIDs(); !slices.Equal(got, tc.stored) {
				t.Errorf("stored %v, want %v", got, tc.stored)
			}
			if len(asked) == 0 || asked[0] != tc.wantAsked {
				t.Errorf("asked the stream for %v, want from %d", asked, tc.wantAsked)
			}
		})
	}
}

// TestCheckConsumer: the periodic read of the durable consumer. Deleted or
// changed: an alert and a re-creation; a failed read: nothing (next time).
func TestCheckConsumer(t *testing.T) {
	pause := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		info     func(created jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error)
		recreate bool
		alert    string // in the alert's reason; "" for none
	}{
		{"unchanged", func(c jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error) {
			return &jetstream.ConsumerInfo{Config: c}, nil
		}, false, ""},
		{"deleted", func(jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error) {
			return nil, jetstream.ErrConsumerNotFound
		}, true, "was deleted"},
		{"read failed", func(jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error) {
			return nil, context.DeadlineExceeded
		}, false, ""},
		{"filter changed", func(c jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error) {
			c.FilterSubject = "vigil.log.nothing"
			return &jetstream.ConsumerInfo{Config: c}, nil
		}, true, `was changed: filter subject "vigil.log.nothing"`},
		{"paused", func(c jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error) {
			return &jetstream.ConsumerInfo{Config: c, Paused: true}, nil
		}, true, "was changed: paused"},
		{"paused until", func(c jetstream.ConsumerConfig) (*jetstream.ConsumerInfo, error) {
			c.PauseUntil = &pause
			return &jetstream.ConsumerInfo{Config: c, Paused: true}, nil
		}, true, "paused until 2030"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var alerts []*nats.Msg
			pub := &fakePub{publish: func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
				alerts = append(alerts, m)
				return &jetstream.PubAck{}, nil
			}}
			d := fakeDriver(t, pub, nil)
			d.folded = 41
			created := d.consumerConfig(42)
			err := d.checkConsumer(t.Context(), &fakeConsumer{info: func(context.Context) (*jetstream.ConsumerInfo, error) {
				return tc.info(created)
			}}, created)
			if got := errors.Is(err, errRecreate); got != tc.recreate || !tc.recreate && err != nil {
				t.Fatalf("checkConsumer = %v, want re-create %v", err, tc.recreate)
			}
			if tc.alert == "" {
				if len(alerts) != 0 {
					t.Fatalf("%d alerts, want none", len(alerts))
				}
				return
			}
			if len(alerts) != 1 {
				t.Fatalf("%d alerts, want 1", len(alerts))
			}
			dv, err := events.DecodeDerived(alerts[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			a, err := events.DerivedDataAs[events.Alert](&dv)
			if err != nil || !strings.Contains(a.Reason, tc.alert) || !strings.Contains(a.Reason, "re-created from log seq 42") ||
				!strings.HasPrefix(dv.ID, "driver:vigil-t:consumer:") || a.LogSeq != 41 {
				t.Fatalf("alert %s %+v (%v)", dv.ID, a, err)
			}
		})
	}
}

// TestAlertNeverStops: an alert the stream refuses is logged; the driver
// does not stop or block on it.
func TestAlertNeverStops(t *testing.T) {
	pub := &fakePub{publish: func(context.Context, *nats.Msg) (*jetstream.PubAck, error) { return nil, errStreamRefused }}
	d := fakeDriver(t, pub, nil)
	d.missingAlert(t.Context(), 1, 2)
	d.consumerAlert(t.Context(), "was deleted", 3)
	if len(pub.one) != 2 || len(pub.storedIDs()) != 0 {
		t.Fatalf("publish calls %v, stored %v", pub.one, pub.storedIDs())
	}
}
