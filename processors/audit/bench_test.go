package audit

import (
	"fmt"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// benchLog is n realistic records (≈ 200-byte action events).
func benchLog(b *testing.B, n int) []rec {
	b.Helper()
	out := make([]rec, n)
	for i := range out {
		out[i] = rec{seq: uint64(i + 1), raw: testEvent(b, i+1, fmt.Sprintf("git diff --stat HEAD~%d -- src/module_%d/*.go | tail -n 20", i%50, i%97))}
	}
	return out
}

// BenchmarkLogVerify is the pure part of `vigil audit verify`: hash every
// record, check every checkpoint's signature and window, rebuild the tree.
// The figure in docs/audit.md is its events/s.
func BenchmarkLogVerify(b *testing.B) {
	const n = 100_000
	signer, vs, _ := testKey(b, "vigil-audit-bench", 1)
	recs := benchLog(b, n)
	cps, _ := fold(b, recs, DefaultInterval, signer)
	var size int
	for _, r := range recs {
		size += len(r.raw)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		v := NewLogVerifier(vs)
		for i, c := range cps {
			v.AddCheckpoint(uint64(i+1), c)
		}
		for _, r := range recs {
			if err := v.AddRecord(r.seq, r.raw); err != nil {
				b.Fatal(err)
			}
		}
		v.SetLogEnd(n)
		if rep := v.Finish(); !rep.Clean() {
			b.Fatalf("findings: %v", rep.Findings)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkProcessorStep is the live cost of the audit fold per record
// (one checkpoint signature every DefaultInterval records included).
func BenchmarkProcessorStep(b *testing.B) {
	signer, _, _ := testKey(b, "vigil-audit-bench", 1)
	recs := benchLog(b, 4096)
	p, err := New(Config{Signer: signer})
	if err != nil {
		b.Fatal(err)
	}
	var seq uint64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		seq++
		if _, err := p.Step(events.Record{Seq: seq, Raw: recs[i%len(recs)].raw}); err != nil {
			b.Fatal(err)
		}
	}
}
