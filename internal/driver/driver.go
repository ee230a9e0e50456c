// Package driver is the live driver of Vigil's processors: it consumes
// VIGIL_LOG with a durable consumer, feeds every record to a processor (or
// a processors.Pipeline) in log order, publishes the outputs to
// VIGIL_DERIVED with Nats-Msg-Id = output id, hands each applied batch to
// an optional Sink (the Pebble read models), and only then acknowledges the
// log records. The consumer's ack floor is the checkpoint.
//
// On start the driver rebuilds the fold's state by feeding the log prefix up
// to the checkpoint without publishing (the folds are pure, so this
// reproduces the state exactly), then resets the durable consumer to start
// right after the checkpoint and goes live. Because outputs are
// deterministic and deduplicated by id, a crash between publishing and
// acknowledging only republishes identical outputs.
package driver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
)

// Applied is one log record with the outputs folded from it.
type Applied struct {
	Record  events.Record
	Outputs []processors.Output
}

// Sink receives every applied record after its outputs are stored and
// before the record is acknowledged. Position is the last log sequence the
// sink has durably applied; the driver re-sends anything after it.
type Sink interface {
	Apply(batch []Applied) error
	Position() uint64
}

// Config configures a driver.
type Config struct {
	JS        jetstream.JetStream
	Processor processors.Processor
	// Durable names the consumer, and so the checkpoint. In a fleet every
	// node uses its own (e.g. "vigil-<node>"); outputs deduplicate.
	Durable string
	Sink    Sink
	Logger  *slog.Logger
	// MaxBatch bounds the records folded between two checkpoints; 0 = 512.
	MaxBatch int
	// PublishTimeout bounds one publish attempt; zero means 2s. Outputs are
	// retried until stored (see natsutil.Publisher): they carry their id,
	// so a retry is always safe.
	PublishTimeout time.Duration
}

// Driver runs one processor live.
type Driver struct {
	cfg Config
	pub *natsutil.Publisher
	// folded is the last log sequence fed to the fold (owned by Run).
	folded uint64
	// ready is closed once the driver is live.
	ready chan struct{}
	// checkpointed is the last log sequence acknowledged (the checkpoint).
	checkpointed atomic.Uint64
}

// New validates cfg.
func New(cfg Config) (*Driver, error) {
	if cfg.JS == nil || cfg.Processor == nil {
		return nil, errors.New("driver: JS and Processor are required")
	}
	if cfg.Durable == "" {
		cfg.Durable = "vigil-" + cfg.Processor.Name()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = 512
	}
	pub := &natsutil.Publisher{JS: cfg.JS, AttemptTimeout: cfg.PublishTimeout, AckWait: cfg.PublishTimeout, Logger: cfg.Logger}
	return &Driver{cfg: cfg, pub: pub, ready: make(chan struct{})}, nil
}

// Ready is closed once the driver has caught up with its checkpoint and is live.
func (d *Driver) Ready() <-chan struct{} { return d.ready }

// Checkpointed returns the last checkpointed log sequence seen so far.
func (d *Driver) Checkpointed() uint64 { return d.checkpointed.Load() }

// Run drives the processor until ctx is done. It returns nil on a clean stop.
func (d *Driver) Run(ctx context.Context) error {
	js := d.cfg.JS
	log := d.cfg.Logger.With("processor", d.cfg.Processor.Name(), "durable", d.cfg.Durable)
	st, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return fmt.Errorf("driver: %w", err)
	}
	var floor uint64
	if c, err := st.Consumer(ctx, d.cfg.Durable); err == nil {
		info, err := c.Info(ctx)
		if err != nil {
			return fmt.Errorf("driver: consumer %s: %w", d.cfg.Durable, err)
		}
		floor = info.AckFloor.Stream
		if err := st.DeleteConsumer(ctx, d.cfg.Durable); err != nil {
			return fmt.Errorf("driver: reset consumer %s: %w", d.cfg.Durable, err)
		}
	} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("driver: consumer %s: %w", d.cfg.Durable, err)
	}
	sinkPos := floor
	if d.cfg.Sink != nil {
		sinkPos = d.cfg.Sink.Position()
	}
	// Warm up: rebuild the fold state from the prefix, publishing nothing.
	if floor > 0 {
		var pending []Applied
		err := natsutil.ReadStream(ctx, js, natsutil.ReadOptions{Stream: events.StreamLog, To: floor}, func(r natsutil.RawRecord) error {
			rec, outs := processors.Feed(d.cfg.Processor, r.Seq, r.Subject, r.Data)
			if d.cfg.Sink != nil && r.Seq > sinkPos {
				pending = append(pending, Applied{Record: rec, Outputs: outs})
				if len(pending) >= d.cfg.MaxBatch {
					if err := d.cfg.Sink.Apply(pending); err != nil {
						return err
					}
					pending = pending[:0]
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("driver: warm-up to %d: %w", floor, err)
		}
		if len(pending) > 0 {
			if err := d.cfg.Sink.Apply(pending); err != nil {
				return fmt.Errorf("driver: warm-up sink: %w", err)
			}
		}
		d.checkpointed.Store(floor)
		log.Info("driver warmed up", "checkpoint", floor)
	}
	d.folded = floor
	close(d.ready)
	next := floor + 1
	for {
		err := d.consume(ctx, st, next)
		if ctx.Err() != nil {
			return nil
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			return fatal.err
		}
		// The consumer was lost (its stream leader moved, the server
		// restarted under us): re-create it right after the last record
		// folded. The fold state covers exactly the records before it, so
		// nothing is skipped and nothing is folded twice.
		next = d.folded + 1
		log.Warn("driver: consumer lost; re-creating it", "from", next, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// fatalError is an error the driver must stop on (an output the stream
// refuses for good), as opposed to a lost consumer, which it re-creates.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }

// consume (re)creates the durable consumer starting at from and folds what
// it delivers until ctx is done or the consumer fails.
func (d *Driver) consume(ctx context.Context, st jetstream.Stream, from uint64) error {
	if err := st.DeleteConsumer(ctx, d.cfg.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("driver: reset consumer %s: %w", d.cfg.Durable, err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       d.cfg.Durable,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   from,
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       time.Minute,
		MaxAckPending: 100000,
		MaxDeliver:    -1,
	})
	if err != nil {
		return fmt.Errorf("driver: create consumer %s: %w", d.cfg.Durable, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2 * d.cfg.MaxBatch))
	if err != nil {
		return fmt.Errorf("driver: consume: %w", err)
	}
	msgs := make(chan jetstream.Msg, 2*d.cfg.MaxBatch)
	readErr := make(chan error, 1)
	go func() {
		defer close(msgs)
		for {
			m, err := it.Next()
			if errors.Is(err, jetstream.ErrNoHeartbeat) {
				continue // a missed heartbeat: the iterator recovers by itself
			}
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					readErr <- err
				}
				return
			}
			msgs <- m
		}
	}()
	defer func() {
		it.Stop()
		for range msgs { // let the reader goroutine exit
		}
	}()
	d.cfg.Logger.Info("driver live", "processor", d.cfg.Processor.Name(), "from", from)
	batch := make([]jetstream.Msg, 0, d.cfg.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			return fmt.Errorf("driver: consume: %w", err)
		case m, ok := <-msgs:
			if !ok {
				return errors.New("driver: consumer closed")
			}
			batch = append(batch, m)
		}
	drain:
		for len(batch) < d.cfg.MaxBatch {
			select {
			case m, ok := <-msgs:
				if !ok {
					break drain
				}
				batch = append(batch, m)
			default:
				break drain
			}
		}
		if err := d.process(ctx, batch); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &fatalError{err}
		}
	}
}

func (d *Driver) process(ctx context.Context, batch []jetstream.Msg) error {
	applied := make([]Applied, 0, len(batch))
	var msgs []*nats.Msg
	for _, m := range batch {
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("driver: metadata: %w", err)
		}
		if meta.Sequence.Stream <= d.folded {
			continue // redelivered after a consumer was re-created: already folded
		}
		rec, outs := processors.Feed(d.cfg.Processor, meta.Sequence.Stream, m.Subject(), m.Data())
		d.folded = meta.Sequence.Stream
		for _, o := range outs {
			body, err := o.Event.Marshal()
			if err != nil {
				return err
			}
			msg := &nats.Msg{Subject: o.Subject, Data: body, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, o.Event.ID)
			msgs = append(msgs, msg)
		}
		applied = append(applied, Applied{Record: rec, Outputs: outs})
	}
	if _, err := d.pub.PublishAll(ctx, msgs); err != nil {
		return fmt.Errorf("driver: outputs of log seqs %d-%d not stored: %w", applied[0].Record.Seq, applied[len(applied)-1].Record.Seq, err)
	}
	if d.cfg.Sink != nil {
		if err := d.cfg.Sink.Apply(applied); err != nil {
			return fmt.Errorf("driver: sink: %w", err)
		}
	}
	last := batch[len(batch)-1]
	if err := last.DoubleAck(ctx); err != nil {
		// The next batch's ack (AckAll) covers this one; after a restart the
		// warm-up re-derives anything unacknowledged, identically.
		d.cfg.Logger.Warn("driver: checkpoint not confirmed", "err", err)
	}
	meta, _ := last.Metadata()
	d.checkpointed.Store(meta.Sequence.Stream)
	return nil
}
