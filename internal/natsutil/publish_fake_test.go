package natsutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// fakeStream is a function-field fake of the Publisher's stream: each test
// says what one publish and one atomic batch attempt answer, and the fake
// records what was sent. The retries, fallbacks and orderings under test
// are the Publisher's own; the real JetStream runs in batch_test.go.
type fakeStream struct {
	publishFn func(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error)
	batchFn   func(ctx context.Context, msgs []*nats.Msg, timeout time.Duration) ([]*jetstream.PubAck, error)
	payload   int64

	mu        sync.Mutex
	published []string   // ids, one per publish attempt
	batches   [][]string // ids, one slice per batch attempt
}

func (f *fakeStream) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	f.mu.Lock()
	f.published = append(f.published, msg.Header.Get(jetstream.MsgIDHeader))
	f.mu.Unlock()
	if f.publishFn == nil {
		panic("fakeStream: unexpected publish of " + msg.Header.Get(jetstream.MsgIDHeader))
	}
	return f.publishFn(ctx, msg)
}

func (f *fakeStream) batch(ctx context.Context, msgs []*nats.Msg, timeout time.Duration) ([]*jetstream.PubAck, error) {
	f.mu.Lock()
	f.batches = append(f.batches, msgIDs(msgs))
	f.mu.Unlock()
	if f.batchFn == nil {
		panic(fmt.Sprintf("fakeStream: unexpected batch of %d", len(msgs)))
	}
	return f.batchFn(ctx, msgs, timeout)
}

func (f *fakeStream) maxPayload() int64 {
	if f.payload == 0 {
		return 1 << 20
	}
	return f.payload
}

func (f *fakeStream) calls() (published []string, batches [][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.published...), append([][]string(nil), f.batches...)
}

func msgIDs(msgs []*nats.Msg) []string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.Header.Get(jetstream.MsgIDHeader)
	}
	return ids
}

func idMsgs(ids ...string) []*nats.Msg {
	msgs := make([]*nats.Msg, len(ids))
	for i, id := range ids {
		msgs[i] = &nats.Msg{Subject: "s." + id, Data: []byte(id), Header: nats.Header{}}
		msgs[i].Header.Set(jetstream.MsgIDHeader, id)
	}
	return msgs
}

// seqAcks hands out stream sequences in publish order, so a test reads the
// order messages were stored in from their acks.
type seqAcks struct {
	mu   sync.Mutex
	next uint64
}

func (s *seqAcks) ack() *jetstream.PubAck {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return &jetstream.PubAck{Stream: "S", Sequence: s.next}
}

// failFirst answers errs in turn, then acks.
func failFirst(errs ...error) func(context.Context, *nats.Msg) (*jetstream.PubAck, error) {
	var mu sync.Mutex
	seqs := &seqAcks{}
	return func(context.Context, *nats.Msg) (*jetstream.PubAck, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) > 0 {
			err := errs[0]
			errs = errs[1:]
			return nil, err
		}
		return seqs.ack(), nil
	}
}

func fakePublisher(f *fakeStream) *Publisher {
	return &Publisher{stream: f, AttemptTimeout: time.Second}
}

func apiErr(code int, ec jetstream.ErrorCode) error {
	return &jetstream.APIError{Code: code, ErrorCode: ec, Description: fmt.Sprintf("api error %d/%d", code, ec)}
}

// TestPublishRetry: Publish retries what may pass with time (a lost ack, a
// leader election, the same id in process on another node) and stops at
// once on what never will, returning that error.
func TestPublishRetry(t *testing.T) {
	tooBig := apiErr(400, 10054) // JSStreamMessageExceedsMaximumErr
	for _, tc := range []struct {
		name     string
		errs     []error
		attempts int
		wantErr  error // nil: stored
	}{
		{"first time", nil, 1, nil},
		{"ack lost", []error{context.DeadlineExceeded}, 2, nil},
		{"timeout, then no responders", []error{nats.ErrTimeout, nats.ErrNoResponders}, 3, nil},
		{"no stream response", []error{jetstream.ErrNoStreamResponse}, 2, nil},
		{"reconnecting", []error{nats.ErrConnectionReconnecting, nats.ErrReconnectBufExceeded}, 3, nil},
		{"id in process elsewhere", []error{apiErr(400, errCodeMsgIDInProcess)}, 2, nil},
		{"503 from the server", []error{apiErr(503, 0)}, 2, nil},
		{"over the stream's size limit", []error{tooBig}, 1, tooBig},
		{"over max payload", []error{nats.ErrMaxPayload}, 1, nats.ErrMaxPayload},
		{"bad subject", []error{nats.ErrBadSubject}, 1, nats.ErrBadSubject},
		{"transient, then refused", []error{nats.ErrTimeout, tooBig}, 2, tooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeStream{publishFn: failFirst(tc.errs...)}
			ack, err := fakePublisher(f).Publish(t.Context(), idMsgs("a")[0])
			published, _ := f.calls()
			if len(published) != tc.attempts {
				t.Errorf("%d attempts, want %d", len(published), tc.attempts)
			}
			if tc.wantErr == nil {
				if err != nil || ack == nil || ack.Sequence != 1 {
					t.Fatalf("Publish = %+v, %v; want stored", ack, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || ack != nil {
				t.Fatalf("Publish = %+v, %v; want %v", ack, err, tc.wantErr)
			}
		})
	}
}

// TestPublishAttemptBound: each attempt runs under AttemptTimeout, and the
// caller's context ends the retries with its own error and the last one.
func TestPublishAttemptBound(t *testing.T) {
	var deadlines []time.Duration
	f := &fakeStream{publishFn: func(ctx context.Context, _ *nats.Msg) (*jetstream.PubAck, error) {
		d, ok := ctx.Deadline()
		if !ok {
			t.Error("an attempt without a deadline")
		}
		deadlines = append(deadlines, time.Until(d))
		return nil, nats.ErrNoResponders
	}}
	p := fakePublisher(f)
	p.AttemptTimeout = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := p.Publish(ctx, idMsgs("a")[0])
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), nats.ErrNoResponders.Error()) {
		t.Fatalf("err = %v; want the context's error naming the last one", err)
	}
	if len(deadlines) < 2 {
		t.Fatalf("%d attempts in 300 ms; want retries", len(deadlines))
	}
	for _, d := range deadlines {
		if d > p.AttemptTimeout {
			t.Errorf("an attempt bounded by %v, over AttemptTimeout %v", d, p.AttemptTimeout)
		}
	}
}

// TestPublishCanceledDuringBackoff: a context cancelled while the publisher
// waits to retry ends the wait.
func TestPublishCanceledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	f := &fakeStream{publishFn: func(context.Context, *nats.Msg) (*jetstream.PubAck, error) {
		cancel()
		return nil, nats.ErrTimeout
	}}
	_, err := fakePublisher(f).Publish(ctx, idMsgs("a")[0])
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if published, _ := f.calls(); len(published) != 1 {
		t.Fatalf("%d attempts after cancel, want 1", len(published))
	}
}

// batchAcks acks msgs as one batch stored from sequence first+1.
func batchAcks(msgs []*nats.Msg, first uint64) []*jetstream.PubAck {
	acks := make([]*jetstream.PubAck, len(msgs))
	for i := range msgs {
		acks[i] = &jetstream.PubAck{Stream: "S", Sequence: first + uint64(i) + 1}
	}
	return acks
}

// TestAtomicBatchAnswers: what the publisher does with each answer to an
// atomic batch attempt, for PublishBatch (strict) and PublishAll (lenient).
func TestAtomicBatchAnswers(t *testing.T) {
	type want struct {
		err      error // nil: stored
		batches  int   // batch attempts
		oneByOne bool  // fell back to publishing one at a time, in order
	}
	for _, tc := range []struct {
		name        string
		answers     []error // one per batch attempt; then the batch is stored
		strict, all want
	}{
		{"stored", nil, want{batches: 1}, want{batches: 1}},
		{"ack lost, retried", []error{errAckWait, nats.ErrNoResponders}, want{batches: 3}, want{batches: 3}},
		{"50 open batches, retried", []error{apiErr(429, errCodeBatchInflight)}, want{batches: 2}, want{batches: 2}},
		{"ids stored already", []error{apiErr(400, errCodeBatchDuplicate)},
			want{batches: 1, oneByOne: true}, want{batches: 1, oneByOne: true}},
		{"atomic publish disabled", []error{apiErr(400, errCodeBatchDisabled)},
			want{err: ErrAtomicDisabled, batches: 1}, want{batches: 1, oneByOne: true}},
		{"unsupported header", []error{apiErr(400, errCodeBatchUnsupported)},
			want{err: &jetstream.APIError{}, batches: 1}, want{batches: 1, oneByOne: true}},
		{"too many messages", []error{apiErr(400, errCodeBatchTooLarge)},
			want{err: ErrBatchTooLarge, batches: 1}, want{err: ErrBatchTooLarge, batches: 1}},
		{"incomplete once", []error{apiErr(400, errCodeBatchIncomplete)},
			want{batches: 2}, want{batches: 1, oneByOne: true}},
		{"incomplete three times", []error{apiErr(400, errCodeBatchIncomplete), apiErr(400, errCodeBatchIncomplete), apiErr(400, errCodeBatchIncomplete)},
			want{err: ErrBatchIncomplete, batches: 3}, want{batches: 1, oneByOne: true}},
		{"refused for good", []error{apiErr(400, 10999)},
			want{err: &jetstream.APIError{}, batches: 1}, want{err: &jetstream.APIError{}, batches: 1}},
	} {
		for _, strict := range []bool{true, false} {
			w := tc.all
			if strict {
				w = tc.strict
			}
			t.Run(fmt.Sprintf("%s/strict=%v", tc.name, strict), func(t *testing.T) {
				answers := tc.answers
				f := &fakeStream{
					publishFn: failFirst(),
					batchFn: func(_ context.Context, msgs []*nats.Msg, _ time.Duration) ([]*jetstream.PubAck, error) {
						if len(answers) > 0 {
							err := answers[0]
							answers = answers[1:]
							return nil, err
						}
						return batchAcks(msgs, 0), nil
					},
				}
				p := fakePublisher(f)
				p.MinAtomicBatch = 2
				msgs := idMsgs("a", "b", "c")
				var acks []*jetstream.PubAck
				var err error
				if strict {
					acks, err = p.PublishBatch(t.Context(), msgs)
				} else {
					acks, err = p.PublishAll(t.Context(), msgs)
				}
				published, batches := f.calls()
				if len(batches) != w.batches {
					t.Errorf("%d batch attempts, want %d", len(batches), w.batches)
				}
				if got := len(published) > 0; got != w.oneByOne {
					t.Errorf("published one at a time: %v (%v), want %v", got, published, w.oneByOne)
				}
				if w.oneByOne && strings.Join(published, " ") != "a b c" {
					t.Errorf("one at a time in the order %v, want a b c", published)
				}
				if w.err != nil {
					var api *jetstream.APIError
					if _, isAPI := w.err.(*jetstream.APIError); isAPI && !errors.As(err, &api) || !isAPI && !errors.Is(err, w.err) {
						t.Fatalf("err = %v, want %v", err, w.err)
					}
					if acks != nil {
						t.Fatalf("acks %v with an error", acks)
					}
					return
				}
				if err != nil || len(acks) != 3 {
					t.Fatalf("= %v, %v; want 3 acks", acks, err)
				}
				for i, a := range acks {
					if a.Sequence != uint64(i+1) {
						t.Fatalf("ack %d has seq %d: out of order", i, a.Sequence)
					}
				}
			})
		}
	}
}

// TestPublishBatchRepeatedIDs: a message whose id appears earlier in the
// batch is not sent; its ack is the earlier one's, marked duplicate.
func TestPublishBatchRepeatedIDs(t *testing.T) {
	f := &fakeStream{batchFn: func(_ context.Context, msgs []*nats.Msg, _ time.Duration) ([]*jetstream.PubAck, error) {
		return batchAcks(msgs, 10), nil
	}}
	acks, err := fakePublisher(f).PublishBatch(t.Context(), idMsgs("a", "b", "a", "c", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, batches := f.calls(); len(batches) != 1 || strings.Join(batches[0], " ") != "a b c" {
		t.Fatalf("sent %v, want one batch [a b c]", batches)
	}
	var got []string
	for _, a := range acks {
		got = append(got, fmt.Sprintf("%d%s", a.Sequence, map[bool]string{true: "d"}[a.Duplicate]))
	}
	if strings.Join(got, " ") != "11 12 11d 13 12d" {
		t.Fatalf("acks %v, want 11 12 11d 13 12d", got)
	}
}

// TestPublishAllPartial: a failure after a prefix was stored names that
// prefix, across chunks and in the one-at-a-time path; a failure before
// anything was stored is the bare error.
func TestPublishAllPartial(t *testing.T) {
	refused := apiErr(400, 10054)
	t.Run("one at a time", func(t *testing.T) {
		seqs := &seqAcks{}
		f := &fakeStream{publishFn: func(_ context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
			if m.Header.Get(jetstream.MsgIDHeader) == "c" {
				return nil, refused
			}
			return seqs.ack(), nil
		}}
		_, err := fakePublisher(f).PublishAll(t.Context(), idMsgs("a", "b", "c", "d"))
		var pe *PartialError
		if !errors.As(err, &pe) || len(pe.Acks) != 2 || pe.Total != 4 || !errors.Is(err, refused) {
			t.Fatalf("err = %v, want a PartialError with 2 of 4 stored", err)
		}
		if published, _ := f.calls(); strings.Join(published, " ") != "a b c" {
			t.Fatalf("published %v: nothing after the refused message may be sent", published)
		}
	})
	t.Run("nothing stored", func(t *testing.T) {
		f := &fakeStream{publishFn: failFirst(refused)}
		_, err := fakePublisher(f).PublishAll(t.Context(), idMsgs("a", "b"))
		var pe *PartialError
		if errors.As(err, &pe) || !errors.Is(err, refused) {
			t.Fatalf("err = %v, want the bare refusal", err)
		}
	})
	t.Run("second chunk", func(t *testing.T) {
		ids := make([]string, MaxBatchMessages+5)
		for i := range ids {
			ids[i] = fmt.Sprintf("m%d", i)
		}
		chunk := 0
		f := &fakeStream{batchFn: func(_ context.Context, msgs []*nats.Msg, _ time.Duration) ([]*jetstream.PubAck, error) {
			chunk++
			if chunk == 2 {
				return nil, apiErr(400, errCodeBatchTooLarge)
			}
			return batchAcks(msgs, 0), nil
		}}
		p := fakePublisher(f)
		p.MinAtomicBatch = 2
		_, err := p.PublishAll(t.Context(), idMsgs(ids...))
		var pe *PartialError
		if !errors.As(err, &pe) || len(pe.Acks) != MaxBatchMessages || pe.Total != len(ids) || !errors.Is(err, ErrBatchTooLarge) {
			t.Fatalf("err = %v, want the first chunk named as stored", err)
		}
	})
}

// TestPublishAllChecksFirst: a message over the max payload anywhere in
// the call refuses it whole before anything is sent, naming its index in
// the call (not in its chunk).
func TestPublishAllChecksFirst(t *testing.T) {
	ids := make([]string, MaxBatchMessages+3)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%d", i)
	}
	msgs := idMsgs(ids...)
	msgs[MaxBatchMessages+1].Data = make([]byte, 4096)
	f := &fakeStream{payload: 2048} // no publishFn, no batchFn: nothing may be sent
	_, err := fakePublisher(f).PublishAll(t.Context(), msgs)
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Index != MaxBatchMessages+1 || tl.Count != len(msgs) || tl.Limit != 2048 {
		t.Fatalf("err = %#v, want message %d of %d too large", err, MaxBatchMessages+1, len(msgs))
	}
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Errorf("errors.Is(err, ErrMessageTooLarge) is false")
	}
}
