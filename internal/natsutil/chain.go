package natsutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// hdrExpectedLastMsgID is nats-server's Nats-Expected-Last-Msg-Id: the
// stream stores the message only if the last message it stored carries
// that Nats-Msg-Id (a repeated id is answered as a duplicate first).
const hdrExpectedLastMsgID = "Nats-Expected-Last-Msg-Id"

// chainable reports whether msgs can be sent as a chain: at least two,
// each with a Nats-Msg-Id.
func chainable(msgs []*nats.Msg) bool {
	if len(msgs) < 2 {
		return false
	}
	for _, m := range msgs {
		if m.Header.Get(jetstream.MsgIDHeader) == "" {
			return false
		}
	}
	return true
}

// chained sends msgs (see chainable) at once, without waiting for one ack
// before the next, and returns the acks of the longest prefix the stream
// acknowledged, in order. Every message but the first carries
// Nats-Expected-Last-Msg-Id naming its predecessor, so the stream stores a
// message only right after the one before it: a message lost in flight (a
// reconnect, a leader change) or another writer's message in between makes
// every later one of the chain refused, never stored out of order. What
// the prefix leaves is the caller's to store (publishOrdered), from the
// original messages, which chained does not modify.
//
// It costs one round trip for the whole chain, where an atomic batch on a
// single-replica file stream costs a file store the server creates and
// removes per batch, and one at a time a round trip per message.
func (p *Publisher) chained(ctx context.Context, msgs []*nats.Msg, timeout func() (context.Context, context.CancelFunc)) []*jetstream.PubAck {
	replies := p.chainReplies()
	if replies == nil {
		return nil
	}
	n := len(msgs)
	id, ch := replies.open(n)
	defer replies.close(id)
	nc := p.JS.Conn()
	sent := 0
	p.batchMu.Lock()
	for i, m := range msgs {
		cm := &nats.Msg{Subject: m.Subject, Reply: replies.subject(id, i), Data: m.Data, Header: make(nats.Header, len(m.Header)+1)}
		for k, v := range m.Header {
			cm.Header[k] = v
		}
		if i > 0 {
			cm.Header.Set(hdrExpectedLastMsgID, msgs[i-1].Header.Get(jetstream.MsgIDHeader))
		}
		if nc.PublishMsg(cm) != nil {
			break
		}
		sent++
	}
	p.batchMu.Unlock()

	acks := make([]*jetstream.PubAck, n)
	got := 0 // acks[:got] are all set
	actx, cancel := timeout()
	defer cancel()
	for got < sent {
		r, err := waitReply(actx, ch)
		if err != nil {
			break
		}
		i, err := replyIndex(r.Subject)
		if err != nil || i < 0 || i >= sent || acks[i] != nil {
			continue
		}
		a, ok := parseAck(r.Data)
		if !ok || r.Header.Get("Status") != "" {
			// Refused or unanswerable: this one and, by the chain, every
			// later one that was not stored before it go to the caller.
			sent = i
			continue
		}
		acks[i] = &a
		for got < sent && acks[got] != nil {
			got++
		}
	}
	acks = acks[:got]
	// A prefix acknowledged out of the stream's order cannot come from a
	// chain; trust none of it then.
	for i := 1; i < len(acks); i++ {
		if acks[i].Stream != acks[0].Stream || (acks[i].Sequence <= acks[i-1].Sequence && !acks[i].Duplicate && !acks[i-1].Duplicate) {
			return nil
		}
	}
	return acks
}

// PublishChain stores msgs in one stream in order, as one chain (see
// chained): one round trip, where PublishBatch's atomic batch costs a file
// store the server creates and removes per batch on a single-replica file
// stream. It checks msgs as PublishBatch does (CheckBatch: a message over
// the max payload, or too many, refuses them all before anything is sent),
// and each message should carry a Nats-Msg-Id (a message without one makes
// the call PublishBatch's).
//
// It keeps PublishBatch's order and its exactly-once, not its atomicity:
// the stream stores the messages in order, contiguously unless another
// writer's message comes between two of them (then the rest is stored in
// order after it), each id once. If storing stops midway (ctx done, the
// connection lost, the stream refusing a message for good) the error is a
// *PartialError naming the stored prefix; resending all msgs with the same
// ids completes them in order, the prefix answered as duplicates.
func (p *Publisher) PublishChain(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	if len(msgs) == 0 {
		return []*jetstream.PubAck{}, nil
	}
	if err := CheckBatch(msgs, p.js().maxPayload()); err != nil {
		return nil, err
	}
	if p.stream != nil || !chainable(msgs) {
		return p.publishOrdered(ctx, msgs, false)
	}
	return p.publishChained(ctx, msgs)
}

// publishChained stores msgs in order as a chain (see chained), and
// whatever the chain leaves through publishOrdered.
func (p *Publisher) publishChained(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	attemptTimeout, _ := p.defaults()
	// A chain lost in flight (the connection dropped) is not waited out:
	// what was acknowledged stands, the rest goes one at a time at once.
	w := p.watch()
	lctx, done := w.start(ctx)
	acks := p.chained(ctx, msgs, func() (context.Context, context.CancelFunc) { return context.WithTimeout(lctx, attemptTimeout) })
	done()
	if len(acks) > 0 {
		w.acked(acks[0].Stream)
	}
	if len(acks) == len(msgs) {
		return acks, nil
	}
	if ctx.Err() != nil {
		if len(acks) == 0 {
			return nil, ctx.Err()
		}
		return nil, &PartialError{Acks: acks, Total: len(msgs), Err: ctx.Err()}
	}
	rest, err := p.publishOrdered(ctx, msgs[len(acks):], true)
	if err != nil {
		var pe *PartialError
		if errors.As(err, &pe) {
			acks = append(acks, pe.Acks...)
			err = pe.Err
		}
		if len(acks) == 0 {
			return nil, err
		}
		return nil, &PartialError{Acks: acks, Total: len(msgs), Err: fmt.Errorf("natsutil: chain: %w", err)}
	}
	return append(acks, rest...), nil
}
