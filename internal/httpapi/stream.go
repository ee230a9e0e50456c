package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
)

// The live stream (GET /v1/stream) is Server-Sent Events: on connect, one
// "pending" event per action waiting for a person (its data a pendingCard,
// as GET /v1/pending lists them: the whole command as stored; none with
// ?snapshot=none: the page pages the queue itself), then "ready"; then,
// live, what a person acts on: a "pending" event for each new
// gate.requested and a "decided" event for each decision of an action
// that waited for a person (decided by a person or by its timeout). The
// rest, decisions no person waited on (allowed by mode, by a rule, the
// allowlist, a session verdict, a sandbox), are coalesced: one
// "decided-summary" event a second at most, counting them ({"decided",
// "allow", "deny", "to_seq"}); ?decisions=all sends each one as "decided"
// too. A comment line every heartbeat keeps proxies from closing it.
//
// A client too slow to take the events does not lose its stream: the
// events it could not take are counted, and once it has read what was
// queued it gets "gap" ({"from_seq", "to_seq", "missed"}: the
// VIGIL_DERIVED records it missed) and the stream goes on; the client
// reloads the queue (GET /v1/pending or /ui/pending) to resume. Every
// event carries its VIGIL_DERIVED seq as the SSE id. A reconnecting client
// may see a pending action twice, and a decision for an action it never
// saw: the action id (with log_seq) identifies them.

// heartbeat is how often an idle stream sends a comment line.
const heartbeat = 15 * time.Second

// coalesceEvery is how often a stream sends its "decided-summary".
const coalesceEvery = time.Second

// subscriberBuffer is how many events a subscriber may fall behind
// before it is sent a gap.
const subscriberBuffer = 256

// maxWaiting bounds the actions the hub remembers as waiting (to tell
// their decisions from those no person waited on).
const maxWaiting = 1 << 20

type streamEvent struct {
	name         string
	conversation string
	data         []byte
	// seq is the VIGIL_DERIVED seq of the record the event comes from.
	seq uint64
	// waited is false for a decision no person waited on (coalesced).
	waited  bool
	outcome events.Outcome
}

// hub fans the gate's outputs out to the open streams.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	// waiting are the actions (id and log seq) requested and not yet
	// decided, as far as the hub knows.
	waiting map[waitKey]struct{}
	// seen is the log seq of the last gate output the hub received.
	seen atomic.Uint64
}

type waitKey struct {
	id  string
	seq uint64
}

type subscriber struct {
	ch chan streamEvent
	// all sends every decision as "decided" (?decisions=all).
	all bool
	// conv keeps one conversation ("" all).
	conv string
	// wake is signalled when a gap or a summary is due.
	wake chan struct{}

	mu sync.Mutex
	// gapFrom..gapTo (VIGIL_DERIVED seqs) are the events not queued
	// since the buffer filled, gapN how many; while gapN > 0 nothing more
	// is queued, so the gap is sent in its place in the order.
	gapFrom, gapTo uint64
	gapN           int
	// coalesced decisions not yet summarised.
	sumAllow, sumDeny int
	sumTo             uint64
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}, waiting: map[waitKey]struct{}{}} }

func (h *hub) subscribe(conv string, all bool) *subscriber {
	sub := &subscriber{ch: make(chan streamEvent, subscriberBuffer), wake: make(chan struct{}, 1), conv: conv, all: all}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub
}

func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
}

// seedWaiting remembers actions that wait already (from the read models).
func (h *hub) seedWaiting(keys []waitKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		if len(h.waiting) < maxWaiting {
			h.waiting[k] = struct{}{}
		}
	}
}

// requested and decided keep the waiting set; decided reports whether
// the action waited for a person.
func (h *hub) requested(k waitKey) {
	h.mu.Lock()
	if len(h.waiting) < maxWaiting {
		h.waiting[k] = struct{}{}
	}
	h.mu.Unlock()
}

func (h *hub) decided(k waitKey, by events.DecidedBy) bool {
	h.mu.Lock()
	_, ok := h.waiting[k]
	delete(h.waiting, k)
	h.mu.Unlock()
	return ok || by == events.ByHuman || by == events.ByTimeout
}

// publish never blocks: a subscriber whose buffer is full is owed a gap.
func (h *hub) publish(ev streamEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		sub.offer(ev)
	}
}

func (sub *subscriber) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// offer queues ev for the subscriber, coalesces it, or counts it in a gap.
func (sub *subscriber) offer(ev streamEvent) {
	if sub.conv != "" && ev.conversation != sub.conv {
		return
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if ev.name == "decided" && !ev.waited {
		if ev.outcome == events.OutcomeAllow {
			sub.sumAllow++
		} else {
			sub.sumDeny++
		}
		sub.sumTo = max(sub.sumTo, ev.seq)
		if !sub.all {
			return
		}
	}
	if sub.gapN == 0 {
		select {
		case sub.ch <- ev:
			return
		default:
		}
		sub.gapFrom = ev.seq
	}
	sub.gapN++
	sub.gapTo = max(sub.gapTo, ev.seq)
	sub.signal()
}

// takeGap returns the gap owed once everything queued before it was
// read (ok false otherwise), and clears it.
func (sub *subscriber) takeGap() (from, to uint64, n int, ok bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.gapN == 0 || len(sub.ch) > 0 {
		return 0, 0, 0, false
	}
	from, to, n = sub.gapFrom, sub.gapTo, sub.gapN
	sub.gapFrom, sub.gapTo, sub.gapN = 0, 0, 0
	return from, to, n, true
}

// takeSummary returns the coalesced decisions since the last summary.
func (sub *subscriber) takeSummary() (allow, deny int, to uint64) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	allow, deny, to = sub.sumAllow, sub.sumDeny, sub.sumTo
	sub.sumAllow, sub.sumDeny = 0, 0
	return allow, deny, to
}

// decidedView is the data of a "decided" event.
type decidedView struct {
	Conversation string `json:"conversation"`
	events.GateDecided
	// Waited is false for a decision no person waited on.
	Waited bool `json:"waited"`
}

// followGate feeds the hub and the decision latency metric from the
// gate's outputs stored after New.
func (s *Server) followGate(ctx context.Context) error {
	return s.followStream(ctx, &s.gateFrom, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.GatePrefix + ">"}, DeliverPolicy: jetstream.DeliverNewPolicy,
	}, events.StreamDerived, func(m jetstream.Msg, meta *jetstream.MsgMetadata) {
		d, err := events.DecodeDerived(m.Data())
		if err != nil {
			return
		}
		// Before publishing: a stream that subscribes after this event
		// passed waits for the read models to hold it (awaitReads).
		s.hub.seen.Store(max(s.hub.seen.Load(), d.Seq))
		seq := meta.Sequence.Stream
		switch d.Kind {
		case events.KindGateRequested:
			req, err := events.DerivedDataAs[events.GateRequested](&d)
			if err != nil {
				return
			}
			s.hub.requested(waitKey{req.ActionID, req.LogSeq})
			if b, err := json.Marshal(s.cardOf(ctx, client.PendingFromRequest(d.Conversation, d.Time, req))); err == nil {
				s.hub.publish(streamEvent{name: "pending", conversation: d.Conversation, data: b, seq: seq, waited: true})
			}
		case events.KindGateDecided:
			gd, err := events.DerivedDataAs[events.GateDecided](&d)
			if err != nil {
				return
			}
			waited := s.hub.decided(waitKey{gd.ActionID, gd.LogSeq}, gd.By)
			if b, err := json.Marshal(decidedView{Conversation: d.Conversation, GateDecided: gd, Waited: waited}); err == nil {
				s.hub.publish(streamEvent{name: "decided", conversation: d.Conversation, data: b, seq: seq, waited: waited, outcome: gd.Outcome})
			}
			s.metrics.decided(ctx, gd, meta.Timestamp)
		}
	})
}

// followLog records when each log record stored after New was stored
// (headers only), for the decision latency metric.
func (s *Server) followLog(ctx context.Context) error {
	return s.followStream(ctx, &s.logFrom, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverNewPolicy, HeadersOnly: true,
	}, events.StreamLog, func(_ jetstream.Msg, meta *jetstream.MsgMetadata) {
		s.metrics.logged(meta.Sequence.Stream, meta.Timestamp)
	})
}

// followDLQ counts the ingest service's refusals by reason, from the
// first dead letter VIGIL_DLQ holds.
func (s *Server) followDLQ(ctx context.Context) error {
	return s.followStream(ctx, &s.dlqFrom, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}, events.StreamDLQ, func(m jetstream.Msg, _ *jetstream.MsgMetadata) {
		d, err := events.DecodeDerived(m.Data())
		if err != nil {
			return
		}
		dl, err := events.DerivedDataAs[events.DeadLetter](&d)
		if err != nil {
			return
		}
		s.metrics.ingestRefused(refusalClass(dl.Reason))
	})
}

// followStream calls fn for each message of an ordered consumer until ctx
// ends. *from is the next stream sequence to read: a restart resumes
// there, so nothing is counted twice or skipped.
func (s *Server) followStream(ctx context.Context, from *uint64, cfg jetstream.OrderedConsumerConfig, stream string, fn func(jetstream.Msg, *jetstream.MsgMetadata)) error {
	st, err := s.cfg.JetStream.Stream(ctx, stream)
	if err != nil {
		return err
	}
	if *from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, *from
	}
	cons, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		meta, err := m.Metadata()
		if err != nil {
			continue
		}
		*from = meta.Sequence.Stream + 1
		fn(m, meta)
	}
}

// stream serves the live stream of pending actions and decisions
// (?conversation= keeps one conversation; ?snapshot=none sends no
// snapshot, only "ready" with the count; ?decisions=all every decision).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	q := r.URL.Query()
	conv := q.Get("conversation")
	if conv != "" && !validConversation(conv) {
		return badRequest("conversation", "%q is not a conversation id (1-128 letters, digits, - _ : @)", conv)
	}
	snapshot := true
	switch v := q.Get("snapshot"); v {
	case "", "all":
	case "none":
		snapshot = false
	default:
		return badRequest("snapshot", "want all or none, got %q", clip(v, 64))
	}
	all := false
	switch v := q.Get("decisions"); v {
	case "", "waited":
	case "all":
		all = true
	default:
		return badRequest("decisions", "want waited or all, got %q", clip(v, 64))
	}
	if s.cfg.JetStream == nil {
		return unavailable("this node serves no live stream")
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		return &apiError{Status: http.StatusServiceUnavailable, reason: "busy",
			Message: fmt.Sprintf("%d live streams are open, the limit; retry later", cap(s.streams))}
	}
	// Subscribe before reading the queue, so nothing falls between them
	// (pendingList waits for the read models to hold what the hub saw).
	sub := s.hub.subscribe(conv, all)
	defer s.hub.unsubscribe(sub)
	queue, e := s.pendingList(r, who, conv)
	if e != nil {
		return e
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(name string, seq uint64, data []byte) error {
		rc.SetWriteDeadline(time.Now().Add(s.cfg.Limits.WriteTimeout))
		var err error
		switch {
		case name == "":
			_, err = w.Write([]byte(": keep-alive\n\n"))
		case seq > 0:
			_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", seq, name, data)
		default:
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		}
		if err != nil {
			return err
		}
		return rc.Flush()
	}
	if snapshot {
		for _, p := range queue {
			b, err := json.Marshal(s.cardOf(r.Context(), p))
			if err != nil {
				continue
			}
			if send("pending", 0, b) != nil {
				return nil
			}
		}
	}
	if send("ready", 0, []byte(fmt.Sprintf(`{"pending":%d}`, len(queue)))) != nil {
		return nil
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	sum := time.NewTicker(coalesceEvery)
	defer sum.Stop()
	sendGap := func() error {
		if from, to, n, ok := sub.takeGap(); ok {
			return send("gap", to, []byte(fmt.Sprintf(`{"from_seq":%d,"to_seq":%d,"missed":%d,"reload":"this stream could not take %d events; reload the queue (GET /v1/pending) and go on reading"}`, from, to, n, n)))
		}
		return nil
	}
	for {
		select {
		case <-r.Context().Done():
			return nil
		case ev := <-sub.ch:
			if send(ev.name, ev.seq, ev.data) != nil || sendGap() != nil {
				return nil
			}
		case <-sub.wake:
			if sendGap() != nil {
				return nil
			}
		case <-sum.C:
			if allow, deny, to := sub.takeSummary(); allow+deny > 0 {
				if send("decided-summary", 0, []byte(fmt.Sprintf(`{"decided":%d,"allow":%d,"deny":%d,"to_seq":%d}`, allow+deny, allow, deny, to))) != nil {
					return nil
				}
			}
			if sendGap() != nil {
				return nil
			}
		case <-tick.C:
			if send("", 0, nil) != nil {
				return nil
			}
		}
	}
}
