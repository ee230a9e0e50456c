package natsutil

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// benchBatch numbers benchmark batches: every batch has new ids (a
// repeated id would be a duplicate, not a write).
var benchBatch atomic.Int64

func benchMsgs(n int) []*nats.Msg {
	return logMsgs("bench"+strconv.FormatInt(benchBatch.Add(1), 10), n, 512)
}

// oldPublishAll is PublishAll as it was before atomic batches (pipelined
// asynchronous publishes, retried one by one), kept to compare.
func oldPublishAll(ctx context.Context, p *Publisher, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	ackWait, _ := p.defaults()
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
			p := &Publisher{JS: n.js, AttemptTimeout: 10 * time.Second}
			ctx := context.Background()
			methods := []struct {
				name string
				f    func(context.Context, []*nats.Msg) ([]*jetstream.PubAck, error)
			}{
				{"OldPublishAll", func(ctx context.Context, m []*nats.Msg) ([]*jetstream.PubAck, error) { return oldPublishAll(ctx, p, m) }},
				{"PublishAll", p.PublishAll},
				{"PublishBatch", p.PublishBatch},
				{"PublishChain", p.PublishChain},
				{"OneByOne", p.inOrder},
			}
			for _, m := range methods {
				b.Run(m.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := m.f(ctx, benchMsgs(100)); err != nil {
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
						for b.Loop() {
							if _, err := f(context.Background(), benchMsgs(size)); err != nil {
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
