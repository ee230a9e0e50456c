package ingest

// # The id index: a long duplicate window on disk, a short one in JetStream
//
// A producer that got no reply retries with the same event id, and the id
// must be stored once. JetStream recognises a reused Nats-Msg-Id only
// within VIGIL_LOG's duplicate window, and holds every id of that window
// in memory (about 120 bytes of heap each, and rebuilt by reading every
// message of the window at each start). The index keeps the
// long, logical window (Config.DedupWindow, `vigil serve --dedup-window`)
// on disk instead, so JetStream's own window can be short
// (natsutil.DefaultLogStreamWindow).
//
// The index is fed from VIGIL_LOG itself, by an ordered consumer (headers
// only) from the index's own frontier, so it knows every id appended
// through any node of a fleet. Each Pebble batch holds the entries and the
// frontier they reach, so the index is always the log's prefix 1..frontier.
// At start it reads what the log grew by since its frontier (the whole log
// once, on the first start of a node that has none) before the service
// answers anything.
//
// The lag argument. An id stored at time t is recognised by JetStream
// until t+W (W: VIGIL_LOG's duplicate window, read from the stream's
// configuration) and by the index once it has read that record. The index
// "covers" time C when every record appended before C is in it: C is the
// timestamp of the newest record it committed (records before it have
// lower sequences, and the frontier is contiguous), or the time a stream
// info taken when the index was at the log's end was asked. A request
// looked up in the index at any time is then safe if its publish reaches
// JetStream before C+W: every record older than C is in the index, every
// younger one still in JetStream's table. So the publish is bounded by
// C+W-skew (skew allows for the clocks of a fleet's stream leader and
// this node), and when that leaves less than minPublishBudget the request
// waits for the index to catch up (the index polls the stream), up to
// maxIndexWait, and is then refused with "not stored … retry with the same
// ids": nothing is stored twice, whatever the lag.
//
// The key is the log subject (vigil.log.<conversation>) and the id: a
// reused id matches only an event of the same conversation, stricter than
// JetStream's key (the id alone, stream-wide). So no id a producer claims
// in one conversation makes another conversation's event a duplicate (or
// an id conflict) for longer than JetStream's short window, as it could
// for JetStream's whole window before. An entry older than the logical
// window is not answered (the id is stored again, as JetStream's window
// promised).

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/projections"
)

// Index sizing: the index answers point lookups (mostly misses, which the
// bloom filters answer) and takes sequential batches from the log; its
// memory is the block cache and the memtables, whatever the log's length.
const (
	indexCacheSize    = 4 << 20
	indexMemTableSize = 4 << 20
	// indexBatch bounds the records of one Pebble batch.
	indexBatch = 1024
	// maxSkew bounds the allowance for clocks (see the lag argument).
	maxSkew = 10 * time.Second
	// minPublishBudget is the least time a publish must have before it
	// reaches JetStream's window's edge; less, and the request waits.
	minPublishBudget = 5 * time.Second
	// maxIndexWait bounds a request's wait for a lagging index.
	maxIndexWait = 10 * time.Second
	// maxPollEvery bounds the time between two stream info polls while
	// the log is quiet.
	maxPollEvery = 5 * time.Second
	// progressEvery is how often catching up logs how far it got.
	progressEvery = 5 * time.Second
)

// ErrIndexBehind means the id index lags the log by more than VIGIL_LOG's
// duplicate window allows: the request was not stored and may be retried
// with the same ids.
var ErrIndexBehind = errors.New("the id index lags the log")

// Keys: 'k' + uvarint(len(subject)) + subject + id → seq (8) + unix nanos (8);
// 'm' → indexMeta (JSON).
var keyIndexMeta = []byte("m")

// indexMeta is what the index says about itself, written with every batch.
type indexMeta struct {
	// Frontier is the last log seq the index has read.
	Frontier uint64 `json:"frontier"`
	// LogCreated is VIGIL_LOG's creation time: an index of another log
	// (deleted and recreated) is thrown away.
	LogCreated time.Time `json:"log_created"`
}

// idIndex is the ingest service's index of the ids stored in VIGIL_LOG.
type idIndex struct {
	db     *pebble.DB
	dir    string
	js     jetstream.JetStream
	log    *slog.Logger
	window time.Duration // the logical window

	mu       sync.Mutex
	meta     indexMeta
	covered  time.Time     // every record appended before it is indexed
	changed  chan struct{} // closed and replaced when frontier or covered move
	jsWindow time.Duration // VIGIL_LOG's duplicate window, as configured
	kick     chan struct{} // asks the poller for a stream info now
	maxWait  time.Duration // a request's wait for a lagging index

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// openIndex opens (or creates) the index in dir for VIGIL_LOG as it is
// now, throwing away one built from another log, and starts following
// the log. It returns once the index has read every record stored when
// it was called.
func openIndex(ctx context.Context, dir string, js jetstream.JetStream, window time.Duration, logger *slog.Logger) (*idIndex, error) {
	st, err := js.Stream(ctx, events.StreamLog)
	if err != nil {
		return nil, fmt.Errorf("ingest: id index: %w", err)
	}
	asked := time.Now()
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("ingest: id index: %w", err)
	}
	x := &idIndex{dir: dir, js: js, log: logger, window: window, changed: make(chan struct{}), kick: make(chan struct{}, 1),
		jsWindow: info.Config.Duplicates, maxWait: maxIndexWait}
	if err := x.open(info); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	x.stop = cancel
	x.wg.Add(2)
	go func() { defer x.wg.Done(); x.follow(fctx) }()
	go func() { defer x.wg.Done(); x.poll(fctx) }()
	if err := x.catchUp(ctx, info.State.LastSeq, asked); err != nil {
		x.close()
		return nil, err
	}
	return x, nil
}

// open opens the Pebble store, rebuilding it when it cannot be read or
// belongs to another log (or to a longer one: the log lost records).
func (x *idIndex) open(info *jetstream.StreamInfo) error {
	for attempt := 0; ; attempt++ {
		db, err := projections.OpenPebble(x.dir, projections.PebbleOptions{CacheSize: indexCacheSize, MemTableSize: indexMemTableSize, Logger: x.log})
		var meta indexMeta
		if err == nil {
			meta, err = readIndexMeta(db)
		}
		reason := ""
		switch {
		case err != nil:
			reason = err.Error()
		case meta.Frontier > 0 && !meta.LogCreated.Equal(info.Created):
			reason = "it was built from another VIGIL_LOG (created " + meta.LogCreated.UTC().Format(time.RFC3339) + ")"
		case meta.Frontier > info.State.LastSeq:
			reason = fmt.Sprintf("it reaches seq %d, past the log's end (%d)", meta.Frontier, info.State.LastSeq)
		}
		if reason == "" {
			meta.LogCreated = info.Created
			x.db, x.meta = db, meta
			return nil
		}
		if db != nil {
			_ = db.Close()
		}
		if attempt > 0 {
			return fmt.Errorf("ingest: id index in %s: %s", x.dir, reason)
		}
		x.log.Warn("ingest: id index rebuilt from the log", "dir", x.dir, "reason", reason)
		if err := os.RemoveAll(x.dir); err != nil {
			return fmt.Errorf("ingest: id index: %w", err)
		}
	}
}

func readIndexMeta(db *pebble.DB) (indexMeta, error) {
	var m indexMeta
	v, closer, err := db.Get(keyIndexMeta)
	if errors.Is(err, pebble.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	defer closer.Close()
	if err := json.Unmarshal(v, &m); err != nil {
		return m, fmt.Errorf("its frontier does not decode: %w", err)
	}
	return m, nil
}

// indexKey is the key of id as stored on subject.
func indexKey(subject, id string) []byte {
	k := make([]byte, 0, 1+binary.MaxVarintLen16+len(subject)+len(id))
	k = append(k, 'k')
	k = binary.AppendUvarint(k, uint64(len(subject)))
	k = append(k, subject...)
	return append(k, id...)
}

// catchUp waits until the index has read the log up to seq (asked: when
// that was the log's end), logging its progress when it takes a while.
func (x *idIndex) catchUp(ctx context.Context, seq uint64, asked time.Time) error {
	start := time.Now()
	from := x.frontier()
	if seq > from {
		x.log.Info("ingest: id index reading the log", "from", from+1, "to", seq, "records", seq-from)
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		x.mu.Lock()
		f, ch := x.meta.Frontier, x.changed
		if f >= seq {
			if asked.After(x.covered) {
				x.covered = asked
			}
			x.mu.Unlock()
			if seq > from {
				x.log.Info("ingest: id index caught up with the log", "records", seq-from, "seconds", time.Since(start).Seconds())
			}
			return nil
		}
		x.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("ingest: id index: catching up with the log (at seq %d of %d): %w", f, seq, ctx.Err())
		case <-tick.C:
			el := time.Since(start).Seconds()
			rate := float64(f-from) / el
			attrs := []any{"seq", f, "of", seq, "records_per_second", int(rate)}
			if rate > 0 {
				attrs = append(attrs, "eta_seconds", int(float64(seq-f)/rate))
			}
			x.log.Info("ingest: id index catching up", attrs...)
		case <-ch:
		}
	}
}

func (x *idIndex) frontier() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.meta.Frontier
}

// advanced records that the index now holds the log up to seq, whose
// record was appended at ts; the caller committed it.
func (x *idIndex) advanced(seq uint64, ts time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.meta.Frontier = seq
	if ts.After(x.covered) {
		x.covered = ts
	}
	close(x.changed)
	x.changed = make(chan struct{})
}

// follow feeds the index from the log, for as long as ctx lasts.
func (x *idIndex) follow(ctx context.Context) {
	for ctx.Err() == nil {
		err := x.followOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		x.log.Warn("ingest: id index: reading the log failed; reading it again in 1s", "at", x.frontier(), "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (x *idIndex) followOnce(ctx context.Context) error {
	st, err := x.js.Stream(ctx, events.StreamLog)
	if err != nil {
		return err
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   x.frontier() + 1,
		HeadersOnly:   true,
	})
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(indexBatch))
	if err != nil {
		return err
	}
	defer it.Stop()
	stopOnDone := context.AfterFunc(ctx, it.Stop)
	defer stopOnDone()
	b := x.db.NewBatch()
	defer func() { _ = b.Close() }()
	var last uint64
	var lastTS time.Time
	n := 0
	for {
		msg, err := it.Next()
		if err != nil {
			if n > 0 {
				if cerr := x.commit(b, last, lastTS); cerr != nil {
					return cerr
				}
			}
			return err
		}
		meta, err := msg.Metadata()
		if err != nil {
			return err
		}
		seq := meta.Sequence.Stream
		if seq <= x.frontier() || seq <= last {
			continue
		}
		if id := msg.Headers().Get(jetstream.MsgIDHeader); events.ValidID(id) {
			var v [16]byte
			binary.BigEndian.PutUint64(v[:8], seq)
			binary.BigEndian.PutUint64(v[8:], uint64(meta.Timestamp.UnixNano()))
			if err := b.Set(indexKey(msg.Subject(), id), v[:], nil); err != nil {
				return err
			}
		}
		last, lastTS = seq, meta.Timestamp
		n++
		if n >= indexBatch || meta.NumPending == 0 {
			if err := x.commit(b, last, lastTS); err != nil {
				return err
			}
			_ = b.Close()
			b = x.db.NewBatch()
			n = 0
		}
	}
}

// commit stores b with the frontier it reaches, in the same batch.
func (x *idIndex) commit(b *pebble.Batch, seq uint64, ts time.Time) error {
	x.mu.Lock()
	m := x.meta
	x.mu.Unlock()
	m.Frontier = seq
	mb, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := b.Set(keyIndexMeta, mb, nil); err != nil {
		return err
	}
	// The index is re-derivable from the log: a batch lost in an OS crash
	// takes its frontier with it, and is read again.
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("ingest: id index: %w", err)
	}
	x.advanced(seq, ts)
	return nil
}

// poll keeps covered current while the log is quiet (no record to take a
// timestamp from) and JetStream's window as configured: a stream info
// asked when the index is at the log's end covers the time it was asked.
func (x *idIndex) poll(ctx context.Context) {
	for {
		every := x.pollEvery()
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		case <-x.kick:
		}
		x.mu.Lock()
		fresh := time.Since(x.covered) < every
		x.mu.Unlock()
		if fresh {
			continue
		}
		x.pollOnce(ctx)
	}
}

func (x *idIndex) pollOnce(ctx context.Context) {
	ictx, cancel := context.WithTimeout(ctx, maxPollEvery)
	defer cancel()
	st, err := x.js.Stream(ictx, events.StreamLog)
	if err != nil {
		return
	}
	asked := time.Now()
	info, err := st.Info(ictx)
	if err != nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.jsWindow = info.Config.Duplicates
	if info.State.LastSeq <= x.meta.Frontier && asked.After(x.covered) {
		x.covered = asked
		close(x.changed)
		x.changed = make(chan struct{})
	}
}

// limits returns JetStream's window and the allowance for clocks.
func (x *idIndex) limits() (jsWindow, skew time.Duration) {
	x.mu.Lock()
	w := x.jsWindow
	x.mu.Unlock()
	if w <= 0 {
		w = natsutil.DefaultLogStreamWindow // JetStream's own default too
	}
	return w, min(maxSkew, w/4)
}

func (x *idIndex) pollEvery() time.Duration {
	w, _ := x.limits()
	return max(min(maxPollEvery, w/8), 10*time.Millisecond)
}

// publishDeadline returns the time by which a publish of what was looked
// up now must reach JetStream (see the lag argument), waiting for the
// index while that leaves less than minPublishBudget. It fails with
// ErrIndexBehind when the index has not caught up within maxIndexWait.
func (x *idIndex) publishDeadline(ctx context.Context) (time.Time, error) {
	w, skew := x.limits()
	budget := min(minPublishBudget, w/4)
	giveUp := time.Now().Add(x.maxWait)
	for {
		x.mu.Lock()
		deadline := x.covered.Add(w - skew)
		ch := x.changed
		behind := time.Since(x.covered)
		x.mu.Unlock()
		if time.Until(deadline) >= budget {
			return deadline, nil
		}
		if time.Now().After(giveUp) {
			return time.Time{}, fmt.Errorf("%w: it covers the log up to %s ago, and VIGIL_LOG's duplicate window is %s", ErrIndexBehind, behind.Round(time.Millisecond), w)
		}
		select {
		case x.kick <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-ch:
		case <-time.After(min(x.pollEvery(), time.Until(giveUp)+time.Millisecond)):
		}
	}
}

// lookup returns the log seq of the event stored with id on subject
// within the logical window of now.
func (x *idIndex) lookup(subject, id string, now time.Time) (uint64, bool, error) {
	v, closer, err := x.db.Get(indexKey(subject, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("ingest: id index: %w", err)
	}
	defer closer.Close()
	if len(v) != 16 {
		return 0, false, fmt.Errorf("ingest: id index: an entry of %d bytes", len(v))
	}
	seq := binary.BigEndian.Uint64(v[:8])
	ts := time.Unix(0, int64(binary.BigEndian.Uint64(v[8:])))
	if x.window > 0 && now.Sub(ts) > x.window {
		return 0, false, nil // older than the window: stored again, as promised
	}
	return seq, true, nil
}

// close stops following the log and closes the store.
func (x *idIndex) close() {
	if x.stop != nil {
		x.stop()
	}
	x.wg.Wait()
	if x.db != nil {
		_ = x.db.Close()
		x.db = nil
	}
}
