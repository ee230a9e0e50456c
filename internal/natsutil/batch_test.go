package natsutil

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/soak"
)

// testNode is an embedded server with Vigil's streams and one client.
type testNode struct {
	s   *server.Server
	nc  *nats.Conn
	js  jetstream.JetStream
	dir string
}

type nodeOpts struct {
	durability Durability
	maxPayload int32
	listen     string // "" = in-process connection only
	dir        string // "" = a new temp dir
	noStreams  bool
}

func startTestNode(tb testing.TB, o nodeOpts) *testNode {
	tb.Helper()
	if o.durability == "" {
		o.durability = DurabilityInterval
	}
	if o.dir == "" {
		o.dir = tb.TempDir()
	}
	s, err := StartServer(ServerConfig{StoreDir: o.dir, Durability: o.durability, MaxPayload: o.maxPayload, Listen: o.listen})
	if err != nil {
		tb.Fatal(err)
	}
	var nc *nats.Conn
	if o.listen == "" {
		nc, err = nats.Connect("", nats.InProcessServer(s))
	} else {
		nc, err = nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	}
	if err != nil {
		s.Shutdown()
		s.WaitForShutdown()
		tb.Fatal(err)
	}
	n := &testNode{s: s, nc: nc, dir: o.dir}
	tb.Cleanup(n.close)
	if n.js, err = jetstream.New(nc); err != nil {
		tb.Fatal(err)
	}
	if !o.noStreams {
		if err := EnsureStreams(context.Background(), n.js, StreamOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	return n
}

func (n *testNode) close() {
	n.nc.Close()
	n.s.Shutdown()
	n.s.WaitForShutdown()
}

// logMsgs returns n VIGIL_LOG messages with ids prefix-0 … whose data
// starts with the id.
func logMsgs(prefix string, n, size int) []*nats.Msg {
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		id := prefix + "-" + strconv.Itoa(i)
		data := []byte(id + "|")
		if size > len(data) {
			data = append(data, strings.Repeat("x", size-len(data))...)
		}
		m := &nats.Msg{Subject: events.LogSubject("c1"), Data: data, Header: nats.Header{}}
		m.Header.Set(jetstream.MsgIDHeader, id)
		msgs[i] = m
	}
	return msgs
}

func ids(msgs []*nats.Msg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Header.Get(jetstream.MsgIDHeader)
	}
	return out
}

// stored returns the ids stored in stream, in stream order.
func stored(tb testing.TB, js jetstream.JetStream, stream string) []string {
	tb.Helper()
	var out []string
	err := ReadStream(context.Background(), js, ReadOptions{Stream: stream}, func(r RawRecord) error {
		id, _, _ := strings.Cut(string(r.Data), "|")
		out = append(out, id)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func sameIDs(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		tb.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// checkAcks checks that acks are for the stored positions of msgs.
func checkAcks(tb testing.TB, js jetstream.JetStream, stream string, msgs []*nats.Msg, acks []*jetstream.PubAck) {
	tb.Helper()
	if len(acks) != len(msgs) {
		tb.Fatalf("%d acks for %d messages", len(acks), len(msgs))
	}
	s, err := js.Stream(context.Background(), stream)
	if err != nil {
		tb.Fatal(err)
	}
	for i, a := range acks {
		rm, err := s.GetMsg(context.Background(), a.Sequence)
		if err != nil {
			tb.Fatalf("ack %d (seq %d): %v", i, a.Sequence, err)
		}
		if got, want := rm.Header.Get(jetstream.MsgIDHeader), msgs[i].Header.Get(jetstream.MsgIDHeader); got != want {
			tb.Fatalf("ack %d names seq %d, which holds %s, not %s", i, a.Sequence, got, want)
		}
	}
}

// countingHandler counts the publisher's log records by message.
type countingHandler struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[r.Message]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
func (h *countingHandler) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return fmt.Sprint(h.n)
}

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

func TestEnsureStreamsEnablesAtomicPublishOnExistingStreams(t *testing.T) {
	n := startTestNode(t, nodeOpts{noStreams: true})
	ctx := ctxT(t)
	// A store made before atomic publish: streams without it, with data.
	for _, sc := range StreamConfigs(StreamOptions{}) {
		sc.AllowAtomicPublish = false
		if _, err := n.js.CreateStream(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	old := logMsgs("old", 3, 0)
	p := &Publisher{JS: n.js, MinAtomicBatch: 2}
	if _, err := p.PublishBatch(ctx, old); !errors.Is(err, ErrAtomicDisabled) {
		t.Fatalf("batch into a stream without atomic publish: %v, want ErrAtomicDisabled", err)
	}
	sameIDs(t, "after a refused batch", stored(t, n.js, events.StreamLog), nil)
	if _, err := p.PublishAll(ctx, old); err != nil {
		t.Fatalf("PublishAll falls back to in-order publishing: %v", err)
	}
	for range 2 { // update, then idempotent
		if err := EnsureStreams(ctx, n.js, StreamOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{events.StreamLog, events.StreamDerived} {
		s, err := n.js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !s.CachedInfo().Config.AllowAtomicPublish {
			t.Fatalf("%s: AllowAtomicPublish not set on the existing stream", name)
		}
	}
	msgs := logMsgs("new", 5, 0)
	acks, err := p.PublishBatch(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	checkAcks(t, n.js, events.StreamLog, msgs, acks)
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), append(ids(old), ids(msgs)...))
}

func TestPublishBatchStoresInOrder(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	ctx := ctxT(t)
	p := &Publisher{JS: n.js}
	var want []string
	for b := range 3 {
		msgs := logMsgs("b"+strconv.Itoa(b), 100, 200)
		acks, err := p.PublishBatch(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range acks {
			if a.Duplicate || a.Stream != events.StreamLog || a.Sequence != acks[0].Sequence+uint64(i) {
				t.Fatalf("ack %d: %+v (first seq %d)", i, a, acks[0].Sequence)
			}
		}
		checkAcks(t, n.js, events.StreamLog, msgs, acks)
		want = append(want, ids(msgs)...)
	}
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), want)
}

// A message over the max payload refuses the whole batch before anything is
// sent; one the stream refuses (over its MaxMsgSize) abandons the batch in
// the server. Either way nothing of it is stored.
func TestPublishBatchAllOrNothingWhenOneMessageTooLarge(t *testing.T) {
	const maxPayload = 64 << 10
	n := startTestNode(t, nodeOpts{maxPayload: maxPayload})
	ctx := ctxT(t)
	p := &Publisher{JS: n.js}

	msgs := logMsgs("big", 5, 100)
	msgs[3].Data = append(msgs[3].Data, make([]byte, maxPayload)...)
	_, err := p.PublishBatch(ctx, msgs)
	var tooLarge *MessageTooLargeError
	if !errors.Is(err, ErrMessageTooLarge) || !errors.As(err, &tooLarge) || tooLarge.Index != 3 || tooLarge.Count != 5 || tooLarge.Limit != maxPayload {
		t.Fatalf("err = %v (%+v), want a MessageTooLargeError for message 3 of 5", err, tooLarge)
	}
	t.Logf("refusal: %v", err)
	if _, err := p.PublishAll(ctx, msgs); !errors.As(err, &tooLarge) || tooLarge.Index != 3 {
		t.Fatalf("PublishAll: %v, want a MessageTooLargeError for message 3", err)
	}
	sameIDs(t, "log after refused batches", stored(t, n.js, events.StreamLog), nil)

	// Past the client's check: the stream refuses message 2 of 4 itself.
	sc := jetstream.StreamConfig{Name: "SMALL", Subjects: []string{"small.>"}, Storage: jetstream.FileStorage,
		MaxMsgSize: 1024, Duplicates: time.Hour, AllowAtomicPublish: true}
	if _, err := n.js.CreateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	small := logMsgs("small", 4, 100)
	for _, m := range small {
		m.Subject = "small.c1"
	}
	small[2].Data = append(small[2].Data, make([]byte, 2048)...)
	if _, err := p.PublishBatch(ctx, small); err == nil || !strings.Contains(err.Error(), "message 2 of 4") {
		t.Fatalf("err = %v, want the stream's refusal of message 2", err)
	} else {
		t.Logf("refusal: %v", err)
	}
	sameIDs(t, "SMALL after the refused batch", stored(t, n.js, "SMALL"), nil)
	small[2].Data = small[2].Data[:100]
	if _, err := p.PublishBatch(ctx, small); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "SMALL", stored(t, n.js, "SMALL"), ids(small))
}

// CheckBatch's size is what nats.go weighs against the max payload.
func TestCheckBatchMatchesMaxPayload(t *testing.T) {
	const maxPayload = 8 << 10
	n := startTestNode(t, nodeOpts{maxPayload: maxPayload})
	m := logMsgs("edge", 1, 0)[0]
	m.Header.Set("Content-Type", "application/msgpack")
	m.Data = nil
	m.Data = make([]byte, maxPayload-encodedSize(m))
	if encodedSize(m) != maxPayload {
		t.Fatal("bad setup")
	}
	if err := n.nc.PublishMsg(m); err != nil {
		t.Fatalf("message of exactly max payload: %v", err)
	}
	m.Data = append(m.Data, 0)
	if err := n.nc.PublishMsg(m); !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("message one byte over: %v, want ErrMaxPayload", err)
	}

	m.Data = m.Data[:maxPayload-BatchHeaderOverhead-encodedSize(&nats.Msg{Header: m.Header})]
	batch := []*nats.Msg{logMsgs("edge", 1, 0)[0], m}
	if err := CheckBatch(batch, maxPayload); err != nil {
		t.Fatalf("largest allowed message refused: %v", err)
	}
	p := &Publisher{JS: n.js}
	if _, err := p.PublishBatch(ctxT(t), batch); err != nil {
		t.Fatalf("largest allowed message, with batch headers: %v", err)
	}
	m.Data = append(m.Data, 0)
	if err := CheckBatch(batch, maxPayload); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("one byte more: %v, want ErrMessageTooLarge", err)
	}
	if err := CheckBatch(logMsgs("many", MaxBatchMessages+1, 0), maxPayload); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("%d messages: %v, want ErrBatchTooLarge", MaxBatchMessages+1, err)
	}
	if err := CheckBatch(nil, maxPayload); err != nil {
		t.Fatal(err)
	}
}

func TestPublishBatchTooManyMessages(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	p := &Publisher{JS: n.js}
	msgs := logMsgs("many", MaxBatchMessages+1, 0)
	if _, err := p.PublishBatch(ctxT(t), msgs); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("err = %v, want ErrBatchTooLarge", err)
	}
	// PublishAll takes any number, in order, in chunks.
	acks, err := p.PublishAll(ctxT(t), msgs)
	if err != nil {
		t.Fatal(err)
	}
	checkAcks(t, n.js, events.StreamLog, msgs, acks)
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), ids(msgs))
}

// A batch sent again (its ack was lost) is answered as duplicates with the
// first sequences; a batch of which a prefix is stored gets the rest
// appended in order; a repeated id inside a batch is answered as its
// first occurrence, as the stream does for separate publishes.
func TestPublishBatchRetriedIsStoredOnce(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	ctx := ctxT(t)
	p := &Publisher{JS: n.js}

	msgs := logMsgs("r", 10, 50)
	first, err := p.PublishBatch(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(context.Context, []*nats.Msg) ([]*jetstream.PubAck, error){p.PublishBatch, p.PublishAll} {
		again, err := f(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range again {
			if !again[i].Duplicate || again[i].Sequence != first[i].Sequence {
				t.Fatalf("resent message %d: %+v, want duplicate of seq %d", i, again[i], first[i].Sequence)
			}
		}
	}
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), ids(msgs))

	// A prefix stored (by a fallback that failed midway).
	next := logMsgs("p", 6, 50)
	for _, m := range next[:2] {
		if _, err := p.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	acks, err := p.PublishBatch(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range acks {
		if a.Duplicate != (i < 2) {
			t.Fatalf("ack %d: duplicate=%v", i, a.Duplicate)
		}
	}
	checkAcks(t, n.js, events.StreamLog, next, acks)
	want := append(ids(msgs), ids(next)...)
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), want)

	// The same id twice in one batch.
	twice := logMsgs("t", 4, 50)
	twice[2].Header.Set(jetstream.MsgIDHeader, "t-0")
	acks, err = p.PublishBatch(ctx, twice)
	if err != nil {
		t.Fatal(err)
	}
	if !acks[2].Duplicate || acks[2].Sequence != acks[0].Sequence || acks[0].Duplicate || acks[3].Sequence != acks[1].Sequence+1 {
		t.Fatalf("acks: %+v %+v %+v %+v", *acks[0], *acks[1], *acks[2], *acks[3])
	}
	want = append(want, "t-0", "t-1", "t-3")
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), want)
}

// Every attempt's ack is lost (an attempt timeout shorter than any
// answer): the publisher resends until ctx ends; the stream holds each
// message once, in order, and a resend completes the batch in order.
func TestPublishLostAcksStoreOnceInOrder(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	for _, f := range []string{"PublishBatch", "PublishAll/atomic", "PublishAll/onebyone"} {
		t.Run(f, func(t *testing.T) {
			lossy := &Publisher{JS: n.js, AttemptTimeout: time.Nanosecond, MinAtomicBatch: 2}
			publish := lossy.PublishBatch
			switch f {
			case "PublishAll/atomic":
				publish = lossy.PublishAll
			case "PublishAll/onebyone":
				// An attempt that expires before it is sent sends nothing:
				// give each publish just the time to go out.
				lossy.AttemptTimeout = 30 * time.Microsecond
				lossy.MinAtomicBatch = MaxBatchMessages + 1
				publish = lossy.PublishAll
			}
			msgs := logMsgs("lost"+f, 20, 50)
			before := stored(t, n.js, events.StreamLog)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if _, err := publish(ctx, msgs); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the deadline", err)
			}
			got := stored(t, n.js, events.StreamLog)[len(before):]
			t.Logf("stored while every ack was lost: %d of %d", len(got), len(msgs))
			if f == "PublishAll/onebyone" {
				// A prefix, in order.
				sameIDs(t, "log after lost acks", got, ids(msgs)[:len(got)])
			} else {
				// The whole batch, once.
				sameIDs(t, "log after lost acks", got, ids(msgs))
			}
			p := &Publisher{JS: n.js}
			acks, err := p.PublishBatch(ctxT(t), msgs)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range acks {
				if a.Duplicate != (i < len(got)) {
					t.Fatalf("ack %d: duplicate=%v with %d stored before", i, a.Duplicate, len(got))
				}
			}
			checkAcks(t, n.js, events.StreamLog, msgs, acks)
			sameIDs(t, "log", stored(t, n.js, events.StreamLog), append(before, ids(msgs)...))
		})
	}
}

// Many publishers at once, more than the stream's 50 open batches: every
// batch is stored whole and contiguous.
func TestPublishBatchConcurrent(t *testing.T) {
	// The inflight-batch retry it provokes is covered fast in
	// TestAtomicBatchAnswers; this is the same under real load.
	soak.Require(t, "80 concurrent publishers, 12 s on a loaded 2-core machine")
	n := startTestNode(t, nodeOpts{})
	// 240 batches from 80 goroutines: minutes on a loaded 2-core machine
	// (CI once took over 20 s), so a wider bound than ctxT's.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const publishers, batches, size = 80, 3, 20
	logs := &countingHandler{}
	var wg sync.WaitGroup
	errs := make(chan error, publishers)
	for g := range publishers {
		wg.Go(func() {
			p := &Publisher{JS: n.js, Logger: slog.New(logs)}
			for b := range batches {
				msgs := logMsgs(fmt.Sprintf("g%d.%d", g, b), size, 50)
				acks, err := p.PublishBatch(ctx, msgs)
				if err != nil {
					errs <- err
					return
				}
				for i, a := range acks {
					if a.Sequence != acks[0].Sequence+uint64(i) {
						errs <- fmt.Errorf("batch %d.%d not contiguous: %d then %d", g, b, acks[0].Sequence, a.Sequence)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("publisher log: %v", logs)
	got := stored(t, n.js, events.StreamLog)
	if len(got) != publishers*batches*size {
		t.Fatalf("%d stored, want %d", len(got), publishers*batches*size)
	}
	for i := 0; i < len(got); i += size {
		prefix, _, _ := strings.Cut(got[i], "-")
		for j := range size {
			if got[i+j] != prefix+"-"+strconv.Itoa(j) {
				t.Fatalf("seq %d holds %s inside batch %s", i+j+1, got[i+j], prefix)
			}
		}
	}
}

// The server stops and restarts (same store) while batches are being
// published: every batch and every PublishAll call ends up stored once, in
// order, whatever was in flight.
func TestPublishOrderSurvivesServerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := startTestNode(t, nodeOpts{listen: addr})
	logs := &countingHandler{}
	p := &Publisher{JS: n.js, AttemptTimeout: 500 * time.Millisecond, Logger: slog.New(logs)}
	oneByOne := &Publisher{JS: n.js, AttemptTimeout: 500 * time.Millisecond, Logger: slog.New(logs), MinAtomicBatch: MaxBatchMessages + 1}
	chained := &Publisher{JS: n.js, AttemptTimeout: 500 * time.Millisecond, Logger: slog.New(logs), Chain: true}
	ctx := ctxT(t)

	const rounds, size = 40, 50
	var want []string
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		for r := range rounds {
			msgs := logMsgs("round"+strconv.Itoa(r), size, 100)
			publish := p.PublishBatch
			switch r % 4 {
			case 1:
				publish = p.PublishAll // atomic chunks
			case 2:
				publish = oneByOne.PublishAll
			case 3:
				publish = chained.PublishAll
			}
			acks, err := publish(ctx, msgs)
			if err != nil {
				done <- fmt.Errorf("round %d: %w", r, err)
				return
			}
			if len(acks) != size {
				done <- fmt.Errorf("round %d: %d acks", r, len(acks))
				return
			}
			want = append(want, ids(msgs)...)
			if r == 3 {
				close(started)
			}
		}
		done <- nil
	}()
	// Restart twice while rounds 4… run.
	<-started
	s := n.s
	for range 2 {
		s.Shutdown()
		s.WaitForShutdown()
		s, err = StartServer(ServerConfig{StoreDir: n.dir, Durability: DurabilityInterval, Listen: addr})
		if err != nil {
			t.Fatal(err)
		}
		n.s = s
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("publisher log: %v", logs)
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), want)
}

// PublishAll on messages bound for two streams cannot be one atomic batch:
// it is stored in order, one message at a time.
func TestPublishAllAcrossStreams(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	ctx := ctxT(t)
	p := &Publisher{JS: n.js, MinAtomicBatch: 2}
	msgs := logMsgs("x", 4, 20)
	msgs[1].Subject = events.SubjectAlert
	if _, err := p.PublishBatch(ctx, msgs); !errors.Is(err, ErrBatchIncomplete) {
		t.Fatalf("PublishBatch across streams: %v, want ErrBatchIncomplete", err)
	}
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), nil)
	acks, err := p.PublishAll(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "log", stored(t, n.js, events.StreamLog), []string{"x-0", "x-2", "x-3"})
	sameIDs(t, "derived", stored(t, n.js, events.StreamDerived), []string{"x-1"})
	if acks[1].Stream != events.StreamDerived || acks[2].Sequence != acks[0].Sequence+1 {
		t.Fatalf("acks %+v %+v %+v", *acks[0], *acks[1], *acks[2])
	}
}

// Where a batch cannot be atomic (here: PublishAll on a stream without
// atomic publish) and fails midway, the error names the stored prefix.
func TestPublishAllPartialError(t *testing.T) {
	n := startTestNode(t, nodeOpts{})
	ctx := ctxT(t)
	sc := jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}, Storage: jetstream.FileStorage, Duplicates: time.Hour}
	if _, err := n.js.CreateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	p := &Publisher{JS: n.js}
	msgs := logMsgs("q", 5, 20)
	for _, m := range msgs {
		m.Subject = "plain.c1"
	}
	msgs[3].Subject = "nowhere.c1" // no stream: never acknowledged
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := p.PublishAll(short, msgs)
	var pe *PartialError
	if !errors.As(err, &pe) || len(pe.Acks) != 3 || pe.Total != 5 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a PartialError with 3 of 5 stored", err)
	}
	t.Logf("partial: %v", err)
	checkAcks(t, n.js, "PLAIN", msgs[:3], pe.Acks)
	sameIDs(t, "PLAIN", stored(t, n.js, "PLAIN"), []string{"q-0", "q-1", "q-2"})
}
