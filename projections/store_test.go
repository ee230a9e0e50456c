package projections

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func mkRec(t testing.TB, seq uint64, ev events.Event) events.Record {
	t.Helper()
	if ev.V == 0 {
		ev.V = 1
	}
	if ev.Time.IsZero() {
		ev.Time = t0.Add(time.Duration(seq) * time.Second)
	}
	raw, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	dec, err := events.DecodeMsgpack(raw)
	if err != nil {
		t.Fatal(err)
	}
	return events.Record{Seq: seq, Subject: events.LogSubject(ev.Conversation), Raw: raw, Event: dec}
}

func action(id, conv, cmd string) events.Event {
	return events.Event{ID: id, Kind: events.KindAction, Conversation: conv, Agent: "coder-1",
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": cmd}}}
}

func control(id, conv string, kind events.Kind, data any) events.Event {
	m, err := events.ToData(data)
	if err != nil {
		panic(err)
	}
	return events.Event{ID: id, Kind: kind, Conversation: conv, Data: m}
}

// scenario is a small log with outputs, as a pipeline of risk and gate
// processors would fold it.
func scenario(t testing.TB) []Applied {
	t.Helper()
	var out []Applied
	add := func(ev events.Event, outs func(r *events.Record) []processors.Output) {
		r := mkRec(t, uint64(len(out)+1), ev)
		var o []processors.Output
		if outs != nil {
			o = outs(&r)
		}
		out = append(out, Applied{Record: r, Outputs: o})
	}
	risk := func(aid string, lvl events.Risk) func(r *events.Record) []processors.Output {
		return func(r *events.Record) []processors.Output {
			return []processors.Output{processors.NewOutput("risk", r, 0, events.RiskSubject(r.Event.Conversation),
				events.KindRiskAssessed, events.RiskAssessed{ActionID: aid, LogSeq: r.Seq, Level: lvl,
					Reasons: []events.Reason{{Analyzer: "rules", Rule: "x"}}})}
		}
	}
	ask := func(aid, shape string) func(r *events.Record) []processors.Output {
		return func(r *events.Record) []processors.Output {
			o := risk(aid, events.RiskHigh)(r)
			return append(o, processors.NewOutput("gate", r, 0, events.GateSubject(r.Event.Conversation),
				events.KindGateRequested, events.GateRequested{ActionID: aid, LogSeq: r.Seq, Level: events.RiskHigh, Shape: shape}))
		}
	}
	decide := func(aid string, outcome events.Outcome, by events.DecidedBy) func(r *events.Record) []processors.Output {
		return func(r *events.Record) []processors.Output {
			// Generic data, as a decoder would hand it: folds must read both.
			d, _ := events.ToData(events.GateDecided{ActionID: aid, Outcome: outcome, By: by, DecisionSeq: r.Seq})
			return []processors.Output{processors.NewOutput("gate", r, 0, events.GateSubject(r.Event.Conversation),
				events.KindGateDecided, d)}
		}
	}
	add(events.Event{ID: "cs-1", Kind: events.KindConversationStarted, Conversation: "c-1", Data: map[string]any{"backend": "docker"}}, nil)
	add(action("a1", "c-1", "ls"), risk("a1", events.RiskLow))                       // 2
	add(action("a2", "c-1", "rm -rf /"), ask("a2", "rm -rf <path>"))                 // 3
	add(action("a3", "c-2", "curl x | sh"), ask("a3", "curl <url> | sh"))            // 4
	add(control("ap-2", "c-1", events.KindApprovalDecision, events.ApprovalDecision{ // 5
		ActionID: "a2", Verdict: events.VerdictAlways, Approver: "alice"}), decide("a2", events.OutcomeAllow, events.ByHuman))
	add(control("al-1", "", events.KindAllowlistChanged, events.AllowlistChanged{ // 6
		Op: events.AllowlistAdd, EntryID: "al-1", Shape: "go test <pkg>", By: "bob"}), nil)
	add(control("al-2", "", events.KindAllowlistChanged, events.AllowlistChanged{ // 7: an existing id: ignored
		Op: events.AllowlistAdd, EntryID: "al-1", Shape: "make", By: "bob"}), nil)
	add(control("al-3", "", events.KindAllowlistChanged, events.AllowlistChanged{ // 8
		Op: events.AllowlistRevoke, EntryID: "al-2"}), nil)
	cfg := events.DefaultConfig()
	cfg.Version = 3
	cfg.Analyzers.LLMHint = true
	add(control("cfg-1", "", events.KindConfig, cfg), nil) // 9
	cc := events.DefaultConfig()
	cc.Version = 4
	cc.Scope, cc.Conversation = events.ScopeConversation, "c-2"
	add(control("cfg-2", "c-2", events.KindConfig, cc), nil) // 10
	add(control("pr-1", "", events.KindPairingRequested, events.Pairing{User: "u1", Platform: "telegram", CodeHash: "h"}), nil)
	add(control("pa-1", "", events.KindPairingApproved, events.Pairing{User: "u1", Platform: "telegram", By: "alice"}), nil)
	add(action("a1", "c-1", "ls"), risk("a1", events.RiskLow)) // 13: a duplicate id (past the dedup window)
	out = append(out, Applied{Record: events.Record{Seq: 14, Subject: "vigil.log.c-2", Raw: []byte{0xc1}}})
	return out
}

func openTest(t *testing.T, dir string, o Options) *Store {
	t.Helper()
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// snapshot renders every read model, for comparing two stores.
func snapshot(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	for _, conv := range []string{"c-1", "c-2", "_"} {
		rs, err := s.ByConversation(conv, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			fmt.Fprintf(&b, "event %s %d %s %x\n", conv, r.Seq, r.Event.ID, r.Raw)
		}
		h, err := s.AskSecurityRisk(conv)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "ask %+v\n", h)
	}
	for _, id := range []string{"a1", "a2", "a3"} {
		r, err := s.RiskOf(id)
		fmt.Fprintf(&b, "risk %s %+v %v\n", id, r, err)
		d, err := s.Decision(id)
		fmt.Fprintf(&b, "decision %s %+v %v\n", id, d, err)
	}
	p, err := s.Pending()
	fmt.Fprintf(&b, "pending %+v %v\n", p, err)
	al, err := s.Allowlist()
	fmt.Fprintf(&b, "allowlist %+v %v\n", al, err)
	pa, err := s.Pairings()
	fmt.Fprintf(&b, "pairings %+v %v\n", pa, err)
	cs, err := s.Conversations()
	fmt.Fprintf(&b, "convs %+v %v\n", cs, err)
	tot, err := s.Stats("")
	fmt.Fprintf(&b, "totals %+v %v position %d\n", tot, err, s.Position())
	return b.String()
}

func TestReadModels(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "projections"), Options{})
	if s.Position() != 0 || s.Status().Reset != "" {
		t.Fatalf("fresh store: %+v", s.Status())
	}
	sc := scenario(t)
	if err := s.Apply(sc[:3]); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(sc[3:]); err != nil {
		t.Fatal(err)
	}
	if s.Position() != 14 {
		t.Fatalf("position %d", s.Position())
	}
	r, err := s.GetEvent("a1")
	if err != nil || r.Seq != 2 || r.Event.Args()["command"] != "ls" {
		t.Fatalf("GetEvent(a1) = %+v, %v; want the first occurrence, seq 2", r, err)
	}
	if _, err := s.GetEvent("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetEvent(nope) err = %v", err)
	}
	rs, err := s.ByConversation("c-1", 3, 2)
	if err != nil || len(rs) != 2 || rs[0].Seq != 3 || rs[1].Seq != 5 {
		t.Fatalf("ByConversation(c-1, 3, 2) = %v, %v", rs, err)
	}
	rs, _ = s.ByConversation("c-2", 0, 0)
	if len(rs) != 3 || rs[2].Seq != 14 || rs[2].Event.Kind != "" {
		t.Fatalf("ByConversation(c-2) = %+v", rs)
	}
	ra, err := s.RiskOf("a2")
	if err != nil || ra.Level != events.RiskHigh || ra.LogSeq != 3 || len(ra.Reasons) != 1 {
		t.Fatalf("RiskOf(a2) = %+v, %v", ra, err)
	}
	pend, err := s.Pending()
	if err != nil || len(pend) != 1 || pend[0].Request.ActionID != "a3" || pend[0].Conversation != "c-2" || pend[0].Seq != 4 {
		t.Fatalf("Pending = %+v, %v", pend, err)
	}
	d, err := s.Decision("a2")
	if err != nil || d.Outcome != events.OutcomeAllow || d.By != events.ByHuman || d.DecisionSeq != 5 {
		t.Fatalf("Decision(a2) = %+v, %v", d, err)
	}
	al, err := s.Allowlist()
	if err != nil || len(al) != 1 || al[0].ID != "al-1" || al[0].Shape != "go test <pkg>" || al[0].By != "bob" || al[0].Seq != 6 {
		t.Fatalf("Allowlist = %+v, %v", al, err)
	}
	p, err := s.PairingOf("telegram", "u1")
	if err != nil || p.State != PairingApproved || p.RequestedSeq != 11 || p.ApprovedSeq != 12 || p.CodeHash != "" || p.By != "alice" {
		t.Fatalf("PairingOf = %+v, %v", p, err)
	}
	h, err := s.AskSecurityRisk("c-1")
	if err != nil || !h.Ask || h.Source != "global" || h.ConfigVersion != 3 || h.ConfigSeq != 9 || len(h.Schema) == 0 {
		t.Fatalf("AskSecurityRisk(c-1) = %+v, %v", h, err)
	}
	h, _ = s.AskSecurityRisk("c-2")
	if h.Ask || h.Source != "conversation" || h.ConfigVersion != 4 || h.Schema != nil {
		t.Fatalf("AskSecurityRisk(c-2) = %+v", h)
	}
	st, err := s.Stats("c-1")
	if err != nil || st.Events != 5 || st.Actions != 3 || st.Risk["HIGH"] != 1 || st.Risk["LOW"] != 2 ||
		st.Requested != 1 || st.Decided["allow/human"] != 1 || st.FirstSeq != 1 || st.LastSeq != 13 {
		t.Fatalf("Stats(c-1) = %+v, %v", st, err)
	}
	tot, _ := s.Stats("")
	if tot.Events != 14 || tot.Undecodable != 1 || tot.LastSeq != 14 {
		t.Fatalf("totals = %+v", tot)
	}
}

// TestEmptyStoreAnswers checks the answers before any event.
func TestEmptyStoreAnswers(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "p"), Options{})
	h, err := s.AskSecurityRisk("c-9")
	if err != nil || h.Ask || h.Source != "default" {
		t.Fatalf("AskSecurityRisk = %+v, %v", h, err)
	}
	if p, err := s.Pending(); err != nil || len(p) != 0 {
		t.Fatalf("Pending = %v, %v", p, err)
	}
	if _, err := s.Stats("c-9"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stats err = %v", err)
	}
}

// TestCrashBetweenCommitAndAck: the driver commits a batch to the store,
// then dies before acknowledging it; on restart it re-sends from its ack
// floor, overlapping what the store has. Nothing may be applied twice.
func TestCrashBetweenCommitAndAck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	sc := scenario(t)
	want := func() string {
		s := openTest(t, filepath.Join(t.TempDir(), "ref"), Options{})
		if err := s.Apply(sc); err != nil {
			t.Fatal(err)
		}
		return snapshot(t, s)
	}()

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(sc[:9]); err != nil { // committed; the ack never happens
		t.Fatal(err)
	}
	s.Close() // the process dies
	s = openTest(t, dir, Options{})
	if s.Position() != 9 {
		t.Fatalf("position after restart %d, want 9", s.Position())
	}
	// The driver's ack floor was 4: it re-sends 5.. in batches.
	if err := s.Apply(sc[4:11]); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(sc[10:]); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, s); got != want {
		t.Fatalf("after crash and re-send:\n%s\nwant:\n%s", got, want)
	}
}

func TestLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	openTest(t, dir, Options{})
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open err = %v, want ErrLocked", err)
	}
}

// TestBadDataIsRebuilt damages the store in several ways; each must be
// detected at open and the store emptied (position 0, nothing served).
func TestBadDataIsRebuilt(t *testing.T) {
	sc := scenario(t)
	cases := []struct {
		name   string
		opts   Options
		damage func(t *testing.T, s *Store, dir string)
		reason string
	}{
		{"position checksum", Options{}, func(t *testing.T, s *Store, dir string) {
			b := encodePosition(7)
			b[11] ^= 1
			if err := s.db.Set(keyPosition, b, nil); err != nil {
				t.Fatal(err)
			}
		}, "checksum"},
		{"position missing", Options{}, func(t *testing.T, s *Store, dir string) {
			s.db.Delete(keyPosition, nil)
		}, "position record is missing"},
		{"format", Options{}, func(t *testing.T, s *Store, dir string) {
			s.db.Set(keyFormat, []byte("vigil-projections/0"), nil)
		}, "format"},
		{"format missing", Options{}, func(t *testing.T, s *Store, dir string) {
			s.db.Delete(keyFormat, nil)
		}, "format key is missing"},
		{"interrupted rebuild", Options{}, func(t *testing.T, s *Store, dir string) {
			s.db.Set(keyRebuilding, []byte("stats"), nil)
		}, "interrupted"},
		{"rebuild requested", Options{}, func(t *testing.T, s *Store, dir string) {
			if err := RequestRebuild(dir); err != nil {
				t.Fatal(err)
			}
		}, "requested"},
		{"another log", Options{Log: &LogState{Identity: "log-B", LastSeq: 100}}, nil, "another log"},
		{"log lost its tail", Options{Log: &LogState{Identity: "log-A", LastSeq: 10}}, nil, "log ends at 10"},
		{"corrupted table", Options{}, func(t *testing.T, s *Store, dir string) {
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(ssts) == 0 {
				t.Fatal("no table after flush")
			}
			for _, f := range ssts {
				b, _ := os.ReadFile(f)
				for i := 16; i < len(b)/2; i += 7 {
					b[i] ^= 0x5a
				}
				os.WriteFile(f, b, 0o600)
			}
		}, "checksum mismatch"},
		{"missing table", Options{}, func(t *testing.T, s *Store, dir string) {
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			for _, f := range ssts {
				os.Remove(f)
			}
		}, ""},
		{"garbage manifest", Options{}, func(t *testing.T, s *Store, dir string) {
			ms, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
			if len(ms) == 0 {
				t.Fatal("no manifest")
			}
			// Close first so Pebble does not rewrite it.
			s.Close()
			for _, f := range ms {
				os.WriteFile(f, []byte("not a manifest at all, sorry"), 0o600)
			}
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			s, err := Open(dir, Options{Log: &LogState{Identity: "log-A", LastSeq: 100}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(sc); err != nil {
				t.Fatal(err)
			}
			if tc.damage != nil {
				tc.damage(t, s, dir)
			}
			s.Close()
			s2 := openTest(t, dir, tc.opts)
			st := s2.Status()
			t.Logf("reset: %s", st.Reset)
			if st.Reset == "" || !strings.Contains(st.Reset, tc.reason) {
				t.Fatalf("reset reason %q, want one mentioning %q", st.Reset, tc.reason)
			}
			if s2.Position() != 0 {
				t.Fatalf("position %d after a reset", s2.Position())
			}
			if _, err := s2.GetEvent("a1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a reset store served %v", err)
			}
			// It rebuilds normally.
			if err := s2.Apply(sc); err != nil {
				t.Fatal(err)
			}
			if s2.Position() != 14 {
				t.Fatalf("position %d after rebuild", s2.Position())
			}
			s2.Close()
			s3 := openTest(t, dir, Options{})
			if s3.Status().Reset != "" || s3.Position() != 14 {
				t.Fatalf("rebuilt store not accepted: %+v", s3.Status())
			}
		})
	}
}

// TestDamagedTableFoundAfterOpen: a damaged block that Open's own reads do
// not meet is found by the verification Open starts in the background; the
// store then refuses to serve, and the next Open empties it.
func TestDamagedTableFoundAfterOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Enough events for many data blocks: the first holds the smallest
	// keys (events), far from the m/ records Open reads.
	var batch []Applied
	for i := range 3000 {
		batch = append(batch, Applied{Record: mkRec(t, uint64(i+1), action(fmt.Sprintf("act-%05d", i), "c-1", strings.Repeat("x", 200)))})
	}
	if err := s.Apply(batch); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table after flush")
	}
	for _, f := range ssts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := 64; i < 256; i++ {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s2 := openTest(t, dir, Options{})
	if r := s2.Status().Reset; r != "" {
		t.Fatalf("Open met the damage itself (%s): the test must damage a block Open does not read", r)
	}
	done, result := s2.VerifyDone()
	<-done
	if err := result(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("background verification: %v, want ErrCorrupt (checksum mismatch)", err)
	}
	if _, err := s2.GetEvent("act-00000"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a store that failed verification served: %v", err)
	}
	if _, err := s2.Stats(""); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a store that failed verification served: %v", err)
	}
	s2.Close()
	s3 := openTest(t, dir, Options{})
	if st := s3.Status(); !strings.Contains(st.Reset, "rebuild was requested") || st.Position != 0 {
		t.Fatalf("after a failed verification: %+v, want a reset store", st)
	}
	// A rebuilt (intact) store passes.
	done, result = s3.VerifyDone()
	<-done
	if err := result(); err != nil {
		t.Fatalf("verification of an intact store: %v", err)
	}
}

// TestVerifyInChunks: the background verification closes its iterator at
// every pause and resumes after the last key: it reads every key once,
// as one pass without pauses does.
func TestVerifyInChunks(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "p"), Options{SkipVerify: true})
	var batch []Applied
	for i := range 3 * verifyChunk {
		batch = append(batch, Applied{Record: mkRec(t, uint64(i+1), action(fmt.Sprintf("act-%05d", i), fmt.Sprintf("c-%d", i%7), "ls"))})
	}
	if err := s.Apply(batch); err != nil {
		t.Fatal(err)
	}
	whole, err := s.verify(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunked, err := s.verify(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if whole < 3*verifyChunk || chunked != whole {
		t.Fatalf("read %d keys in chunks, %d in one pass (want equal, at least %d)", chunked, whole, 3*verifyChunk)
	}
	stop := make(chan struct{})
	close(stop)
	if n, err := s.verify(stop, 1); err != nil || n != verifyChunk {
		t.Fatalf("stopped verification read %d keys (%v), want one chunk (%d)", n, err, verifyChunk)
	}
}

// TestCorruptionMetLater: a corruption error after open stops the store
// from serving and makes the next open rebuild it.
func TestCorruptionMetLater(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(scenario(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.fail(pebble.ErrCorruption); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("fail = %v", err)
	}
	if _, err := s.GetEvent("a1"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read after corruption: %v", err)
	}
	if _, err := s.Pending(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("scan after corruption: %v", err)
	}
	// The driver goes on (gating must not stop); the store drops the batch.
	pos := s.Position()
	if err := s.Apply([]Applied{synthetic(t, pos+1)}); err != nil || s.Position() != pos {
		t.Fatalf("apply after corruption: %v, position %d", err, s.Position())
	}
	s.Close()
	s2 := openTest(t, dir, Options{})
	if s2.Status().Reset == "" || s2.Position() != 0 {
		t.Fatalf("store not rebuilt after a corruption: %+v", s2.Status())
	}
}

// TestNeverWipesForeignFiles: a store pointed at a directory that is not
// its own refuses to rebuild rather than delete someone else's files.
func TestNeverWipesForeignFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.WriteFile(filepath.Join(dir, "serve.json"), []byte("{}"), 0o600)
	RequestRebuild(dir)
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "serve.json") {
		t.Fatalf("Open = %v, want a refusal naming serve.json", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "serve.json")); err != nil {
		t.Fatal("a foreign file was deleted")
	}
}

func TestDirectoryDeleted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	s, _ := Open(dir, Options{})
	s.Apply(scenario(t))
	s.Close()
	os.RemoveAll(dir)
	s2 := openTest(t, dir, Options{})
	if s2.Position() != 0 {
		t.Fatalf("position %d for a missing store", s2.Position())
	}
}

func TestRebuild(t *testing.T) {
	sc := scenario(t)
	feed := func(upto int) Feed {
		return func(ctx context.Context, yield func([]Applied) error) error {
			for i := 0; i < upto; i += 4 {
				if err := yield(sc[i:min(i+4, upto)]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	s := openTest(t, filepath.Join(t.TempDir(), "p"), Options{})
	if err := s.Apply(sc[:10]); err != nil {
		t.Fatal(err)
	}
	ref := openTest(t, filepath.Join(t.TempDir(), "ref"), Options{})
	ref.Apply(sc)
	want := snapshot(t, ref)

	// Some projections, with the log ahead of the store: refold to 10, then apply 11..14 to all.
	res, err := s.Rebuild(t.Context(), []string{"allowlist", "stats", "gate"}, feed(len(sc)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Refolded != 10 || res.Applied != 4 || res.Position != 14 {
		t.Fatalf("rebuild result %+v", res)
	}
	if got := snapshot(t, s); got != want {
		t.Fatalf("after partial rebuild:\n%s\nwant:\n%s", got, want)
	}
	// All of them.
	res, err = s.Rebuild(t.Context(), nil, feed(len(sc)))
	if err != nil || res.Applied != 14 || res.Position != 14 {
		t.Fatalf("rebuild all = %+v, %v", res, err)
	}
	if got := snapshot(t, s); got != want {
		t.Fatalf("after full rebuild:\n%s\nwant:\n%s", got, want)
	}
	// A log shorter than the store: refused, and the next open rebuilds everything.
	if _, err := s.Rebuild(t.Context(), []string{"stats"}, feed(5)); err == nil {
		t.Fatal("rebuild from a short log succeeded")
	}
	if _, err := s.Rebuild(t.Context(), []string{"nope"}, feed(5)); err == nil || !strings.Contains(err.Error(), "there are: events") {
		t.Fatalf("unknown projection err = %v", err)
	}
}

func TestProjectionsListed(t *testing.T) {
	var names []string
	for _, p := range Projections() {
		names = append(names, p.Name)
	}
	if !reflect.DeepEqual(names, []string{"events", "risk", "gate", "allowlist", "pairing", "config", "tokens", "stats"}) {
		t.Fatal(names)
	}
}

// synthetic returns the applied record at seq of an endless synthetic log.
func synthetic(t testing.TB, seq uint64) Applied {
	conv := fmt.Sprintf("c-%d", seq%3)
	r := mkRec(t, seq, action(fmt.Sprintf("act-%d", seq), conv, "ls -la"))
	return Applied{Record: r, Outputs: []processors.Output{processors.NewOutput("risk", &r, 0, events.RiskSubject(conv),
		events.KindRiskAssessed, events.RiskAssessed{ActionID: r.Event.ID, LogSeq: seq, Level: events.RiskLow})}}
}

// TestMain lets TestKillDuringApply re-run this binary as a driver that
// applies batches until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("VIGIL_PROJECTIONS_CHILD"); dir != "" {
		os.Exit(childApplyForever(dir))
	}
	os.Exit(m.Run())
}

func childApplyForever(dir string) int {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tb := &testing.B{}
	// Like the driver after a crash: re-send from an ack floor behind the store.
	next := uint64(1)
	if p := s.Position(); p > 25 {
		next = p - 25
	}
	for {
		batch := make([]Applied, 0, 40)
		for range 40 {
			batch = append(batch, synthetic(tb, next))
			next++
		}
		if err := s.Apply(batch); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(s.Position())
	}
}

// TestKillDuringApply kills a process that applies batches at arbitrary
// points (before, during or after a commit) and checks that the store
// always holds each record exactly once up to its position.
func TestKillDuringApply(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "p")
	var last uint64
	for round := range 4 {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "VIGIL_PROJECTIONS_CHILD="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		lines := 0
		for sc.Scan() && lines < 5+round*3 {
			lines++
		}
		cmd.Process.Kill()
		cmd.Wait()
		if lines == 0 {
			t.Fatalf("round %d: child applied nothing: %s", round, stderr.String())
		}
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pos := s.Position()
		if s.Status().Reset != "" || pos <= last {
			t.Fatalf("round %d: position %d (was %d), reset %q", round, pos, last, s.Status().Reset)
		}
		tot, err := s.Stats("")
		if err != nil || tot.Events != pos || tot.LastSeq != pos || tot.Risk["LOW"] != pos {
			t.Fatalf("round %d: position %d but totals %+v, %v: a record was applied twice or skipped", round, pos, tot, err)
		}
		var n uint64
		for c := range 3 {
			rs, err := s.ByConversation(fmt.Sprintf("c-%d", c), 0, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			n += uint64(len(rs))
		}
		if n != pos {
			t.Fatalf("round %d: %d events indexed by conversation, position %d", round, n, pos)
		}
		if _, err := s.EventAt(pos + 1); !errors.Is(err, ErrNotFound) {
			t.Fatalf("round %d: an event past the position: %v", round, err)
		}
		t.Logf("round %d: killed at position %d", round, pos)
		last = pos
		s.Close()
	}
}

// TestVerifyTablesOnce: the background verification reads a table back
// once; a later start reads only the tables written (or changed on disk)
// since, and a damaged one is a corruption.
func TestVerifyTablesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	s := openTest(t, dir, Options{SkipVerify: true})
	apply := func(from, n int) {
		var batch []Applied
		for i := from; i < from+n; i++ {
			batch = append(batch, Applied{Record: mkRec(t, uint64(i+1), action(fmt.Sprintf("act-%05d", i), "c-v", "ls"))})
		}
		if err := s.Apply(batch); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	apply(0, 500)
	first, err := s.verifyTables(nil, 0)
	if err != nil || first == 0 {
		t.Fatalf("first verification read %d tables (%v), want some", first, err)
	}
	if n, err := s.verifyTables(nil, 0); err != nil || n != 0 {
		t.Fatalf("second verification read %d tables (%v), want none", n, err)
	}
	apply(500, 500)
	if n, err := s.verifyTables(nil, 0); err != nil || n == 0 || n > first+1 {
		t.Fatalf("after a flush the verification read %d tables (%v), want the new ones only", n, err)
	}
	// A background compaction may remove the table between the listing
	// and the damage: a table that is gone is no finding, and another is
	// damaged instead. A live damaged table must be found.
	for range 50 {
		ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		if len(ssts) == 0 {
			t.Fatal("no tables")
		}
		if !damageTable(t, ssts[0]) {
			continue
		}
		_, err := s.verifyTables(nil, 0)
		if pebble.IsCorruptionError(err) {
			return
		}
		if _, statErr := os.Stat(ssts[0]); errors.Is(statErr, fs.ErrNotExist) {
			continue
		}
		t.Fatalf("a damaged table: %v, want a corruption error", err)
	}
	t.Fatal("every table damaged was compacted away before the verification")
}

// damageTable flips bytes 64..255 of the table at path in place; false
// when the table is gone.
func damageTable(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 192)
	if _, err := f.ReadAt(b, 64); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0x5a
	}
	if _, err := f.WriteAt(b, 64); err != nil {
		t.Fatal(err)
	}
	return true
}

// TestWaitPosition: a wait returns once the record is applied, and
// reports false when its context ends first.
func TestWaitPosition(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "p"), Options{})
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if s.WaitPosition(short, 1) {
		t.Fatal("an empty store says it holds log record 1")
	}
	done := make(chan bool, 1)
	go func() { done <- s.WaitPosition(t.Context(), 2) }()
	if err := s.Apply([]Applied{synthetic(t, 1), synthetic(t, 2)}); err != nil {
		t.Fatal(err)
	}
	if !<-done {
		t.Fatal("the wait for log record 2 ended without it")
	}
	if !s.WaitPosition(short, 1) {
		t.Fatal("a store at 2 says it does not hold log record 1")
	}
}
