package natsutil

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Atomic batch publish (nats-server ≥ 2.12, stream config
// AllowAtomicPublish). Facts this file relies on, read in nats-server
// v2.15.2 (server/stream.go processJetStreamAtomicBatchMsg,
// server/jetstream_batching.go) and checked by batch_test.go:
//
//   - Every message of a batch carries Nats-Batch-Id (≤ 64 characters) and
//     Nats-Batch-Sequence (1, 2, …); the last one also Nats-Batch-Commit: 1.
//     The server stages the messages and stores none of them until the
//     commit; a gap, an error on any message, or 10 s without the commit
//     abandons the whole batch. The commit's ack carries the stream sequence
//     of the last message and the count; the batch is stored contiguously
//     (single-server: the stream's one ingest goroutine writes it whole;
//     clustered: one multi-entry Raft proposal).
//   - Nats-Msg-Id works in a batch, but not as in a single publish: if any id
//     of the batch is already stored (or appears twice in it), the whole batch
//     is refused with error 10201 and no sequence, not answered as
//     duplicates. PublishBatch therefore drops repeated ids before sending,
//     and on 10201 stores the batch one message at a time, in order, so each
//     stored id is answered as a duplicate with its sequence.
//   - A batch holds at most 1,000 messages (JetStream limit max_batch_size,
//     error 10199), a stream at most 50 open batches (10210, HTTP 429), a
//     server 1,000. With SyncAlways the commit is written with one fsync for
//     the whole batch.
//   - Nats-Expected-Last-Msg-Id is refused in a batch (10177); the batch
//     headers are stored with the messages.

// MaxBatchMessages is the most messages one atomic batch may hold: the
// default of nats-server's JetStream limit max_batch_size, which Vigil's
// embedded server does not change.
const MaxBatchMessages = 1000

// BatchHeaderOverhead bounds the bytes PublishBatch adds to a message
// (Nats-Batch-Id, Nats-Batch-Sequence, Nats-Batch-Commit and, for a message
// without headers, the header preamble); CheckBatch reserves it.
const BatchHeaderOverhead = 128

// Batch headers of nats-server's atomic batch publish.
const (
	hdrBatchID     = "Nats-Batch-Id"
	hdrBatchSeq    = "Nats-Batch-Sequence"
	hdrBatchCommit = "Nats-Batch-Commit"
)

// JetStream error codes of atomic batch publish (nats-server
// jetstream_errors_generated.go); nats.go has no names for them.
const (
	errCodeBatchDisabled    jetstream.ErrorCode = 10174
	errCodeBatchIncomplete  jetstream.ErrorCode = 10176
	errCodeBatchUnsupported jetstream.ErrorCode = 10177
	errCodeBatchTooLarge    jetstream.ErrorCode = 10199
	errCodeBatchDuplicate   jetstream.ErrorCode = 10201
	errCodeBatchInflight    jetstream.ErrorCode = 10210
)

var (
	// ErrMessageTooLarge is wrapped by a *MessageTooLargeError: a message of
	// a batch would exceed the server's max payload, so the batch was
	// refused before anything was sent.
	ErrMessageTooLarge = errors.New("natsutil: message too large")
	// ErrBatchTooLarge means a batch holds more messages than one atomic
	// batch may (MaxBatchMessages, or the server's lower limit); nothing was
	// stored.
	ErrBatchTooLarge = errors.New("natsutil: too many messages for one atomic batch")
	// ErrAtomicDisabled means the stream does not allow atomic batch publish
	// (AllowAtomicPublish; EnsureStreams sets it); nothing was stored.
	ErrAtomicDisabled = errors.New("natsutil: stream does not allow atomic batch publish")
	// ErrBatchIncomplete means the server answered, attempt after attempt,
	// that the batch arrived incomplete (messages lost on the way, or
	// messages bound for different streams); nothing was stored.
	ErrBatchIncomplete = errors.New("natsutil: batch arrived incomplete")
)

// MessageTooLargeError names the message that makes a batch unpublishable.
type MessageTooLargeError struct {
	Index int   // position of the message in the batch
	Count int   // messages in the batch
	Size  int   // the message's subject-less size: data + encoded headers + BatchHeaderOverhead
	Limit int64 // the server's max payload
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("natsutil: message %d of %d in the batch takes %d bytes with its headers (%d reserved for batch headers), over the server's limit of %d: nothing of the batch was stored; shorten or split that event and send the batch again",
		e.Index, e.Count, e.Size, BatchHeaderOverhead, e.Limit)
}

// Unwrap makes errors.Is(err, ErrMessageTooLarge) true.
func (e *MessageTooLargeError) Unwrap() error { return ErrMessageTooLarge }

// PartialError reports that only a prefix of a batch is stored: Acks[i]
// acknowledges msgs[i] for i < len(Acks); the messages after are not stored,
// except that msgs[len(Acks)], whose ack was lost, may be. It happens only
// where a batch could not be atomic (some of its ids were already stored, or
// PublishAll on a stream without atomic publish, or across its chunks).
// Resending the whole batch with the same ids completes it in order: the
// stored prefix is answered as duplicates.
type PartialError struct {
	Acks  []*jetstream.PubAck
	Total int
	Err   error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("natsutil: only the first %d of %d messages stored, in order: %v", len(e.Acks), e.Total, e.Err)
}

// Unwrap returns the error that stopped the batch.
func (e *PartialError) Unwrap() error { return e.Err }

// encodedSize is what a message weighs against the server's max payload:
// its data and its headers as nats.go encodes them.
func encodedSize(m *nats.Msg) int {
	n := len(m.Data)
	if len(m.Header) > 0 {
		n += len("NATS/1.0\r\n") + len("\r\n")
		for k, vs := range m.Header {
			for _, v := range vs {
				n += len(k) + len(": ") + len(v) + len("\r\n")
			}
		}
	}
	return n
}

// CheckBatch refuses a batch that cannot be stored whole: more than
// MaxBatchMessages messages (ErrBatchTooLarge), or a message that, with the
// batch headers PublishBatch adds, would exceed maxPayload (the connection's
// MaxPayload; a *MessageTooLargeError wrapping ErrMessageTooLarge, naming
// the first such message). Call it before storing anything so that a batch
// is refused whole, never halfway.
func CheckBatch(msgs []*nats.Msg, maxPayload int64) error {
	if len(msgs) > MaxBatchMessages {
		return fmt.Errorf("%w: %d messages, at most %d: nothing was stored; split the request", ErrBatchTooLarge, len(msgs), MaxBatchMessages)
	}
	for i, m := range msgs {
		if size := encodedSize(m) + BatchHeaderOverhead; int64(size) > maxPayload {
			return &MessageTooLargeError{Index: i, Count: len(msgs), Size: size, Limit: maxPayload}
		}
	}
	return nil
}

// PublishBatch stores msgs in one stream all or nothing, in order, and
// returns their acks in the same order. msgs must all be bound for the same
// stream, which must allow atomic publish (ErrAtomicDisabled otherwise), and
// should each carry a Nats-Msg-Id, which makes retries safe:
//
//   - It first runs CheckBatch: a batch with a message over the max payload
//     or too many messages is refused before anything is sent.
//   - The batch is sent as one atomic batch; a lost ack, a timeout, a
//     leader election or a full server is retried with the same ids until
//     ctx is done; the stream stores the batch at most once.
//   - A message whose id appears earlier in msgs is not sent; its ack is
//     the earlier one's, marked Duplicate, as the stream answers a repeated
//     id.
//   - If the stream already holds some of the ids (the batch was stored by
//     an attempt whose ack was lost, or its ids were used before), no atomic
//     batch can be stored: the messages are then stored one at a time,
//     strictly in order, each stored id answered as a duplicate with its
//     sequence. If that fails midway, the error is a *PartialError naming
//     the stored prefix.
//
// On any other error nothing was stored, except after ctx ended with an
// attempt unanswered: the batch may then be stored whole, and resending it
// with the same ids tells.
func (p *Publisher) PublishBatch(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	if len(msgs) == 0 {
		return []*jetstream.PubAck{}, nil
	}
	if err := CheckBatch(msgs, p.js().maxPayload()); err != nil {
		return nil, err
	}
	return p.publishOrdered(ctx, msgs, false)
}

// publishOrdered stores msgs (at most MaxBatchMessages, checked) as one
// atomic batch. With lenient, a batch the stream will not take atomically
// (atomic publish disabled, an incomplete batch) is stored one message at a
// time in order instead of failing.
func (p *Publisher) publishOrdered(ctx context.Context, msgs []*nats.Msg, lenient bool) ([]*jetstream.PubAck, error) {
	if len(msgs) == 1 {
		ack, err := p.Publish(ctx, msgs[0])
		if err != nil {
			return nil, err
		}
		return []*jetstream.PubAck{ack}, nil
	}
	send, first, orig := distinctIDs(msgs)
	var sent []*jetstream.PubAck
	var err error
	if len(send) == 1 {
		var ack *jetstream.PubAck
		if ack, err = p.Publish(ctx, send[0]); err == nil {
			sent = []*jetstream.PubAck{ack}
		}
	} else {
		sent, err = p.atomic(ctx, send, lenient)
	}
	var pe *PartialError
	if err != nil && !errors.As(err, &pe) {
		return nil, err
	}
	if pe != nil {
		sent = pe.Acks
	}
	// Map the acks of the distinct messages back onto msgs; stop at the
	// first message whose id is not stored, so the result is a prefix.
	acks := make([]*jetstream.PubAck, 0, len(msgs))
	for i := range msgs {
		j := first[i]
		if j >= len(sent) {
			break
		}
		ack := sent[j]
		if orig[j] != i {
			dup := *ack
			dup.Duplicate = true
			ack = &dup
		}
		acks = append(acks, ack)
	}
	if pe != nil {
		return nil, &PartialError{Acks: acks, Total: len(msgs), Err: pe.Err}
	}
	return acks, nil
}

// distinctIDs returns msgs without the messages whose Nats-Msg-Id appears
// earlier; for each message of msgs, the index in send of the message that
// stores its id; and for each message of send, its index in msgs.
func distinctIDs(msgs []*nats.Msg) (send []*nats.Msg, first, orig []int) {
	first = make([]int, len(msgs))
	var seen map[string]int
	for i, m := range msgs {
		id := m.Header.Get(jetstream.MsgIDHeader)
		if id != "" {
			if j, ok := seen[id]; ok {
				first[i] = j
				continue
			}
			if seen == nil {
				seen = make(map[string]int, len(msgs))
			}
			seen[id] = len(send)
		}
		first[i] = len(send)
		send = append(send, m)
		orig = append(orig, i)
	}
	return send, first, orig
}

// atomic sends msgs as an atomic batch, retrying what may pass with time.
// maxBatchAttemptTimeout bounds how long one attempt at an atomic batch
// waits for its ack once earlier attempts timed out.
const maxBatchAttemptTimeout = 30 * time.Second

func (p *Publisher) atomic(ctx context.Context, msgs []*nats.Msg, lenient bool) ([]*jetstream.PubAck, error) {
	attemptTimeout, log := p.defaults()
	backoff := 20 * time.Millisecond
	incomplete := 0
	w := p.watch()
	for attempt := 1; ; attempt++ {
		lctx, done := w.start(ctx)
		acks, err := p.js().batch(lctx, msgs, attemptTimeout)
		lost := wasLost(lctx)
		done()
		if err == nil {
			if len(acks) > 0 {
				w.acked(acks[0].Stream)
			}
			return acks, nil
		}
		if lost && ctx.Err() == nil {
			// Sent to a leader that is gone, or over a connection that
			// dropped: nothing answers it; send it again at once.
			err = fmt.Errorf("%w (%v)", errAttemptLost, err)
		}
		if errors.Is(err, errAckWait) {
			// A loaded server commits late, and the batch it is still
			// staging holds one of the stream's open-batch slots until
			// it commits or times out: a retry under a new batch id that
			// waits no longer only adds to the load (80 publishers on a
			// busy 2-core machine never got an ack). Wait longer each time.
			attemptTimeout = min(2*attemptTimeout, maxBatchAttemptTimeout)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
		var apiErr *jetstream.APIError
		code := jetstream.ErrorCode(0)
		if errors.As(err, &apiErr) {
			code = apiErr.ErrorCode
		}
		wait := backoff
		switch {
		case code == errCodeBatchDuplicate:
			// Some id is stored already: no atomic batch can pass. Store
			// one at a time, in order; stored ids answer as duplicates.
			log.Info("batch holds ids already stored; storing it one message at a time, in order", "messages", len(msgs), "first_id", msgs[0].Header.Get(jetstream.MsgIDHeader))
			return p.inOrder(ctx, msgs)
		case code == errCodeBatchDisabled || code == errCodeBatchUnsupported:
			if lenient {
				return p.inOrder(ctx, msgs)
			}
			if code == errCodeBatchDisabled {
				return nil, fmt.Errorf("%w (%s): nothing was stored", ErrAtomicDisabled, msgs[0].Subject)
			}
			return nil, fmt.Errorf("natsutil: batch refused, nothing stored: %w", err)
		case code == errCodeBatchTooLarge:
			return nil, fmt.Errorf("%w (%d messages): nothing was stored: %v", ErrBatchTooLarge, len(msgs), err)
		case code == errCodeBatchIncomplete:
			// A message lost on the way (a reconnect) or messages bound for
			// different streams: nothing was stored.
			if lenient {
				return p.inOrder(ctx, msgs)
			}
			if incomplete++; incomplete >= 3 {
				return nil, fmt.Errorf("%w %d times (are all %d messages bound for one stream?): nothing was stored", ErrBatchIncomplete, incomplete, len(msgs))
			}
		case code == errCodeBatchInflight:
			// The stream has 50 open batches: ours commits once theirs do.
			wait = time.Duration(1+attempt%5) * time.Millisecond
		case errors.Is(err, errAttemptLost):
			wait = 0
		case !retryable(err):
			return nil, fmt.Errorf("natsutil: batch refused, nothing stored: %w", err)
		}
		log.Warn("batch not acknowledged yet; retrying", "messages", len(msgs), "first_id", msgs[0].Header.Get(jetstream.MsgIDHeader), "attempt", attempt, "err", err)
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			case <-time.After(wait):
			}
		}
		if wait == backoff {
			backoff = min(2*backoff, 500*time.Millisecond)
		}
	}
}

// inOrder stores msgs one at a time, each acknowledged before the next is
// sent, so the stream stores them in order whatever fails; a failure
// returns a *PartialError naming the stored prefix.
func (p *Publisher) inOrder(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	acks := make([]*jetstream.PubAck, 0, len(msgs))
	for _, m := range msgs {
		ack, err := p.Publish(ctx, m)
		if err != nil {
			if len(acks) == 0 {
				return nil, err
			}
			return nil, &PartialError{Acks: acks, Total: len(msgs), Err: err}
		}
		acks = append(acks, ack)
	}
	return acks, nil
}

// batchAck is the server's answer to a batch message: empty for a staged
// message, a PubAck with batch and count for the commit, or an error.
type batchAck struct {
	jetstream.PubAck
	Error *jetstream.APIError `json:"error,omitempty"`
	Batch string              `json:"batch,omitempty"`
	Count int                 `json:"count,omitempty"`
}

func newBatchID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// atomicAttempt sends msgs once as an atomic batch and waits up to timeout
// for the commit's ack. An error answer to any message means the batch
// was abandoned: nothing of it is stored.
func (p *Publisher) atomicAttempt(ctx context.Context, msgs []*nats.Msg, timeout time.Duration) ([]*jetstream.PubAck, error) {
	nc := p.JS.Conn()
	n := len(msgs)
	id := newBatchID()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox + ".*")
	if err != nil {
		return nil, fmt.Errorf("batch reply subscription: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, fmt.Errorf("batch reply subscription: %w", err)
	}

	// Send the batch in one piece: batches of one Publisher (one ingest
	// service, one driver) then reach the stream one after the other, and
	// do not hold many of the stream's 50 open batches at once.
	p.batchMu.Lock()
	for i, m := range msgs {
		bm := &nats.Msg{Subject: m.Subject, Reply: inbox + "." + strconv.Itoa(i), Data: m.Data, Header: make(nats.Header, len(m.Header)+3)}
		for k, v := range m.Header {
			bm.Header[k] = v
		}
		bm.Header.Set(hdrBatchID, id)
		bm.Header.Set(hdrBatchSeq, strconv.Itoa(i+1))
		if i == n-1 {
			bm.Header.Set(hdrBatchCommit, "1")
		}
		if err := nc.PublishMsg(bm); err != nil {
			p.batchMu.Unlock()
			return nil, fmt.Errorf("batch message %d of %d: %w", i, n, err)
		}
	}
	p.batchMu.Unlock()

	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		r, err := sub.NextMsgWithContext(actx)
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w (%s, batch of %d)", errAckWait, timeout, n)
			}
			return nil, err
		}
		i, err := strconv.Atoi(r.Subject[strings.LastIndexByte(r.Subject, '.')+1:])
		if err != nil || i < 0 || i >= n {
			continue
		}
		if r.Header.Get("Status") == "503" {
			return nil, fmt.Errorf("batch message %d of %d: %w", i, n, nats.ErrNoResponders)
		}
		if len(r.Data) == 0 && i < n-1 {
			continue // staged
		}
		var a batchAck
		if err := json.Unmarshal(r.Data, &a); err != nil {
			return nil, fmt.Errorf("batch message %d of %d: unreadable answer %q: %w", i, n, r.Data, err)
		}
		if a.Error != nil {
			return nil, fmt.Errorf("batch message %d of %d (%s): %w", i, n, msgs[i].Header.Get(jetstream.MsgIDHeader), a.Error)
		}
		if i < n-1 {
			continue
		}
		if a.Batch != id || a.Count != n || a.Sequence < uint64(n) {
			return nil, fmt.Errorf("unexpected batch ack %q for batch %s of %d", r.Data, id, n)
		}
		acks := make([]*jetstream.PubAck, n)
		for j := range acks {
			acks[j] = &jetstream.PubAck{Stream: a.Stream, Sequence: a.Sequence - uint64(n-1-j), Domain: a.Domain}
		}
		return acks, nil
	}
}
