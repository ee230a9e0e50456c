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
// "pending" event per action waiting for a person, then "ready"; then,
// live, a "pending" event for each new gate.requested and a "decided"
// event for each gate.decided, as the driver stores them in VIGIL_DERIVED.
// A comment line every heartbeat keeps proxies from closing it. A client
// too slow to take the events gets "overflow" and the stream ends: it
// reconnects and gets the queue again. A reconnecting client may see a
// pending action twice, and a decision for an action it never saw: the
// action id (with log_seq) identifies them.

// heartbeat is how often an idle stream sends a comment line.
const heartbeat = 15 * time.Second

// subscriberBuffer is how many events a subscriber may fall behind.
const subscriberBuffer = 256

type streamEvent struct {
	name         string
	conversation string
	data         []byte
}

// hub fans the gate's outputs out to the open streams.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	// seen is the log seq of the last gate output the hub received.
	seen atomic.Uint64
}

type subscriber struct {
	ch chan streamEvent
	// overflow is closed when the subscriber fell too far behind.
	overflow chan struct{}
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe() *subscriber {
	sub := &subscriber{ch: make(chan streamEvent, subscriberBuffer), overflow: make(chan struct{})}
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

// publish never blocks: a subscriber whose buffer is full is dropped.
func (h *hub) publish(ev streamEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		select {
		case sub.ch <- ev:
		default:
			close(sub.overflow)
			delete(h.subs, sub)
		}
	}
}

// decidedView is the data of a "decided" event.
type decidedView struct {
	Conversation string `json:"conversation"`
	events.GateDecided
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
		switch d.Kind {
		case events.KindGateRequested:
			req, err := events.DerivedDataAs[events.GateRequested](&d)
			if err != nil {
				return
			}
			if b, err := json.Marshal(client.PendingFromRequest(d.Conversation, d.Time, req)); err == nil {
				s.hub.publish(streamEvent{name: "pending", conversation: d.Conversation, data: b})
			}
		case events.KindGateDecided:
			gd, err := events.DerivedDataAs[events.GateDecided](&d)
			if err != nil {
				return
			}
			if b, err := json.Marshal(decidedView{Conversation: d.Conversation, GateDecided: gd}); err == nil {
				s.hub.publish(streamEvent{name: "decided", conversation: d.Conversation, data: b})
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
// (?conversation= keeps one conversation).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, who principal) *apiError {
	conv := r.URL.Query().Get("conversation")
	if conv != "" && !validConversation(conv) {
		return badRequest("conversation", "%q is not a conversation id (1-128 letters, digits, - _ : @)", conv)
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
	sub := s.hub.subscribe()
	defer s.hub.unsubscribe(sub)
	snapshot, e := s.pendingList(r, who, conv)
	if e != nil {
		return e
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(name string, data []byte) error {
		rc.SetWriteDeadline(time.Now().Add(s.cfg.Limits.WriteTimeout))
		var err error
		if name == "" {
			_, err = w.Write([]byte(": keep-alive\n\n"))
		} else {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		}
		if err != nil {
			return err
		}
		return rc.Flush()
	}
	for _, p := range snapshot {
		b, err := json.Marshal(p)
		if err != nil {
			continue
		}
		if send("pending", b) != nil {
			return nil
		}
	}
	if send("ready", []byte(fmt.Sprintf(`{"pending":%d}`, len(snapshot)))) != nil {
		return nil
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-sub.overflow:
			send("overflow", []byte(`{"error":"this stream fell too far behind; reconnect to get the queue again"}`))
			return nil
		case ev := <-sub.ch:
			if conv != "" && ev.conversation != conv {
				continue
			}
			if send(ev.name, ev.data) != nil {
				return nil
			}
		case <-tick.C:
			if send("", nil) != nil {
				return nil
			}
		}
	}
}
