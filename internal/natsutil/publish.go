package natsutil

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// atomic batch up to its commit's ack; zero means 2s.
	AttemptTimeout time.Duration
	// AckWait is kept for callers that set it; the publisher no longer
	// publishes asynchronously (see PublishAll), so it is unused.
	AckWait time.Duration
	// MinAtomicBatch is the fewest messages PublishAll sends as one atomic
	// batch; fewer are stored one at a time. Zero means
	// DefaultMinAtomicBatch.
	MinAtomicBatch int
	// Chain makes PublishAll send each chunk whose messages all carry a
	// Nats-Msg-Id as one chain (chain.go): one round trip, no atomic
	// batch. It suits a single-replica file stream, where nats-server
	// stages every atomic batch in a file store of its own; on a
	// replicated stream atomic batches are staged in memory.
	Chain  bool
	Logger *slog.Logger

	// batchMu keeps the messages of one atomic batch contiguous on the
	// connection.
	batchMu sync.Mutex
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

// errAckWait marks a message whose publish ack did not arrive in AckWait.
var errAckWait = errors.New("no publish ack within the ack wait")

func (p *Publisher) defaults() (time.Duration, time.Duration, *slog.Logger) {
	at, aw, l := p.AttemptTimeout, p.AckWait, p.Logger
	if at == 0 {
		at = 2 * time.Second
	}
	if aw == 0 {
		aw = 2 * time.Second
	}
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return at, aw, l
}

// retryable reports whether err may pass with time (as opposed to a
// message the stream will never take, such as one over its size limit).
func retryable(err error) bool {
	if errors.Is(err, errAckWait) || errors.Is(err, context.DeadlineExceeded) ||
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
	attemptTimeout, _, log := p.defaults()
	err := first
	backoff := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if err != nil {
			if !retryable(err) {
				return nil, err
			}
			log.Warn("publish not acknowledged yet; retrying", "id", msg.Header.Get(jetstream.MsgIDHeader), "subject", msg.Subject, "attempt", attempt, "err", err)
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 500*time.Millisecond)
		}
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		var ack *jetstream.PubAck
		ack, err = p.js().publish(actx, msg)
		cancel()
		if err == nil {
			return ack, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
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
		if p.Chain && p.stream == nil && chainable(chunk) {
			a, err = p.publishChained(ctx, chunk)
		} else if minAtomic := cmp.Or(p.MinAtomicBatch, DefaultMinAtomicBatch); len(chunk) < minAtomic {
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
