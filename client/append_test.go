package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
)

// fakeIngest is a function-field fake of the ingest service as the client
// sees it (one request, one reply): answer decides each attempt, and the
// fake records every attempt. The client's grouping, retries and error
// mapping are what the tests check; the real service runs in
// internal/ingest and the CLI tests.
type fakeIngest struct {
	answer func(ctx context.Context, attempt int, req request) (*nats.Msg, error)

	mu       sync.Mutex
	attempts []request
}

// request is one attempt as the service received it.
type request struct {
	subject string
	ids     []string
	body    string
}

func (f *fakeIngest) RequestMsgWithContext(ctx context.Context, msg *nats.Msg) (*nats.Msg, error) {
	if ct := msg.Header.Get(ingest.HeaderContentType); ct != ingest.ContentTypeMsgpack {
		return nil, fmt.Errorf("content type %q", ct)
	}
	var evs []events.Event
	if ev, err := events.DecodeMsgpack(msg.Data); err == nil {
		evs = []events.Event{ev}
	} else if evs, err = events.DecodeMsgpackArray(msg.Data); err != nil {
		return nil, fmt.Errorf("fake ingest: body decodes neither as an event nor as an array: %w", err)
	}
	r := request{subject: msg.Subject, body: string(msg.Data)}
	for _, ev := range evs {
		r.ids = append(r.ids, ev.ID)
	}
	f.mu.Lock()
	f.attempts = append(f.attempts, r)
	n := len(f.attempts)
	f.mu.Unlock()
	return f.answer(ctx, n, r)
}

func (f *fakeIngest) sent() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.attempts...)
}

// stored answers as the service does once every event of r is stored:
// sequences from the request's first id, in order.
var seq struct {
	sync.Mutex
	n uint64
}

func stored(r request) (*nats.Msg, error) {
	seq.Lock()
	defer seq.Unlock()
	rep := events.IngestReply{}
	for _, id := range r.ids {
		seq.n++
		rep.Results = append(rep.Results, events.IngestResult{ID: id, Seq: seq.n})
	}
	return replyMsg(rep), nil
}

func replyMsg(rep events.IngestReply) *nats.Msg {
	b, err := json.Marshal(rep)
	if err != nil {
		panic(err)
	}
	return &nats.Msg{Data: b}
}

func fakeClient(f *fakeIngest, timeout, attempt time.Duration) *Client {
	return &Client{req: f, timeout: timeout, attempt: attempt}
}

func ev(id string, k events.Kind, conv string) events.Event {
	e := events.Event{V: events.CurrentVersion, ID: id, Kind: k, Conversation: conv, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if k == events.KindAction {
		e.Data = map[string]any{"tool": "bash", "args": map[string]any{"command": "ls"}}
	}
	return e
}

// TestAppendRetriesUnansweredAttempt: an attempt with no reply within the
// attempt timeout is sent again, byte for byte (the same ids, so the
// service stores it once), and the reply to the retry is the result.
func TestAppendRetriesUnansweredAttempt(t *testing.T) {
	f := &fakeIngest{answer: func(ctx context.Context, attempt int, r request) (*nats.Msg, error) {
		if attempt < 3 {
			<-ctx.Done() // a node that died with the request: no reply
			return nil, ctx.Err()
		}
		return stored(r)
	}}
	res, err := fakeClient(f, 10*time.Second, 20*time.Millisecond).Append(t.Context(), ev("a1", events.KindAction, "c1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "a1" || res.Seq == 0 {
		t.Fatalf("result %+v", res)
	}
	sent := f.sent()
	if len(sent) != 3 {
		t.Fatalf("%d attempts, want 3", len(sent))
	}
	for _, r := range sent[1:] {
		if r.body != sent[0].body || r.subject != sent[0].subject {
			t.Fatalf("a retry differs from the first attempt: %+v vs %+v", r, sent[0])
		}
	}
}

// TestAppendErrors: how each failure of an attempt ends an append.
func TestAppendErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(context.Context, int, request) (*nats.Msg, error)
		check  func(t *testing.T, err error, attempts int)
	}{
		{"nobody answers, ever", func(context.Context, int, request) (*nats.Msg, error) {
			return nil, nats.ErrNoResponders
		}, func(t *testing.T, err error, attempts int) {
			if !errors.Is(err, ErrNoServer) {
				t.Fatalf("err = %v, want ErrNoServer", err)
			}
			// A node restarting is retried, but not in a spin: the client
			// waits 100 ms between attempts, so 400 ms hold a handful.
			if attempts < 2 || attempts > 10 {
				t.Fatalf("%d attempts in 400 ms", attempts)
			}
		}},
		{"nobody answers, then the node is back", func(_ context.Context, n int, r request) (*nats.Msg, error) {
			if n == 1 {
				return nil, nats.ErrNoResponders
			}
			return stored(r)
		}, func(t *testing.T, err error, attempts int) {
			if err != nil || attempts != 2 {
				t.Fatalf("err = %v after %d attempts, want stored on the second", err, attempts)
			}
		}},
		{"reconnecting", func(_ context.Context, n int, r request) (*nats.Msg, error) {
			if n == 1 {
				return nil, nats.ErrConnectionReconnecting
			}
			return stored(r)
		}, func(t *testing.T, err error, attempts int) {
			if err != nil || attempts != 2 {
				t.Fatalf("err = %v after %d attempts, want stored on the second", err, attempts)
			}
		}},
		{"connection closed", func(context.Context, int, request) (*nats.Msg, error) {
			return nil, nats.ErrConnectionClosed
		}, func(t *testing.T, err error, attempts int) {
			if !errors.Is(err, nats.ErrConnectionClosed) || attempts != 1 || !strings.Contains(err.Error(), "1 attempts") {
				t.Fatalf("err = %v after %d attempts, want the closed connection at once", err, attempts)
			}
		}},
		{"no reply within the whole timeout", func(ctx context.Context, _ int, _ request) (*nats.Msg, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, func(t *testing.T, err error, attempts int) {
			if !errors.Is(err, context.DeadlineExceeded) || attempts < 2 {
				t.Fatalf("err = %v after %d attempts, want a deadline after retries", err, attempts)
			}
		}},
		{"refused", func(context.Context, int, request) (*nats.Msg, error) {
			return replyMsg(events.IngestReply{Error: "id reused with other content", Index: 0}), nil
		}, func(t *testing.T, err error, attempts int) {
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || re.Reason != "id reused with other content" || attempts != 1 {
				t.Fatalf("err = %v after %d attempts, want the refusal, never retried", err, attempts)
			}
		}},
		{"unreadable reply", func(context.Context, int, request) (*nats.Msg, error) {
			return &nats.Msg{Data: []byte("<html>")}, nil
		}, func(t *testing.T, err error, attempts int) {
			if err == nil || !strings.Contains(err.Error(), "unreadable reply") || attempts != 1 {
				t.Fatalf("err = %v after %d attempts", err, attempts)
			}
		}},
		{"too few results", func(context.Context, int, request) (*nats.Msg, error) {
			return replyMsg(events.IngestReply{}), nil
		}, func(t *testing.T, err error, attempts int) {
			if err == nil || !strings.Contains(err.Error(), "0 results for 1 events") {
				t.Fatalf("err = %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeIngest{answer: tc.answer}
			_, err := fakeClient(f, 400*time.Millisecond, 100*time.Millisecond).Append(t.Context(), ev("a1", events.KindAction, "c1"))
			tc.check(t, err, len(f.sent()))
		})
	}
}

// TestAppendBatchGroups: consecutive events of one subject family travel in
// one request, on their conversation's subject when they share one and on
// "_" when they do not; a change of family starts a new request; results
// come back in the caller's order.
func TestAppendBatchGroups(t *testing.T) {
	f := &fakeIngest{answer: func(_ context.Context, _ int, r request) (*nats.Msg, error) { return stored(r) }}
	evs := []events.Event{
		ev("a1", events.KindAction, "c1"),
		ev("a2", events.KindAction, "c1"),
		ev("cfg", events.KindConfig, ""),
		ev("a3", events.KindAction, "c1"),
		ev("a4", events.KindAction, "c2"),
		ev("v1", events.KindApprovalDecision, "c2"),
	}
	rs, err := fakeClient(f, time.Second, time.Second).AppendBatch(t.Context(), evs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.sent() {
		got = append(got, r.subject+"="+strings.Join(r.ids, ","))
	}
	want := []string{
		events.IngestAgentSubject("c1") + "=a1,a2",
		events.IngestControlSubject("") + "=cfg",
		events.IngestAgentSubject("") + "=a3,a4",
		events.IngestApprovalSubject("c2") + "=v1",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("requests\n%v\nwant\n%v", got, want)
	}
	if len(rs) != len(evs) {
		t.Fatalf("%d results for %d events", len(rs), len(evs))
	}
	for i, r := range rs {
		if r.ID != evs[i].ID {
			t.Fatalf("result %d is %s, want %s", i, r.ID, evs[i].ID)
		}
	}
}

// TestAppendBatchRuntime: with Options.Runtime, agent kinds go on the
// runtime subjects and control kinds stay on theirs.
func TestAppendBatchRuntime(t *testing.T) {
	f := &fakeIngest{answer: func(_ context.Context, _ int, r request) (*nats.Msg, error) { return stored(r) }}
	c := fakeClient(f, time.Second, time.Second)
	c.runtime = true
	if _, err := c.AppendBatch(t.Context(), []events.Event{ev("a1", events.KindAction, "c1"), ev("cfg", events.KindConfig, "")}); err != nil {
		t.Fatal(err)
	}
	sent := f.sent()
	if len(sent) != 2 || sent[0].subject != events.IngestRuntimeSubject("c1") || sent[1].subject != events.IngestControlSubject("") {
		t.Fatalf("sent %+v", sent)
	}
}

// TestAppendBatchSplits: a request holds at most 1,000 events; a refusal
// in a later request names the event's index in the whole batch, and the
// results of the requests stored before it are returned.
func TestAppendBatchSplits(t *testing.T) {
	evs := make([]events.Event, 1005)
	for i := range evs {
		evs[i] = ev(fmt.Sprintf("a%d", i), events.KindAction, "c1")
	}
	f := &fakeIngest{answer: func(_ context.Context, n int, r request) (*nats.Msg, error) {
		if n == 2 {
			return replyMsg(events.IngestReply{Error: "bad event", Index: 3}), nil
		}
		return stored(r)
	}}
	rs, err := fakeClient(f, time.Second, time.Second).AppendBatch(t.Context(), evs)
	sent := f.sent()
	if len(sent) != 2 || len(sent[0].ids) != 1000 || len(sent[1].ids) != 5 {
		t.Fatalf("requests of %d events, want 1000 then 5", len(sent))
	}
	var re *RefusedError
	if !errors.As(err, &re) || re.Index != 1003 {
		t.Fatalf("err = %v, want a refusal of event 1003", err)
	}
	if len(rs) != 1000 {
		t.Fatalf("%d results returned with the error, want the first request's 1000", len(rs))
	}
}

// TestAppendBatchSplitsBySize: a request stays under the payload limit.
func TestAppendBatchSplitsBySize(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	evs := make([]events.Event, 5)
	for i := range evs {
		evs[i] = ev(fmt.Sprintf("b%d", i), events.KindAction, "c1")
		evs[i].Data = map[string]any{"tool": "bash", "args": map[string]any{"command": big}}
	}
	f := &fakeIngest{answer: func(_ context.Context, _ int, r request) (*nats.Msg, error) { return stored(r) }}
	if _, err := fakeClient(f, time.Second, time.Second).AppendBatch(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	sent := f.sent()
	if len(sent) < 2 {
		t.Fatalf("1.5 MB of events in %d request", len(sent))
	}
	for _, r := range sent {
		if len(r.body) > maxRequestBytes+4<<10 {
			t.Fatalf("a request of %d bytes", len(r.body))
		}
	}
}

// TestParseReply: the reply's three shapes.
func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		data string
		n    int
		ok   bool
		want string // in the error
	}{
		{`{"results":[{"id":"a","seq":1},{"id":"b","seq":2,"duplicate":true}]}`, 2, true, ""},
		{`{"results":[{"id":"a","seq":1}]}`, 2, false, "1 results for 2 events"},
		{`{"error":"no","index":-1}`, 1, false, "refused: no"},
		{`not json`, 1, false, "unreadable reply"},
	} {
		rs, err := ParseReply([]byte(tc.data), tc.n)
		if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ParseReply(%s) = %v, %v", tc.data, rs, err)
		}
	}
}
