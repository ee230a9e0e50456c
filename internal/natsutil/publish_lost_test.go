package natsutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// watchedPublisher is a fake-stream publisher whose lossWatch the test
// fires itself.
func watchedPublisher(f *fakeStream) (*Publisher, *lossWatch) {
	p := &Publisher{stream: f, AttemptTimeout: time.Hour}
	w := &lossWatch{flying: map[uint64]context.CancelCauseFunc{}, streams: map[string]bool{}}
	p.lossOnce.Do(func() { p.losses = w })
	return p, w
}

// hangFirst answers nothing to the first attempt (it waits for its
// context, as an attempt sent to a leader that died does), after
// closing entered; later attempts are acknowledged.
func hangFirst(entered chan struct{}) func(ctx context.Context) error {
	var once sync.Once
	return func(ctx context.Context) error {
		first := false
		once.Do(func() { first = true })
		if !first {
			return nil
		}
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}
}

// TestPublishLostAttemptGivenUp: a publish and an atomic batch whose
// attempt is in flight when the stream elects a leader, or when the
// connection drops, are sent again at once (the batch with the same
// timeout, not a doubled one),
// not after their attempt's timeout (an hour here): the loss of the
// attempt is the retry's signal. An election of a stream the publisher
// gets no acks from gives up nothing.
func TestPublishLostAttemptGivenUp(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		batch        bool
	}{
		{"publish, leader elected", "S", false},
		{"publish, connection dropped", "", false},
		{"batch, leader elected", "S", true},
		{"batch, connection dropped", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered := make(chan struct{})
			hang := hangFirst(entered)
			seqs := &seqAcks{}
			var timeouts []time.Duration
			f := &fakeStream{
				publishFn: func(ctx context.Context, _ *nats.Msg) (*jetstream.PubAck, error) {
					if err := hang(ctx); err != nil {
						return nil, err
					}
					return seqs.ack(), nil
				},
				batchFn: func(ctx context.Context, msgs []*nats.Msg, timeout time.Duration) ([]*jetstream.PubAck, error) {
					timeouts = append(timeouts, timeout)
					if err := hang(ctx); err != nil {
						return nil, err
					}
					acks := make([]*jetstream.PubAck, len(msgs))
					for i := range acks {
						acks[i] = seqs.ack()
					}
					return acks, nil
				},
			}
			p, w := watchedPublisher(f)
			w.acked("S")
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				var err error
				if tc.batch {
					_, err = p.PublishBatch(ctx, idMsgs("a", "b", "c"))
				} else {
					_, err = p.Publish(ctx, idMsgs("a")[0])
				}
				done <- err
			}()
			<-entered
			w.lost("OTHER") // not a stream of this publisher's: nothing given up
			w.lost(tc.stream)
			if err := <-done; err != nil {
				t.Fatalf("not stored after the loss: %v", err)
			}
			published, batches := f.calls()
			if tc.batch {
				if len(batches) != 2 || timeouts[1] != timeouts[0] {
					t.Fatalf("batches %v with timeouts %v, want the same batch twice with the same timeout", batches, timeouts)
				}
			} else if len(published) != 2 {
				t.Fatalf("attempts %v, want 2", published)
			}
		})
	}
}

// TestPublishLeaderElectionSeen: on a real 3-server cluster, killing the
// leader of a replicated stream gives up the attempts in flight of a
// publisher connected to a survivor (the new leader's LEADER_ELECTED
// advisory reaches it), and its next publish is stored.
func TestPublishLeaderElectionSeen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster")
	}
	var routes, ports []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		ln.Close()
		routes = append(routes, "nats-route://127.0.0.1:"+ports[len(ports)-1])
	}
	servers := make([]*server.Server, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i], errs[i] = StartServer(ServerConfig{StoreDir: t.TempDir(), Durability: DurabilityInterval, ServerName: fmt.Sprintf("s%d", i),
				Cluster: ClusterConfig{Name: "lost", Listen: "127.0.0.1:" + ports[i], Routes: routes}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
	}
	t.Cleanup(func() {
		for _, s := range servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	conns := make([]*nats.Conn, 3)
	for i, s := range servers {
		nc, err := nats.Connect("", nats.InProcessServer(s))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		conns[i] = nc
	}
	js, err := jetstream.New(conns[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var st jetstream.Stream
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		st, err = js.CreateStream(cctx, jetstream.StreamConfig{Name: "LOST", Subjects: []string{"lost.>"}, Replicas: 3})
		ccancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("create stream: %v", err)
		}
		time.Sleep(time.Second)
	}
	leader := ""
	for leader == "" {
		info, err := st.Info(ctx)
		if err == nil && info.Cluster != nil {
			leader = info.Cluster.Leader
		}
		if ctx.Err() != nil {
			t.Fatal("no leader")
		}
	}
	var li, si int // the leader's server, and a survivor's
	for i, s := range servers {
		if s.Name() == leader {
			li = i
		}
	}
	si = (li + 1) % 3
	sjs, err := jetstream.New(conns[si])
	if err != nil {
		t.Fatal(err)
	}
	p := &Publisher{JS: sjs, AttemptTimeout: time.Hour}
	if _, err := p.Publish(ctx, subjectMsg("lost.first", "first")); err != nil {
		t.Fatal(err)
	}
	// An attempt in flight, as one whose ack the leader took with it.
	actx, done := p.watch().start(ctx)
	defer done()
	conns[li].Close()
	servers[li].Shutdown()
	servers[li].WaitForShutdown()
	<-actx.Done()
	if !wasLost(actx) {
		t.Fatalf("the attempt ended with %v, not as lost: %v", context.Cause(actx), ctx.Err())
	}
	if _, err := p.Publish(ctx, subjectMsg("lost.after", "after")); err != nil {
		t.Fatalf("publish after the election: %v", err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("timed out")
	}
}

// subjectMsg is a message with id on subject.
func subjectMsg(subject, id string) *nats.Msg {
	m := &nats.Msg{Subject: subject, Data: []byte(id), Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, id)
	return m
}
