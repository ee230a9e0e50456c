package ingest_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/ingest"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
	"github.com/vigil-dev/vigil/internal/testnode"
)

func readDerived(t *testing.T, s *node.Node, stream, subject string) []events.Derived {
	t.Helper()
	var out []events.Derived
	err := natsutil.ReadStream(t.Context(), s.JetStream(), natsutil.ReadOptions{Stream: stream, Subjects: []string{subject}},
		func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return err
			}
			out = append(out, d)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func logCount(t *testing.T, s *node.Node) uint64 {
	t.Helper()
	st, err := s.JetStream().Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// TestRefusals sends bodies the ingest service must refuse and checks each
// gets a reply with the reason, a DLQ record with a digest and no body, and
// that the service keeps serving.
func TestRefusals(t *testing.T) {
	s := testnode.StartNode(t, testnode.Options{})
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	const secret = "sk-ant-api03-THISISNOTAREALKEYBUTLOOKSLIKEONE0123456789abcdefghijklmnop"
	approval := events.Event{V: 1, ID: "ap-1", Kind: events.KindApprovalDecision, Conversation: "c-1",
		Time: time.Now(), Data: map[string]any{"action_id": "a1", "verdict": "once"}}
	approvalBody, _ := approval.MarshalMsgpack()
	cases := []struct {
		name        string
		body        []byte
		contentType string
		wantReason  string
		wantAlert   bool
	}{
		{"garbage msgpack", []byte{0xc1, 0xff, 0x00, 's', 'k'}, "", "cannot decode", false},
		{"truncated msgpack", approvalBody[:len(approvalBody)/2], "", "cannot decode", false},
		{"json with a secret that does not parse", []byte(`{"kind":"action","data":{"key":"` + secret + `"`), ingest.ContentTypeJSON, "cannot decode", false},
		{"json array top level", []byte(`[1,2,3]`), ingest.ContentTypeJSON, "want an object", false},
		{"unknown content type", []byte(`x`), "text/plain", "content type", false},
		{"empty body", nil, "", "empty body", false},
		{"unknown kind", []byte(`{"v":1,"id":"x1","kind":"rocket.launch","conversation":"c-1","data":{}}`), ingest.ContentTypeJSON, "not a known kind", false},
		{"derived kind", []byte(`{"v":1,"id":"x2","kind":"gate.decided","conversation":"c-1","data":{}}`), ingest.ContentTypeJSON, "derived", false},
		{"control kind on agent subject", approvalBody, "", "control kind", true},
		{"batch with one bad line", []byte("{\"v\":1,\"id\":\"ok1\",\"kind\":\"message\",\"data\":{\"role\":\"user\",\"content\":\"x\"}}\n{\"v\":1,\"kind\":\"action\",\"data\":{}}\n"), ingest.ContentTypeJSONL, "event 1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := &nats.Msg{Subject: events.IngestAgentSubject("c-1"), Data: tc.body, Header: nats.Header{}}
			if tc.contentType != "" {
				msg.Header.Set(ingest.HeaderContentType, tc.contentType)
			}
			before := logCount(t, s)
			resp, err := agent.Conn().RequestMsg(msg, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_, err = client.ParseReply(resp.Data, 1)
			if err == nil || !strings.Contains(err.Error(), tc.wantReason) {
				t.Fatalf("reply error = %v, want it to mention %q", err, tc.wantReason)
			}
			if after := logCount(t, s); after != before {
				t.Fatalf("log grew from %d to %d on a refused request", before, after)
			}
		})
	}
	dlq := readDerived(t, s, events.StreamDLQ, events.SubjectDLQ)
	if len(dlq) != len(cases) {
		t.Fatalf("DLQ holds %d records, want %d", len(dlq), len(cases))
	}
	raw := readRaw(t, s, events.StreamDLQ)
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatal("the DLQ holds a refused body's secret")
	}
	for _, d := range dlq {
		m := d.Data.(map[string]any)
		if !strings.HasPrefix(m["digest"].(string), "sha256:") || m["reason"] == "" {
			t.Fatalf("DLQ record %v lacks a reason or digest", m)
		}
	}
	alerts := readDerived(t, s, events.StreamDerived, events.SubjectAlert)
	if len(alerts) != 1 {
		t.Fatalf("got %d alerts, want 1 (control kind on an agent subject)", len(alerts))
	}
	// Still serving after every refusal.
	ok := events.Event{V: 1, ID: "after", Kind: events.KindMessage, Conversation: "c-1", Time: time.Now(), Data: map[string]any{"role": "user", "content": "still here"}}
	if _, err := agent.Append(t.Context(), ok); err != nil {
		t.Fatalf("append after refusals: %v", err)
	}
}

func readRaw(t *testing.T, s *node.Node, stream string) []byte {
	t.Helper()
	var all []byte
	err := natsutil.ReadStream(t.Context(), s.JetStream(), natsutil.ReadOptions{Stream: stream}, func(r natsutil.RawRecord) error {
		all = append(all, r.Data...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestOversizedBody: a 10 MB body gets a clear size error and the service
// keeps serving.
func TestOversizedBody(t *testing.T) {
	s := testnode.StartNode(t, testnode.Options{})
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	big := events.Event{V: 1, ID: "big", Kind: events.KindObservation, Conversation: "c-1", Time: time.Now(),
		Data: map[string]any{"action_id": "a1", "content": strings.Repeat("x", 10<<20)}}
	_, err = agent.Append(t.Context(), big)
	if err == nil || !strings.Contains(err.Error(), "maximum payload") {
		t.Fatalf("10 MB append: err = %v, want a maximum payload error", err)
	}
	small := big
	small.ID, small.Data = "small", map[string]any{"action_id": "a1", "content": "ok"}
	if _, err := agent.Append(t.Context(), small); err != nil {
		t.Fatalf("append after the oversized one: %v", err)
	}
}

// TestBatchStoredInOrder: a JSON-lines batch is stored in order and the
// reply gives each event's sequence.
func TestBatchStoredInOrder(t *testing.T) {
	s := testnode.StartNode(t, testnode.Options{})
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	var body bytes.Buffer
	for i := range 50 {
		body.WriteString(`{"v":1,"id":"b` + string(rune('A'+i%26)) + string(rune('a'+i/26)) + `","kind":"message","data":{"role":"user","content":"x"}}` + "\n")
	}
	msg := &nats.Msg{Subject: events.IngestAgentSubject("c-9"), Data: body.Bytes(), Header: nats.Header{}}
	msg.Header.Set(ingest.HeaderContentType, ingest.ContentTypeJSONL)
	resp, err := agent.Conn().RequestMsg(msg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := client.ParseReply(resp.Data, 50)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Seq != uint64(i+1) {
			t.Fatalf("event %d stored at %d", i, r.Seq)
		}
	}
	var convs []string
	agentTail, _ := s.Client(t.Context(), natsutil.RoleAdmin)
	defer agentTail.Close()
	agentTail.Tail(t.Context(), client.TailOptions{}, func(r events.Record) error {
		convs = append(convs, r.Event.Conversation)
		return nil
	})
	if len(convs) != 50 || convs[0] != "c-9" {
		t.Fatalf("conversation taken from the subject: got %v", convs[:1])
	}
}

// TestBatchIDConflictSaysWhatWasStored: a batch that reuses a stored id
// with other content is refused for that event, and the reply says what
// of the batch was stored. The id index, once it knows the id, refuses
// the request before anything is stored; JetStream, when the id reaches
// it first (stored a moment ago, not yet indexed), stores the batch's
// other events, and the reply says so. Either way a retry with the same
// ids stores nothing twice.
func TestBatchIDConflictSaysWhatWasStored(t *testing.T) {
	s := testnode.StartNode(t, testnode.Options{})
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	msg := func(id, content string) events.Event {
		return events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindMessage, Conversation: "c-b",
			Data: map[string]any{"role": "user", "content": content}}
	}
	if _, err := agent.Append(t.Context(), msg("m-used", "first")); err != nil {
		t.Fatal(err)
	}
	_, err = agent.AppendBatch(t.Context(), []events.Event{msg("m-new1", "a"), msg("m-used", "other"), msg("m-new2", "b")})
	if err == nil || !strings.Contains(err.Error(), "event 1: its id is already stored with different content") {
		t.Fatalf("batch with a reused id: %v", err)
	}
	stored := logCount(t, s) - 1
	switch {
	case stored == 2 && strings.Contains(err.Error(), "2 other events are stored"): // JetStream's answer
	case stored == 0 && !strings.Contains(err.Error(), "other events"): // the index's
	default:
		t.Fatalf("%d other events stored, and the reply says: %v", stored, err)
	}
	rs, err := agent.AppendBatch(t.Context(), []events.Event{msg("m-new1", "a"), msg("m-new2", "b")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Duplicate != (stored == 2) || r.Seq == 0 {
			t.Errorf("retry of %s: %+v; want duplicate %v", r.ID, r, stored == 2)
		}
	}
	if after := logCount(t, s); after != 3 {
		t.Errorf("log holds %d events after the retry; want 3", after)
	}
}

// TestChainStoppedMidwaySaysPartlyStored: when the log refuses a
// request's events partway through its chain (here an event over the
// stream's own message size limit), the reply says how many of the
// request's events are stored, in order, and that a retry with the same
// ids completes it; the retry stores the rest, nothing twice, in the
// request's order.
func TestChainStoppedMidwaySaysPartlyStored(t *testing.T) {
	s := testnode.StartNode(t, testnode.Options{})
	agent, err := s.Client(t.Context(), natsutil.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	msg := func(id string, size int) events.Event {
		return events.Event{V: events.CurrentVersion, ID: id, Kind: events.KindMessage, Conversation: "c-p",
			Data: map[string]any{"role": "user", "content": strings.Repeat("x", size)}}
	}
	if _, err := agent.Append(t.Context(), msg("p-0", 10)); err != nil {
		t.Fatal(err)
	}
	st, err := s.JetStream().Stream(t.Context(), events.StreamLog)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	limit := func(maxMsgSize int32) {
		t.Helper()
		cfg := info.Config
		cfg.MaxMsgSize = maxMsgSize
		if _, err := s.JetStream().UpdateStream(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	// The chain's first event fits the stream, its second does not: the
	// second and (by the chain) the third are refused.
	limit(2000)
	batch := []events.Event{msg("p-1", 10), msg("p-2", 4000), msg("p-3", 10)}
	_, err = agent.AppendBatch(t.Context(), batch)
	if err == nil || !strings.Contains(err.Error(), "partly stored: the first 1 of the 3 events to store are stored, in order") ||
		!strings.Contains(err.Error(), "retry the request with the same ids") {
		t.Fatalf("a chain the log stops midway: %v", err)
	}
	if n := logCount(t, s); n != info.State.Msgs+1 {
		t.Fatalf("log holds %d events; want %d", n, info.State.Msgs+1)
	}
	limit(info.Config.MaxMsgSize)
	rs, err := agent.AppendBatch(t.Context(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if want := info.State.LastSeq + uint64(i) + 1; r.Duplicate != (i == 0) || r.Seq != want {
			t.Errorf("retry, event %d: %+v; want seq %d, duplicate %v", i, r, want, i == 0)
		}
	}
	if n := logCount(t, s); n != info.State.Msgs+3 {
		t.Errorf("log holds %d events after the retry; want %d", n, info.State.Msgs+3)
	}
}
