package events

import (
	"errors"
	"reflect"
	"testing"
)

// TestTypedViews reads each kind's data through its typed view.
func TestTypedViews(t *testing.T) {
	t.Parallel()
	exit := int64(2)
	tests := []struct {
		kind Kind
		data string
		want any
	}{
		{KindConversationStarted, `{"backend":"docker","workspace":"/w","x":1}`, ConversationStarted{Backend: "docker", Workspace: "/w"}},
		{KindAction, `{"tool":"bash","args":{"command":"ls","n":1},"security_risk":"high","thought":"t","backend":"ssh","cwd":"/w"}`,
			Action{Tool: "bash", Args: map[string]any{"command": "ls", "n": int64(1)}, SecurityRisk: "high", Thought: "t", Backend: "ssh", Cwd: "/w"}},
		{KindObservation, `{"action_id":"a","content":"out","exit_code":2}`, Observation{ActionID: "a", Content: "out", ExitCode: &exit}},
		{KindObservation, `{"action_id":"a","exit_code":null}`, Observation{ActionID: "a"}},
		{KindMessage, `{"role":"user","content":[{"type":"text","text":"hi"}]}`,
			Message{Role: "user", Content: []any{map[string]any{"type": "text", "text": "hi"}}}},
		{KindContextLoaded, `{"path":"AGENTS.md","content":"be nice"}`, ContextLoaded{Path: "AGENTS.md", Content: "be nice"}},
		{KindApprovalDecision, `{"action_id":"a","verdict":"always","approver":"alice","reason":"r"}`,
			ApprovalDecision{ActionID: "a", Verdict: VerdictAlways, Approver: "alice", Reason: "r"}},
		{KindApprovalDecision, `{"action_id":"a","verdict":"once","log_seq":42,"digest":"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`,
			ApprovalDecision{ActionID: "a", Verdict: VerdictOnce, LogSeq: 42, Digest: "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},
		{KindAllowlistChanged, `{"op":"add","entry_id":"e","shape":"s","action_id":"a","by":"b","reason":"r"}`,
			AllowlistChanged{Op: AllowlistAdd, EntryID: "e", Shape: "s", ActionID: "a", By: "b", Reason: "r"}},
		{KindApprovalExpired, `{"action_id":"a","reason":"r"}`, ApprovalExpired{ActionID: "a", Reason: "r"}},
		{KindPairingRequested, `{"user":"u","platform":"p","code_hash":"h","by":"b"}`, Pairing{User: "u", Platform: "p", CodeHash: "h", By: "b"}},
		{KindConfig, `{"version":3,"scope":"global","analyzers":{"rules":true,"llm_hint":true},"confirmation":{"mode":"risky","threshold":"MEDIUM"},"approval_timeout":"5m","redaction":{"entropy_threshold":4.5}}`,
			Config{Version: 3, Scope: ScopeGlobal, Analyzers: Analyzers{Rules: true, LLMHint: true},
				Confirmation: Confirmation{Mode: ModeRisky, Threshold: RiskMedium}, ApprovalTimeout: "5m",
				Redaction: RedactionSettings{EntropyThreshold: 4.5}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			t.Parallel()
			v, err := DecodeJSONValue([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			ev := Event{V: 1, ID: "x", Kind: tt.kind, Data: v.(map[string]any)}
			got, err := eventViews[tt.kind](&ev)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("view = %#v\nwant   %#v", got, tt.want)
			}
			// The view is read-only: the generic map still holds every field.
			again, _ := DecodeJSONValue([]byte(tt.data))
			if !reflect.DeepEqual(ev.Data, again) {
				t.Errorf("reading the view changed Data")
			}
			// ToData renders the view back into a map the view reads the same.
			m, err := ToData(got)
			if err != nil {
				t.Fatal(err)
			}
			back := Event{Kind: tt.kind, Data: m}
			if got2, err := eventViews[tt.kind](&back); err != nil || !reflect.DeepEqual(got2, got) {
				t.Errorf("ToData round trip: %#v, %v", got2, err)
			}
		})
	}
}

func TestDataAsRefusesMisfits(t *testing.T) {
	t.Parallel()
	for _, data := range []map[string]any{
		{"tool": 7},
		{"tool": "bash", "args": "ls"},
		{"tool": map[string]any{}},
	} {
		ev := Event{ID: "x", Kind: KindAction, Data: data}
		_, err := DataAs[Action](&ev)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "data" {
			t.Errorf("DataAs[Action](%v) = %v, want a ValidationError for data", data, err)
		}
	}
}

func TestAccessors(t *testing.T) {
	t.Parallel()
	ev := mustDecodeJSON(t, `{"v":1,"data":{"tool":"bash","args":{"command":"ls"},"cwd":"/w","n":1}}`)
	if ev.Tool() != "bash" || ev.Args()["command"] != "ls" || ev.StringField("cwd") != "/w" || ev.StringField("n") != "" {
		t.Errorf("Tool %q Args %v cwd %q n %q", ev.Tool(), ev.Args(), ev.StringField("cwd"), ev.StringField("n"))
	}
	var empty Event
	if empty.Tool() != "" || empty.Args() != nil || empty.StringField("x") != "" {
		t.Error("accessors on an event with no data")
	}
	if got := SortedKeys(map[string]any{"b": 1, "a": 2, "c": 3}); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("SortedKeys = %q", got)
	}
}
