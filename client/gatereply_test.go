package client

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
)

// TestFastGateReply: what fastGateReply reads, it reads as json.Unmarshal
// into a gateReply does; it takes every message the ingest service writes
// (encoding/json's spelling of the replies) and leaves the spellings it
// does not know to encoding/json.
func TestFastGateReply(t *testing.T) {
	reasons := []events.Reason{{Analyzer: "shell", Rule: "rm-rf", Detail: "deletes é files", Level: events.RiskHigh, Span: []int{0, 5}},
		{Analyzer: "policy", Rule: "r", Span: []int{}}}
	written := []any{
		events.IngestReply{Results: []events.IngestResult{{ID: "a1", Seq: 7}, {ID: "a2", Seq: 1<<64 - 1, Duplicate: true}}},
		events.IngestReply{Results: []events.IngestResult{}},
		events.IngestReply{Error: "not stored: x", Index: -1},
		events.IngestReply{Error: "event 3: bad", Index: 3},
		transport.WaitReply{Requested: &events.GateRequested{ActionID: "a", LogSeq: 42, Level: events.RiskHigh, Reasons: reasons,
			Tool: "bash", Command: "rm -rf /", Shape: "rm -rf <path>", Timeout: "5m0s", ConfigVersion: 3, Agent: "claude",
			Backend: "local", BackendClaimed: "sandbox", Digest: "sha256:00"}},
		transport.WaitReply{Decided: &events.GateDecided{ActionID: "a", LogSeq: 42, Outcome: events.OutcomeDeny, By: events.ByHuman,
			Level: events.RiskHigh, Reasons: reasons, Approver: "ann", Reason: "no", DecisionSeq: 50, Shape: "s", ConfigVersion: -2,
			Verdict: events.Verdict("deny"), EntryID: "e1", Would: "ask", AskSecurityRisk: true, Digest: "sha256:00"}},
		transport.WaitReply{Decided: &events.GateDecided{ActionID: "a", LogSeq: 1, Outcome: events.OutcomeAllow, By: events.ByRule, Reasons: []events.Reason{}}},
		transport.WaitReply{Decided: &events.GateDecided{}},
		transport.WaitReply{WaitError: "no decision within 1s (denied: fail closed)"},
	}
	for _, v := range written {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fastGateReply(b); !ok {
			t.Errorf("%s: not read by the fast path", b)
		}
		same(t, b)
	}
	for _, s := range []string{
		`{}`, ` { "results" : [ { "id" : "a" , "seq" : 0 } ] } `, `{"results":[{"id":"a","seq":7}]}x`,
		`{"Results":[{"id":"a","seq":7}]}`, `{"results":[{"ID":"a","seq":7}]}`, `{"error":"a\"b"}`, `{"error":"a\u00e9"}`,
		"{\"error\":\"\xff\"}", "{\"error\":\"a\tb\"}", `{"error":null}`, `{"results":null}`, `{"index":1.0}`, `{"index":1e2}`,
		`{"index":-0}`, `{"index":01}`, `{"index":-}`, `{"index":99999999999999999999}`, `{"results":[{"seq":-1}]}`,
		`{"results":[{"seq":18446744073709551616}]}`, `{"results":[{"seq":1844674407370955161}]}`, `{"error":"a","error":"b"}`,
		`{"decided":{"log_seq":1},"decided":{"log_seq":2}}`, `{"decided":{"reasons":[{"span":[1,-2,3]}]}}`,
		`{"decided":{"ask_security_risk":true}}`, `{"decided":{"ask_security_risk":tru}}`, `{"decided":{"ask_security_risk":1}}`,
		`{"decided":{"unknown":1}}`, `{"decided":[]}`, `[]`, `"x"`, ``, `{`, `{"results":[{"id":"a"},]}`, `{"results":[{"id":"a"}`,
		`{"wait_error":"x",}`, `{"error":"a\\"}`, `{"error":"\ud800"}`, `{"error":"a\"}`, `{"err\u006fr":"x"}`,
		`{"decided":{"shape":"rm \u003cp\u003e","reason":"tab\there"}}`, "{\"error\":\"a\\\x01\"}",
		`{"results":[{"id":"a","seq":7}],"results":null}`, `{"decided":{"reasons":null}}`, `{"decided":null}`, `{"requested":{"level":"high","reasons":[]}}`, `{"requested":{"level":"high","reasons":[{}]}}`,
	} {
		same(t, []byte(s))
	}
}

// same checks that fastGateReply, when it reads b, agrees with
// json.Unmarshal.
func same(t *testing.T, b []byte) {
	t.Helper()
	got, ok := fastGateReply(b)
	if !ok {
		if !reflect.DeepEqual(got, gateReply{}) {
			t.Errorf("%s: refused but left %+v", b, got)
		}
		return
	}
	var want gateReply
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("%s: read by the fast path as %+v, but encoding/json refuses it: %v", b, got, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n fast %#v\n json %#v", b, got, want)
	}
}

func BenchmarkDecodeGateReply(b *testing.B) {
	data, err := json.Marshal(transport.WaitReply{Decided: &events.GateDecided{ActionID: "a1", LogSeq: 42, Outcome: events.OutcomeAllow,
		By: events.ByRule, Level: events.RiskLow, Reasons: []events.Reason{{Analyzer: "shell", Rule: "ls", Detail: "lists"}}, DecisionSeq: 42,
		ConfigVersion: 1, Digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fastGateReply(data)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var g gateReply
			_ = json.Unmarshal(data, &g)
		}
	})
}

// FuzzFastGateReply: on any message fastGateReply reads, it reads what
// json.Unmarshal reads into a gateReply; it never panics.
func FuzzFastGateReply(f *testing.F) {
	for _, s := range []string{
		`{"results":[{"id":"a1","seq":7},{"id":"a2","seq":18446744073709551615,"duplicate":true}]}`,
		`{"error":"not stored: x","index":-1}`,
		`{"requested":{"action_id":"a","log_seq":42,"level":"HIGH","reasons":[{"analyzer":"shell","rule":"rm-rf","detail":"d \u00e9","level":"HIGH","span":[0,5]}],"tool":"bash","command":"rm -rf /"}}`,
		`{"decided":{"action_id":"a","log_seq":42,"outcome":"deny","by":"human","ask_security_risk":true,"reasons":[]}}`,
		`{"wait_error":"no decision within 1s (denied: fail closed)"}`,
		`{"error":"a\"b"}`, `{"index":1e2}`, `{"decided":null}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { same(t, b) })
}
