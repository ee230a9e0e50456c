package natsutil

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// oldPublishAll is PublishAll as it was before atomic batches (pipelined
// asynchronous publishes, retried one by one), kept to compare.
func oldPublishAll(ctx context.Context, p *Publisher, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	_, ackWait, _ := p.defaults()
	futures := make([]jetstream.PubAckFuture, len(msgs))
	acks := make([]*jetstream.PubAck, len(msgs))
	for i, m := range msgs {
		f, err := p.JS.PublishMsgAsync(m, jetstream.WithStallWait(ackWait))
		if err != nil {
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

// BenchmarkPublish100 stores batches of 100 events of 512 bytes into
// VIGIL_LOG over an in-process connection (as the node does), in both
// durability modes. One op is one batch.
func BenchmarkPublish100(b *testing.B) {
	for _, d := range []Durability{DurabilityFsync, DurabilityInterval} {
		b.Run(string(d), func(b *testing.B) {
			n := startTestNode(b, nodeOpts{durability: d})
			p := &Publisher{JS: n.js, AttemptTimeout: 10 * time.Second, AckWait: 10 * time.Second}
			ctx := context.Background()
			methods := []struct {
				name string
				f    func(context.Context, []*nats.Msg) ([]*jetstream.PubAck, error)
			}{
				{"OldPublishAll", func(ctx context.Context, m []*nats.Msg) ([]*jetstream.PubAck, error) { return oldPublishAll(ctx, p, m) }},
				{"PublishAll", p.PublishAll},
				{"PublishBatch", p.PublishBatch},
				{"OneByOne", p.inOrder},
			}
			for _, m := range methods {
				b.Run(m.name, func(b *testing.B) {
					k := 0
					for b.Loop() {
						msgs := logMsgs(m.name+strconv.Itoa(k), 100, 512)
						k++
						if _, err := m.f(ctx, msgs); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "events/s")
				})
			}
		})
	}
}

// BenchmarkPublishSizes compares an atomic batch with one message at a
// time by batch size, in both durability modes (where DefaultMinAtomicBatch
// comes from). One op is one batch.
func BenchmarkPublishSizes(b *testing.B) {
	for _, d := range []Durability{DurabilityFsync, DurabilityInterval} {
		b.Run(string(d), func(b *testing.B) {
			n := startTestNode(b, nodeOpts{durability: d})
			p := &Publisher{JS: n.js, AttemptTimeout: 10 * time.Second}
			for _, size := range []int{2, 10, 20, 50, 100, 1000} {
				for _, m := range []string{"Atomic", "OneByOne"} {
					b.Run(m+"/"+strconv.Itoa(size), func(b *testing.B) {
						f := p.PublishBatch
						if m == "OneByOne" {
							f = p.inOrder
						}
						k := 0
						for b.Loop() {
							msgs := logMsgs(m+strconv.Itoa(size)+"-"+strconv.Itoa(k), size, 512)
							k++
							if _, err := f(context.Background(), msgs); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(size*b.N)/b.Elapsed().Seconds(), "events/s")
					})
				}
			}
		})
	}
}
