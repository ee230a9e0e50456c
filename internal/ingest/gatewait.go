package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors"
)

// HeaderWaitDecision, on a request holding one action, asks the service
// to answer with the gate's decision too (transport.HeaderWaitDecision:
// the wire protocol is public, the client sends it).
const HeaderWaitDecision = transport.HeaderWaitDecision

// MaxDecisionWait bounds one wait for a decision (transport.MaxDecisionWait).
const MaxDecisionWait = transport.MaxDecisionWait

// maxWaits bounds the waits for decisions held at once.
const maxWaits = 10000

// recentDecisions is how many gate outputs the watcher remembers, so a
// decision published before its waiter registered is still found.
const recentDecisions = 1 << 15

// freshDecisions is how many actions' outputs the watcher also keeps
// decoded (decisionWatcher.fresh).
const freshDecisions = 256

// WaitReply is a message after the stored reply of a request that asked
// for its decision (transport.WaitReply).
type WaitReply = transport.WaitReply

// decisionWatcher follows the gate subjects and hands each action's gate
// outputs to whoever waits for them, by the action's log sequence (never
// by the producer-chosen id: the log position is what was decided).
type decisionWatcher struct {
	js    jsReader
	mu    sync.Mutex
	waits map[uint64][]chan WaitReply
	// recent gate outputs by action log seq, oldest evicted first, kept
	// encoded: a body holds no pointer, so the collector, which marks the
	// watcher's memory at every cycle, does not walk 32,768 decoded maps.
	// A wait decodes the few of its own action.
	recent map[uint64][][]byte
	// ids are the ids of the outputs in recent: the second arrival of an
	// output is dropped without decoding it.
	ids  map[string]struct{}
	ring []uint64
	next int
	// fresh holds the replies decoded from the outputs of the last
	// freshDecisions actions added (by seq, in the order of recent): a
	// wait registered just after its decision was folded (the append's
	// reply racing the fold, most of the time) takes them without
	// decoding again. Replies are shared by the waits: read only.
	fresh     map[uint64][]WaitReply
	freshRing []uint64
	freshNext int
	active    int
	sub       *nats.Subscription
	// interest counts the requests that asked for their decision and have
	// not had it yet (from before their action is stored until their wait
	// ends). While it is zero nobody can need a gate output remembered, so
	// add and Folded return at once: decoding every decision of the
	// pipeline for waits nobody holds cost about a tenth of the ingest
	// path's CPU. A retry, whose decision may be older, reads the stream.
	interest atomic.Int64
}

// jsReader reads the derived stream for decisions older than the watcher.
type jsReader func(ctx context.Context, conv string, seq uint64, fn func(events.Derived) bool) error

func newDecisionWatcher(nc *nats.Conn, read jsReader) (*decisionWatcher, error) {
	w := &decisionWatcher{js: read, waits: map[uint64][]chan WaitReply{},
		recent: map[uint64][][]byte{}, ids: map[string]struct{}{}, ring: make([]uint64, recentDecisions)}
	sub, err := nc.Subscribe(events.GatePrefix+"*", w.onMsg)
	if err != nil {
		return nil, err
	}
	if err := sub.SetPendingLimits(-1, 256<<20); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	w.sub = sub
	return w, nil
}

func (w *decisionWatcher) onMsg(m *nats.Msg) { w.add(m.Data) }

// add hands one gate output, encoded as VIGIL_DERIVED stores it, to the
// waits for its action. The same output may come twice (from the node's
// own driver, then as published): the second is dropped.
func (w *decisionWatcher) add(body []byte) {
	if w.interest.Load() == 0 {
		return
	}
	if id, ok := events.DerivedID(body); ok {
		w.mu.Lock()
		_, seen := w.ids[string(id)]
		w.mu.Unlock()
		if seen {
			return
		}
	}
	id, r, ok := decodeGateOut(body)
	if !ok {
		return
	}
	seq := logSeq(&r)
	if seq == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.ids[id]; seen {
		return
	}
	if _, ok := w.recent[seq]; !ok {
		if old := w.ring[w.next]; old != 0 {
			for _, o := range w.recent[old] {
				if id, ok := events.DerivedID(o); ok {
					delete(w.ids, string(id))
				} else if id, _, ok := decodeGateOut(o); ok {
					delete(w.ids, id)
				}
			}
			delete(w.recent, old)
			delete(w.fresh, old) // so fresh[seq] is always a tail of recent[seq]
		}
		w.ring[w.next] = seq
		w.next = (w.next + 1) % len(w.ring)
	}
	w.recent[seq] = append(w.recent[seq], body)
	w.ids[id] = struct{}{} // decoded into its own string, not into the body
	w.keepFresh(seq, r)
	for _, ch := range w.waits[seq] {
		select {
		case ch <- r:
		default:
		}
	}
}

// keepFresh adds r, just added to recent for the action at seq, to
// fresh, forgetting the oldest action's replies when seq is new there.
// Called with w.mu held.
func (w *decisionWatcher) keepFresh(seq uint64, r WaitReply) {
	if w.fresh == nil {
		w.fresh = map[uint64][]WaitReply{}
		w.freshRing = make([]uint64, freshDecisions)
	}
	if _, ok := w.fresh[seq]; !ok {
		if old := w.freshRing[w.freshNext]; old != 0 {
			delete(w.fresh, old)
		}
		w.freshRing[w.freshNext] = seq
		w.freshNext = (w.freshNext + 1) % len(w.freshRing)
	}
	w.fresh[seq] = append(w.fresh[seq], r)
}

// gateEnvelope is the part of a stored gate output decodeGateOut reads
// first: its data is decoded by kind, straight into the typed view.
type gateEnvelope struct {
	ID   string             `msgpack:"id"`
	Kind events.Kind        `msgpack:"kind"`
	Data msgpack.RawMessage `msgpack:"data"`
}

// decodeGateOut reads a gate output encoded as VIGIL_DERIVED stores it
// (a canonical msgpack map) as the reply a wait sends: a gate.requested
// or a gate.decided, its data decoded into the typed view with the same
// field rules as events.DerivedDataAs, without building the generic maps
// of events.DecodeDerived first. ok is false for any other kind, or a
// body or data that does not decode.
func decodeGateOut(body []byte) (id string, r WaitReply, ok bool) {
	if id, r, ok := fastGateOut(body); ok {
		return id, r, true
	}
	return reflectGateOut(body)
}

// reflectGateOut is decodeGateOut by the msgpack package, for any body.
func reflectGateOut(body []byte) (id string, r WaitReply, ok bool) {
	var env gateEnvelope
	if err := msgpack.Unmarshal(body, &env); err != nil || env.ID == "" {
		return "", r, false
	}
	switch env.Kind {
	case events.KindGateDecided:
		var gd events.GateDecided
		if err := unmarshalData(env.Data, &gd); err != nil {
			return "", r, false
		}
		r.Decided = &gd
	case events.KindGateRequested:
		var gr events.GateRequested
		if err := unmarshalData(env.Data, &gr); err != nil {
			return "", r, false
		}
		r.Requested = &gr
	default:
		return "", r, false
	}
	return env.ID, r, true
}

// unmarshalData decodes a derived event's data into v as decodeInto in
// package events does (loose interface decoding); a panic of the
// decoder on malformed input is an error.
func unmarshalData(b []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("malformed value")
		}
	}()
	if len(b) == 0 {
		return errors.New("no data")
	}
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	return dec.Decode(v)
}

// waitReplyOf is decodeGateOut for a decoded gate output (one read back
// from the stream by a retry's jsReader).
func waitReplyOf(d *events.Derived) (WaitReply, bool) {
	var r WaitReply
	switch d.Kind {
	case events.KindGateDecided:
		gd, err := events.DerivedDataAs[events.GateDecided](d)
		if err != nil {
			return r, false
		}
		r.Decided = &gd
	case events.KindGateRequested:
		gr, err := events.DerivedDataAs[events.GateRequested](d)
		if err != nil {
			return r, false
		}
		r.Requested = &gr
	default:
		return r, false
	}
	return r, true
}

// Folded hands the gate outputs of the log record at seq, just folded by
// this node's driver and not yet stored (driver.Config.OnFold), to the
// agents waiting for them. A decision is a pure function of the log
// prefix up to the action, which is stored before the driver is given
// it: the same decision is stored after it, by this node or any other,
// or derived again after a crash (docs/durability.md, "Deciding before
// the decision is stored"). Each output is encoded and decoded as the
// stream stores it, so the agent reads exactly what is stored. Outputs on
// other subjects are ignored; it never blocks on the network.
func (s *Service) Folded(seq uint64, outs []processors.Output) {
	w := s.decisions
	if w == nil || w.interest.Load() == 0 {
		return
	}
	for i := range outs {
		if !strings.HasPrefix(outs[i].Subject, events.GatePrefix) {
			continue
		}
		body, err := outs[i].Event.Marshal()
		if err != nil {
			continue // the driver stores an alert in its place; the wait times out
		}
		w.add(body)
	}
}

// logSeq is the log seq of the action a gate output is about (0 for
// none).
func logSeq(r *WaitReply) uint64 {
	switch {
	case r.Decided != nil:
		return r.Decided.LogSeq
	case r.Requested != nil:
		return r.Requested.LogSeq
	}
	return 0
}

// errTooManyWaits: the service holds maxWaits waits already.
var errTooManyWaits = errors.New("too many actions are waiting for decisions on this node; wait and ask again")

// wait registers a wait for the action at seq and returns its channel,
// primed with what is already known.
func (w *decisionWatcher) wait(seq uint64) (chan WaitReply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active >= maxWaits {
		return nil, errTooManyWaits
	}
	w.active++
	ch := make(chan WaitReply, 8)
	prime := func(r WaitReply) {
		select {
		case ch <- r:
		default:
		}
	}
	if rs, bodies := w.fresh[seq], w.recent[seq]; len(rs) == len(bodies) {
		// What recent holds for seq, decoded by add: fresh[seq] is a
		// tail of recent[seq], all of it when the counts agree.
		for _, r := range rs {
			prime(r)
		}
	} else {
		for _, b := range bodies {
			if _, r, ok := decodeGateOut(b); ok { // decoded once by add already
				prime(r)
			}
		}
	}
	w.waits[seq] = append(w.waits[seq], ch)
	return ch, nil
}

func (w *decisionWatcher) done(seq uint64, ch chan WaitReply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active--
	ws := w.waits[seq]
	for i := range ws {
		if ws[i] == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(w.waits, seq)
	} else {
		w.waits[seq] = ws
	}
}

func (w *decisionWatcher) stop() {
	if w.sub != nil {
		w.sub.Unsubscribe()
	}
}

// parseWait reads HeaderWaitDecision; ok is false when absent.
func parseWait(m *nats.Msg) (time.Duration, bool, error) {
	if m.Header == nil {
		return 0, false, nil
	}
	v := m.Header.Get(HeaderWaitDecision)
	if v == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		if ms, err2 := strconv.Atoi(v); err2 == nil {
			d, err = time.Duration(ms)*time.Millisecond, nil
		}
	}
	if err != nil || d <= 0 {
		return 0, true, errors.New("header " + HeaderWaitDecision + ": give a positive duration such as 50s")
	}
	return min(d, MaxDecisionWait), true, nil
}

// awaitDecision sends the gate's request and decision on the action
// stored at seq to the request's reply inbox, waiting at most d. It runs
// outside the worker pool: a long wait holds no worker.
func (s *Service) awaitDecision(m *nats.Msg, ev *events.Event, seq uint64, duplicate bool, d time.Duration) {
	defer s.decisions.interest.Add(-1) // taken by handle before the action was stored
	send := func(r WaitReply) {
		b, err := json.Marshal(r)
		if err == nil {
			err = m.Respond(b)
		}
		if err != nil {
			s.cfg.Logger.Warn("ingest: decision not sent", "err", err)
		}
	}
	ch, err := s.decisions.wait(seq)
	if err != nil {
		send(WaitReply{WaitError: err.Error()})
		return
	}
	defer s.decisions.done(seq, ch)
	ctx, cancel := context.WithTimeout(s.waitCtx, d)
	defer cancel()
	if duplicate {
		// A retry: the decision may be older than the watcher's memory.
		go s.decisions.js(ctx, ev.Conversation, seq, func(d events.Derived) bool {
			if r, ok := waitReplyOf(&d); ok {
				select {
				case ch <- r:
				default:
				}
			}
			return d.Kind == events.KindGateDecided
		})
	}
	requested := false
	for {
		select {
		case r := <-ch:
			switch {
			case r.Requested != nil:
				if requested || r.Requested.LogSeq != seq {
					continue
				}
				requested = true
				send(r)
			case r.Decided != nil:
				if r.Decided.LogSeq != seq {
					continue
				}
				send(r)
				return
			}
		case <-ctx.Done():
			send(WaitReply{WaitError: "no decision within " + d.String() + " (denied: fail closed)"})
			return
		}
	}
}

// readDecisions is the jsReader of a service: it reads the conversation's
// gate subject in VIGIL_DERIVED for outputs about the action at seq.
func readDecisions(js jetstream.JetStream) jsReader {
	return func(ctx context.Context, conv string, seq uint64, fn func(events.Derived) bool) error {
		errFound := errors.New("found")
		err := natsutil.ReadStream(ctx, js, natsutil.ReadOptions{
			Stream: events.StreamDerived, Subjects: []string{events.GateSubject(conv)},
		}, func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return nil
			}
			if wr, ok := waitReplyOf(&d); !ok || logSeq(&wr) != seq {
				return nil
			}
			if fn(d) {
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			return nil
		}
		return err
	}
}
