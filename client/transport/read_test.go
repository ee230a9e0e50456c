package transport_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/internal/testnode/jsnode"
)

// stream starts an embedded JetStream server on a free port and returns a
// JetStream context on a stream T (subjects t.>) holding n messages,
// alternately on t.a and t.b, with bodies "m1", "m2"…
func stream(t *testing.T, n int) jetstream.JetStream {
	t.Helper()
	js := jsnode.Start(t)
	ctx := t.Context()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		subj := "t.a"
		if i%2 == 0 {
			subj = "t.b"
		}
		if _, err := js.Publish(ctx, subj, fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return js
}

func TestReadStream(t *testing.T) {
	js := stream(t, 10)
	tests := []struct {
		name string
		o    transport.ReadOptions
		want []uint64
	}{
		{"all", transport.ReadOptions{Stream: "T"}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"from 0 is the start", transport.ReadOptions{Stream: "T", From: 0, To: 2}, []uint64{1, 2}},
		{"range", transport.ReadOptions{Stream: "T", From: 3, To: 5}, []uint64{3, 4, 5}},
		{"to past the end stops at the end", transport.ReadOptions{Stream: "T", From: 9, To: 99}, []uint64{9, 10}},
		{"from past the end reads nothing", transport.ReadOptions{Stream: "T", From: 11}, nil},
		{"subjects", transport.ReadOptions{Stream: "T", Subjects: []string{"t.b"}, To: 7}, []uint64{2, 4, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []uint64
			err := transport.ReadStream(t.Context(), js, tc.o, func(r transport.RawRecord) error {
				if want := fmt.Sprintf("m%d", r.Seq); string(r.Data) != want {
					t.Errorf("seq %d: data %q, want %q", r.Seq, r.Data, want)
				}
				if want := map[bool]string{true: "t.b", false: "t.a"}[r.Seq%2 == 0]; r.Subject != want {
					t.Errorf("seq %d: subject %q, want %q", r.Seq, r.Subject, want)
				}
				got = append(got, r.Seq)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("read %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReadStreamCallbackError(t *testing.T) {
	js := stream(t, 5)
	boom := errors.New("boom")
	var n int
	err := transport.ReadStream(t.Context(), js, transport.ReadOptions{Stream: "T"}, func(r transport.RawRecord) error {
		n++
		if r.Seq == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 2 {
		t.Fatalf("err %v after %d records, want boom after 2", err, n)
	}
}

func TestReadStreamFollow(t *testing.T) {
	js := stream(t, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got := make(chan uint64, 8)
	done := make(chan error, 1)
	go func() {
		done <- transport.ReadStream(ctx, js, transport.ReadOptions{Stream: "T", Follow: true}, func(r transport.RawRecord) error {
			got <- r.Seq
			return nil
		})
	}()
	for want := uint64(1); want <= 3; want++ {
		if want == 3 {
			if _, err := js.Publish(ctx, "t.a", []byte("m3")); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case seq := <-got:
			if seq != want {
				t.Fatalf("followed seq %d, want %d", seq, want)
			}
		case <-ctx.Done():
			t.Fatalf("no seq %d while following", want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v, want nil when its context ends", err)
	}
}

func TestReadStreamMissing(t *testing.T) {
	js := stream(t, 0)
	called := false
	fn := func(transport.RawRecord) error { called = true; return nil }
	if err := transport.ReadStream(t.Context(), js, transport.ReadOptions{Stream: "T"}, fn); err != nil || called {
		t.Fatalf("empty stream: err %v, called %v; want nil, false", err, called)
	}
	if err := transport.ReadStream(t.Context(), js, transport.ReadOptions{Stream: "NOPE"}, fn); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("missing stream: err %v, want ErrStreamNotFound", err)
	}
}

// TestReadStreamFollowOutlivesItsConsumer removes the reader's consumer
// under it, as a leader change or the server's cleanup does: the read goes
// on after the last message delivered, every message once, and the reader
// never asks to delete a consumer (the client roles may not).
func TestReadStreamFollowOutlivesItsConsumer(t *testing.T) {
	js := stream(t, 3)
	nc := js.Conn()
	deletes := make(chan string, 16)
	sub, err := nc.Subscribe("$JS.API.CONSUMER.DELETE.>", func(m *nats.Msg) { deletes <- m.Subject })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan uint64, 64)
	done := make(chan error, 1)
	go func() {
		done <- transport.ReadStream(ctx, js, transport.ReadOptions{Stream: "T", Follow: true}, func(r transport.RawRecord) error {
			got <- r.Seq
			return nil
		})
	}()
	var seqs []uint64
	want := func(n int) {
		t.Helper()
		for len(seqs) < n {
			select {
			case s := <-got:
				seqs = append(seqs, s)
			case err := <-done:
				t.Fatalf("read ended after %v: %v", seqs, err)
			case <-time.After(30 * time.Second):
				t.Fatalf("read %v, want %d messages", seqs, n)
			}
		}
	}
	want(3)
	st, err := js.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	var mine int
	for name := range st.ConsumerNames(ctx).Name() {
		if err := st.DeleteConsumer(ctx, name); err != nil {
			t.Fatal(err)
		}
		mine++
	}
	if mine == 0 {
		t.Fatal("the read made no consumer to remove")
	}
	for i := 4; i <= 6; i++ {
		if _, err := js.Publish(ctx, "t.a", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	want(6)
	if !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("read %v, want 1..6 once each", seqs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow read ended with %v, want nil on cancel", err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(deletes); n != mine {
		t.Fatalf("%d consumer deletions seen, %d of them the test's: the reader asked to delete a consumer", n, mine)
	}
}
