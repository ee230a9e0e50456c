package driver

// # Outputs already stored are not published again
//
// Outputs carry their id as Nats-Msg-Id, but JetStream remembers ids only
// for VIGIL_DERIVED's duplicate window (natsutil.DerivedDedupWindow, 1
// minute). A node that comes back after a longer outage (or whose driver
// was stuck as long) resumes from its own old checkpoint, and republishing
// what it folds would store every output since then a second time: two
// gate.decided for one action, and audit verify and replay reporting
// tampering.
//
// So before publishing again the driver reads what VIGIL_DERIVED already
// holds at its frontier: upTo, the highest log seq with a stored output of
// this driver's processors (ids "<processor>:<log seq>[:n]", or
// "driver:refused:<processor>:…", whose Derived.Seq is that log seq), and
// the ids stored for the log seqs within derivedMargin below it. Every node
// stores its outputs in log order, each batch fully before the next
// (natsutil.Publisher.PublishAll), and every node runs the same processors,
// so an output for a log seq below upTo-derivedMargin is stored; one nearer
// upTo is stored when its id is. Those are folded (and handed to the Sink)
// without being published; the rest is published as before. This holds
// whatever the outage length: no time window is involved.
//
// The read happens each time the driver goes live (after warm-up, after its
// consumer is re-created), before it publishes anything once the last read
// is a quarter of the duplicate window old, and after a publish that was not
// acknowledged in time. Publishing ends at the latest half the window after
// the read began (Driver.store): an output stored by anyone since the read
// began is then republished within the window and answered as a duplicate,
// and one stored before it is known to be stored. A driver that lags the
// others by more than the window skips what they stored; no retry, however
// slow the stream, republishes an output stored longer than the window ago.
//
// Outputs stored before VIGIL_LOG was created belong to another log (one
// deleted and recreated, see server.Config.AcceptNewLog) and are ignored.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// derivedMargin is how many log seqs below the frontier are checked id by
// id rather than taken as stored. Storage is in log order, so one log seq
// (the frontier's own outputs, stored in part when a node died mid-batch)
// would do; the margin covers any node publishing a batch out of order.
const derivedMargin = 1024

// maxDerivedTail bounds the messages read back from VIGIL_DERIVED's end.
const maxDerivedTail = 1 << 18

// derivedState is what VIGIL_DERIVED held at the driver's last read.
type derivedState struct {
	// read is false when VIGIL_DERIVED must be read before the next publish;
	// live is true when that read is the driver's first since it went live.
	read, live bool
	// at is when the last read began; every is a quarter of VIGIL_DERIVED's
	// duplicate window.
	at    time.Time
	every time.Duration
	// upTo is the highest log seq with a stored output of these processors;
	// outputs of log seqs below below are stored; ids are those stored for
	// log seqs from below to upTo.
	upTo, below uint64
	ids         map[string]struct{}
	// logCreated is when VIGIL_LOG was created (read once).
	logCreated time.Time
}

// derivedRequestTimeout bounds each request of a read of VIGIL_DERIVED.
const derivedRequestTimeout = 2 * time.Second

// derivedStale makes the driver read VIGIL_DERIVED again before it next
// publishes: it is going live, or its consumer was re-created.
func (d *Driver) derivedStale() { d.derived.read, d.derived.live = false, true }

// fresh reports whether the last read may still be relied on to publish.
func (st *derivedState) fresh() bool {
	return st.read && time.Since(st.at) < st.every
}

// publishBy is when publishing on the last read must end: half the
// duplicate window after the read began.
func (st *derivedState) publishBy() time.Time { return st.at.Add(2 * st.every) }

// storedAlready reports whether output o is already in VIGIL_DERIVED (as
// of the last read), so that publishing it again could double it.
func (d *Driver) storedAlready(o *processors.Output) bool {
	s, st := o.Event.Seq, &d.derived
	if !st.read || s == 0 || s > st.upTo {
		return false
	}
	if s < st.below {
		return true
	}
	_, ok := st.ids[o.Event.ID]
	if !ok {
		// Refused by the stream, it was replaced by an alert (refusedAlert).
		_, ok = st.ids["driver:refused:"+o.Event.ID]
	}
	return ok
}

// checkDerived reads VIGIL_DERIVED's frontier when the last read is stale
// (see derivedStale and fresh). It retries until the read succeeds:
// publishing blind could double outputs, and a stream that cannot be read
// cannot be written to either.
func (d *Driver) checkDerived(ctx context.Context, applied []Applied) error {
	st := &d.derived
	if len(applied) == 0 || st.read {
		return nil
	}
	goingLive := st.live
	backoff := 100 * time.Millisecond
	for {
		err := d.readDerived(ctx)
		if err == nil {
			break
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, nats.ErrConnectionClosed):
			return &fatalError{err}
		}
		d.log().Warn("driver: cannot read what VIGIL_DERIVED holds; retrying before publishing", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	if first := applied[0].Record.Seq; goingLive && first <= st.upTo {
		d.log().Info("driver: outputs already in VIGIL_DERIVED are folded, not published again",
			"from", first, "up_to", st.upTo, "checked_by_id_from", st.below)
	}
	return nil
}

// outputPrefixes are the id prefixes of the outputs this driver publishes.
func (d *Driver) outputPrefixes() []string {
	names := []string{d.cfg.Processor.Name()}
	if p, ok := d.cfg.Processor.(*processors.Pipeline); ok {
		names = names[:0]
		for _, q := range p.Processors() {
			names = append(names, q.Name())
		}
	}
	var out []string
	for _, n := range names {
		out = append(out, n+":", "driver:refused:"+n+":")
	}
	return out
}

// derivedHead is the part of a derived event the read needs.
type derivedHead struct {
	ID  string `msgpack:"id"`
	Seq uint64 `msgpack:"seq"`
}

// readDerived reads VIGIL_DERIVED back from its end until it has every
// output of these processors for the log seqs within derivedMargin of the
// highest one, and stores the result in d.derived.
func (d *Driver) readDerived(ctx context.Context) error {
	// Each request has a short bound of its own: one sent while a leader
	// is being elected gets no answer, and checkDerived asks again.
	began := time.Now()
	rctx, cancel := context.WithTimeout(ctx, derivedRequestTimeout)
	defer cancel()
	if d.derived.logCreated.IsZero() {
		ls, err := d.cfg.JS.Stream(rctx, events.StreamLog)
		if err != nil {
			return fmt.Errorf("driver: %s: %w", events.StreamLog, err)
		}
		d.derived.logCreated = ls.CachedInfo().Created
	}
	logCreated := d.derived.logCreated
	ds, err := d.cfg.JS.Stream(rctx, events.StreamDerived)
	if err != nil {
		return fmt.Errorf("driver: %s: %w", events.StreamDerived, err)
	}
	di := ds.CachedInfo()
	prefixes := d.outputPrefixes()
	ours := func(id string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(id, p) {
				return true
			}
		}
		return false
	}
	type entry struct {
		id  string
		seq uint64
	}
	var (
		found  []entry
		upTo   uint64
		lowest uint64 // lowest log seq of ours read
		total  int
	)
	first, last := di.State.FirstSeq, di.State.LastSeq
	if di.State.Msgs > 0 && first > 0 {
		chunk := uint64(256)
		end := last
		for {
			start := first
			if end-first+1 > chunk {
				start = end - chunk + 1
			}
			older := false
			err := readRange(ctx, ds, start, end, func(ts time.Time, data []byte) {
				total++
				if !logCreated.IsZero() && ts.Before(logCreated) {
					older = true // stored for another log
					return
				}
				var h derivedHead
				if msgpack.Unmarshal(data, &h) != nil || h.Seq == 0 || !ours(h.ID) {
					return
				}
				found = append(found, entry{h.ID, h.Seq})
				upTo = max(upTo, h.Seq)
				if lowest == 0 || h.Seq < lowest {
					lowest = h.Seq
				}
			})
			if err != nil {
				return err
			}
			reached := upTo > 0 && lowest+derivedMargin < upTo
			if reached || older || start == first || total >= maxDerivedTail {
				break
			}
			end = start - 1
			chunk = min(2*chunk, 8192)
		}
	}
	below := uint64(0)
	if upTo > derivedMargin {
		below = upTo - derivedMargin
	}
	if total >= maxDerivedTail && lowest > below {
		below = lowest // the read stopped short: what it did not reach is taken as stored
	}
	ids := make(map[string]struct{})
	for _, e := range found {
		if e.seq >= below {
			ids[e.id] = struct{}{}
		}
	}
	every := di.Config.Duplicates / 4
	if every < 100*time.Millisecond {
		every = 100 * time.Millisecond
	}
	d.derived = derivedState{read: true, at: began, every: every, upTo: upTo, below: below, ids: ids, logCreated: logCreated}
	return nil
}

// readRange calls fn for the messages of st from stream seq from to to.
func readRange(ctx context.Context, st jetstream.Stream, from, to uint64, fn func(ts time.Time, data []byte)) error {
	cctx, cancel := context.WithTimeout(ctx, derivedRequestTimeout)
	defer cancel()
	cons, err := st.OrderedConsumer(cctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   from,
		// Gone soon after the read: a read per restart or retry must not
		// pile up toward the stream's consumer limit.
		InactiveThreshold: transport.ReaderInactive,
	})
	if err != nil {
		return fmt.Errorf("driver: read %s: %w", events.StreamDerived, err)
	}
	for {
		want := min(to-from+1, 1024)
		batch, err := cons.Fetch(int(want), jetstream.FetchMaxWait(derivedRequestTimeout))
		if err != nil {
			return fmt.Errorf("driver: read %s: %w", events.StreamDerived, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("driver: read %s: metadata: %w", events.StreamDerived, err)
			}
			seq := meta.Sequence.Stream
			if seq > to {
				return nil
			}
			fn(meta.Timestamp, m.Data())
			if seq == to {
				return nil
			}
			if meta.NumPending == 0 {
				// The consumer has nothing more, yet the range goes on: it
				// may read a replica that is behind the leader (a node just
				// restarted), and what it has not seen would be published
				// again. Short unless the range's end is gone.
				gctx, gcancel := context.WithTimeout(ctx, derivedRequestTimeout)
				_, err := st.GetMsg(gctx, to)
				gcancel()
				if errors.Is(err, jetstream.ErrMsgNotFound) {
					return nil
				}
				if err != nil {
					return fmt.Errorf("driver: read %s: %d..%d ends at %d: %w", events.StreamDerived, from, to, seq, err)
				}
				return fmt.Errorf("driver: read %s: %d..%d delivered only up to %d (a replica behind the leader?)", events.StreamDerived, from, to, seq)
			}
			from = seq + 1
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("driver: read %s: %w", events.StreamDerived, err)
		}
		if n == 0 {
			// Nothing delivered: the range's end was removed, or the
			// stream's leader did not answer (an election). Only the first
			// ends the read.
			ictx, icancel := context.WithTimeout(ctx, derivedRequestTimeout)
			info, err := st.Info(ictx)
			icancel()
			if err != nil {
				return fmt.Errorf("driver: read %s from %d: nothing delivered: %w", events.StreamDerived, from, err)
			}
			if info.State.LastSeq >= from && info.State.Msgs > 0 {
				return fmt.Errorf("driver: read %s from %d: nothing delivered (last seq %d)", events.StreamDerived, from, info.State.LastSeq)
			}
			return nil
		}
	}
}
