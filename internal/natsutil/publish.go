package natsutil

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher stores messages that carry a Nats-Msg-Id, retrying until the
// stream acknowledges them. Because the id makes a retry idempotent, it
// retries through the events a cluster goes through: a stream leader that
// dies with a publish in flight (the ack never comes), a leader election
// (no responders, timeouts), and another node storing the same id at the
// same moment ("duplicate message id is in process").
//
// A Publisher must not be copied after first use.
type Publisher struct {
	JS jetstream.JetStream
	// AttemptTimeout bounds one attempt: one synchronous publish, or one
	// atomic batch up to its commit's ack; zero means 2s. An attempt known
	// lost before then — a stream it publishes to elected a leader, or the
	// connection dropped (lossWatch) — is sent again at once.
	AttemptTimeout time.Duration
	// MinAtomicBatch is the fewest messages PublishAll sends as one atomic
	// batch; fewer are stored one at a time. Zero means
	// DefaultMinAtomicBatch.
	MinAtomicBatch int
	// Chain makes PublishAll send each chunk whose messages all carry a
	// Nats-Msg-Id as one chain (chain.go): one round trip, no atomic
	// batch. It suits a single-replica file stream, where nats-server
	// stages every atomic batch in a file store of its own; on a
	// replicated stream atomic batches are staged in memory.
	Chain bool
	// SyncEveryWrite says the server fsyncs every write
	// (DurabilityFsync). With Chain, a chunk of MinAtomicBatch messages
	// or more then goes as one atomic batch: the server writes it with
	// one fsync, where a chain costs one a message.
	SyncEveryWrite bool
	Logger         *slog.Logger

	// batchMu keeps the messages of one atomic batch contiguous on the
	// connection.
	batchMu sync.Mutex
	// losses gives up attempts in flight when they are known lost (see
	// lossWatch); started with the first attempt.
	lossOnce sync.Once
	losses   *lossWatch
	// replies receives the acks of every chain (chainReplies); made with
	// the first chain.
	repliesOnce sync.Once
	replies     *chainReplies
	// stream, when set, replaces JS (tests: a function-field fake).
	stream stream
}

// stream is what the Publisher needs of JetStream: one synchronous
// publish, one atomic batch attempt, and the connection's max payload.
// Its retries, orderings and fallbacks are all above it.
type stream interface {
	publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error)
	batch(ctx context.Context, msgs []*nats.Msg, timeout time.Duration) ([]*jetstream.PubAck, error)
	maxPayload() int64
}

// jsStream is the stream of a real JetStream context.
type jsStream struct{ p *Publisher }

func (s jsStream) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	return s.p.JS.PublishMsg(ctx, msg)
}

func (s jsStream) batch(ctx context.Context, msgs []*nats.Msg, timeout time.Duration) ([]*jetstream.PubAck, error) {
	return s.p.atomicAttempt(ctx, msgs, timeout)
}

func (s jsStream) maxPayload() int64 { return s.p.JS.Conn().MaxPayload() }

// js returns the stream the Publisher stores through.
func (p *Publisher) js() stream {
	if p.stream != nil {
		return p.stream
	}
	return jsStream{p}
}

// DefaultMinAtomicBatch is where PublishAll switches from one message at a
// time to atomic batches. On a single-replica file stream nats-server stages
// every atomic batch in a file store of its own, created, fsynced and
// deleted per batch: a fixed 6–30 ms on this project's machines whatever the
// durability mode, against ~0.04 ms (interval) or ~1–3 ms (fsync) per
// message one at a time. With fsync on every write, the default, batches
// win from about 20–30 messages; with interval only from a few hundred, so
// a node running with interval durability may raise MinAtomicBatch
// (BenchmarkPublishSizes in batch_bench_test.go).
const DefaultMinAtomicBatch = 32

// errCodeMsgIDInProcess is nats-server's JSStreamDuplicateMessageConflict
// ("duplicate message id is in process"); nats.go has no name for it.
const errCodeMsgIDInProcess jetstream.ErrorCode = 10158

// errAckWait marks a publish or an atomic batch whose ack did not arrive
// within its attempt's timeout.
var errAckWait = errors.New("no publish ack within the ack wait")

// errAttemptLost marks an attempt given up before its timeout because
// what it was sent to is gone: the connection dropped, or the stream
// elected a leader (the one the attempt reached, if any, lost its place).
var errAttemptLost = errors.New("publish attempt lost: the connection dropped or the stream's leader changed")

// lossWatch knows when a publish or an atomic batch in flight cannot be
// answered any more, so that it is sent again at once rather than after
// its attempt's timeout: when the connection drops (a nats.go status
// change) and when a stream elects a leader (JetStream's
// LEADER_ELECTED advisory: the leader an attempt was sent to, if it was
// not that one, is dead or stepped down and answers nothing). Once the
// publisher has acks, only the elections of the streams they came from
// count. Every attempt in flight is then given up (errAttemptLost); the
// retry carries the same Nats-Msg-Id, so the stream stores each message
// once.
type lossWatch struct {
	mu      sync.Mutex
	next    uint64
	flying  map[uint64]context.CancelCauseFunc
	streams map[string]bool // the streams acks came from
}

// watchLosses starts a lossWatch on nc; nil when nc cannot be watched
// (then attempts run their full timeout). Its subscription and goroutine
// end when nc closes.
func watchLosses(nc *nats.Conn, log *slog.Logger) *lossWatch {
	if nc == nil {
		return nil
	}
	w := &lossWatch{flying: map[uint64]context.CancelCauseFunc{}, streams: map[string]bool{}}
	_, err := nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.*", func(m *nats.Msg) {
		w.lost(m.Subject[strings.LastIndexByte(m.Subject, '.')+1:])
	})
	if err != nil {
		log.Debug("publisher: no leader-election advisories; a publish lost with a leader waits out its attempt", "err", err)
	}
	status := nc.StatusChanged(nats.RECONNECTING, nats.DISCONNECTED, nats.CLOSED)
	go func() {
		for st := range status {
			w.lost("")
			if st == nats.CLOSED {
				nc.RemoveStatusListener(status)
				return
			}
		}
	}()
	if nc.IsClosed() {
		nc.RemoveStatusListener(status)
	}
	return w
}

// start registers an attempt and returns its context, which is cancelled
// with errAttemptLost when the attempt is known lost, and the function
// that ends it.
func (w *lossWatch) start(ctx context.Context) (context.Context, func()) {
	if w == nil {
		return ctx, func() {}
	}
	actx, cancel := context.WithCancelCause(ctx)
	w.mu.Lock()
	id := w.next
	w.next++
	w.flying[id] = cancel
	w.mu.Unlock()
	return actx, func() {
		w.mu.Lock()
		delete(w.flying, id)
		w.mu.Unlock()
		cancel(nil)
	}
}

// acked records that stream answers this publisher's attempts.
func (w *lossWatch) acked(stream string) {
	if w == nil || stream == "" {
		return
	}
	w.mu.Lock()
	w.streams[stream] = true
	w.mu.Unlock()
}

// lost gives up the attempts in flight after stream elected a leader
// ("": the connection dropped).
func (w *lossWatch) lost(stream string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if stream != "" && len(w.streams) > 0 && !w.streams[stream] {
		return
	}
	for id, cancel := range w.flying {
		cancel(errAttemptLost)
		delete(w.flying, id)
	}
}

// wasLost reports whether actx, from lossWatch.start, was given up as lost.
func wasLost(actx context.Context) bool {
	return errors.Is(context.Cause(actx), errAttemptLost)
}

// watch returns the Publisher's lossWatch (nil with a fake stream or no
// connection).
func (p *Publisher) watch() *lossWatch {
	p.lossOnce.Do(func() {
		if p.stream == nil && p.JS != nil {
			_, log := p.defaults()
			p.losses = watchLosses(p.JS.Conn(), log)
		}
	})
	return p.losses
}

func (p *Publisher) defaults() (time.Duration, *slog.Logger) {
	at, l := p.AttemptTimeout, p.Logger
	if at == 0 {
		at = 2 * time.Second
	}
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return at, l
}

// retryable reports whether err may pass with time (as opposed to a
// message the stream will never take, such as one over its size limit).
func retryable(err error) bool {
	if errors.Is(err, errAckWait) || errors.Is(err, errAttemptLost) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, nats.ErrReconnectBufExceeded) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == errCodeMsgIDInProcess || apiErr.Code == 503
	}
	return false
}

// Publish stores msg, retrying until it is acknowledged, ctx is done, or
// the stream refuses it for good.
func (p *Publisher) Publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	return p.retry(ctx, msg, nil)
}

func (p *Publisher) retry(ctx context.Context, msg *nats.Msg, first error) (*jetstream.PubAck, error) {
	attemptTimeout, log := p.defaults()
	err := first
	backoff := 20 * time.Millisecond
	w := p.watch()
	for attempt := 1; ; attempt++ {
		if err != nil {
			if !retryable(err) {
				return nil, err
			}
			log.Warn("publish not acknowledged yet; retrying", "id", msg.Header.Get(jetstream.MsgIDHeader), "subject", msg.Subject, "attempt", attempt, "err", err)
			if !errors.Is(err, errAttemptLost) {
				// A lost attempt goes again at once: its loss is news
				// that the stream can answer again (a new leader) or
				// will once reconnected (nats.go buffers it until then).
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 500*time.Millisecond)
			}
		}
		lctx, done := w.start(ctx)
		actx, cancel := context.WithTimeout(lctx, attemptTimeout)
		var ack *jetstream.PubAck
		ack, err = p.js().publish(actx, msg)
		cancel()
		lost := wasLost(lctx)
		done()
		if err == nil {
			w.acked(ack.Stream)
			return ack, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
		if lost {
			err = fmt.Errorf("%w (%v)", errAttemptLost, err)
		}
	}
}

// PublishAll stores msgs in order and returns their acks in the same order.
// It guarantees the order, not atomicity: use PublishBatch for all or
// nothing. It takes any number of messages, and streams without atomic
// publish.
//
// The stream stores msgs in their order whatever fails. With Chain, a
// chunk whose messages all carry ids goes as one chain (chain.go), and
// what the chain leaves as below. Otherwise fewer than MinAtomicBatch
// messages are stored one at a time, each acknowledged before
// the next is sent; more are sent in chunks of at most MaxBatchMessages, each
// one atomic batch (see PublishBatch) sent once the previous one is
// acknowledged, or one at a time where a chunk cannot be atomic (the stream
// does not allow it, some of its ids are stored, it spans streams). The
// messages are first checked with CheckBatch: one over the max payload
// refuses the whole call before anything is stored. A failure after a prefix
// was stored returns a *PartialError naming that prefix; resending all msgs
// with the same ids resumes in order, the stored prefix answered as
// duplicates.
//
// It no longer pipelines asynchronous publishes: when one of them is lost
// (a reconnect drops it in flight, a leader election refuses it) the later
// ones may still be stored, and no retry can put the lost one back in front
// of them: [a b c] would be stored as [b c a].
func (p *Publisher) PublishAll(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	for i := 0; i < len(msgs); i += MaxBatchMessages {
		chunk := msgs[i:min(i+MaxBatchMessages, len(msgs))]
		if err := CheckBatch(chunk, p.js().maxPayload()); err != nil {
			var tooLarge *MessageTooLargeError
			if errors.As(err, &tooLarge) {
				tooLarge.Index += i
				tooLarge.Count = len(msgs)
			}
			return nil, err
		}
	}
	acks := make([]*jetstream.PubAck, 0, len(msgs))
	for i := 0; i < len(msgs); i += MaxBatchMessages {
		chunk := msgs[i:min(i+MaxBatchMessages, len(msgs))]
		var a []*jetstream.PubAck
		var err error
		minAtomic := cmp.Or(p.MinAtomicBatch, DefaultMinAtomicBatch)
		if p.Chain && p.stream == nil && chainable(chunk) && (!p.SyncEveryWrite || len(chunk) < minAtomic) {
			a, err = p.publishChained(ctx, chunk)
		} else if len(chunk) < minAtomic {
			a, err = p.inOrder(ctx, chunk)
		} else {
			a, err = p.publishOrdered(ctx, chunk, true)
		}
		if err != nil {
			var pe *PartialError
			if errors.As(err, &pe) {
				acks = append(acks, pe.Acks...)
				err = pe.Err
			}
			if len(acks) == 0 {
				return nil, err
			}
			return nil, &PartialError{Acks: acks, Total: len(msgs), Err: err}
		}
		acks = append(acks, a...)
	}
	return acks, nil
}

// chainReplies is the Publisher's one subscription for chain acks, nil if
// it cannot subscribe (chained then stores nothing and the caller goes on
// one message at a time).
func (p *Publisher) chainReplies() *chainReplies {
	p.repliesOnce.Do(func() {
		r, err := newChainReplies(p.JS.Conn())
		if err != nil {
			_, log := p.defaults()
			log.Warn("natsutil: no subscription for chain acks; publishing one at a time", "err", err)
			return
		}
		p.replies = r
	})
	return p.replies
}
