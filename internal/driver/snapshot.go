package driver

// Snapshots of the fold state (DESIGN.md, "snapshots").
//
// Between two batches, at most every SnapshotConfig.Every records or
// Interval of wall time (the driver may read the clock; the folds may not),
// and once more when it stops, the driver encodes the processor's state
// (processors.Snapshotter) and stores it with the log seq it covers in a
// SnapshotStore: by default the JetStream object store bucket
// VIGIL_SNAPSHOTS, beside the log, with the log's replicas. A JetStream
// bucket rather than the Pebble read models because (1) it needs no
// projections directory (a node may run without one), (2) every node of a
// fleet sees it, so a node that starts can restore another node's snapshot
// (the fold state at a seq is a function of the log prefix alone), and (3)
// objects are chunked, so a state of tens of MB is no special case.
//
// At start the driver lists the snapshots, newest first, and restores the
// first one that (a) covers no record after its checkpoint (the consumer's
// ack floor) nor after what its Sink has applied, (b) opens (format
// version, digest), (c) was taken of a log whose record at the snapshot's
// seq has the digest the snapshot names (so a snapshot of another log, or
// of a log rewritten under it, is never used), and (d) the processor
// accepts (same processors, same options: a config override, an audit
// key). Anything else is logged and passed over; with none left it folds
// from the start of the log, as before. It then folds only the records
// after the snapshot.
//
// A snapshot is never the system of record: VIGIL_LOG is, and `vigil
// replay` folds from zero. Who can write the bucket (the service and admin
// credentials) could also rewrite the consumer or the streams; agents and
// approvers cannot publish to it.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// SnapshotBucket is the JetStream object store bucket of fold snapshots.
const SnapshotBucket = "VIGIL_SNAPSHOTS"

// Snapshot defaults.
const (
	// DefaultSnapshotEvery is how many records may be folded between two
	// snapshots: a restart after a crash folds at most this many (about a
	// second of work at replay speed). Taking a snapshot holds the fold
	// while the state is encoded (≈ 0.2 s of CPU for a gate remembering
	// 100,000 decisions), so it is not taken more often.
	DefaultSnapshotEvery = 100_000
	// DefaultSnapshotInterval is how long a node that folds anything at all
	// goes without a snapshot (a clean stop always takes one).
	DefaultSnapshotInterval = 10 * time.Minute
	// DefaultSnapshotKeep is how many of its own snapshots a node keeps
	// (older ones are the fallback when the newest is damaged).
	DefaultSnapshotKeep = 3
	// snapshotCandidates bounds the snapshots tried at start.
	snapshotCandidates = 5
	// snapshotTimeout bounds storing one snapshot.
	snapshotTimeout = 30 * time.Second
	// finalSnapshotTimeout bounds storing the one at stop.
	finalSnapshotTimeout = 10 * time.Second
)

// SnapshotConfig configures the driver's fold snapshots. The zero value
// takes them every DefaultSnapshotEvery records or DefaultSnapshotInterval,
// in the VIGIL_SNAPSHOTS bucket (a fleet; a single host keeps them in a
// directory, Dir). A processor that is not a
// processors.Snapshotter (or a Pipeline with one that is not) gets none.
type SnapshotConfig struct {
	// Off turns snapshots off: every start folds the whole log prefix.
	Off bool
	// Every is the most records folded between two snapshots; 0 means
	// DefaultSnapshotEvery.
	Every uint64
	// Interval is the longest time between two snapshots while records
	// are folded; 0 means DefaultSnapshotInterval, negative never by time.
	Interval time.Duration
	// Keep is how many of this node's snapshots are kept; 0 means
	// DefaultSnapshotKeep.
	Keep int
	// NoFinal skips the snapshot taken when the driver stops.
	NoFinal bool
	// Dir, when set, holds the snapshots as files (a single host: see
	// dirStore), reading the SnapshotBucket's older ones until the first is
	// stored there.
	Dir string
	// Store holds the snapshots; nil means Dir, or else the JetStream
	// object store bucket SnapshotBucket, created on first use.
	Store SnapshotStore
}

// SnapshotStore holds snapshots by name. Names are
// "<durable>.<log seq, 20 digits>".
type SnapshotStore interface {
	Put(ctx context.Context, name string, data []byte) error
	Get(ctx context.Context, name string) ([]byte, error)
	// List returns every name in the store, in any order.
	List(ctx context.Context) ([]string, error)
	Delete(ctx context.Context, name string) error
}

// WarmUpInfo says how a driver rebuilt its state at start.
type WarmUpInfo struct {
	// Checkpoint is the consumer's ack floor at start.
	Checkpoint uint64
	// Restored is the log seq of the snapshot restored (0: none).
	Restored uint64
	// RestoredFrom names that snapshot.
	RestoredFrom string
	// Folded counts the log records folded at warm-up, after the snapshot.
	Folded uint64
	// Refused lists the snapshots passed over, with why.
	Refused []string
}

// WarmUp returns how the driver rebuilt its state; valid once Ready is closed.
func (d *Driver) WarmUp() WarmUpInfo { return d.snap.info }

// snapshotName is the name of durable's snapshot at seq.
func snapshotName(durable string, seq uint64) string {
	return fmt.Sprintf("%s.%020d", durable, seq)
}

// parseSnapshotName reverses snapshotName.
func parseSnapshotName(name string) (durable string, seq uint64, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || len(name)-i-1 != 20 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(name[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return name[:i], seq, true
}

// snapshotEnvelope is what the driver stores: the processor's snapshot,
// the log seq it covers and the digest of the log record at that seq,
// sealed (processors.SealSnapshot) once more so the seq is covered too.
type snapshotEnvelope struct {
	V         int    `msgpack:"v"`
	Processor string `msgpack:"processor"`
	Seq       uint64 `msgpack:"seq"`
	// Record is the SHA-256 of the log record at Seq as stored ("" when
	// the log holds no record there).
	Record string                `msgpack:"record"`
	State  processors.StateBytes `msgpack:"state"`
}

const envelopeVersion = 1

// snapshots is the driver's snapshot state (owned by Run, but for the
// upload goroutine, which only reads what it is handed).
type snapshots struct {
	cfg   SnapshotConfig
	proc  processors.Snapshotter // nil: no snapshots
	store SnapshotStore
	seq   uint64 // the log seq of the newest snapshot taken or restored
	at    time.Time
	wg    sync.WaitGroup
	info  WarmUpInfo
	// mu guards the upload queue: next waits for the upload running.
	mu        sync.Mutex
	next      *snapshotJob
	uploading bool
}

func newSnapshots(cfg Config) *snapshots {
	s := &snapshots{cfg: cfg.Snapshots}
	if s.cfg.Off {
		return s
	}
	sn, ok := cfg.Processor.(processors.Snapshotter)
	if !ok {
		return s
	}
	if c, ok := cfg.Processor.(interface{ CanSnapshot() bool }); ok && !c.CanSnapshot() {
		return s
	}
	s.proc = sn
	if s.cfg.Every == 0 {
		s.cfg.Every = DefaultSnapshotEvery
	}
	if s.cfg.Interval == 0 {
		s.cfg.Interval = DefaultSnapshotInterval
	}
	if s.cfg.Keep <= 0 {
		s.cfg.Keep = DefaultSnapshotKeep
	}
	s.store = s.cfg.Store
	if s.store == nil {
		s.store = &objectStore{js: cfg.JS}
		if s.cfg.Dir != "" {
			s.store = &dirStore{dir: s.cfg.Dir, older: s.store}
		}
	}
	return s
}

// recordDigest returns the digest of the log record at seq, "" when the
// log holds none there.
func (d *Driver) recordDigest(ctx context.Context, seq uint64) (string, error) {
	st, err := d.cfg.JS.Stream(ctx, events.StreamLog)
	if err != nil {
		return "", err
	}
	m, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(m.Data)
	return fmt.Sprintf("%x", sum), nil
}

// listAttempts bounds the attempts to list the snapshots at start,
// listRetryWait apart.
const (
	listAttempts  = 5
	listRetryWait = time.Second
)

// restoreSnapshot restores the newest usable snapshot at or below limit
// and sets d.folded to its seq. Any failure leaves the processor as it
// was (and d.folded at 0): the warm-up then folds from the start.
func (d *Driver) restoreSnapshot(ctx context.Context, limit uint64) {
	s := d.snap
	if s.proc == nil || limit == 0 {
		return
	}
	log := d.log()
	names, err := s.store.List(ctx)
	// A server still busy with its start (recovering long streams) can
	// time a listing out: folding the whole log instead would cost far
	// more than asking again (a 1,000,000-event restart refolded
	// everything, 96 s, after one 5 s timeout).
	for attempt := 1; err != nil && attempt < listAttempts && ctx.Err() == nil; attempt++ {
		log.Warn("driver: snapshots cannot be listed; asking again", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(listRetryWait):
		}
		names, err = s.store.List(ctx)
	}
	if err != nil {
		log.Warn("driver: snapshots cannot be listed; folding the log from the start", "err", err)
		return
	}
	type cand struct {
		name string
		seq  uint64
		own  bool
	}
	var cands []cand
	for _, n := range names {
		durable, seq, ok := parseSnapshotName(n)
		if !ok || seq == 0 {
			continue
		}
		if seq > limit {
			continue // covers records not yet checkpointed or applied
		}
		cands = append(cands, cand{n, seq, durable == d.cfg.Durable})
	}
	// Newest first; this node's own first among equals, then by name.
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.seq != b.seq:
			if a.seq > b.seq {
				return -1
			}
			return 1
		case a.own != b.own:
			if a.own {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	for i, c := range cands {
		if i == snapshotCandidates {
			break
		}
		err := d.tryRestore(ctx, c.name, c.seq)
		if err == nil {
			s.seq, s.info.Restored, s.info.RestoredFrom = c.seq, c.seq, c.name
			d.folded = c.seq
			log.Info("driver: restored a snapshot", "snapshot", c.name, "seq", c.seq, "checkpoint", limit)
			return
		}
		if ctx.Err() != nil {
			return
		}
		s.info.Refused = append(s.info.Refused, c.name+": "+err.Error())
		log.Warn("driver: snapshot not used", "snapshot", c.name, "err", err)
	}
}

func (d *Driver) tryRestore(ctx context.Context, name string, seq uint64) error {
	b, err := d.snap.store.Get(ctx, name)
	if err != nil {
		return err
	}
	body, err := processors.OpenSnapshot(b)
	if err != nil {
		return err
	}
	var env snapshotEnvelope
	if err := processors.DecodeState(body, &env); err != nil {
		return err
	}
	switch {
	case env.V != envelopeVersion:
		return fmt.Errorf("%w: envelope version %d, want %d", processors.ErrSnapshot, env.V, envelopeVersion)
	case env.Seq != seq:
		return fmt.Errorf("%w: named for seq %d, covers %d", processors.ErrSnapshot, seq, env.Seq)
	case env.Processor != d.cfg.Processor.Name():
		return fmt.Errorf("%w: of processor %q, this driver runs %q", processors.ErrSnapshot, env.Processor, d.cfg.Processor.Name())
	}
	dg, err := d.recordDigest(ctx, seq)
	if err != nil {
		return fmt.Errorf("read log record %d: %w", seq, err)
	}
	if dg != env.Record {
		return fmt.Errorf("%w: taken of another log (the record at seq %d differs)", processors.ErrSnapshot, seq)
	}
	return d.snap.proc.Restore(env.State)
}

// maybeSnapshot takes a snapshot when one is due (see SnapshotConfig) and
// stores it in the background; it is called between batches, never
// during a Step. One upload runs at a time; a snapshot taken while one
// runs waits for it, replacing any older one still waiting.
func (d *Driver) maybeSnapshot(ctx context.Context) {
	s := d.snap
	if s.proc == nil || d.folded <= s.seq {
		return
	}
	now := d.cfg.Now()
	if d.folded-s.seq < s.cfg.Every && (s.cfg.Interval < 0 || now.Sub(s.at) < s.cfg.Interval) {
		return
	}
	seq := d.folded
	state, err := s.proc.Snapshot()
	s.seq, s.at = seq, now
	if err != nil {
		d.log().Warn("driver: snapshot failed", "seq", seq, "err", err)
		return
	}
	s.mu.Lock()
	s.next = &snapshotJob{seq: seq, state: state}
	start := !s.uploading
	s.uploading = true
	s.mu.Unlock()
	if start {
		s.wg.Add(1)
		go d.uploadSnapshots(ctx)
	}
}

type snapshotJob struct {
	seq   uint64
	state []byte
}

// uploadSnapshots stores the waiting snapshots until none is left.
func (d *Driver) uploadSnapshots(ctx context.Context) {
	s := d.snap
	defer s.wg.Done()
	for {
		s.mu.Lock()
		j := s.next
		s.next = nil
		if j == nil || ctx.Err() != nil {
			s.uploading = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		sctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
		d.storeSnapshot(sctx, j.seq, j.state)
		cancel()
	}
}

// finalSnapshot stores the state when the driver stops, if it moved since
// the last snapshot, within snapshotTimeout of ctx being done.
func (d *Driver) finalSnapshot(ctx context.Context) {
	s := d.snap
	s.wg.Wait()
	if s.proc == nil || s.cfg.NoFinal || d.folded <= s.seq || d.folded > d.checkpointed.Load() {
		return
	}
	if nc := d.cfg.JS.Conn(); nc != nil && !nc.IsConnected() {
		return // the server is gone: do not hold the stop for it
	}
	state, err := s.proc.Snapshot()
	if err != nil {
		d.log().Warn("driver: snapshot at stop failed", "seq", d.folded, "err", err)
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalSnapshotTimeout)
	defer cancel()
	if d.storeSnapshot(sctx, d.folded, state) {
		s.seq = d.folded
	}
}

// storeSnapshot stores state, the fold state after seq, and prunes this
// node's older snapshots. A failure is logged: the next one may succeed,
// and a restart folds from an older snapshot meanwhile.
func (d *Driver) storeSnapshot(ctx context.Context, seq uint64, state []byte) bool {
	log := d.log()
	dg, err := d.recordDigest(ctx, seq)
	if err != nil {
		log.Warn("driver: snapshot not stored: log record unreadable", "seq", seq, "err", err)
		return false
	}
	body, err := processors.EncodeState(&snapshotEnvelope{V: envelopeVersion, Processor: d.cfg.Processor.Name(), Seq: seq, Record: dg, State: state})
	if err != nil {
		log.Warn("driver: snapshot not encoded", "seq", seq, "err", err)
		return false
	}
	name := snapshotName(d.cfg.Durable, seq)
	if err := d.snap.store.Put(ctx, name, processors.SealSnapshot(body)); err != nil {
		log.Warn("driver: snapshot not stored", "seq", seq, "err", err)
		return false
	}
	log.Debug("driver: snapshot stored", "snapshot", name, "bytes", len(body))
	names, err := d.snap.store.List(ctx)
	if err != nil {
		return true
	}
	var own []uint64
	for _, n := range names {
		if durable, s, ok := parseSnapshotName(n); ok && durable == d.cfg.Durable {
			own = append(own, s)
		}
	}
	slices.Sort(own)
	for len(own) > d.snap.cfg.Keep {
		if err := d.snap.store.Delete(ctx, snapshotName(d.cfg.Durable, own[0])); err != nil {
			log.Debug("driver: old snapshot not deleted", "seq", own[0], "err", err)
		}
		own = own[1:]
	}
	return true
}

// objectStore is the default SnapshotStore: the SnapshotBucket object
// store, created on first use with VIGIL_LOG's replicas.
type objectStore struct {
	js jetstream.JetStream
	mu sync.Mutex
	os jetstream.ObjectStore
}

func (o *objectStore) bucket(ctx context.Context, create bool) (jetstream.ObjectStore, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.os != nil {
		return o.os, nil
	}
	ob, err := o.js.ObjectStore(ctx, SnapshotBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) && create {
		replicas := 1
		if st, err := o.js.Stream(ctx, events.StreamLog); err == nil {
			if r := st.CachedInfo().Config.Replicas; r > 0 {
				replicas = r
			}
		}
		ob, err = o.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      SnapshotBucket,
			Description: "Vigil fold snapshots: a cache of what folding VIGIL_LOG gives; never the system of record",
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
			// No compression: a snapshot is mostly hashes and ids, which
			// do not compress (a bucket holding four 53.6 MB snapshots
			// took 208 MB), and every block read at start was
			// decompressed.
			Compression: false,
		})
	}
	if err != nil {
		return nil, err
	}
	o.os = ob
	return ob, nil
}

func (o *objectStore) Put(ctx context.Context, name string, data []byte) error {
	ob, err := o.bucket(ctx, true)
	if err != nil {
		return err
	}
	_, err = ob.PutBytes(ctx, name, data)
	return err
}

func (o *objectStore) Get(ctx context.Context, name string) ([]byte, error) {
	ob, err := o.bucket(ctx, false)
	if err != nil {
		return nil, err
	}
	return ob.GetBytes(ctx, name)
}

func (o *objectStore) List(ctx context.Context) ([]string, error) {
	ob, err := o.bucket(ctx, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	infos, err := ob.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(infos))
	for _, i := range infos {
		names = append(names, i.Name)
	}
	return names, nil
}

func (o *objectStore) Delete(ctx context.Context, name string) error {
	ob, err := o.bucket(ctx, false)
	if err != nil {
		return err
	}
	return ob.Delete(ctx, name)
}
