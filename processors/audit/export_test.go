package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// buildExport writes an export of recs (all of them: a complete export)
// proven against the last checkpoint of cps, as `vigil audit export` does.
func buildExport(t testing.TB, recs []rec, cps []events.AuditCheckpoint, vkey string) [][]byte {
	t.Helper()
	var tree Tree
	for _, r := range recs {
		if err := tree.Append(LeafHash(r.raw)); err != nil {
			t.Fatal(err)
		}
	}
	last := cps[len(cps)-1]
	marshal := func(l ExportLine) []byte {
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	lines := [][]byte{marshal(ExportLine{Header: &ExportHeader{Format: ExportFormat, From: 1, Complete: true, LogEnd: uint64(len(recs))}})}
	for _, r := range recs {
		ev, err := events.DecodeMsgpack(r.raw)
		if err != nil {
			t.Fatal(err)
		}
		var proof []Hash
		size := last.TreeSize
		if r.seq <= size {
			if proof, err = tree.Prove(r.seq, size); err != nil {
				t.Fatal(err)
			}
		} else {
			size = 0
		}
		var risk, gate any
		if r.seq%2 == 0 {
			risk = map[string]any{"level": "HIGH", "log_seq": r.seq}
			gate = map[string]any{"outcome": "deny", "by": "human", "approver": "alice"}
		}
		e, err := NewExportEvent(r.seq, r.raw, &ev, size, proof, risk, gate)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, marshal(ExportLine{Event: &e}))
	}
	lines = append(lines, marshal(ExportLine{Checkpoint: &ExportCheckpoint{TreeSize: last.TreeSize, RootHash: last.RootHash, Note: last.Note, VerifierKey: vkey}}))
	return lines
}

func verifyExport(t testing.TB, lines [][]byte, vkeys ...string) (*ExportReport, error) {
	t.Helper()
	var v *ExportVerifier
	if len(vkeys) == 0 {
		v = NewExportVerifier(nil)
	} else {
		vs, err := NewVerifiers(vkeys...)
		if err != nil {
			t.Fatal(err)
		}
		v = NewExportVerifier(vs)
	}
	for _, l := range lines {
		v.AddLine(l)
	}
	return v.Finish()
}

func editLine(t testing.TB, line []byte, edit func(e *ExportEvent)) []byte {
	t.Helper()
	l, err := DecodeExportLine(line)
	if err != nil || l.Event == nil {
		t.Fatalf("not an event line: %v", err)
	}
	edit(l.Event)
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExportVerifier(t *testing.T) {
	signer, _, vkey := testKey(t, "vigil-audit-test", 1)
	_, _, otherKey := testKey(t, "vigil-audit-other", 9)
	recs := testLog(t, 14)
	cps, _ := fold(t, recs, 4, signer) // checkpoints at 4, 8, 12; 13 and 14 unsigned
	orig := buildExport(t, recs, cps, vkey)
	// Line 1 is the header, line 1+s is seq s, the last line the checkpoint.
	cases := []struct {
		name     string
		edit     func(lines [][]byte) [][]byte
		findings []want
	}{{
		name: "clean",
		edit: func(l [][]byte) [][]byte { return l },
	}, {
		name: "reordered lines",
		edit: func(l [][]byte) [][]byte {
			l[5], l[6] = l[6], l[5]
			return l
		},
		findings: []want{{kind: FindMoved, seq: 5, other: 6}},
	}, {
		name: "event view edited",
		edit: func(l [][]byte) [][]byte {
			l[7] = bytes.Replace(l[7], []byte("ls -la /tmp/7"), []byte("ls -la /tmp/X"), 1)
			return l
		},
		findings: []want{{kind: FindAltered, seq: 7}},
	}, {
		name: "raw replaced, leaf hash kept",
		edit: func(l [][]byte) [][]byte {
			l[3] = editLine(t, l[3], func(e *ExportEvent) { e.Raw = base64.StdEncoding.EncodeToString(testEvent(t, 99, "rm -rf /")) })
			return l
		},
		findings: []want{{kind: FindAltered, seq: 3}, {kind: FindAltered, seq: 3}, {kind: FindAltered, seq: 3}},
	}, {
		name: "record and its hash replaced consistently",
		edit: func(l [][]byte) [][]byte {
			raw := testEvent(t, 99, "rm -rf /")
			ev, _ := events.DecodeMsgpack(raw)
			evJSON, _ := json.Marshal(ev)
			l[3] = editLine(t, l[3], func(e *ExportEvent) {
				e.Raw, e.LeafHash, e.Event = base64.StdEncoding.EncodeToString(raw), LeafHash(raw).String(), evJSON
			})
			return l
		},
		findings: []want{{kind: FindAltered, seq: 3}},
	}, {
		name: "contents swapped, seqs kept",
		edit: func(l [][]byte) [][]byte {
			a, _ := DecodeExportLine(l[2])
			b, _ := DecodeExportLine(l[9])
			l2, l9 := l[2], l[9]
			l[2] = editLine(t, l9, func(e *ExportEvent) { e.Seq, e.Proof = a.Event.Seq, a.Event.Proof })
			l[9] = editLine(t, l2, func(e *ExportEvent) { e.Seq, e.Proof = b.Event.Seq, b.Event.Proof })
			return l
		},
		findings: []want{{kind: FindAltered, seq: 2}, {kind: FindAltered, seq: 9}},
	}, {
		name:     "line deleted",
		edit:     func(l [][]byte) [][]byte { return slices.Delete(l, 6, 7) },
		findings: []want{{kind: FindDeleted, seq: 6}},
	}, {
		name:     "unsigned line deleted from the end",
		edit:     func(l [][]byte) [][]byte { return slices.Delete(l, 14, 15) },
		findings: []want{{kind: FindDeleted, seq: 14}},
	}, {
		name:     "line duplicated",
		edit:     func(l [][]byte) [][]byte { return slices.Insert(l, 5, l[4]) },
		findings: []want{{kind: FindInserted, seq: 4}},
	}, {
		name:     "malformed line",
		edit:     func(l [][]byte) [][]byte { l[4] = []byte(`{"type":"event","seq":4,"leaf_hash":"xx"}`); return l },
		findings: []want{{kind: FindMalformed, seq: 4}, {kind: FindDeleted, seq: 4}},
	}, {
		name: "event line after the checkpoint",
		edit: func(l [][]byte) [][]byte {
			ev := l[14]
			l = slices.Delete(l, 14, 15)
			return append(l, ev)
		},
		findings: []want{{kind: FindMoved, seq: 14}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := tc.edit(slices.Clone(orig))
			rep, err := verifyExport(t, lines, vkey)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.String())
			}
			if len(rep.Findings) != len(tc.findings) {
				t.Fatalf("got %d findings, want %v:\n%s", len(rep.Findings), tc.findings, strings.Join(got, "\n"))
			}
			for _, w := range tc.findings {
				if !slices.ContainsFunc(rep.Findings, func(f Finding) bool { return match(f, w) }) {
					t.Errorf("no finding %v in:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if testing.Verbose() {
				t.Logf("findings:\n%s", strings.Join(got, "\n"))
			}
		})
	}

	t.Run("report", func(t *testing.T) {
		rep, err := verifyExport(t, orig, vkey)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() || rep.SignedSize != 12 || rep.Unsigned != 2 || !rep.Complete || rep.Events != 14 || rep.KeyFromExport {
			t.Fatalf("report = %+v", rep)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		rep, err := verifyExport(t, orig, otherKey)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Clean() || rep.Findings[0].Kind != FindCheckpoint {
			t.Fatalf("findings = %v", rep.Findings)
		}
	})
	t.Run("key from the export", func(t *testing.T) {
		rep, err := verifyExport(t, orig)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() || !rep.KeyFromExport {
			t.Fatalf("report = %+v", rep)
		}
	})
	t.Run("no key", func(t *testing.T) {
		lines := slices.Clone(orig)
		last := len(lines) - 1
		lines[last] = bytes.Replace(lines[last], []byte(`,"verifier_key":"`+vkey+`"`), nil, 1)
		if _, err := verifyExport(t, lines); !errors.Is(err, ErrNoKey) {
			t.Fatalf("err = %v, want ErrNoKey", err)
		}
	})
	t.Run("hostile seqs finish fast", func(t *testing.T) {
		lines := [][]byte{
			[]byte(`{"type":"header","format":"` + ExportFormat + `","from":1,"complete":true,"log_end":18446744073709551615}`),
			editLine(t, orig[1], func(e *ExportEvent) { e.Seq, e.TreeSize, e.Proof = 1<<64-1, 0, nil }),
			orig[len(orig)-1],
		}
		rep, err := verifyExport(t, lines, vkey)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Clean() {
			t.Fatal("hostile export verified clean")
		}
	})
	t.Run("partial export", func(t *testing.T) {
		lines := [][]byte{[]byte(`{"type":"header","format":"` + ExportFormat + `","conversation":"c-1","from":1,"complete":false,"log_end":14}`)}
		for s := 1; s <= 14; s++ {
			if s%3 == 1 {
				lines = append(lines, orig[s])
			}
		}
		lines = append(lines, orig[len(orig)-1])
		rep, err := verifyExport(t, lines, vkey)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() || rep.Complete || rep.Events != 5 || len(rep.Warnings) == 0 {
			t.Fatalf("report = %+v", rep)
		}
	})
}

func TestDecodeExportLineRefuses(t *testing.T) {
	for _, l := range []string{
		``, `[]`, `{"type":"nope"}`, `{"type":"event"}`,
		`{"type":"header","format":"vigil-audit-export/9","from":1}`,
		`{"type":"checkpoint","tree_size":1,"root_hash":"AAAA","note":"x"}`,
		`{"type":"event","seq":1,"event":{},"raw":"AA==","leaf_hash":"` + strings.Repeat("A", 43) + `=","unknown":1}`,
		`{"type":"event","seq":2,"event":[],"raw":"AA==","leaf_hash":"` + strings.Repeat("A", 43) + `="}`,
		`{"type":"event","seq":3,"event":{},"raw":"AA==","leaf_hash":"` + strings.Repeat("A", 43) + `=","tree_size":2}`,
	} {
		if _, err := DecodeExportLine([]byte(l)); !errors.Is(err, ErrBadLine) {
			t.Errorf("%s: err = %v, want ErrBadLine", l, err)
		}
	}
}

// FuzzDecodeExportLine: decoding never panics, and what decodes re-encodes
// to a line that decodes to the same thing. Seeds: testdata/fuzz.
func FuzzDecodeExportLine(f *testing.F) {
	f.Add([]byte(`{"type":"header","format":"vigil-audit-export/1","from":1,"complete":true,"log_end":3}`))
	f.Add([]byte(`{"type":"checkpoint","tree_size":4,"root_hash":"8igmORK8LWBTQ9ZgWCzQNi2iBKySv1hN9mpQv57QAZ4=","note":"o\n4\nx\n\n— o AAAA\n"}`))
	f.Add([]byte(`{"type":"event","seq":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeExportLine(b)
		if err != nil {
			if !errors.Is(err, ErrBadLine) {
				t.Fatalf("error %v does not wrap ErrBadLine", err)
			}
			return
		}
		once, err := l.Marshal()
		if err != nil {
			t.Fatalf("decoded line does not encode: %v", err)
		}
		l2, err := DecodeExportLine(once)
		if err != nil {
			t.Fatalf("re-encoded line does not decode: %v\n%s", err, once)
		}
		twice, err := l2.Marshal()
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("round trip differs:\n%s\n%s", once, twice)
		}
		// A verifier never panics on it either.
		v := NewExportVerifier(nil)
		v.AddLine(b)
		_, _ = v.Finish()
	})
}
