package natsutil

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
type Publisher struct {
	JS jetstream.JetStream
	// AttemptTimeout bounds one synchronous attempt; zero means 2s.
	AttemptTimeout time.Duration
	// AckWait bounds the wait for asynchronous acks before the
	// unacknowledged messages are republished; zero means 2s.
	AckWait time.Duration
	Logger  *slog.Logger
}

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
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) {
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
		ack, err = p.JS.PublishMsg(actx, msg)
		cancel()
		if err == nil {
			return ack, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
	}
}

// PublishAll stores msgs in order with asynchronous publishes and returns
// their acks in the same order. Messages not acknowledged within AckWait,
// or that failed with a retryable error, are republished one by one.
func (p *Publisher) PublishAll(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	_, ackWait, _ := p.defaults()
	futures := make([]jetstream.PubAckFuture, len(msgs))
	acks := make([]*jetstream.PubAck, len(msgs))
	for i, m := range msgs {
		f, err := p.JS.PublishMsgAsync(m, jetstream.WithStallWait(ackWait))
		if err != nil {
			// Could not even queue it: fall back to synchronous, in order.
			for j := i; j < len(msgs); j++ {
				ack, err := p.retry(ctx, msgs[j], nil)
				if err != nil {
					return nil, err
				}
				acks[j] = ack
			}
			futures = futures[:i]
			break
		}
		futures[i] = f
	}
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	expired := false
	for i, f := range futures {
		var err error
		if expired {
			select {
			case ack := <-f.Ok():
				acks[i] = ack
				continue
			default:
				err = errAckWait
			}
		} else {
			select {
			case ack := <-f.Ok():
				acks[i] = ack
				continue
			case err = <-f.Err():
			case <-timer.C:
				expired, err = true, errAckWait
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ack, err := p.retry(ctx, msgs[i], err)
		if err != nil {
			return nil, err
		}
		acks[i] = ack
	}
	return acks, nil
}
