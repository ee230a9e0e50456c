package natsutil

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// chainReplies is one subscription for the acks of every chain a
// Publisher sends on its connection: chain c's message i is answered on
// prefix.c.i, and the reply goes to the channel chain c registered.
// Subscribing once spares the server a subscription made and removed for
// each chain (which also resets its subject-match cache).
type chainReplies struct {
	prefix string
	sub    *nats.Subscription

	mu     sync.Mutex
	next   uint64
	chains map[uint64]chan *nats.Msg
}

// newChainReplies subscribes to a fresh inbox of nc.
func newChainReplies(nc *nats.Conn) (*chainReplies, error) {
	r := &chainReplies{prefix: nc.NewInbox(), chains: map[uint64]chan *nats.Msg{}}
	sub, err := nc.Subscribe(r.prefix+".*.*", r.deliver)
	if err != nil {
		return nil, err
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	r.sub = sub
	return r, nil
}

// open registers a chain of n messages: the reply subject of its message
// i is subject(i); close releases it.
func (r *chainReplies) open(n int) (id uint64, ch <-chan *nats.Msg) {
	c := make(chan *nats.Msg, n)
	r.mu.Lock()
	r.next++
	id = r.next
	r.chains[id] = c
	r.mu.Unlock()
	return id, c
}

func (r *chainReplies) close(id uint64) {
	r.mu.Lock()
	delete(r.chains, id)
	r.mu.Unlock()
}

// subject is the reply subject of message i of chain id.
func (r *chainReplies) subject(id uint64, i int) string {
	return r.prefix + "." + strconv.FormatUint(id, 10) + "." + strconv.Itoa(i)
}

// deliver hands a reply to its chain; a reply for no open chain (it came
// after its chain gave up) or beyond its chain's length is dropped.
func (r *chainReplies) deliver(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Subject, r.prefix+".")
	if !ok {
		return
	}
	tok, _, _ := strings.Cut(rest, ".")
	id, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	c := r.chains[id]
	r.mu.Unlock()
	if c == nil {
		return
	}
	select {
	case c <- m:
	default:
	}
}

// replyIndex is the message index a chain reply's subject ends with.
func replyIndex(subject string) (int, error) {
	return strconv.Atoi(subject[strings.LastIndexByte(subject, '.')+1:])
}

// wait returns the next reply of a chain, or ctx's error.
func waitReply(ctx context.Context, ch <-chan *nats.Msg) (*nats.Msg, error) {
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// parseAck reads a JetStream publish acknowledgement: ok is false for an
// error reply or anything that is not an ack naming a stream. It reads the
// shapes nats-server writes ({"stream":S,"seq":N} with optional domain and
// duplicate) without encoding/json and falls back to it for any other.
func parseAck(data []byte) (jetstream.PubAck, bool) {
	if a, ok := fastAck(data); ok {
		return a, true
	}
	var a struct {
		jetstream.PubAck
		Error *jetstream.APIError `json:"error,omitempty"`
	}
	if json.Unmarshal(data, &a) != nil || a.Error != nil || a.Stream == "" {
		return jetstream.PubAck{}, false
	}
	return a.PubAck, true
}

// fastAck parses exactly {"stream":"S"[,"domain":"D"],"seq":N[,"duplicate": true]}
// with S and D printable ASCII free of quotes and backslashes; ok is false for any other
// input, which parseAck then reads with encoding/json.
func fastAck(b []byte) (a jetstream.PubAck, ok bool) {
	str := func(key string) (string, bool) {
		if !bytes.HasPrefix(b, []byte(key)) {
			return "", false
		}
		b = b[len(key):]
		end := bytes.IndexByte(b, '"')
		if end < 0 {
			return "", false
		}
		for _, c := range b[:end] {
			if c < 0x20 || c > 0x7e || c == '\\' {
				return "", false
			}
		}
		s := string(b[:end])
		b = b[end+1:]
		return s, true
	}
	if a.Stream, ok = str(`{"stream":"`); !ok || a.Stream == "" {
		return a, false
	}
	if bytes.HasPrefix(b, []byte(`,"domain":"`)) {
		if a.Domain, ok = str(`,"domain":"`); !ok {
			return a, false
		}
	}
	if !bytes.HasPrefix(b, []byte(`,"seq":`)) {
		return a, false
	}
	b = b[len(`,"seq":`):]
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 || n > 20 || (n > 1 && b[0] == '0') {
		return a, false
	}
	seq, err := strconv.ParseUint(string(b[:n]), 10, 64)
	if err != nil {
		return a, false
	}
	a.Sequence = seq
	switch rest := string(b[n:]); rest {
	case "}":
	case `,"duplicate": true}`, `,"duplicate":true}`:
		a.Duplicate = true
	default:
		return a, false
	}
	return a, true
}
