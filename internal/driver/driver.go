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
//
// # One record never stops it
//
// Every output is bounded by processors.FeedRecord (the same in replay), and
// a processor that panics yields an alert; an output JetStream still
// refuses for good (over the stream's size limit, a bad subject) is
// replaced by an alert "driver:refused:<output id>" and the driver goes
// on, live as at warm-up. Only ctx, a closed connection or a failing Sink
// stop Run, and then with an error.
//
// # No record is skipped
//
// Each delivered log sequence must be exactly one more than the last one
// folded: acknowledging a later record (AckAll) would otherwise hide a gap
// (deliveries lost when a consumer's leader dies). On a gap the driver asks
// the stream for the first record it holds after the last one folded: if
// that record exists, the consumer is re-created to start from it; if
// records are absent from VIGIL_LOG (which refuses deletes, so this is
// tampering or loss), it publishes an alert "driver:<durable>:missing:<from>-<to>"
// and folds on. Warm-up checks the same.
//
// # Its consumer is checked
//
// Every Config.CheckInterval the driver reads its durable consumer back: a
// consumer deleted, paused or changed (filter, deliver or ack policy …)
// under it by anyone holding an admin credential raises an alert
// "driver:<durable>:consumer:<n>" on vigil.alert and is re-created from
// the record after the last one folded.
package driver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
)

// Applied is one log record with the outputs folded from it.
type Applied = processors.Applied

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
	// CheckInterval is how often the driver checks its durable consumer
	// still has the config it created; zero means 2s, negative never.
	CheckInterval time.Duration
	// Now is the clock of the driver's own alerts; nil means time.Now.
	// (The folds read no clock; the driver may.)
	Now func() time.Time
	// Snapshots configures the fold snapshots the driver starts from
	// (snapshot.go); the zero value takes them with the defaults.
	Snapshots SnapshotConfig
	// OnFold, when set, is called live (never at warm-up) with each log
	// record's outputs as soon as the fold has produced them, before they
	// are stored: the ingest service hands gate decisions to the agents
	// waiting for them from here (docs/durability.md, "Deciding before
	// the decision is stored"). The outputs are a pure function of the
	// log prefix up to seq, which is stored already, so after a crash the
	// same ones are derived again. It runs on the fold's goroutine: it
	// must not block, nor modify outs.
	OnFold func(seq uint64, outs []processors.Output)
	// MaxAhead bounds the records folded and not yet committed (their
	// outputs stored, the sink applied, the checkpoint moved): the fold
	// waits beyond it. 0 means 4 × MaxBatch. A batch bigger than MaxAhead
	// still goes when nothing else waits.
	MaxAhead int
	// CommitLinger is how long the committer waits for more folded
	// records before it stores a batch smaller than MaxBatch; 0 means
	// 5 ms, negative not at all. Decisions do not wait for it (OnFold).
	CommitLinger time.Duration
	// SyncEveryWrite says the server fsyncs every write
	// (natsutil.DurabilityFsync): see natsutil.Publisher.SyncEveryWrite.
	SyncEveryWrite bool
}

// outputPublisher stores the driver's outputs: a natsutil.Publisher, or a
// function-field fake in tests.
type outputPublisher interface {
	Publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error)
	PublishAll(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error)
}

// Driver runs one processor live.
type Driver struct {
	cfg Config
	pub outputPublisher
	// folded is the last log sequence fed to the fold (owned by Run).
	folded uint64
	// ready is closed once the driver is live.
	ready chan struct{}
	// checkpointed is the last log sequence acknowledged (the checkpoint).
	checkpointed atomic.Uint64
	// roomWaits counts the times the fold waited for the committer to
	// make room (handOver): tests wait on it instead of sleeping.
	roomWaits atomic.Int64
	// consumerAlerts counts the consumer alerts raised (owned by Run).
	consumerAlerts int
	// derived is what VIGIL_DERIVED already holds (dedup.go; owned by Run).
	derived derivedState
	// snap holds the fold snapshots (snapshot.go).
	snap *snapshots
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
	if cfg.MaxAhead <= 0 {
		cfg.MaxAhead = 4 * cfg.MaxBatch
	}
	switch {
	case cfg.CommitLinger == 0:
		cfg.CommitLinger = 5 * time.Millisecond
	case cfg.CommitLinger < 0:
		cfg.CommitLinger = 0
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = 2 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	pub := &natsutil.Publisher{JS: cfg.JS, AttemptTimeout: cfg.PublishTimeout, Logger: cfg.Logger}
	return &Driver{cfg: cfg, pub: pub, ready: make(chan struct{}), snap: newSnapshots(cfg)}, nil
}

// Ready is closed once the driver has caught up with its checkpoint and is live.
func (d *Driver) Ready() <-chan struct{} { return d.ready }

// Checkpointed returns the last checkpointed log sequence seen so far.
func (d *Driver) Checkpointed() uint64 { return d.checkpointed.Load() }

// Run drives the processor until ctx is done. It returns nil on a clean
// stop, and an error only when it cannot go on at all (see the package doc).
func (d *Driver) Run(ctx context.Context) error {
	js := d.cfg.JS
	log := d.log()
	st, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return fmt.Errorf("driver: %w", err)
	}
	// Outputs go to a single-replica VIGIL_DERIVED as chains: there an
	// atomic batch costs a file store per batch (natsutil.Publisher.Chain),
	// unless the batch is large and every write fsynced.
	if p, ok := d.pub.(*natsutil.Publisher); ok {
		p.SyncEveryWrite = d.cfg.SyncEveryWrite
		if ds, err := js.Stream(ctx, events.StreamDerived); err == nil && ds.CachedInfo().Config.Replicas <= 1 {
			p.Chain = true
		}
	}
	var floor uint64
	if c, err := st.Consumer(ctx, d.cfg.Durable); err == nil {
		info, err := c.Info(ctx)
		if err != nil {
			return fmt.Errorf("driver: consumer %s: %w", d.cfg.Durable, err)
		}
		floor = info.AckFloor.Stream
		// It was ours when this node stopped; say so if someone changed it since.
		if diff := consumerDiff(d.consumerConfig(info.Config.OptStartSeq), info.Config, false); diff != "" {
			d.consumerAlert(ctx, "was changed while the node was down: "+diff, floor+1)
		}
		if err := st.DeleteConsumer(ctx, d.cfg.Durable); err != nil {
			return fmt.Errorf("driver: reset consumer %s: %w", d.cfg.Durable, err)
		}
	} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("driver: consumer %s: %w", d.cfg.Durable, err)
	}
	defer d.finalSnapshot(ctx)
	d.snap.at, d.snap.info.Checkpoint = d.cfg.Now(), floor
	if floor > 0 {
		// Start from the newest usable snapshot (never past what the sink
		// has applied: the warm-up re-sends it what it lacks).
		limit := floor
		if d.cfg.Sink != nil {
			limit = min(limit, d.cfg.Sink.Position())
		}
		d.restoreSnapshot(ctx, limit)
		if err := d.warmUp(ctx, floor); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		log.Info("driver warmed up", "checkpoint", floor, "folded", d.folded, "snapshot", d.snap.info.Restored, "refolded", d.snap.info.Folded)
		d.maybeSnapshot(ctx)
	}
	close(d.ready)
	var lastFrom uint64
	backoff := 50 * time.Millisecond
	for {
		from := d.folded + 1
		err := d.consume(ctx, st, from)
		if ctx.Err() != nil {
			return nil
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			return fatal.err
		}
		// The consumer was lost (its stream leader moved, the server
		// restarted under us), changed under us, or skipped records:
		// re-create it right after the last record folded. The fold state
		// covers exactly the records before it, so nothing is skipped and
		// nothing is folded twice.
		if errors.Is(err, errRecreate) {
			log.Warn("driver: re-creating the consumer", "from", d.folded+1, "reason", err)
			if d.folded+1 != from || from != lastFrom {
				lastFrom, backoff = from, 50*time.Millisecond
				continue
			}
			// No progress since the last time: do not spin on the server.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		log.Warn("driver: consumer lost; re-creating it", "from", d.folded+1, "err", err)
		// However the loss showed itself, a consumer that no longer exists
		// was deleted by someone: say so, as the periodic check would.
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if _, cerr := st.Consumer(cctx, d.cfg.Durable); errors.Is(cerr, jetstream.ErrConsumerNotFound) {
			d.consumerAlert(ctx, "was deleted", d.folded+1)
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (d *Driver) log() *slog.Logger {
	return d.cfg.Logger.With("processor", d.cfg.Processor.Name(), "durable", d.cfg.Durable)
}

// fatalError is an error the driver must stop on (a closed connection, a
// failing sink), as opposed to a lost consumer, which it re-creates.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }

func (e *fatalError) Unwrap() error { return e.err }

// errRecreate asks Run to re-create the consumer at once (a gap, a
// consumer changed under the driver).
var errRecreate = errors.New("driver: consumer to re-create")

// warmUpAttempts bounds the reads of the log prefix at start (a read fails
// on a lost connection or a leader election, and resumes where it was).
const warmUpAttempts = 5

// warmUp rebuilds the fold state from the log prefix up to floor,
// publishing nothing but the alerts for records missing from the log.
func (d *Driver) warmUp(ctx context.Context, floor uint64) error {
	log := d.log()
	sinkPos := floor
	if d.cfg.Sink != nil {
		sinkPos = d.cfg.Sink.Position()
	}
	var pending []Applied
	var sinkErr error
	apply := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := d.cfg.Sink.Apply(pending); err != nil {
			sinkErr = fmt.Errorf("driver: warm-up sink: %w", err)
			return sinkErr
		}
		pending = pending[:0]
		return nil
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := natsutil.ReadStream(ctx, d.cfg.JS, natsutil.ReadOptions{Stream: events.StreamLog, From: d.folded + 1, To: floor}, func(r natsutil.RawRecord) error {
			if r.Seq <= d.folded || r.Seq > floor {
				return nil
			}
			if r.Seq > d.folded+1 {
				// The ordered consumer skips nothing the stream holds:
				// these records are not in the log.
				d.missingAlert(ctx, d.folded+1, r.Seq-1)
			}
			rec, outs := processors.Feed(d.cfg.Processor, r.Seq, r.Subject, r.Data)
			d.folded = r.Seq
			d.snap.info.Folded++
			if d.cfg.Sink != nil && r.Seq > sinkPos {
				pending = append(pending, Applied{Record: rec, Outputs: outs})
				if len(pending) >= d.cfg.MaxBatch {
					return apply()
				}
			}
			return nil
		})
		if err == nil {
			err = apply()
		}
		if err == nil {
			break
		}
		if sinkErr != nil {
			return sinkErr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt == warmUpAttempts {
			return fmt.Errorf("driver: warm-up to %d (folded %d): %w", floor, d.folded, err)
		}
		log.Warn("driver: warm-up read failed; resuming", "folded", d.folded, "checkpoint", floor, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
	}
	if d.folded < floor {
		// The checkpoint is past the end of the log: its last records are gone.
		d.missingAlert(ctx, d.folded+1, floor)
		d.folded = floor
	}
	d.checkpointed.Store(floor)
	return nil
}

// consumerConfig is the durable consumer the driver reads the log with,
// starting at from.
func (d *Driver) consumerConfig(from uint64) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       d.cfg.Durable,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   from,
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       time.Minute,
		MaxAckPending: 100000,
		MaxDeliver:    -1,
	}
}

// consumerDiff names what differs between the consumer the driver wants
// (or created: the server's own rendering of it) and the one the stream
// has; "" when nothing that matters does. With exact false, only the
// fields the driver sets itself are compared (the server fills others
// with its defaults), and the start sequence is not.
func consumerDiff(want, got jetstream.ConsumerConfig, exact bool) string {
	var diffs []string
	add := func(what string, g, w any) {
		diffs = append(diffs, fmt.Sprintf("%s %v (want %v)", what, g, w))
	}
	if got.FilterSubject != want.FilterSubject {
		add("filter subject", strconv.Quote(got.FilterSubject), strconv.Quote(want.FilterSubject))
	}
	if !slices.Equal(got.FilterSubjects, want.FilterSubjects) {
		add("filter subjects", got.FilterSubjects, want.FilterSubjects)
	}
	// differ adds a field whose (comparable) values differ.
	differ := func(what string, g, w any) {
		if g != w {
			add(what, g, w)
		}
	}
	differ("deliver policy", got.DeliverPolicy, want.DeliverPolicy)
	if exact {
		differ("start sequence", got.OptStartSeq, want.OptStartSeq)
	}
	if got.OptStartTime != nil {
		add("start time", got.OptStartTime, "none")
	}
	differ("ack policy", got.AckPolicy, want.AckPolicy)
	differ("ack wait", got.AckWait, want.AckWait)
	differ("max deliver", got.MaxDeliver, want.MaxDeliver)
	differ("max ack pending", got.MaxAckPending, want.MaxAckPending)
	differ("headers only", got.HeadersOnly, want.HeadersOnly)
	if got.PauseUntil != nil && !got.PauseUntil.IsZero() {
		add("paused until", got.PauseUntil.UTC().Format(time.RFC3339), "not paused")
	}
	if exact {
		differ("max waiting", got.MaxWaiting, want.MaxWaiting)
		differ("max request batch", got.MaxRequestBatch, want.MaxRequestBatch)
		differ("max request bytes", got.MaxRequestMaxBytes, want.MaxRequestMaxBytes)
		differ("max request expiry", got.MaxRequestExpires, want.MaxRequestExpires)
		differ("inactive threshold", got.InactiveThreshold, want.InactiveThreshold)
	}
	return strings.Join(diffs, ", ")
}

// consume (re)creates the durable consumer starting at from and folds what
// it delivers until ctx is done or the consumer fails.
func (d *Driver) consume(ctx context.Context, st jetstream.Stream, from uint64) error {
	if err := st.DeleteConsumer(ctx, d.cfg.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("driver: reset consumer %s: %w", d.cfg.Durable, err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, d.consumerConfig(from))
	if err != nil {
		return fmt.Errorf("driver: create consumer %s: %w", d.cfg.Durable, err)
	}
	created := d.consumerConfig(from)
	if ci := cons.CachedInfo(); ci != nil {
		created = ci.Config
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2*d.cfg.MaxBatch),
		jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat))
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
	var check <-chan time.Time
	if d.cfg.CheckInterval > 0 {
		t := time.NewTicker(d.cfg.CheckInterval)
		defer t.Stop()
		check = t.C
	}
	d.cfg.Logger.Info("driver live", "processor", d.cfg.Processor.Name(), "from", from)
	d.derivedStale() // outputs others stored meanwhile are not published again
	// The fold runs ahead of the stores: each folded batch goes to the
	// committer, which stores its outputs, applies it to the sink and
	// acknowledges it, in order, while the next batches are folded. Before
	// consume returns (the consumer to re-create, ctx done) the committer
	// has finished everything folded, so Run re-creates the consumer right
	// after the last record folded exactly as if each batch had been
	// committed before the next was folded.
	p := &pipeline{work: make(chan foldedBatch, d.cfg.MaxAhead), failed: make(chan error, 1),
		freed: make(chan struct{}, 1), done: make(chan struct{})}
	go d.commitLoop(ctx, p)
	defer func() {
		close(p.work)
		<-p.done
	}()
	batch := make([]jetstream.Msg, 0, d.cfg.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return nil
		case err := <-p.failed:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-check:
			if err := d.checkConsumer(ctx, cons, created); err != nil {
				return err
			}
			continue
		case err := <-readErr:
			if errors.Is(err, jetstream.ErrConsumerDeleted) {
				d.consumerAlert(ctx, "was deleted", d.folded+1)
				return fmt.Errorf("%w: consumer deleted", errRecreate)
			}
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
		fb, stop := d.fold(ctx, st, batch)
		if fb.ack != nil {
			if err := d.handOver(ctx, p, fb); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
		}
		if stop != nil {
			if ctx.Err() != nil {
				return nil
			}
			return stop
		}
		d.maybeSnapshot(ctx)
	}
}

// A pull request parked at a consumer leader that dies (kill -9, or a
// leader moving while the node restarts) is answered by nobody: the client
// notices only when heartbeats stop, after two of them. nats.go's default
// (half the 30 s expiry) stalled a fold for 30 s after a restart; with
// these a lost pull is re-issued within 1 s, for two heartbeats a second
// while the log is quiet.
const (
	pullExpiry    = 10 * time.Second
	pullHeartbeat = 500 * time.Millisecond
)

// drainTimeout bounds the commits after the driver is stopped (see
// commitLoop).
const drainTimeout = 5 * time.Second

// pipeline carries folded batches from the fold to the committer.
type pipeline struct {
	work chan foldedBatch
	// failed receives the committer's error; freed is poked after each
	// commit; done is closed when the committer has returned.
	failed chan error
	freed  chan struct{}
	done   chan struct{}
	// ahead counts the records handed over and not yet committed.
	ahead atomic.Int64
}

// handOver gives fb to the committer once fewer than Config.MaxAhead
// records wait (at once when none does). It returns the committer's
// error, or nil when ctx is done: fb is then handed over all the same,
// without waiting for room, for the committer to commit within
// drainTimeout (commitLoop), so a stop drops nothing folded.
func (d *Driver) handOver(ctx context.Context, p *pipeline, fb foldedBatch) error {
	n := int64(len(fb.applied))
	for ctx.Err() == nil {
		ahead := p.ahead.Load()
		if ahead == 0 || ahead+n <= int64(d.cfg.MaxAhead) {
			break
		}
		d.roomWaits.Add(1)
		select {
		case <-p.freed:
		case err := <-p.failed:
			if ctx.Err() == nil {
				return err
			}
		case <-ctx.Done():
		}
	}
	p.ahead.Add(n)
	select {
	case p.work <- fb:
		return nil
	case err := <-p.failed:
		if ctx.Err() == nil {
			return err
		}
	case <-ctx.Done():
	}
	// Stopping: the committer reads p.work until it is closed, whatever
	// befell its commits, so this send ends.
	p.work <- fb
	return nil
}

// commitLoop commits the batches of p.work in order until it is closed,
// merging those already waiting into one (one store, one sink apply, one
// acknowledgement for all, up to MaxBatch records), and closes p.done.
// After a failure, reported on p.failed, it commits nothing more: what it
// drops is not acknowledged, and the driver stops (a fatal error) or its
// ctx is done.
//
// Stopping (ctx done) does not drop what is folded: the batches in flight
// and waiting are still committed, for at most drainTimeout after ctx is
// done, so the checkpoint and the snapshot at stop cover every record
// folded (a node stopped while the fold ran ahead used to skip its final
// snapshot and refold from an older one at its next start).
func (d *Driver) commitLoop(ctx context.Context, p *pipeline) {
	defer close(p.done)
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopDrain := context.AfterFunc(ctx, func() {
		// With the connection down the acknowledgements cannot reach the
		// server: the drain ends at once rather than wait drainTimeout
		// for answers that will not come (what is not acknowledged is
		// folded again, to the same outputs, at the next start).
		t := time.NewTimer(drainTimeout)
		defer t.Stop()
		poll := time.NewTicker(20 * time.Millisecond)
		defer poll.Stop()
		for {
			if nc := d.cfg.JS.Conn(); nc != nil && !nc.IsConnected() {
				cancel()
				return
			}
			select {
			case <-t.C:
				cancel()
				return
			case <-cctx.Done(): // the loop has ended
				return
			case <-poll.C:
			}
		}
	})
	defer stopDrain()
	acks := d.startAcker(cctx)
	defer acks.stop()
	var err error
	for fb := range p.work {
		if err != nil {
			continue
		}
		// Linger a moment for more: nothing waits for a commit but the
		// checkpoint, and each commit costs fsyncs of its own (the sink's,
		// the acknowledgement's) that would compete with the log's appends.
		linger := time.NewTimer(d.cfg.CommitLinger)
	merge:
		for len(fb.applied) < d.cfg.MaxBatch {
			select {
			case more, ok := <-p.work:
				if !ok {
					break merge
				}
				fb = fb.then(more)
			case <-linger.C:
				break merge
			case <-ctx.Done():
				break merge
			}
		}
		linger.Stop()
		if err = d.commit(cctx, fb, acks); err != nil {
			p.failed <- err
			continue
		}
		p.ahead.Add(-int64(len(fb.applied)))
		select {
		case p.freed <- struct{}{}:
		default:
		}
	}
}

// checkConsumer reads the consumer back and compares it with the one the
// driver created. A consumer deleted or changed raises an alert and asks
// for it to be re-created; a failed read (a leader election) is left to
// the next check.
func (d *Driver) checkConsumer(ctx context.Context, cons jetstream.Consumer, created jetstream.ConsumerConfig) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := cons.Info(cctx)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		d.consumerAlert(ctx, "was deleted", d.folded+1)
		return fmt.Errorf("%w: consumer deleted", errRecreate)
	case err != nil:
		d.cfg.Logger.Debug("driver: consumer check failed; next time", "durable", d.cfg.Durable, "err", err)
		return nil
	}
	diff := consumerDiff(created, info.Config, true)
	if info.Paused {
		diff = strings.TrimPrefix(diff+", paused", ", ")
	}
	if diff == "" {
		return nil
	}
	d.consumerAlert(ctx, "was changed: "+diff, d.folded+1)
	return fmt.Errorf("%w: consumer changed (%s)", errRecreate, diff)
}

// foldedBatch is a batch of delivered records folded and not yet
// committed: the records with their outputs, and the last delivery at or
// below what was folded (its acknowledgement, AckAll, is the checkpoint).
type foldedBatch struct {
	applied []Applied
	ack     jetstream.Msg
	ackSeq  uint64
}

// then is b followed by the next batch c, folded after it.
func (b foldedBatch) then(c foldedBatch) foldedBatch {
	b.applied = append(b.applied, c.applied...)
	if c.ack != nil {
		b.ack, b.ackSeq = c.ack, max(b.ackSeq, c.ackSeq)
	}
	return b
}

// process folds a batch of delivered records in log order, stores their
// outputs, hands them to the sink, and acknowledges the last one folded.
// It stops at a gap it cannot fold across, after storing what came before
// it, and returns errRecreate. (Live, consume does the same in two
// steps, fold and commit, on two goroutines.)
func (d *Driver) process(ctx context.Context, st jetstream.Stream, batch []jetstream.Msg) error {
	fb, stop := d.fold(ctx, st, batch)
	if err := d.commit(ctx, fb, nil); err != nil {
		return err
	}
	return stop
}

// fold feeds a batch of delivered records to the processor in log order,
// handing each record's outputs to Config.OnFold. It stops at a gap it
// cannot fold across (returning errRecreate) or a delivery whose metadata
// cannot be read; the batch returned holds what was folded before.
func (d *Driver) fold(ctx context.Context, st jetstream.Stream, batch []jetstream.Msg) (foldedBatch, error) {
	fb := foldedBatch{applied: make([]Applied, 0, len(batch))}
	var stop error
	for _, m := range batch {
		meta, err := m.Metadata()
		if err != nil {
			stop = fmt.Errorf("driver: metadata: %w", err)
			break
		}
		seq := meta.Sequence.Stream
		if seq > d.folded+1 {
			fold, err := d.resolveGap(ctx, st, seq)
			if err != nil {
				stop = err
				break
			}
			if !fold {
				stop = fmt.Errorf("%w: log seq %d delivered after %d", errRecreate, seq, d.folded)
				break
			}
		}
		if seq <= d.folded {
			// Redelivered after a consumer was re-created: already folded.
			fb.ack, fb.ackSeq = m, max(fb.ackSeq, seq)
			continue
		}
		rec, outs := processors.Feed(d.cfg.Processor, seq, m.Subject(), m.Data())
		d.folded = seq
		fb.ack, fb.ackSeq = m, seq
		fb.applied = append(fb.applied, Applied{Record: rec, Outputs: outs})
		if d.cfg.OnFold != nil && len(outs) > 0 {
			d.cfg.OnFold(seq, outs)
		}
	}
	return fb, stop
}

// commit stores the outputs of a folded batch, hands it to the sink, and
// acknowledges its last delivery: through acks (confirmed on the acker's
// goroutine) when set, else confirmed here, within ackTimeout.
func (d *Driver) commit(ctx context.Context, fb foldedBatch, acks *acker) error {
	if len(fb.applied) > 0 {
		if err := d.store(ctx, fb.applied); err != nil {
			return err
		}
		if d.cfg.Sink != nil {
			if err := d.cfg.Sink.Apply(fb.applied); err != nil {
				return &fatalError{fmt.Errorf("driver: sink: %w", err)}
			}
		}
	}
	if fb.ack != nil {
		if acks == nil {
			d.confirmAck(ctx, fb.ack)
		} else {
			acks.send(fb.ack)
		}
		if len(fb.applied) > 0 {
			d.checkpointed.Store(fb.ackSeq)
		}
	}
	return nil
}

// ackTimeout bounds the wait for the consumer's leader to confirm one
// acknowledgement. The acknowledgement is off the commit's path (acker),
// so the bound only limits how long a confirmation sent to a leader that
// died is waited for before the next, which covers it (AckAll), is sent.
const ackTimeout = 2 * time.Second

// confirmAck acknowledges m (AckAll: every record up to it) and waits for
// the consumer's leader to confirm it, at most ackTimeout. A failure is
// logged, not returned: the next acknowledgement covers this one, and
// after a restart the warm-up re-derives anything unacknowledged,
// identically.
func (d *Driver) confirmAck(ctx context.Context, m jetstream.Msg) {
	actx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		d.cfg.Logger.Warn("driver: checkpoint not confirmed", "err", err)
	}
}

// acker confirms the committer's acknowledgements on a goroutine of its
// own, newest first: a commit never waits for the consumer's leader (one
// that died with an acknowledgement in flight held every decision stored
// after it for the API's 5 s default). An acknowledgement still waiting
// when a newer one comes is dropped: AckAll makes the newer one cover it.
type acker struct {
	next chan jetstream.Msg // holds at most the newest acknowledgement
	done chan struct{}
}

func (d *Driver) startAcker(ctx context.Context) *acker {
	a := &acker{next: make(chan jetstream.Msg, 1), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for m := range a.next {
			d.confirmAck(ctx, m)
		}
	}()
	return a
}

// send queues m, replacing an acknowledgement not yet sent. Only the
// committer calls it.
func (a *acker) send(m jetstream.Msg) {
	for {
		select {
		case a.next <- m:
			return
		default:
		}
		select {
		case <-a.next: // superseded by m
		default:
		}
	}
}

// stop confirms what is queued and waits for the goroutine to end.
func (a *acker) stop() {
	close(a.next)
	<-a.done
}

// gapPlan is what to do when log seq delivered arrives after folded, the
// stream's first record after folded being firstStored: the records
// missingFrom..missingTo are not in the stream (none when missingTo <
// missingFrom), and fold says delivered is next once they are passed;
// otherwise a record between exists but was not delivered, and the
// consumer must be re-created.
type gapPlan struct {
	missingFrom, missingTo uint64
	fold                   bool
}

func planGap(folded, delivered, firstStored uint64) gapPlan {
	p := gapPlan{missingFrom: folded + 1}
	if firstStored <= folded {
		// Not an answer to "the first record after folded": ask again.
		return p
	}
	p.missingTo = min(firstStored, delivered) - 1
	p.fold = firstStored >= delivered
	return p
}

// resolveGap handles log seq s delivered after d.folded+1 (see gapPlan):
// it raises an alert for the records the stream does not hold, counts them
// as folded, and reports whether s is next.
func (d *Driver) resolveGap(ctx context.Context, st jetstream.Stream, s uint64) (bool, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := st.GetMsg(gctx, d.folded+1, jetstream.WithGetMsgSubject(">"))
	if err != nil {
		return false, fmt.Errorf("driver: log seq %d delivered after %d; finding the next record: %w", s, d.folded, err)
	}
	p := planGap(d.folded, s, m.Sequence)
	if p.missingTo >= p.missingFrom {
		d.missingAlert(ctx, p.missingFrom, p.missingTo)
		d.folded = p.missingTo
	}
	if !p.fold {
		d.log().Warn("driver: records were not delivered; re-reading them", "from", d.folded+1, "delivered", s)
	}
	return p.fold, nil
}

// store publishes the outputs of applied in order. An output the stream
// refuses for good is replaced by an alert (the sink still gets the fold's
// outputs, as a replay would derive them); anything else is retried until
// stored, ctx is done or the connection is closed.
//
// Publishing never outlasts half of VIGIL_DERIVED's duplicate window from
// the read of what it holds (see checkDerived): an output stored by anyone
// after that read is then republished within the window, and JetStream
// answers it as a duplicate. When an attempt runs out of that time (a leader
// election, a loaded server) whether its outputs were stored is unknown, so
// the driver reads VIGIL_DERIVED again and publishes only what is missing,
// never blind retries that would store an output twice once its id has left
// the window.
func (d *Driver) store(ctx context.Context, applied []Applied) error {
	for {
		if err := d.checkDerived(ctx, applied); err != nil {
			return err
		}
		msgs, outs := d.unstored(applied)
		if len(msgs) == 0 {
			return nil
		}
		if !d.derived.fresh() {
			d.derived.read = false // too old to publish on: read again
			continue
		}
		pctx, cancel := context.WithDeadline(ctx, d.derived.publishBy())
		err := d.publish(pctx, msgs, outs)
		expired := pctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !expired:
			return err
		}
		d.log().Warn("driver: outputs not acknowledged within half the duplicate window; reading what VIGIL_DERIVED holds before publishing again",
			"outputs", len(msgs), "first_id", outs[0].Event.ID, "err", err)
		d.derived.read = false
	}
}

// unstored returns the outputs of applied that VIGIL_DERIVED did not hold at
// the last read, as messages (an output that does not encode is replaced by
// its alert), and the outputs they stand for.
func (d *Driver) unstored(applied []Applied) ([]*nats.Msg, []*processors.Output) {
	var msgs []*nats.Msg
	var outs []*processors.Output
	for i := range applied {
		for j := range applied[i].Outputs {
			o := &applied[i].Outputs[j]
			if d.storedAlready(o) {
				continue
			}
			msg, err := outputMsg(o)
			if err != nil {
				a := d.refusedAlert(o, 0, err)
				if msg, err = outputMsg(&a); err != nil {
					d.log().Error("driver: an output and its alert do not encode; dropped", "id", o.Event.ID, "err", err)
					continue
				}
			}
			msgs = append(msgs, msg)
			outs = append(outs, o)
		}
	}
	return msgs, outs
}

// publish stores msgs (the messages of outs) in order, an output the stream
// refuses for good replaced by an alert.
func (d *Driver) publish(ctx context.Context, msgs []*nats.Msg, outs []*processors.Output) error {
	_, err := d.pub.PublishAll(ctx, msgs)
	if err == nil || ctx.Err() != nil {
		return err
	}
	// Some output was not stored: publish them one by one (those stored
	// already are acknowledged again as duplicates) to find which.
	for i, msg := range msgs {
		err := d.publishOne(ctx, msg)
		if err == nil {
			continue
		}
		var refused *refusedError
		if !errors.As(err, &refused) {
			return err
		}
		a := d.refusedAlert(outs[i], len(msg.Data), refused.err)
		d.log().Error("driver: output refused by the stream; replaced by an alert", "id", outs[i].Event.ID, "seq", outs[i].Event.Seq, "bytes", len(msg.Data), "err", refused.err)
		am, aerr := outputMsg(&a)
		if aerr == nil {
			aerr = d.publishOne(ctx, am)
		}
		if aerr != nil {
			if !errors.As(aerr, &refused) {
				return aerr
			}
			d.log().Error("driver: the alert for a refused output was refused too", "id", a.Event.ID, "err", aerr)
		}
	}
	return nil
}

// refusedError is a publish the stream refused for good.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

// publishOne stores msg, retrying what may pass with time. It returns a
// *refusedError for a message the stream will never take, a *fatalError
// when the connection is closed, or ctx's error.
func (d *Driver) publishOne(ctx context.Context, msg *nats.Msg) error {
	backoff := 100 * time.Millisecond
	for {
		_, err := d.pub.Publish(ctx, msg)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, nats.ErrConnectionClosed):
			return &fatalError{fmt.Errorf("driver: publish %s: %w", msg.Header.Get(jetstream.MsgIDHeader), err)}
		case refusedForGood(err):
			return &refusedError{err}
		}
		d.log().Warn("driver: output not stored; retrying", "id", msg.Header.Get(jetstream.MsgIDHeader), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// refusedForGood reports whether err says the stream (or the client) will
// never take the message: too large, a bad subject, or a JetStream API
// error (natsutil.Publisher has already retried those that pass).
func refusedForGood(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrInvalidMsg) || errors.As(err, &apiErr)
}

func outputMsg(o *processors.Output) (*nats.Msg, error) {
	body, err := o.Event.Marshal()
	if err != nil {
		return nil, err
	}
	msg := &nats.Msg{Subject: o.Subject, Data: body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, o.Event.ID)
	return msg, nil
}

// maxAlertReason bounds the text of the driver's own alerts.
const maxAlertReason = 4 << 10

// refusedAlert replaces output o (size bytes encoded, or 0 when it did not
// encode), refused with err. Its id and time derive from o, so every node
// of a fleet publishes the same alert and JetStream keeps one.
func (d *Driver) refusedAlert(o *processors.Output, size int, err error) processors.Output {
	id := "driver:refused:" + o.Event.ID
	if !events.ValidID(id) {
		id = "driver:refused:" + strconv.FormatUint(o.Event.Seq, 10)
	}
	what := "does not encode"
	if size > 0 {
		what = fmt.Sprintf("(%d bytes) was refused by %s", size, events.StreamDerived)
	}
	reason := fmt.Sprintf("output %s (%s on %s) of log seq %d %s: %v; it is replaced by this alert (the log record is intact; replay derives the output again)",
		o.Event.ID, o.Event.Kind, o.Subject, o.Event.Seq, what, err)
	return processors.Output{Subject: events.SubjectAlert, Event: events.Derived{
		V: events.CurrentVersion, ID: id, Kind: events.KindAlert, Conversation: o.Event.Conversation,
		Seq: o.Event.Seq, Time: o.Event.Time,
		Data: events.Alert{Severity: events.SeverityHigh, Reason: clip(reason, maxAlertReason), LogSeq: o.Event.Seq},
	}}
}

// missingAlert reports log records from..to absent from VIGIL_LOG.
func (d *Driver) missingAlert(ctx context.Context, from, to uint64) {
	id := fmt.Sprintf("driver:%s:missing:%d-%d", d.cfg.Durable, from, to)
	reason := fmt.Sprintf("log records %d to %d (%d) are not in %s, which refuses deletes: they were lost or removed (tampering?); driver %s folds on without them; check `vigil audit verify`",
		from, to, to-from+1, events.StreamLog, d.cfg.Durable)
	d.log().Error("driver: log records missing", "from", from, "to", to)
	d.publishAlert(ctx, id, from-1, reason)
}

// consumerAlert reports the driver's consumer changed under it; it is
// re-created from log seq from.
func (d *Driver) consumerAlert(ctx context.Context, what string, from uint64) {
	d.consumerAlerts++
	now := d.cfg.Now()
	// The time keeps ids apart across restarts (an id stored within the
	// duplicate window would swallow the alert).
	id := fmt.Sprintf("driver:%s:consumer:%d-%d", d.cfg.Durable, now.UnixMilli(), d.consumerAlerts)
	reason := fmt.Sprintf("the durable consumer %s that feeds the processors %s; decisions stop while it does not deliver the log. It is re-created from log seq %d. Only an admin credential can do this: check who holds one",
		d.cfg.Durable, what, from)
	d.log().Error("driver: consumer changed under the driver; restoring it", "what", what, "from", from)
	d.publishAlertAt(ctx, id, from-1, now, reason)
}

func (d *Driver) publishAlert(ctx context.Context, id string, seq uint64, reason string) {
	d.publishAlertAt(ctx, id, seq, d.cfg.Now(), reason)
}

// publishAlertAt publishes one of the driver's own alerts, within a bound:
// an alert that cannot be stored is logged, never a reason to stop.
func (d *Driver) publishAlertAt(ctx context.Context, id string, seq uint64, at time.Time, reason string) {
	if !events.ValidID(id) {
		id = clip(id, events.MaxIDLen)
	}
	o := processors.Output{Subject: events.SubjectAlert, Event: events.Derived{
		V: events.CurrentVersion, ID: id, Kind: events.KindAlert, Seq: seq,
		Time: at.UTC().Format(time.RFC3339Nano),
		Data: events.Alert{Severity: events.SeverityHigh, Reason: clip(reason, maxAlertReason), LogSeq: seq},
	}}
	msg, err := outputMsg(&o)
	if err == nil {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = d.publishOne(actx, msg)
		cancel()
	}
	if err != nil {
		d.log().Error("driver: alert not stored", "id", id, "reason", reason, "err", err)
	}
}

// clip shortens s to at most n bytes on a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
