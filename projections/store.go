package projections

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/vigil-dev/vigil/processors"
)

// Applied is one log record with the outputs the processors folded from
// it: what the live driver hands its Sink, and what a rebuild feeds.
type Applied = processors.Applied

// Errors.
var (
	// ErrNotFound means the read model has no such entry (yet).
	ErrNotFound = errors.New("projections: not found")
	// ErrCorrupt means a corruption error was met after the store opened.
	// The store refuses every read and write from then on; the next start
	// rebuilds it from the log.
	ErrCorrupt = errors.New("projections: read models are corrupted; restart vigil serve to rebuild them from the log")
	// ErrLocked means another process has the store open.
	ErrLocked = errors.New("projections: read models in use by another process")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("projections: store closed")
)

// rebuildMarker, a file in the store's directory, makes the next Open
// wipe the store and start again from position 0.
const rebuildMarker = "REBUILD"

// LogState describes the log the store folds, as it is when the store opens.
type LogState struct {
	// Identity distinguishes one VIGIL_LOG from another (its creation time,
	// see LogIdentity). A store built from another log is rebuilt.
	Identity string
	// LastSeq is the log's last sequence. A store ahead of it (the log lost
	// acknowledged writes in an OS crash, or was restored from an older
	// backup) is rebuilt: its newer entries are no longer in the log, and
	// new events would reuse their sequences.
	LastSeq uint64
}

// NewLogState describes VIGIL_LOG from its stream info: created is the
// stream's creation time (StreamInfo.Created), which identifies it, and
// lastSeq its last sequence (StreamInfo.State.LastSeq).
func NewLogState(created time.Time, lastSeq uint64) LogState {
	return LogState{Identity: created.UTC().Format(time.RFC3339Nano), LastSeq: lastSeq}
}

// Options configure a Store.
type Options struct {
	Logger *slog.Logger
	// Log, when set, is checked against what the store was built from.
	Log *LogState
	// SkipVerify skips reading every table back after open (see
	// VerifyDone). A damaged table is then found only when a read meets it
	// (ErrCorrupt until restart).
	SkipVerify bool
	// NoSync commits batches without waiting for an fsync. It stays
	// correct — data and position are in one atomic batch, and after an OS
	// crash the driver re-sends whatever the store lost — but a crash costs
	// a longer catch-up. The default (false) fsyncs every batch.
	NoSync bool
}

// Store is the Pebble database of the read models. It is safe for
// concurrent use: one writer (the driver) and any number of readers.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger
	lock *os.File
	db   *pebble.DB
	wo   *pebble.WriteOptions

	mu sync.Mutex // serialises Apply, Rebuild and Close
	// scratch, held with mu, is the buffer txn.encode writes the values
	// it puts into: Batch.Set copies them, so one buffer serves every
	// batch and a value's encoding does not grow a fresh buffer.
	scratch bytes.Buffer
	rw      sync.RWMutex // reads hold it shared; Close exclusively
	closed  atomic.Bool
	corrupt atomic.Bool
	pos     atomic.Uint64

	reset  string // why Open wiped the store; "" if it did not
	target uint64 // the log's last sequence at open

	// The verification of every table, run in the background after Open
	// (verifyInBackground): stopVerify ends it early (Close), verifyDone
	// is closed when it has ended, verifyErr is its result.
	stopVerify chan struct{}
	stopOnce   sync.Once
	verifyDone chan struct{}
	verifyErr  error
}

// Open opens (or creates) the store in dir, checks it, and wipes it if any
// check fails (see the package doc). It fails only on problems a rebuild
// cannot fix: the store is in use, or the directory is not writable.
func Open(dir string, o Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("projections: a directory is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{dir: dir, opts: o, log: o.Logger.With("component", "projections"), wo: pebble.Sync}
	if o.NoSync {
		s.wo = pebble.NoSync
	}
	if o.Log != nil {
		s.target = o.Log.LastSeq
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o700); err != nil {
		return nil, fmt.Errorf("projections: %w", err)
	}
	lock, err := lockFile(filepath.Clean(dir) + ".lock")
	if err != nil {
		return nil, err
	}
	s.lock = lock
	if err := s.open(); err != nil {
		s.lock.Close()
		return nil, err
	}
	s.verifyInBackground()
	return s, nil
}

func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("projections: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s is locked (is vigil serve running on this data directory?)", ErrLocked, path)
	}
	return f, nil
}

// RequestRebuild makes the next Open of the store in dir wipe it and
// rebuild from the log. It works while another process has the store open.
func RequestRebuild(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("projections: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, rebuildMarker), []byte("rebuild requested\n"), 0o600)
}

func (s *Store) open() error {
	reason := ""
	if _, err := os.Stat(filepath.Join(s.dir, rebuildMarker)); err == nil {
		reason = "a rebuild was requested"
	}
	fresh := false
	if reason == "" {
		db, err := s.openPebble()
		switch {
		case err != nil && errors.Is(err, fs.ErrPermission):
			return fmt.Errorf("projections: open %s: %w", s.dir, err)
		case err != nil:
			reason = "the database does not open: " + firstLine(err)
		default:
			s.db = db
			fresh, reason = s.check()
		}
	}
	if reason == "" && !fresh {
		return nil
	}
	if s.db != nil {
		closeQuietly(s.db)
		s.db = nil
	}
	if reason != "" {
		s.log.Warn("read models dropped; they are rebuilt from the log", "dir", s.dir, "reason", reason)
		if err := wipe(s.dir); err != nil {
			return err
		}
		s.reset = reason
	}
	db, err := s.openPebble()
	if err != nil {
		return fmt.Errorf("projections: create %s: %w", s.dir, err)
	}
	s.db = db
	b := db.NewBatch()
	defer b.Close()
	b.Set(keyFormat, []byte(formatVersion), nil)
	b.Set(keyPosition, encodePosition(0), nil)
	if s.opts.Log != nil {
		b.Set(keyLog, []byte(s.opts.Log.Identity), nil)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		closeQuietly(db)
		s.db = nil
		return fmt.Errorf("projections: initialise %s: %w", s.dir, err)
	}
	s.pos.Store(0)
	s.corrupt.Store(false)
	return nil
}

// storeFile matches what a store's directory may hold: Pebble's files, the
// rebuild marker and the list of verified tables (and its temporary).
var storeFile = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at every command's start
	return regexp.MustCompile(`^([0-9]+\.(log|sst|blob|dbtmp)|LOCK|CURRENT|MANIFEST-[0-9]+|OPTIONS-[0-9]+|marker\..+|temporary\..+|archive|` + rebuildMarker + `|` + verifiedFile + `(\.tmp)?)$`)
})

// wipe deletes a store's files. It refuses a directory holding anything
// else: a store pointed at the wrong directory (the data directory
// itself) must never delete what is not its own.
func wipe(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("projections: wipe %s: %w", dir, err)
	}
	var foreign []string
	for _, e := range entries {
		if !storeFile().MatchString(e.Name()) {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("projections: %s must be rebuilt, but it holds files that are not read models (%s): "+
			"give the read models a directory of their own", dir, strings.Join(foreign, ", "))
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("projections: wipe %s: %w", dir, err)
		}
	}
	return nil
}

// check reports whether the database is new (empty), or else why it must
// not be served ("" if it may).
func (s *Store) check() (fresh bool, reason string) {
	defer func() {
		if r := recover(); r != nil {
			fresh, reason = false, fmt.Sprintf("the database panicked while being checked: %v", r)
		}
	}()
	format, ok, err := s.rawGet(keyFormat)
	if err != nil {
		return false, "format key unreadable: " + firstLine(err)
	}
	if !ok {
		empty, err := s.isEmpty()
		if err != nil {
			return false, "database unreadable: " + firstLine(err)
		}
		if empty {
			return true, ""
		}
		return false, "the format key is missing from a non-empty database"
	}
	if string(format) != formatVersion {
		return false, fmt.Sprintf("format %q, this version of vigil reads %q", format, formatVersion)
	}
	pv, ok, err := s.rawGet(keyPosition)
	if err != nil {
		return false, "position record unreadable: " + firstLine(err)
	}
	if !ok {
		return false, "the position record is missing"
	}
	pos, intact := decodePosition(pv)
	if !intact {
		return false, "the position record fails its checksum"
	}
	if _, ok, err := s.rawGet(keyRebuilding); err != nil || ok {
		return false, "a rebuild of some projections was interrupted"
	}
	if l := s.opts.Log; l != nil {
		id, _, err := s.rawGet(keyLog)
		if err != nil {
			return false, "log identity unreadable: " + firstLine(err)
		}
		if len(id) > 0 && l.Identity != "" && string(id) != l.Identity {
			return false, fmt.Sprintf("built from another log (%s; the log now is %s)", id, l.Identity)
		}
		if pos > l.LastSeq {
			return false, fmt.Sprintf("at log sequence %d, but the log ends at %d (it lost its tail, or was restored from an older copy)", pos, l.LastSeq)
		}
		if len(id) == 0 && l.Identity != "" {
			if err := s.db.Set(keyLog, []byte(l.Identity), pebble.Sync); err != nil {
				return false, fmt.Sprintf("cannot record the log identity: %v", err)
			}
		}
	}
	// Every table is read back after Open returns (verifyInBackground),
	// not here: reading a store of 1,000,000 events took ≈ 3 s of CPU, on
	// the path of the first decision after every restart.
	s.pos.Store(pos)
	return false, ""
}

// firstLine keeps an error message to one line (Pebble's corruption errors
// carry a detail block after a newline).
func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// verifyChunk is how many keys verify reads between two checks of stop.
const verifyChunk = 4096

// verify reads every key and value, so Pebble checks every block's
// checksum, and returns how many keys it read. It returns early, with a
// nil error, once stop is closed (nil: never). Each chunk is followed by a pause of pause times its duration
// (0: none), so a background verification takes about 1/(1+pause) of one
// core.
func (s *Store) verify(stop <-chan struct{}, pause int) (keys int, err error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	n, chunk := 0, time.Now()
	valid := it.First()
	for valid {
		if _, err := it.ValueAndErr(); err != nil {
			it.Close()
			return n, err
		}
		if n++; n%verifyChunk != 0 {
			valid = it.Next()
			continue
		}
		if pause == 0 {
			select {
			case <-stop:
				return n, it.Close()
			default:
			}
			valid = it.Next()
			continue
		}
		// An open iterator pins the memtables and tables it reads: close
		// it for the pause, and go on after the last key read.
		last := bytes.Clone(it.Key())
		if err := it.Close(); err != nil {
			return n, err
		}
		if stopped(stop, time.Duration(pause)*time.Since(chunk)) {
			return n, nil
		}
		chunk = time.Now()
		if it, err = s.db.NewIter(&pebble.IterOptions{LowerBound: last}); err != nil {
			return n, err
		}
		if valid = it.First(); valid && bytes.Equal(it.Key(), last) {
			valid = it.Next()
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return n, err
	}
	return n, it.Close()
}

// verifyPause makes the background verification take about a quarter of
// one core: it never competes with the driver's warm-up and gating for long.
const verifyPause = 3

// verifyInBackground reads every table back, as Open once did before it
// returned: Pebble checks each block's checksum when it reads the block,
// so nothing damaged is ever served; this finds damage in blocks no read
// has met yet. Tables read back whole at an earlier start, unchanged since,
// are not read again (verifiedFile). A damaged table makes the store refuse every read
// (ErrCorrupt) and leaves the REBUILD marker for the next start, as a
// corruption met by any read does. VerifyDone reports the outcome.
func (s *Store) verifyInBackground() {
	s.stopVerify, s.verifyDone = make(chan struct{}), make(chan struct{})
	if s.opts.SkipVerify {
		close(s.verifyDone)
		return
	}
	start := time.Now()
	go func() {
		defer close(s.verifyDone)
		s.rw.RLock()
		_, err := s.verifyTables(s.stopVerify, verifyPause)
		if err != nil && !pebble.IsCorruptionError(err) {
			// A table this build cannot open on its own: read the whole
			// store through Pebble instead, as before.
			s.log.Warn("read models: tables not verified one by one; reading the whole store", "err", firstLine(err))
			_, err = s.verify(s.stopVerify, verifyPause)
		}
		s.rw.RUnlock()
		select {
		case <-s.stopVerify:
			return // closed meanwhile: the next start verifies again
		default:
		}
		if err != nil {
			s.verifyErr = s.fail(err)
			s.log.Error("read models: a table fails verification", "err", firstLine(err))
			return
		}
		s.log.Debug("read models verified", "took", time.Since(start).Round(time.Millisecond))
	}()
}

// VerifyDone returns a channel closed when the verification started by
// Open has ended, and a function returning its error then: ErrCorrupt
// (wrapped) when a table failed it, nil when every table read back
// (or Options.SkipVerify, or the store was closed first).
func (s *Store) VerifyDone() (<-chan struct{}, func() error) {
	return s.verifyDone, func() error {
		<-s.verifyDone
		return s.verifyErr
	}
}

// Verify reads the whole store back, checking every block checksum. It
// returns ErrCorrupt (and marks the store for rebuild) if one fails.
func (s *Store) Verify() error {
	s.rw.RLock()
	defer s.rw.RUnlock()
	if err := s.usable(); err != nil {
		return err
	}
	if _, err := s.verify(nil, 0); err != nil {
		return s.fail(err)
	}
	return nil
}

func (s *Store) isEmpty() (bool, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return false, err
	}
	empty := !it.First()
	if err := it.Error(); err != nil {
		it.Close()
		return false, err
	}
	return empty, it.Close()
}

// cacheSize is the Pebble block cache of a store.
const cacheSize = 8 << 20

func (s *Store) openPebble() (*pebble.DB, error) {
	// The read models answer point reads and short scans (the HTTP API,
	// the CLI) and the driver's read-modify-writes of a few hot keys; the
	// background verification reads every block through this cache, so
	// its size is RSS a node holds from its first minute on.
	// Pebble's default reaction to a bad block is Fatalf (exit). Here the
	// store stops serving instead, and the next start rebuilds it.
	return OpenPebble(s.dir, PebbleOptions{CacheSize: cacheSize, MemTableSize: 8 << 20, Logger: s.log, OnCorruption: s.onCorruption})
}

// PebbleOptions is what differs between Vigil's Pebble stores (the read
// models here, the ingest service's id index).
type PebbleOptions struct {
	// CacheSize is the block cache's size in bytes: what it holds of the
	// tables' blocks (filters, indexes, data) while two memtables are
	// full; they, which Pebble charges to the same cache, come on top
	// (OpenPebble).
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes.
	MemTableSize uint64
	// Logger gets Pebble's messages (see PebbleLogger).
	Logger *slog.Logger
	// OnCorruption, when set, is told of every damaged block a read meets.
	OnCorruption func(pebble.DataCorruptionInfo)
}

// OpenPebble opens (or creates) the Pebble database in dir as Vigil's
// stores keep theirs: bloom filters on every level, Pebble's messages
// through PebbleLogger, and a panic inside Pebble (a damaged manifest, a
// Fatalf) returned as an error for the caller to rebuild from the log.
func OpenPebble(dir string, o PebbleOptions) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("pebble panicked: %v", r)
		}
	}()
	// Pebble charges every memtable it allocates to the block cache: a
	// cache no larger than the memtables holds no block at all, and every
	// lookup reads and checksums its filter and index blocks from the
	// file again (the id index's misses cost 12-24 µs instead of 2-5). So
	// the cache is sized for two memtables (the mutable one and one being
	// flushed) plus CacheSize. While more wait to be flushed the blocks
	// get less room; while the memtables are small (after a start) they
	// get more, up to the whole size, which bounds what the cache holds.
	po := &pebble.Options{MemTableSize: o.MemTableSize, Logger: PebbleLogger(o.Logger)}
	cache := pebble.NewCache(o.CacheSize + 2*int64(o.MemTableSize))
	defer cache.Unref()
	po.Cache = cache
	if o.OnCorruption != nil {
		po.EventListener = &pebble.EventListener{DataCorruption: o.OnCorruption}
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return pebble.Open(dir, po)
}

// PebbleLogger is the pebble.Logger Vigil's Pebble stores use (the read
// models here, the ingest service's id index): messages go to l, and a
// Fatalf panics instead of exiting the process (see pebbleLogger).
func PebbleLogger(l *slog.Logger) pebble.Logger { return pebbleLogger{l} }

func closeQuietly(db *pebble.DB) {
	defer func() { _ = recover() }()
	_ = db.Close()
}

// pebbleLogger routes Pebble's messages to slog. Pebble's default Fatalf
// exits the process; this one panics instead, which Open recovers from
// (the store is then rebuilt) and which elsewhere stops the process with a
// stack trace.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "source", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "source", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "source", "pebble", "fatal", true)
	panic("pebble: " + msg)
}

// onCorruption is called by Pebble, synchronously in read paths, when it
// finds a damaged block. Reads and writes fail from then on.
func (s *Store) onCorruption(info pebble.DataCorruptionInfo) {
	if !s.corrupt.Swap(true) {
		s.log.Error("read models corrupted; refusing to serve them until they are rebuilt (restart vigil serve)", "err", info.String())
		if err := RequestRebuild(s.dir); err != nil {
			s.log.Error("cannot leave the rebuild marker", "err", err)
		}
	}
}

// Close closes the store. Further calls return ErrClosed; Close is idempotent.
func (s *Store) Close() error {
	if s.stopVerify != nil {
		s.stopOnce.Do(func() { close(s.stopVerify) })
		<-s.verifyDone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rw.Lock()
	defer s.rw.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// Position is the last log sequence the store has durably applied.
func (s *Store) Position() uint64 { return s.pos.Load() }

// positionPoll is how often WaitPosition reads the position.
const positionPoll = 2 * time.Millisecond

// WaitPosition waits until the store has applied the log record at seq,
// or ctx is done, and reports whether it has.
func (s *Store) WaitPosition(ctx context.Context, seq uint64) bool {
	if s.pos.Load() >= seq {
		return true
	}
	tick := time.NewTicker(positionPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.pos.Load() >= seq
		case <-tick.C:
			if s.pos.Load() >= seq {
				return true
			}
		}
	}
}

// Status describes the store.
type Status struct {
	Dir      string `json:"dir"`
	Position uint64 `json:"position"`
	// Reset says why Open wiped the store ("" if it did not).
	Reset string `json:"reset,omitempty"`
	// Target is the log's last sequence when the store opened (0 if unknown).
	Target uint64 `json:"target,omitempty"`
	// CatchingUp is true while Position is below Target: the read models
	// are being (re)built and answer for a prefix of the log only.
	CatchingUp bool `json:"catching_up"`
	Corrupt    bool `json:"corrupt"`
}

// Status returns the store's state.
func (s *Store) Status() Status {
	p := s.pos.Load()
	return Status{Dir: s.dir, Position: p, Reset: s.reset, Target: s.target,
		CatchingUp: p < s.target, Corrupt: s.corrupt.Load()}
}

func (s *Store) usable() error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.corrupt.Load() {
		return ErrCorrupt
	}
	return nil
}

// fail turns a storage error into the store's error. A corruption error
// marks the store corrupt for good and asks the next Open to rebuild.
func (s *Store) fail(err error) error {
	if err == nil {
		return nil
	}
	if pebble.IsCorruptionError(err) {
		if !s.corrupt.Swap(true) {
			s.log.Error("read models corrupted; refusing to serve them until they are rebuilt (restart vigil serve)", "err", err)
			if werr := RequestRebuild(s.dir); werr != nil {
				s.log.Error("cannot leave the rebuild marker", "err", werr)
			}
		}
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return fmt.Errorf("projections: %w", err)
}

// rawGet reads a key with no state checks; the value is a copy.
func (s *Store) rawGet(k []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	closer.Close()
	return out, true, nil
}

// get reads a key for a read API or a fold.
func (s *Store) get(k []byte) ([]byte, bool, error) {
	s.rw.RLock()
	defer s.rw.RUnlock()
	if err := s.usable(); err != nil {
		return nil, false, err
	}
	v, ok, err := s.rawGet(k)
	if err != nil {
		return nil, false, s.fail(err)
	}
	return v, ok, nil
}

// Apply folds a batch into the read models and commits it, with the
// position of its last record, as one atomic Pebble batch. Records at or
// below Position are skipped, so re-sending an overlapping batch after a
// crash changes nothing. With Position, it is the sink a driver feeds
// (internal/driver.Sink).
//
// Once the store is corrupt, Apply drops batches and returns nil: the
// driver, and so gating, goes on; reads refuse (ErrCorrupt) until the next
// start rebuilds the store. Other failures (a full disk) are returned.
func (s *Store) Apply(batch []Applied) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.corrupt.Load() && !s.closed.Load() {
		return nil
	}
	_, err := s.applyLocked(batch, allProjections, true, 0)
	if errors.Is(err, ErrCorrupt) {
		return nil
	}
	return err
}

// applyLocked folds the records of batch above the position (or, when
// movePosition is false, those at or below limit) into projs.
func (s *Store) applyLocked(batch []Applied, projs []projection, movePosition bool, limit uint64) (applied int, err error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	pos := s.pos.Load()
	size := 0
	for i := range batch {
		size += 2*len(batch[i].Record.Raw) + 384
	}
	t := s.newTxn(size)
	defer t.close()
	last := pos
	for i := range batch {
		a := &batch[i]
		seq := a.Record.Seq
		if movePosition && seq <= last {
			continue
		}
		if !movePosition && seq > limit {
			break
		}
		for _, p := range projs {
			if err := p.apply(t, a); err != nil {
				return 0, err
			}
		}
		if seq > last {
			last = seq
		}
		applied++
	}
	if applied == 0 {
		return 0, nil
	}
	if err := t.flush(); err != nil {
		return 0, err
	}
	if movePosition {
		if err := t.b.Set(keyPosition, encodePosition(last), nil); err != nil {
			return 0, s.fail(err)
		}
	}
	if err := t.b.Commit(s.wo); err != nil {
		return 0, s.fail(err)
	}
	if movePosition {
		s.pos.Store(last)
	}
	return applied, nil
}
