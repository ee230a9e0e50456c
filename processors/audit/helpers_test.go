package audit

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

// testKey returns a deterministic signer and its verifiers.
func testKey(t testing.TB, name string, seed byte) (note.Signer, note.Verifiers, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := NewVerifiers(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, vs, vkey
}

type rec struct {
	seq uint64
	raw []byte
}

// testEvent is the msgpack of a realistic action event.
func testEvent(t testing.TB, i int, cmd string) []byte {
	t.Helper()
	ev := events.Event{V: 1, ID: fmt.Sprintf("01JD%06d", i), Kind: events.KindAction, Conversation: fmt.Sprintf("c-%d", i%3),
		Agent: "coder-1", Time: time.Date(2026, 11, 22, 10, 0, i, 0, time.UTC),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": cmd}}}
	b, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testLog is n records at seqs 1..n.
func testLog(t testing.TB, n int) []rec {
	out := make([]rec, n)
	for i := range out {
		out[i] = rec{seq: uint64(i + 1), raw: testEvent(t, i+1, fmt.Sprintf("ls -la /tmp/%d", i+1))}
	}
	return out
}

// fold runs a fresh audit processor over recs through processors.Feed (as
// the drivers do) and returns the checkpoints as they come back off the
// wire, with their VIGIL_DERIVED positions (1, 2, …), and every output.
func fold(t testing.TB, recs []rec, k uint64, s note.Signer) ([]events.AuditCheckpoint, []processors.Output) {
	t.Helper()
	p, err := New(Config{Signer: s, Interval: k})
	if err != nil {
		t.Fatal(err)
	}
	var cps []events.AuditCheckpoint
	var all []processors.Output
	for _, r := range recs {
		_, outs := processors.Feed(p, r.seq, events.LogSubject("c"), r.raw)
		for _, o := range outs {
			all = append(all, o)
			if o.Event.Kind != events.KindAuditCheckpoint {
				continue
			}
			cps = append(cps, wireCheckpoint(t, o.Event))
		}
	}
	return cps, all
}

func wireCheckpoint(t testing.TB, d events.Derived) events.AuditCheckpoint {
	t.Helper()
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := events.DecodeDerived(b)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := events.DerivedDataAs[events.AuditCheckpoint](&back)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// verifyLog runs the LogVerifier over recs (in order) and cps.
func verifyLog(t testing.TB, vs note.Verifiers, recs []rec, logEnd uint64, cps []events.AuditCheckpoint, trusted ...string) *Report {
	t.Helper()
	v := NewLogVerifier(vs)
	for i, c := range cps {
		v.AddCheckpoint(uint64(i+1), c)
	}
	for _, n := range trusted {
		if err := v.AddTrusted(n); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs {
		if err := v.AddRecord(r.seq, r.raw); err != nil {
			t.Fatal(err)
		}
	}
	v.SetLogEnd(logEnd)
	return v.Finish()
}
