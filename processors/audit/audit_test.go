package audit

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

func TestProcessorCheckpoints(t *testing.T) {
	s, vs, _ := testKey(t, "vigil-audit-test", 1)
	recs := testLog(t, 10)
	cps, outs := fold(t, recs, 4, s)
	if len(cps) != 2 || len(outs) != 2 {
		t.Fatalf("got %d checkpoints, %d outputs; want 2, 2", len(cps), len(outs))
	}
	// An independent tree (golang.org/x/mod/sumdb/tlog) agrees on the roots.
	var tree Tree
	for _, r := range recs {
		if err := tree.Append(LeafHash(r.raw)); err != nil {
			t.Fatal(err)
		}
	}
	for i, cp := range cps {
		size := uint64(4 * (i + 1))
		if cp.TreeSize != size || cp.FirstSeq != size-3 || cp.Interval != 4 {
			t.Fatalf("checkpoint %d = size %d first %d interval %d", i, cp.TreeSize, cp.FirstSeq, cp.Interval)
		}
		root, err := tree.Root(size)
		if err != nil {
			t.Fatal(err)
		}
		if cp.RootHash != root.String() {
			t.Fatalf("size %d: processor root %s, tlog root %s", size, cp.RootHash, root)
		}
		c, err := OpenCheckpoint(cp.Note, vs)
		if err != nil {
			t.Fatal(err)
		}
		if c.Size != size || c.Root != root || c.Origin != "vigil-audit-test" {
			t.Fatalf("note says %+v", c)
		}
		leaves, _ := base64.StdEncoding.DecodeString(cp.Leaves)
		for j := range 4 {
			want := LeafHash(recs[int(cp.FirstSeq)-1+j].raw)
			if !bytes.Equal(leaves[j*32:(j+1)*32], want[:]) {
				t.Fatalf("checkpoint %d leaf %d differs", size, j)
			}
		}
	}
	if outs[0].Subject != events.SubjectCheckpoint || outs[0].Event.ID != "audit:4" || outs[0].Event.Conversation != "" {
		t.Fatalf("output = %+v", outs[0])
	}
	if !strings.HasPrefix(cps[0].Note, "vigil-audit-test\n4\n"+cps[0].RootHash+"\n\n— vigil-audit-test ") {
		t.Fatalf("note:\n%s", cps[0].Note)
	}
}

// TestProcessorDeterministic: two folds of the same log (the live and the
// replay driver) give byte-identical outputs.
func TestProcessorDeterministic(t *testing.T) {
	s, _, _ := testKey(t, "k", 2)
	recs := testLog(t, 40)
	recs = append(recs[:17], recs[18:]...) // a gap at 18
	_, a := fold(t, recs, 8, s)
	_, b := fold(t, recs, 8, s)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d vs %d outputs", len(a), len(b))
	}
	for i := range a {
		x, err := a[i].Event.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		y, _ := b[i].Event.Marshal()
		if !bytes.Equal(x, y) || a[i].Subject != b[i].Subject {
			t.Fatalf("output %d differs", i)
		}
	}
}

func TestProcessorGap(t *testing.T) {
	s, vs, _ := testKey(t, "k", 3)
	recs := testLog(t, 8)
	fed := append(append([]rec{}, recs[:2]...), recs[4:]...) // seqs 3 and 4 never reach the fold
	cps, outs := fold(t, fed, 4, s)
	var alert *processors.Output
	for i := range outs {
		if outs[i].Event.Kind == events.KindAlert {
			alert = &outs[i]
		}
	}
	if alert == nil || alert.Event.ID != "audit:5:alert-gap" || !strings.Contains(alert.Event.Data.(events.Alert).Reason, "3..4") {
		t.Fatalf("alert = %+v", alert)
	}
	leaves, _ := base64.StdEncoding.DecodeString(cps[0].Leaves)
	if !bytes.Equal(leaves[2*32:3*32], MissingLeaf[:]) || !bytes.Equal(leaves[3*32:4*32], MissingLeaf[:]) {
		t.Fatal("skipped seqs are not MissingLeaf in the checkpoint")
	}
	// The checkpoint at 4 is emitted when seq 5 arrives (the size crossed 4).
	if cps[0].TreeSize != 5 || cps[0].FirstSeq != 1 || cps[1].TreeSize != 8 || cps[1].FirstSeq != 6 {
		t.Fatalf("checkpoints %d/%d, %d/%d", cps[0].TreeSize, cps[0].FirstSeq, cps[1].TreeSize, cps[1].FirstSeq)
	}
	// The log as fed verifies, naming the gap as deleted when folded.
	rep := verifyLog(t, vs, fed, 8, cps)
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != FindDeleted || rep.Findings[0].Seq != 3 || rep.Findings[0].Last != 4 {
		t.Fatalf("findings = %v", rep.Findings)
	}
}

func TestProcessorOrder(t *testing.T) {
	s, _, _ := testKey(t, "k", 4)
	p, err := New(Config{Signer: s, Interval: 2})
	if err != nil {
		t.Fatal(err)
	}
	recs := testLog(t, 3)
	for _, r := range recs[:2] {
		if _, err := p.Step(events.Record{Seq: r.seq, Raw: r.raw}); err != nil {
			t.Fatal(err)
		}
	}
	root := p.Root()
	if _, err := p.Step(events.Record{Seq: 2, Raw: recs[2].raw}); err == nil {
		t.Fatal("a repeated seq was accepted")
	}
	if p.Root() != root || p.Size() != 2 {
		t.Fatal("a refused record changed the state")
	}
}

type failingSigner struct{ note.Signer }

func (failingSigner) Sign([]byte) ([]byte, error) { return nil, errTest }

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "signing failed" }

// A failed checkpoint leaves the state as if the record was not seen.
func TestProcessorSignFailureKeepsState(t *testing.T) {
	s, _, _ := testKey(t, "k", 5)
	p, err := New(Config{Signer: failingSigner{s}, Interval: 2})
	if err != nil {
		t.Fatal(err)
	}
	recs := testLog(t, 2)
	if _, err := p.Step(events.Record{Seq: 1, Raw: recs[0].raw}); err != nil {
		t.Fatal(err)
	}
	root := p.Root()
	if _, err := p.Step(events.Record{Seq: 2, Raw: recs[1].raw}); err == nil {
		t.Fatal("signing error not returned")
	}
	if p.Size() != 1 || p.Root() != root {
		t.Fatalf("state changed: size %d", p.Size())
	}
}

func TestNewValidates(t *testing.T) {
	s, _, _ := testKey(t, "k", 6)
	for _, c := range []Config{
		{},
		{Signer: s, Interval: MaxInterval + 1},
		{Signer: s, Origin: "has space"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	p, err := New(Config{Signer: s})
	if err != nil || p.cfg.Interval != DefaultInterval || p.cfg.Origin != "k" {
		t.Fatalf("defaults: %v %+v", err, p)
	}
}

func TestInclusionProofs(t *testing.T) {
	recs := testLog(t, 37)
	var tree Tree
	for _, r := range recs {
		if err := tree.Append(LeafHash(r.raw)); err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []uint64{1, 2, 5, 16, 37} {
		root, _ := tree.Root(size)
		for seq := uint64(1); seq <= size; seq++ {
			p, err := tree.Prove(seq, size)
			if err != nil {
				t.Fatal(err)
			}
			leaf := LeafHash(recs[seq-1].raw)
			if err := VerifyInclusion(seq, size, leaf, p, root); err != nil {
				t.Fatalf("seq %d size %d: %v", seq, size, err)
			}
			if seq > 1 {
				if err := VerifyInclusion(seq-1, size, leaf, p, root); err == nil {
					t.Fatalf("proof of seq %d verifies at seq %d", seq, seq-1)
				}
			}
		}
	}
}

// TestProcessorSeal: an audit.seal record makes a checkpoint at once,
// covering itself and everything before it; the count-based checkpoints go
// on at multiples of the interval, and the log still verifies.
func TestProcessorSeal(t *testing.T) {
	s, _, _ := testKey(t, "vigil-audit-test", 1)
	recs := testLog(t, 10)
	seal := events.Event{V: 1, ID: "seal-1", Kind: events.KindAuditSeal, Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Data: map[string]any{"by": "test"}}
	raw, err := seal.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	recs[2].raw = raw // seq 3 is a seal
	cps, _ := fold(t, recs, 4, s)
	var sizes []uint64
	for _, cp := range cps {
		sizes = append(sizes, cp.TreeSize)
	}
	if len(sizes) != 3 || sizes[0] != 3 || sizes[1] != 4 || sizes[2] != 8 {
		t.Fatalf("checkpoints at tree sizes %v, want [3 4 8]", sizes)
	}
	if cps[1].FirstSeq != 4 {
		t.Fatalf("the checkpoint after the seal starts at %d, want 4", cps[1].FirstSeq)
	}
}

// TestHashChildren: the tree's node hash is RFC 6962's, for hashes and
// for inputs of any other length.
func TestHashChildren(t *testing.T) {
	for _, n := range []int{0, 1, HashSize, 2 * HashSize} {
		l, r := bytes.Repeat([]byte{0xa5}, n), bytes.Repeat([]byte{0x5a}, HashSize)
		if got, want := hashChildren(l, r), rfc6962.DefaultHasher.HashChildren(l, r); !bytes.Equal(got, want) {
			t.Fatalf("%d-byte left child: %x, want %x", n, got, want)
		}
	}
}
