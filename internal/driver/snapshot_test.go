package driver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/testnode/wait"
	"github.com/vigil-dev/vigil/processors"
)

// tally is a Snapshotter whose state is a hash chain over every record it
// folded; each output carries the chain, so outputs depend on the whole
// prefix. steps counts the Steps (not state).
type tally struct {
	mu    sync.Mutex
	n     uint64
	chain [32]byte
	steps []uint64
}

func (t *tally) Name() string { return "tally" }

func (t *tally) Step(rec events.Record) ([]processors.Output, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps = append(t.steps, rec.Seq)
	t.n++
	t.chain = sha256.Sum256(append(append(t.chain[:], fmt.Sprint(rec.Seq)...), rec.Raw...))
	return []processors.Output{processors.NewOutput(t.Name(), &rec, 0, events.SubjectAlert, events.KindAlert,
		events.Alert{Severity: "low", Reason: fmt.Sprintf("%d %x", t.n, t.chain[:8]), EventID: rec.Event.ID, LogSeq: rec.Seq})}, nil
}

type tallyState struct {
	N     uint64 `msgpack:"n"`
	Chain []byte `msgpack:"chain"`
}

func (t *tally) Snapshot() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return processors.EncodeState(&tallyState{N: t.n, Chain: t.chain[:]})
}

func (t *tally) Restore(b []byte) error {
	var st tallyState
	if err := processors.DecodeState(b, &st); err != nil {
		return err
	}
	if len(st.Chain) != 32 {
		return fmt.Errorf("%w: chain of %d bytes", processors.ErrSnapshot, len(st.Chain))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n = st.N
	copy(t.chain[:], st.Chain)
	return nil
}

func (t *tally) state() (uint64, [32]byte, []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, t.chain, slices.Clone(t.steps)
}

// memStore is a SnapshotStore in memory.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Put(ctx context.Context, name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[name] = bytes.Clone(data)
	return nil
}

func (s *memStore) Get(ctx context.Context, name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[name]
	if !ok {
		return nil, fmt.Errorf("no snapshot %s", name)
	}
	return bytes.Clone(b), nil
}

func (s *memStore) List(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func (s *memStore) Delete(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, name)
	return nil
}

// seqs returns the seqs of the snapshots in s.
func seqsIn(t *testing.T, st SnapshotStore) []uint64 {
	t.Helper()
	names, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, n := range names {
		if _, s, ok := parseSnapshotName(n); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// waitSnapshot waits until st holds a snapshot at seq or later.
func waitSnapshot(t *testing.T, r *running, st SnapshotStore, seq uint64) {
	t.Helper()
	wait.Eventually(t, wait.Default, func() string {
		s := seqsIn(t, st)
		if len(s) > 0 && s[len(s)-1] >= seq {
			return ""
		}
		r.alive(t)
		return fmt.Sprintf("no snapshot at %d or later: %v", seq, s)
	})
}

// fromZero folds the log's first n records into a fresh tally.
func fromZero(t *testing.T, e *env, n uint64) (uint64, [32]byte) {
	t.Helper()
	ref := &tally{}
	err := readLog(t, e, n, func(seq uint64, subject string, data []byte) {
		processors.Feed(ref, seq, subject, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	c, chain, _ := ref.state()
	return c, chain
}

func appendN(t *testing.T, e *env, prefix string, n int) uint64 {
	t.Helper()
	var last uint64
	for i := range n {
		last = e.append(t, fmt.Sprintf("%s%03d", prefix, i))
	}
	return last
}

// TestDriverRestartFoldsOnlySuffix: a restarted driver restores its
// newest snapshot and folds only the records after it (counted, not
// timed), and ends in the state folding from zero gives. With the
// snapshot at stop, it folds nothing at all before going live.
func TestDriverRestartFoldsOnlySuffix(t *testing.T) {
	for _, final := range []bool{false, true} {
		t.Run(fmt.Sprintf("final=%v", final), func(t *testing.T) {
			e := startEnv(t, envOptions{})
			store := newMemStore()
			snaps := SnapshotConfig{Every: 10, Interval: -1, Keep: 2, NoFinal: !final, Store: store}
			last := appendN(t, e, "a", 45)
			r := e.run(t, Config{Processor: &tally{}, Snapshots: snaps})
			r.waitFolded(t, last)
			waitSnapshot(t, r, store, 30)
			r.halt(t)
			kept := seqsIn(t, store)
			if len(kept) > 2 {
				t.Fatalf("kept %v, want at most 2", kept)
			}
			newest := kept[len(kept)-1]
			if final && newest != last {
				t.Fatalf("newest snapshot %d, want the one at stop (%d)", newest, last)
			}
			last = appendN(t, e, "b", 7)

			tl := &tally{}
			r = e.run(t, Config{Processor: tl, Snapshots: snaps})
			wu := r.d.WarmUp()
			if wu.Restored != newest || wu.Checkpoint != 45 || wu.Folded != 45-newest || len(wu.Refused) != 0 {
				t.Fatalf("warm-up %+v, want snapshot %d restored and %d records folded", wu, newest, 45-newest)
			}
			r.waitFolded(t, last)
			r.halt(t)
			n, chain, steps := tl.state()
			if want := seqRange(newest+1, last); !slices.Equal(steps, want) {
				t.Fatalf("folded %v, want %v", steps, want)
			}
			wn, wchain := fromZero(t, e, last)
			if n != wn || chain != wchain {
				t.Fatalf("state after restart (%d, %x) differs from a fold from zero (%d, %x)", n, chain[:8], wn, wchain[:8])
			}
		})
	}
}

// flakyList is a SnapshotStore whose first failures listings fail, as a
// listing that times out on a server busy with its start.
type flakyList struct {
	*memStore
	mu       sync.Mutex
	failures int
}

func (f *flakyList) List(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	fail := f.failures > 0
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if fail {
		return nil, context.DeadlineExceeded
	}
	return f.memStore.List(ctx)
}

// TestDriverRestoreRetriesListing: a listing that fails at start is asked
// again; the driver restores its snapshot instead of folding everything.
func TestDriverRestoreRetriesListing(t *testing.T) {
	e := startEnv(t, envOptions{})
	store := newMemStore()
	snaps := SnapshotConfig{Every: 10, Interval: -1, Keep: 2, Store: store}
	last := appendN(t, e, "a", 25)
	r := e.run(t, Config{Processor: &tally{}, Snapshots: snaps})
	r.waitFolded(t, last)
	// Where snapshots fall depends on how the deliveries were batched (the
	// fold runs ahead of the stores, so its batches may be small): at
	// least one is taken from 10 records on.
	waitSnapshot(t, r, store, 10)
	r.halt(t)
	// The newest snapshot: the one at stop (25) when the checkpoint had
	// caught up with the fold by then, else the newest taken while live.
	kept := seqsIn(t, store)
	newest := kept[len(kept)-1]

	snaps.Store = &flakyList{memStore: store, failures: 2}
	r = e.run(t, Config{Processor: &tally{}, Snapshots: snaps})
	if wu := r.d.WarmUp(); wu.Restored != newest || wu.Folded != wu.Checkpoint-newest {
		t.Fatalf("warm-up %+v after two failed listings, want the snapshot at %d restored and only the records after it folded", wu, newest)
	}
	r.halt(t)
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// TestDriverSnapshotRefused: a damaged snapshot is passed over for an
// older one; with none usable, or when the snapshots are of another log,
// the driver folds from the start; a snapshot past the checkpoint is never
// used. The state is always the one folding from zero gives.
func TestDriverSnapshotRefused(t *testing.T) {
	e := startEnv(t, envOptions{})
	store := newMemStore()
	snaps := SnapshotConfig{Every: 1, Interval: -1, Keep: 3, NoFinal: true, Store: store}
	r := e.run(t, Config{Processor: &tally{}, Snapshots: snaps})
	for _, p := range []string{"a", "b", "c"} {
		last := appendN(t, e, p, 15)
		r.waitFolded(t, last)
		waitSnapshot(t, r, store, last)
	}
	r.halt(t)
	kept := seqsIn(t, store)
	if len(kept) < 2 {
		t.Fatalf("kept %v, want 2 or more", kept)
	}
	newest, older := kept[len(kept)-1], kept[len(kept)-2]
	orig := map[uint64][]byte{}
	for _, s := range kept {
		orig[s], _ = store.Get(t.Context(), snapshotName("vigil-test", s))
	}
	good := orig[older]
	// storeOf returns a store of the snapshots kept, each changed by damage.
	storeOf := func(damage func(seq uint64, b []byte) []byte) SnapshotConfig {
		st := newMemStore()
		for s, b := range orig {
			st.Put(t.Context(), snapshotName("vigil-test", s), damage(s, bytes.Clone(b)))
		}
		c := snaps
		c.Store = st
		return c
	}

	check := func(t *testing.T, r *running, tl *tally, restored uint64, refused int) {
		t.Helper()
		wu := r.d.WarmUp()
		if wu.Restored != restored || len(wu.Refused) != refused || wu.Folded != 45-restored {
			t.Fatalf("warm-up %+v, want snapshot %d restored, %d refused", wu, restored, refused)
		}
		waitConsumer(t, e, 45)
		r.halt(t)
		n, chain, _ := tl.state()
		wn, wchain := fromZero(t, e, 45)
		if n != wn || chain != wchain {
			t.Fatalf("state (%d, %x) differs from a fold from zero (%d, %x)", n, chain[:8], wn, wchain[:8])
		}
	}
	t.Run("damaged newest, one past the checkpoint", func(t *testing.T) {
		c := storeOf(func(seq uint64, b []byte) []byte {
			if seq == newest {
				b[len(b)/2] ^= 1
			}
			return b
		})
		c.Store.Put(t.Context(), snapshotName("vigil-test", 1000), good)
		tl := &tally{}
		check(t, e.run(t, Config{Processor: tl, Snapshots: c}), tl, older, 1)
	})
	t.Run("none usable", func(t *testing.T) {
		c := storeOf(func(seq uint64, b []byte) []byte { return b[:len(b)-1] })
		tl := &tally{}
		check(t, e.run(t, Config{Processor: tl, Snapshots: c}), tl, 0, len(kept))
	})
	t.Run("another processor", func(t *testing.T) {
		other := newMemStore()
		other.Put(t.Context(), snapshotName("vigil-test", older), good)
		tl := &tally{}
		p, err := processors.NewPipeline(tl)
		if err != nil {
			t.Fatal(err)
		}
		s := snaps
		s.Store = other
		r := e.run(t, Config{Processor: &renamed{Pipeline: p}, Snapshots: s})
		if wu := r.d.WarmUp(); wu.Restored != 0 || len(wu.Refused) != 1 || !strings.Contains(wu.Refused[0], "processor") {
			t.Fatalf("warm-up %+v, want the snapshot of another processor refused", wu)
		}
		waitConsumer(t, e, 45)
		r.halt(t)
	})
	t.Run("another log", func(t *testing.T) {
		e2 := startEnv(t, envOptions{})
		appendN(t, e2, "other", 45)
		// A first run on the other log makes its checkpoint, and no snapshot.
		r := e2.run(t, Config{Processor: &tally{}, Snapshots: SnapshotConfig{Off: true}})
		r.waitFolded(t, 45)
		r.halt(t)
		tl := &tally{}
		r = e2.run(t, Config{Processor: tl, Snapshots: snaps})
		wu := r.d.WarmUp()
		if wu.Restored != 0 || len(wu.Refused) == 0 || !strings.Contains(strings.Join(wu.Refused, "\n"), "another log") {
			t.Fatalf("warm-up %+v, want every snapshot refused as of another log", wu)
		}
		r.halt(t)
		n, chain, _ := tl.state()
		wn, wchain := fromZero(t, e2, 45)
		if n != wn || chain != wchain {
			t.Fatal("state on the other log differs from a fold from zero")
		}
	})
}

// readLog calls fn for the log's records up to n.
func readLog(t *testing.T, e *env, n uint64, fn func(seq uint64, subject string, data []byte)) error {
	t.Helper()
	return natsutil.ReadStream(t.Context(), e.js, natsutil.ReadOptions{Stream: events.StreamLog, From: 1, To: n}, func(r natsutil.RawRecord) error {
		if r.Seq <= n {
			fn(r.Seq, r.Subject, r.Data)
		}
		return nil
	})
}

// waitConsumer waits until the driver's consumer exists again with its
// ack floor at floor (a driver stopped before it re-creates its consumer
// loses its checkpoint and folds from the start next time).
func waitConsumer(t *testing.T, e *env, floor uint64) {
	t.Helper()
	wait.Eventually(t, wait.Default, func() string {
		c, err := e.js.Consumer(t.Context(), events.StreamLog, "vigil-test")
		if err == nil {
			var info *jetstream.ConsumerInfo
			if info, err = c.Info(t.Context()); err == nil && info.AckFloor.Stream >= floor {
				return ""
			}
		}
		return fmt.Sprintf("consumer not back at %d: %v", floor, err)
	})
}

// renamed is a pipeline under another name.
type renamed struct{ *processors.Pipeline }

func (r *renamed) Name() string { return "renamed" }

// TestDriverSnapshotJetStream: the default store, the VIGIL_SNAPSHOTS
// object store bucket, holds the snapshots and a restart uses them.
func TestDriverSnapshotJetStream(t *testing.T) {
	e := startEnv(t, envOptions{})
	last := appendN(t, e, "a", 30)
	r := e.run(t, Config{Processor: &tally{}, Snapshots: SnapshotConfig{Every: 1000, Interval: -1}})
	r.waitFolded(t, last)
	r.halt(t) // the snapshot at stop
	tl := &tally{}
	r = e.run(t, Config{Processor: tl})
	if wu := r.d.WarmUp(); wu.Restored != last || wu.Folded != 0 {
		t.Fatalf("warm-up %+v, want the snapshot at %d and nothing folded", wu, last)
	}
	r.halt(t)
	if _, _, steps := tl.state(); len(steps) != 0 {
		t.Fatalf("folded %v after restoring", steps)
	}
	if _, err := e.js.ObjectStore(t.Context(), SnapshotBucket); err != nil {
		t.Fatal(err)
	}
}

// TestDriverSnapshotDir: a single host's snapshots are files in
// SnapshotConfig.Dir. A node that had them in the bucket restores the
// bucket's at its first start with a directory (not the whole log), and
// once one is stored in the directory the bucket's are deleted. Temporary
// files and other names in the directory are not snapshots.
func TestDriverSnapshotDir(t *testing.T) {
	e := startEnv(t, envOptions{})
	dir := filepath.Join(t.TempDir(), "snapshots")
	last := appendN(t, e, "a", 30)
	r := e.run(t, Config{Processor: &tally{}, Snapshots: SnapshotConfig{Every: 1000, Interval: -1}})
	r.waitFolded(t, last)
	r.halt(t) // the snapshot at stop, in the bucket
	ob, err := e.js.ObjectStore(t.Context(), SnapshotBucket)
	if err != nil {
		t.Fatal(err)
	}
	if infos, err := ob.List(t.Context()); err != nil || len(infos) != 1 {
		t.Fatalf("bucket holds %d snapshots (%v), want 1", len(infos), err)
	}

	last = appendN(t, e, "b", 5)
	snaps := SnapshotConfig{Every: 1000, Interval: -1, Dir: dir}
	tl := &tally{}
	r = e.run(t, Config{Processor: tl, Snapshots: snaps})
	if wu := r.d.WarmUp(); wu.Restored != 30 || wu.Folded != 0 {
		t.Fatalf("warm-up %+v, want the bucket's snapshot at 30 and nothing folded", wu)
	}
	r.waitFolded(t, last)
	waitConsumer(t, e, last)
	r.halt(t) // the snapshot at stop, in the directory
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) != 1 || filepath.Base(files[0]) != snapshotName("vigil-test", last) {
		t.Fatalf("directory holds %v (%v), want the snapshot at %d", files, err, last)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != snapshotFileMode {
		t.Fatalf("snapshot file mode %v (%v), want %v", fi.Mode().Perm(), err, os.FileMode(snapshotFileMode))
	}
	if infos, err := ob.List(t.Context()); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatalf("bucket still holds %d snapshots (%v)", len(infos), err)
	}

	// Debris of a crash while writing, and a stranger, are passed over.
	for _, n := range []string{".tmp-123", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tl = &tally{}
	r = e.run(t, Config{Processor: tl, Snapshots: snaps})
	if wu := r.d.WarmUp(); wu.Restored != last || wu.Folded != 0 || len(wu.Refused) != 0 {
		t.Fatalf("warm-up %+v, want the directory's snapshot at %d and nothing folded", wu, last)
	}
	waitConsumer(t, e, last)
	r.halt(t)
	n, chain, _ := tl.state()
	if wn, wchain := fromZero(t, e, last); n != wn || chain != wchain {
		t.Fatalf("state after restart (%d) differs from a fold from zero (%d)", n, wn)
	}

	// A damaged file is refused by its digest, and the log folded instead.
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run(t, Config{Processor: &tally{}, Snapshots: SnapshotConfig{Every: 1000, Interval: -1, Dir: dir, NoFinal: true}})
	if wu := r.d.WarmUp(); wu.Restored != 0 || wu.Folded != last || len(wu.Refused) != 1 {
		t.Fatalf("warm-up %+v, want the damaged snapshot refused and %d records folded", wu, last)
	}
	r.halt(t)
}

func TestSnapshotDirNames(t *testing.T) {
	s := &dirStore{dir: t.TempDir()}
	for _, name := range []string{"", "../x.00000000000000000001", "a/b.00000000000000000001", ".hidden", `a\b`} {
		if err := s.Put(t.Context(), name, []byte("x")); err == nil {
			t.Errorf("Put(%q) stored a file", name)
		}
		if _, err := s.Get(t.Context(), name); err == nil {
			t.Errorf("Get(%q) read a file", name)
		}
	}
	if names, err := s.List(t.Context()); err != nil || len(names) != 0 {
		t.Fatalf("List = %v, %v; want nothing", names, err)
	}
}
