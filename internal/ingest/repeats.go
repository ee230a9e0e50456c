package ingest

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/nats-io/nats.go"
)

// Repeats of a request still being handled.
//
// A producer sends a request again when an attempt gets no reply in time
// (client: 2 s an attempt), with the same bytes. A request that takes
// longer than that to handle — a large one redacted on a loaded machine:
// a megabyte of secret-dense text costs redaction about a second of CPU —
// would then be handled once for every attempt, each one slowing the
// others, until none is answered in time at all. A repeat that arrives
// while the same request (same subject, headers that matter and bytes) is
// in flight is not handled again: it waits for the first, and gets the
// first one's reply on its own reply subject (an append's attempts each
// have one). A repeat asking for the decision (HeaderWaitDecision) joins
// only when it has the first one's reply subject, where the decision will
// be sent; otherwise it is handled as usual.

// maxJoiners bounds the replies remembered for one request in flight;
// repeats past it are dropped unanswered (the producer asks again).
const maxJoiners = 64

// repeats tracks the requests in flight that repeats may join.
type repeats struct {
	seed maphash.Seed
	mu   sync.Mutex
	// byKey holds the requests in flight by the hash of what makes two
	// requests the same; byMsg finds the entry of a first request.
	byKey map[uint64][]*inflight
	byMsg map[*nats.Msg]*inflight
}

// inflight is one request being handled and the repeats waiting for it.
type inflight struct {
	first   *nats.Msg
	key     uint64
	answer  []byte   // the reply sent to the first (nil: none yet)
	joiners []string // the repeats' reply subjects, to send answer to
}

func newRepeats() *repeats {
	return &repeats{seed: maphash.MakeSeed(), byKey: map[uint64][]*inflight{}, byMsg: map[*nats.Msg]*inflight{}}
}

// requestKey hashes what makes two requests the same request.
func (r *repeats) requestKey(m *nats.Msg) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(m.Subject)
	h.WriteByte(0)
	h.WriteString(header(m, HeaderContentType))
	h.WriteByte(0)
	if header(m, HeaderWaitDecision) != "" {
		h.WriteByte(1)
	}
	h.Write(m.Data)
	return h.Sum64()
}

func header(m *nats.Msg, k string) string {
	if m.Header == nil {
		return ""
	}
	return m.Header.Get(k)
}

// same reports whether a and b are the same request.
func same(a, b *nats.Msg) bool {
	return a.Subject == b.Subject && header(a, HeaderContentType) == header(b, HeaderContentType) &&
		(header(a, HeaderWaitDecision) != "") == (header(b, HeaderWaitDecision) != "") && bytes.Equal(a.Data, b.Data)
}

// join reports whether m is a repeat of a request in flight that it has
// joined (it gets that request's reply; do not handle it). Otherwise m is
// recorded as in flight (finish must follow) when it asks for a reply.
func (r *repeats) join(m *nats.Msg) bool {
	if m.Reply == "" {
		return false
	}
	key := r.requestKey(m)
	wait := header(m, HeaderWaitDecision) != ""
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.byKey[key] {
		if !same(f.first, m) {
			continue
		}
		switch {
		case m.Reply == f.first.Reply:
			return true // the first one's answers reach it
		case wait:
			continue // the decision goes to the first one's reply only
		case len(f.joiners) < maxJoiners:
			f.joiners = append(f.joiners, m.Reply)
		}
		return true
	}
	f := &inflight{first: m, key: key}
	r.byKey[key] = append(r.byKey[key], f)
	r.byMsg[m] = f
	return false
}

// answered records the reply b sent to m, when m is a first request.
func (r *repeats) answered(m *nats.Msg, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.byMsg[m]; f != nil && f.answer == nil {
		f.answer = b
	}
}

// finish ends m's flight: the repeats that joined it get its reply (none
// when it sent none: they ask again), and later repeats are handled anew.
func (r *repeats) finish(m *nats.Msg, publish func(subject string, b []byte)) {
	r.mu.Lock()
	f := r.byMsg[m]
	if f == nil {
		r.mu.Unlock()
		return
	}
	delete(r.byMsg, m)
	l := r.byKey[f.key]
	for i, g := range l {
		if g == f {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(r.byKey, f.key)
	} else {
		r.byKey[f.key] = l
	}
	r.mu.Unlock()
	if f.answer == nil {
		return
	}
	for _, to := range f.joiners {
		publish(to, f.answer)
	}
}
