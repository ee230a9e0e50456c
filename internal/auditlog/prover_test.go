package auditlog

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/testnode/jsnode"
	"github.com/vigil-dev/vigil/processors/audit"
)

// testLog is an embedded JetStream server holding a VIGIL_LOG of records
// and a VIGIL_DERIVED with the checkpoints a test signs.
type testLog struct {
	t      testing.TB
	js     jetstream.JetStream
	signer note.Signer
	vs     note.Verifiers
	n      uint64 // records published (deleted ones included)
	gone   map[uint64]bool
}

func newTestLog(t testing.TB) *testLog {
	t.Helper()
	js := jsnode.Start(t)
	skey, vkey, err := note.GenerateKey(rand.Reader, "vigil-test")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := audit.NewVerifiers(vkey)
	if err != nil {
		t.Fatal(err)
	}
	l := &testLog{t: t, js: js, signer: signer, vs: vs, gone: map[uint64]bool{}}
	l.createLog()
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: events.StreamDerived, Subjects: []string{"vigil.audit.>", "vigil.gate.>"}}); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *testLog) createLog() {
	l.t.Helper()
	if _, err := l.js.CreateStream(context.Background(), jetstream.StreamConfig{Name: events.StreamLog, Subjects: []string{"vigil.log.>"}}); err != nil {
		l.t.Fatal(err)
	}
}

// record is the body of the log record at seq.
func record(seq uint64, salt string) []byte { return fmt.Appendf(nil, "record %d %s", seq, salt) }

// append publishes records up to seq n, each with salt in its body.
func (l *testLog) append(n uint64, salt string) {
	l.t.Helper()
	for l.n < n {
		l.n++
		if _, err := l.js.Publish(context.Background(), "vigil.log.c", record(l.n, salt)); err != nil {
			l.t.Fatal(err)
		}
	}
}

// delete removes the record at seq from VIGIL_LOG.
func (l *testLog) delete(seq uint64) {
	l.t.Helper()
	st, err := l.js.Stream(context.Background(), events.StreamLog)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := st.DeleteMsg(context.Background(), seq); err != nil {
		l.t.Fatal(err)
	}
	l.gone[seq] = true
}

// checkpoint signs the tree of the first size records as the audit fold
// does (deleted records as audit.MissingLeaf) and stores it, with the
// bodies given by salt.
func (l *testLog) checkpoint(size uint64, salt string) audit.Checkpoint {
	l.t.Helper()
	tree := &audit.Tree{}
	for seq := uint64(1); seq <= size; seq++ {
		leaf := audit.LeafHash(record(seq, salt))
		if l.gone[seq] {
			leaf = audit.MissingLeaf
		}
		if err := tree.Append(leaf); err != nil {
			l.t.Fatal(err)
		}
	}
	return l.publish(tree, size)
}

// publish signs the root of tree at size and stores it as a checkpoint.
func (l *testLog) publish(tree *audit.Tree, size uint64) audit.Checkpoint {
	l.t.Helper()
	root, err := tree.Root(size)
	if err != nil {
		l.t.Fatal(err)
	}
	msg, err := audit.SignCheckpoint(l.signer, "vigil-test", size, root)
	if err != nil {
		l.t.Fatal(err)
	}
	d := events.Derived{V: 1, ID: fmt.Sprintf("audit:%d", size), Kind: events.KindAuditCheckpoint, Seq: size,
		Data: events.AuditCheckpoint{TreeSize: size, RootHash: root.String(), Note: msg}}
	b, err := d.Marshal()
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.js.Publish(context.Background(), events.SubjectCheckpoint, b); err != nil {
		l.t.Fatal(err)
	}
	cp, err := audit.OpenCheckpoint(msg, l.vs)
	if err != nil {
		l.t.Fatal(err)
	}
	return cp
}

// sameProof fails unless the Prover's proof of seq is Prove's.
func sameProof(t *testing.T, l *testLog, p *Prover, seq uint64) {
	t.Helper()
	ctx := t.Context()
	want, werr := Prove(ctx, l.js, l.vs, seq, nil)
	got, gerr := p.Prove(ctx, seq)
	if (werr == nil) != (gerr == nil) || (werr != nil && !sameSentinel(werr, gerr)) {
		t.Fatalf("seq %d: Prover error %v, Prove error %v", seq, gerr, werr)
	}
	if werr != nil {
		return
	}
	if got.Seq != want.Seq || got.Leaf != want.Leaf || got.Checkpoint.Size != want.Checkpoint.Size ||
		got.Checkpoint.Root != want.Checkpoint.Root || string(got.Raw) != string(want.Raw) || !slices.Equal(got.Path, want.Path) {
		t.Fatalf("seq %d: Prover's proof\n%+v\nProve's\n%+v", seq, got, want)
	}
}

func sameSentinel(a, b error) bool {
	for _, s := range []error{ErrNoCheckpoint, ErrMissing, ErrMismatch} {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

// TestProverMatchesProve: for every record of logs of several sizes (full
// and partial blocks, blocks of 8 records so the tree has many levels
// above them), the Prover gives Prove's proof, reading each record once
// however many proofs it answers; a log grown and checkpointed again is
// read only past what was read.
func TestProverMatchesProve(t *testing.T) {
	l := newTestLog(t)
	p := NewProver(l.js, l.vs, 3)
	if _, err := p.Prove(t.Context(), 1); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("no checkpoint yet: %v, want ErrNoCheckpoint", err)
	}
	l.append(150, "")
	l.checkpoint(100, "")
	l.checkpoint(77, "") // an older one stored later: the largest wins
	for seq := uint64(1); seq <= 101; seq++ {
		sameProof(t, l, p, seq) // 101: not covered, both ErrNoCheckpoint
	}
	if got := p.RecordsRead(); got != 96 {
		t.Fatalf("read %d records into blocks for a checkpoint of 100 (12 blocks of 8), want 96", got)
	}
	l.checkpoint(150, "")
	l.append(1000, "")
	for _, seq := range []uint64{1, 8, 9, 96, 97, 100, 101, 143, 144, 145, 150} {
		sameProof(t, l, p, seq)
	}
	if got := p.RecordsRead(); got != 144 {
		t.Fatalf("read %d records after a checkpoint of 150, want 144 (18 blocks, each once)", got)
	}
	l.checkpoint(1000, "")
	for seq := uint64(1); seq <= 1000; seq += 7 {
		sameProof(t, l, p, seq)
	}
	if got, want := p.RecordsRead(), uint64(1000); got != want {
		t.Fatalf("read %d records, want %d", got, want)
	}
	// 125 blocks: 125 roots and the 124 nodes above them that are complete.
	if got := p.CachedHashes(); got != 125+62+31+15+7+3+1 {
		t.Fatalf("%d hashes cached for 125 blocks", got)
	}
}

// TestProverGaps: records deleted before the fold signed them are
// MissingLeaf in both; a record deleted has no proof (ErrMissing), at the
// start, inside or at the end of a block, or at the end of the log.
func TestProverGaps(t *testing.T) {
	l := newTestLog(t)
	l.append(90, "")
	for _, seq := range []uint64{1, 12, 16, 17, 40, 41, 42, 43, 44, 45, 46, 47, 48, 89, 90} {
		l.delete(seq)
	}
	l.checkpoint(90, "")
	p := NewProver(l.js, l.vs, 3)
	for seq := uint64(1); seq <= 90; seq++ {
		sameProof(t, l, p, seq)
	}
	if _, err := p.Prove(t.Context(), 12); !errors.Is(err, ErrMissing) {
		t.Fatalf("deleted record: %v, want ErrMissing", err)
	}
	if _, err := p.Prove(t.Context(), 0); !errors.Is(err, ErrMissing) {
		t.Fatalf("seq 0: %v, want ErrMissing", err)
	}
}

// TestProverStreamReplaced: a VIGIL_LOG and VIGIL_DERIVED replaced by
// others (other records, other checkpoints) are read again, not answered
// from the cache of the old ones.
func TestProverStreamReplaced(t *testing.T) {
	l := newTestLog(t)
	l.append(64, "old")
	l.checkpoint(64, "old")
	p := NewProver(l.js, l.vs, 3)
	sameProof(t, l, p, 5)
	ctx := t.Context()
	for _, s := range []string{events.StreamLog, events.StreamDerived} {
		if err := l.js.DeleteStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond) // another creation time
	l.createLog()
	if _, err := l.js.CreateStream(ctx, jetstream.StreamConfig{Name: events.StreamDerived, Subjects: []string{"vigil.audit.>"}}); err != nil {
		t.Fatal(err)
	}
	l.n = 0
	l.append(64, "new")
	cp := l.checkpoint(64, "new")
	for _, seq := range []uint64{1, 5, 33, 64} {
		sameProof(t, l, p, seq)
		got, err := p.Prove(ctx, seq)
		if err != nil || got.Checkpoint.Root != cp.Root {
			t.Fatalf("seq %d after the streams were replaced: %v, root %v want %v", seq, err, got.Checkpoint.Root, cp.Root)
		}
	}
}

// TestProverStaleCache: a cached node that no longer matches (what a log
// replaced unnoticed would give) makes the Prover read the log again once
// and answer right; a log that does not match its checkpoint is
// ErrMismatch without a second read.
func TestProverStaleCache(t *testing.T) {
	l := newTestLog(t)
	l.append(64, "")
	l.checkpoint(64, "")
	p := NewProver(l.js, l.vs, 3)
	sameProof(t, l, p, 1)
	p.lock(t.Context())
	p.levels[2][1][0] ^= 1 // the node over blocks 4-7, in seq 1's path
	p.unlock()
	sameProof(t, l, p, 1)
	if got := p.RecordsRead(); got != 128 {
		t.Fatalf("read %d records, want 128 (the log twice)", got)
	}
	// A checkpoint the log does not match (signed over other records).
	l.append(80, "")
	l.checkpoint(80, "other")
	for range 3 {
		if _, err := p.Prove(t.Context(), 1); !errors.Is(err, ErrMismatch) {
			t.Fatalf("a log that does not match its checkpoint: %v, want ErrMismatch", err)
		}
	}
	if got := p.RecordsRead(); got != 128+16+80 {
		t.Fatalf("read %d records, want %d (the new blocks, then the log once again)", got, 128+16+80)
	}
}

// TestProverConcurrent: proofs asked at once (run with -race) all check.
func TestProverConcurrent(t *testing.T) {
	l := newTestLog(t)
	l.append(200, "")
	l.checkpoint(200, "")
	p := NewProver(l.js, l.vs, 3)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for seq := uint64(1); seq <= 200; seq += 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr, err := p.Prove(t.Context(), seq)
			if err == nil {
				err = audit.VerifyInclusion(seq, pr.Checkpoint.Size, audit.LeafHash(record(seq, "")), pr.Path, pr.Checkpoint.Root)
			}
			if err != nil {
				errs <- fmt.Errorf("seq %d: %w", seq, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := p.RecordsRead(); got != 200 {
		t.Fatalf("read %d records, want 200 (once)", got)
	}
}

// BenchmarkProve compares a proof built by Prove (the whole log read per
// request, as GET /v1/audit/proof did) with one from a warm Prover, on a
// log of 20,000 records.
func BenchmarkProve(b *testing.B) {
	l := newTestLog(b)
	const size = 20000
	l.append(size, "")
	l.checkpoint(size, "")
	b.Run("read-whole-log", func(b *testing.B) {
		for i := range b.N {
			if _, err := Prove(b.Context(), l.js, nil, uint64(i%size)+1, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prover", func(b *testing.B) {
		p := NewProver(l.js, nil, 0)
		if _, err := p.Prove(b.Context(), 1); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := p.Prove(b.Context(), uint64(i*7919%size)+1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(p.CachedHashes()*audit.HashSize), "cache-bytes")
	})
}

// TestProverWaitEndsWithContext: a proof waiting for another one (the
// first, which reads the whole log) gives up when its context ends.
func TestProverWaitEndsWithContext(t *testing.T) {
	l := newTestLog(t)
	p := NewProver(l.js, l.vs, 3)
	if err := p.lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Prove(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a proof waiting past its deadline: %v, want DeadlineExceeded", err)
	}
	if _, err := p.Latest(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a checkpoint waiting past its deadline: %v, want DeadlineExceeded", err)
	}
	p.unlock()
	if _, err := p.Prove(t.Context(), 1); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("after the lock is free: %v, want ErrNoCheckpoint", err)
	}
}
