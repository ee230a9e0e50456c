package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
	"github.com/vigil-dev/vigil/processors/audit"
	"github.com/vigil-dev/vigil/processors/gate"
	"github.com/vigil-dev/vigil/processors/risk"
	"github.com/vigil-dev/vigil/processors/stats"
)

func testSigner(t testing.TB) note.Signer {
	t.Helper()
	skey, _, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 32)), "vigil-audit-test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// builder returns the processor set of these tests: every processor that
// exists, as a node would run them.
func builder(t testing.TB) func(processors.Options) ([]processors.Processor, error) {
	return builderEvery(t, 4)
}

// builderEvery is builder with an audit checkpoint every interval records.
func builderEvery(t testing.TB, interval uint64) func(processors.Options) ([]processors.Processor, error) {
	return builderMemo(t, interval, true)
}

// builderMemo is builderEvery with the risk→gate memo on or off.
func builderMemo(t testing.TB, interval uint64, useMemo bool) func(processors.Options) ([]processors.Processor, error) {
	signer := testSigner(t)
	return func(o processors.Options) ([]processors.Processor, error) {
		var memo *risk.Memo
		if useMemo {
			memo = &risk.Memo{}
		}
		g, err := gate.New(gate.Options{Options: o, Memo: memo})
		if err != nil {
			return nil, err
		}
		a, err := audit.New(audit.Config{Signer: signer, Interval: interval})
		if err != nil {
			return nil, err
		}
		// The order and set of a node (node.Processors).
		return []processors.Processor{risk.NewProcessorWith(o).WithMemo(memo), g, a, stats.New()}, nil
	}
}

// loadFixture reads a JSON-lines conversation into log records.
func loadFixture(t testing.TB, path string) Records {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out Records
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := events.DecodeJSON(sc.Bytes())
		if err != nil {
			t.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		raw, err := ev.MarshalMsgpack()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Record{Seq: uint64(len(out) + 1), Subject: events.LogSubject(ev.Conversation), Data: raw})
	}
	return out
}

// recordedSlice is an in-memory derived stream.
type recordedSlice []RecordedOutput

func (r recordedSlice) String() string { return "recorded in memory" }

func (r recordedSlice) Outputs(ctx context.Context, fn func(RecordedOutput) error) error {
	for _, o := range r {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// live folds recs as the live driver does and returns what it would have
// published, in order.
func live(t testing.TB, recs Records, build func(processors.Options) ([]processors.Processor, error)) recordedSlice {
	t.Helper()
	procs, err := build(processors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := processors.NewPipeline(procs...)
	if err != nil {
		t.Fatal(err)
	}
	var out recordedSlice
	for _, r := range recs {
		_, outs := processors.Feed(pipe, r.Seq, r.Subject, r.Data)
		for _, o := range outs {
			b, err := o.Event.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			ro := RecordedOutput{ID: o.Event.ID, Subject: o.Subject, Data: b, StreamSeq: uint64(len(out) + 1)}
			ro.BodyID, ro.Seq, ro.Conversation, ro.Err = peekDerived(b)
			out = append(out, ro)
		}
	}
	return out
}

func TestReplayReproducesRecord(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	// Add a record that does not decode: the alert it raises is derived too.
	recs = append(recs, Record{Seq: uint64(len(recs) + 1), Subject: "vigil.log.c-42", Data: []byte{0x93, 0x01}})
	build := builder(t)
	rec := live(t, recs, build)
	rep, err := Run(t.Context(), Config{Source: recs, Build: build, Recorded: rec})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical() || rep.Matched != uint64(len(rec)) || rep.Outputs != uint64(len(rec)) || rep.Records != uint64(len(recs)) {
		t.Fatalf("report %+v", rep)
	}
	if !reflect.DeepEqual(rep.Processors, []string{"risk", "gate", "audit", "stats"}) {
		t.Fatalf("processors %v", rep.Processors)
	}
}

func TestReplayFindsTampering(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	build := builder(t)
	rec := live(t, recs, build)
	var tampered recordedSlice
	var changedID, droppedID, forgedID string
	for _, o := range rec {
		switch {
		case changedID == "" && strings.HasPrefix(o.ID, "gate:") && bytes.Contains(o.Data, []byte(`deny`)):
			// A denial rewritten as an allow.
			changedID = o.ID
			o.Data = bytes.Replace(o.Data, []byte("deny"), []byte("allo"), 1)
		case droppedID == "" && strings.HasPrefix(o.ID, "gate:") && o.Seq > 8:
			droppedID = o.ID
			continue
		case forgedID == "" && o.ID == "gate:3":
			forgedID = "gate:3:9"
			f := o
			f.ID, f.BodyID = forgedID, forgedID
			tampered = append(tampered, f)
		}
		tampered = append(tampered, o)
	}
	// A copy stored twice (a republish after the dedup window) is harmless.
	tampered = append(tampered, rec[0])
	// A header that does not match its body is not.
	bad := rec[1]
	bad.ID = "stats:999"
	tampered = append(tampered, bad)

	rep, err := Run(t.Context(), Config{Source: recs, Build: build, Recorded: tampered})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Identical() || rep.Changed != 1 || rep.Missing != 1 || rep.Unexpected != 1 || rep.Malformed != 1 || rep.Duplicates != 1 {
		t.Fatalf("report %+v", rep)
	}
	kinds := map[string]string{}
	for _, d := range rep.Differences {
		kinds[d.ID] = d.Kind
		if d.Kind == DiffChanged && (len(d.ReplayedJSON) == 0 || len(d.RecordedJSON) == 0) {
			t.Fatalf("a change without both sides: %+v", d)
		}
	}
	want := map[string]string{changedID: DiffChanged, droppedID: DiffMissing, forgedID: DiffUnexpected, "stats:999": DiffMalformed}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("differences %v, want %v", kinds, want)
	}
}

func TestReplayFromTo(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	build := builder(t)
	rec := live(t, recs, build)
	// Drop everything recorded before seq 6: a replay from 6 must not miss it.
	var tail recordedSlice
	for _, o := range rec {
		if o.Seq >= 6 {
			tail = append(tail, o)
		}
	}
	rep, err := Run(t.Context(), Config{Source: recs, Build: build, Recorded: tail, From: 6, To: 11})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical() || rep.Records != 11 || rep.Compared != 6 || rep.Last != 11 || rep.Matched == 0 {
		t.Fatalf("report %+v %+v", rep, rep.Differences)
	}
	if _, err := Run(t.Context(), Config{Source: recs, Build: build, From: 9, To: 3}); err == nil {
		t.Fatal("from after to accepted")
	}
}

func TestReplayOneConversation(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	// A global config in the middle changes decisions in both conversations.
	cfg := events.DefaultConfig()
	cfg.Version = 2
	cfg.Confirmation.Threshold = events.RiskMedium
	data, _ := events.ToData(cfg)
	cev := events.Event{V: 1, ID: "cfg-2", Kind: events.KindConfig, Agent: "ops", Time: time.Date(2026, 11, 22, 10, 0, 3, 0, time.UTC), Data: data}
	raw, _ := cev.MarshalMsgpack()
	var withCfg Records
	for i, r := range recs {
		if i == 4 {
			withCfg = append(withCfg, Record{Subject: events.LogSubject(""), Data: raw})
		}
		withCfg = append(withCfg, r)
	}
	for i := range withCfg {
		withCfg[i].Seq = uint64(i + 1)
	}
	build := builder(t)
	rec := live(t, withCfg, build)
	rep, err := Run(t.Context(), Config{Source: withCfg, Build: build, Recorded: rec, Conversation: "c-42"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical() || rep.Matched == 0 || rep.Records != uint64(len(withCfg)-1) {
		t.Fatalf("report %+v %s", rep, diffs(rep))
	}
	// a3 (MEDIUM) was asked under the global config: the filtered replay saw it.
	if rep.Matched < 10 {
		t.Fatalf("only %d outputs compared", rep.Matched)
	}
}

func diffs(rep *Report) string {
	var b strings.Builder
	for _, d := range rep.Differences {
		fmt.Fprintf(&b, "\n%s %s seq %d %s\n  replayed %s\n  recorded %s", d.Kind, d.ID, d.Seq, d.Detail, d.ReplayedJSON, d.RecordedJSON)
	}
	return b.String()
}

func TestReplaySink(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	var got []uint64
	var batches int
	rep, err := Run(t.Context(), Config{Source: recs, Build: builder(t), BatchSize: 4, Sink: func(b []processors.Applied) error {
		batches++
		for _, a := range b {
			got = append(got, a.Record.Seq)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) || batches != (len(recs)+3)/4 || rep.Verified {
		t.Fatalf("sink saw %v in %d batches; report %+v", got, batches, rep)
	}
}

func TestProgress(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	var ps []Progress
	_, err := Run(t.Context(), Config{Source: recs, Build: builder(t), ProgressEvery: 5, Progress: func(p Progress) { ps = append(ps, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 || ps[0].Records != 5 || !ps[2].Done || ps[2].Records != uint64(len(recs)) {
		t.Fatalf("progress %+v", ps)
	}
}

func loadConfig(t testing.TB, js string) *events.Config {
	t.Helper()
	var c events.Config
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestWhatIf replays the fixture conversation under a stricter and a
// laxer config and checks the changed decisions.
func TestWhatIf(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	strict := loadConfig(t, `{"version": 9, "analyzers": {"rules": true, "policy": true, "injection": true},
		"confirmation": {"mode": "risky", "threshold": "MEDIUM", "unknown": "MEDIUM"},
		"deny_rules": [{"name": "pipe-to-shell", "expr": "'curl' in commands && 'sh' in commands", "reason": "no curl | sh"}]}`)
	var streamed []string
	rep, err := Run(t.Context(), Config{Source: recs, Build: builder(t), WhatIf: strict,
		OnChange: func(c ActionChange) { streamed = append(streamed, c.ActionID) }})
	if err != nil {
		t.Fatal(err)
	}
	w := rep.WhatIf
	wantMatrix := map[string]map[string]uint64{Allow: {Allow: 3, Ask: 1}, Ask: {Ask: 3, Deny: 1}}
	if !reflect.DeepEqual(w.Matrix, wantMatrix) || w.Actions != 8 || w.Changed != 2 || w.Stopped != 2 || w.StoppedAsk != 1 || w.StoppedDeny != 1 || w.Loosened != 0 {
		t.Fatalf("what-if %+v", w)
	}
	if len(w.Changes) != 2 || w.Changes[0].ActionID != "a2" || w.Changes[1].ActionID != "a3" {
		t.Fatalf("changes %+v", w.Changes)
	}
	a2, a3 := w.Changes[0], w.Changes[1]
	if a2.Was.String() != "asked, then allowed by alice" || a2.Would.String() != "denied (rule)" || !a2.Stopped ||
		!strings.Contains(a2.Would.Reason, "pipe-to-shell") {
		t.Fatalf("a2: %+v / %q → %q", a2, a2.Was, a2.Would)
	}
	if a3.Was.String() != "allowed (mode)" || a3.Would.String() != "asked, still pending" || !a3.Stopped || a3.Would.Level != events.RiskMedium {
		t.Fatalf("a3: %+v / %q → %q", a3, a3.Was, a3.Would)
	}
	if !reflect.DeepEqual(streamed, []string{"a2", "a3"}) {
		t.Fatalf("OnChange saw %v", streamed)
	}

	lax := loadConfig(t, `{"version": 10, "analyzers": {}, "confirmation": {"mode": "never"}}`)
	rep, err = Run(t.Context(), Config{Source: recs, Build: builder(t), WhatIf: lax})
	if err != nil {
		t.Fatal(err)
	}
	w = rep.WhatIf
	var loosened []string
	for _, c := range w.Changes {
		if c.Loosened {
			loosened = append(loosened, c.ActionID)
		}
	}
	if w.Changed != 4 || w.Stopped != 0 || w.Loosened != 3 || !reflect.DeepEqual(loosened, []string{"a4", "a5", "a6"}) {
		t.Fatalf("lax what-if %+v", w)
	}

	// One conversation, from a sequence: only a8's conversation, nothing changes.
	rep, err = Run(t.Context(), Config{Source: recs, Build: builder(t), WhatIf: strict, Conversation: "c-7"})
	if err != nil || rep.WhatIf.Actions != 1 || rep.WhatIf.Changed != 0 {
		t.Fatalf("c-7: %+v %v", rep.WhatIf, err)
	}
	rep, err = Run(t.Context(), Config{Source: recs, Build: builder(t), WhatIf: strict, From: 5})
	if err != nil || rep.WhatIf.Actions != 6 || rep.WhatIf.Changed != 1 {
		t.Fatalf("from 5: %+v %v", rep.WhatIf, err)
	}

	bad := loadConfig(t, `{"version": 11, "analyzers": {}, "confirmation": {"mode": "risky"}}`)
	if _, err := Run(t.Context(), Config{Source: recs, Build: builder(t), WhatIf: bad}); err == nil || !strings.Contains(err.Error(), "analyzer") {
		t.Fatalf("incoherent what-if config: %v", err)
	}
	noGate := func(processors.Options) ([]processors.Processor, error) {
		return []processors.Processor{stats.New()}, nil
	}
	if _, err := Run(t.Context(), Config{Source: recs, Build: noGate, WhatIf: strict}); err != ErrNoGate {
		t.Fatalf("no gate: %v", err)
	}
}

// writeExport writes recs as `vigil audit export` would, with the gate
// decisions of rec as each action's "gate" data.
func writeExport(t *testing.T, recs Records, rec recordedSlice, tamper func(seq uint64, gate map[string]any)) []byte {
	t.Helper()
	gates := map[uint64]map[string]any{}
	for _, o := range rec {
		d, err := events.DecodeDerived(o.Data)
		if err != nil || d.Kind != events.KindGateDecided {
			continue
		}
		m := d.Data.(map[string]any)
		gates[uint64(m["log_seq"].(int64))] = m
	}
	var buf bytes.Buffer
	line := func(l audit.ExportLine) {
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	line(audit.ExportLine{Header: &audit.ExportHeader{Format: audit.ExportFormat, From: 1, Complete: true, LogEnd: uint64(len(recs))}})
	for _, r := range recs {
		ev, err := events.DecodeMsgpack(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		var g any
		if m, ok := gates[r.Seq]; ok {
			if tamper != nil {
				tamper(r.Seq, m)
			}
			g = m
		}
		e, err := audit.NewExportEvent(r.Seq, r.Data, &ev, 0, nil, nil, g)
		if err != nil {
			t.Fatal(err)
		}
		line(audit.ExportLine{Event: &e})
	}
	return buf.Bytes()
}

func TestReplayExport(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	build := builder(t)
	rec := live(t, recs, build)
	file := writeExport(t, recs, rec, nil)
	checks := NewExportChecks()
	rep, err := Run(t.Context(), Config{Source: &Export{R: bytes.NewReader(file), Name: "x.jsonl", Checks: checks}, Build: build, ExportChecks: checks})
	if err != nil {
		t.Fatal(err)
	}
	// a5 is still pending: 7 of the 8 actions have a decision.
	if !rep.Identical() || rep.Matched != 7 || rep.Records != uint64(len(recs)) || !rep.Verified {
		t.Fatalf("report %+v%s", rep, diffs(rep))
	}
	// A decision rewritten in the export is found.
	file = writeExport(t, recs, rec, func(seq uint64, g map[string]any) {
		if g["action_id"] == "a4" {
			g["outcome"] = "allow"
		}
	})
	checks = NewExportChecks()
	rep, err = Run(t.Context(), Config{Source: &Export{R: bytes.NewReader(file), Name: "x.jsonl", Checks: checks}, Build: build, ExportChecks: checks})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed != 1 || rep.Differences[0].Seq != 6 || !strings.Contains(rep.Differences[0].Detail, "a4") {
		t.Fatalf("report %+v%s", rep, diffs(rep))
	}
	// Lines out of order are refused.
	lines := bytes.Split(bytes.TrimSpace(file), []byte("\n"))
	lines[2], lines[3] = lines[3], lines[2]
	_, err = Run(t.Context(), Config{Source: &Export{R: bytes.NewReader(bytes.Join(lines, []byte("\n"))), Name: "x.jsonl"}, Build: build})
	if err == nil || !strings.Contains(err.Error(), "x.jsonl line 4") {
		t.Fatalf("out-of-order export: %v", err)
	}
}

// TestUnsignedCheckpoints: without the node's key, checkpoints compare by
// tree size and root hash.
func TestUnsignedCheckpoints(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	rec := live(t, recs, builder(t))
	other := func(o processors.Options) ([]processors.Processor, error) {
		skey, _, _ := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{9}, 32)), "ephemeral")
		s, _ := note.NewSigner(skey)
		procs, err := builder(t)(o)
		if err != nil {
			return nil, err
		}
		a, _ := audit.New(audit.Config{Signer: s, Interval: 4})
		procs[2] = a
		return procs, nil
	}
	rep, err := Run(t.Context(), Config{Source: recs, Build: other, Recorded: rec})
	if err != nil || rep.Identical() || rep.Changed != 3 {
		t.Fatalf("signed with another key: %+v %v", rep, err)
	}
	rep, err = Run(t.Context(), Config{Source: recs, Build: other, Recorded: rec, UnsignedCheckpoints: true})
	if err != nil || !rep.Identical() {
		t.Fatalf("unsigned: %+v %v%s", rep, err, diffs(rep))
	}
}

// TestMemoChangesNothing: sharing the risk assessment with the gate is an
// optimisation only; the outputs are byte for byte those of a gate that
// scores every action itself.
func TestMemoChangesNothing(t *testing.T) {
	recs := loadFixture(t, "testdata/conversation.jsonl")
	with := live(t, recs, builderMemo(t, 4, true))
	without := live(t, recs, builderMemo(t, 4, false))
	if len(with) != len(without) || len(with) == 0 {
		t.Fatalf("%d outputs with the memo, %d without", len(with), len(without))
	}
	for i := range with {
		if with[i].ID != without[i].ID || !bytes.Equal(with[i].Data, without[i].Data) {
			t.Fatalf("output %d differs: %s vs %s", i, with[i].ID, without[i].ID)
		}
	}
}
