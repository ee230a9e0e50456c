package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// validEvent is an action that passes Validate; tests break one thing each.
func validEvent() Event {
	return Event{
		V: 1, ID: "01M81B5KP4KN9DZNWV9NV456V1", Kind: KindAction, Conversation: "c-42", Agent: "coder-1",
		Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Data: map[string]any{"tool": "bash", "args": map[string]any{"command": "ls"}},
	}
}

func TestValidateEnvelope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(e *Event)
		field string // "" means valid
	}{
		{"valid", func(e *Event) {}, ""},
		{"v 0", func(e *Event) { e.V = 0 }, "v"},
		{"v 2", func(e *Event) { e.V = 2 }, "v"},
		{"no id", func(e *Event) { e.ID = "" }, "id"},
		{"id with a space", func(e *Event) { e.ID = "01J 02" }, "id"},
		{"id with a newline", func(e *Event) { e.ID = "01J\n" }, "id"},
		{"id with a form feed", func(e *Event) { e.ID = "01J\f" }, "id"},
		{"id not ASCII", func(e *Event) { e.ID = "événement" }, "id"},
		{"id too long", func(e *Event) { e.ID = strings.Repeat("a", MaxIDLen+1) }, "id"},
		{"id at the limit", func(e *Event) { e.ID = strings.Repeat("a", MaxIDLen) }, ""},
		{"id a UUID", func(e *Event) { e.ID = "5f0e2c1a-8d3b-4e7f-9a26-3c1b7d9e4f20" }, ""},
		{"id a derived id", func(e *Event) { e.ID = "gate:42:1" }, ""},
		{"no kind", func(e *Event) { e.Kind = "" }, "kind"},
		{"unknown kind", func(e *Event) { e.Kind = "tool.called" }, "kind"},
		{"derived kind", func(e *Event) { e.Kind = KindGateDecided }, "kind"},
		{"agent kind without a conversation", func(e *Event) { e.Conversation = "" }, "conversation"},
		{"conversation with a dot", func(e *Event) { e.Conversation = "c.42" }, "conversation"},
		{"conversation with a wildcard", func(e *Event) { e.Conversation = ">" }, "conversation"},
		{"conversation too long", func(e *Event) { e.Conversation = strings.Repeat("c", 129) }, "conversation"},
		{"conversation with @ and :", func(e *Event) { e.Conversation = "alice@host:c_1-2" }, ""},
		{"no agent", func(e *Event) { e.Agent = "" }, ""},
		{"agent of 256 characters", func(e *Event) { e.Agent = strings.Repeat("é", MaxAgentLen) }, ""},
		{"agent of 257 characters", func(e *Event) { e.Agent = strings.Repeat("a", MaxAgentLen+1) }, "agent"},
		{"no time", func(e *Event) { e.Time = time.Time{} }, "time"},
		{"nil data", func(e *Event) { e.Data = nil }, "data.tool"},
		{"control kind without a conversation", func(e *Event) {
			e.Kind, e.Conversation, e.Data = KindApprovalDecision, "", map[string]any{"action_id": "a", "verdict": "once"}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := validEvent()
			tt.edit(&ev)
			err := ev.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			checkValidationError(t, err, tt.field)
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message %q does not name the field", err)
			}
		})
	}
}

// TestValidateData covers each kind's data rules (the Go twin of schemas/).
func TestValidateData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind  Kind
		data  string
		field string // "" means valid
	}{
		{KindConversationStarted, `{}`, ""},
		{KindConversationStarted, `{"backend":"docker","workspace":"/w","extra":1}`, ""},
		{KindConversationStarted, `{"backend":1}`, "data.backend"},
		{KindAction, `{"tool":"bash"}`, ""},
		{KindAction, `{"tool":"mcp:github","args":{},"thought":[1],"security_risk":{"odd":true},"cwd":"/"}`, ""},
		{KindAction, `{}`, "data.tool"},
		{KindAction, `{"tool":""}`, "data.tool"},
		{KindAction, `{"tool":null}`, "data.tool"},
		{KindAction, `{"tool":"bash","args":"ls"}`, "data.args"},
		{KindAction, `{"tool":"bash","args":null}`, "data.args"},
		{KindAction, `{"tool":"bash","cwd":7}`, "data.cwd"},
		{KindObservation, `{"action_id":"a","exit_code":-9}`, ""},
		{KindObservation, `{"action_id":"a","exit_code":null,"content":{"any":"shape"}}`, ""},
		{KindObservation, `{"action_id":"a","exit_code":1.5}`, "data.exit_code"},
		{KindObservation, `{"action_id":"a","exit_code":18446744073709551615}`, "data.exit_code"},
		{KindObservation, `{"exit_code":0}`, "data.action_id"},
		{KindMessage, `{"role":"user","content":null}`, ""},
		{KindMessage, `{"role":"user"}`, "data.content"},
		{KindMessage, `{"content":"hi"}`, "data.role"},
		{KindContextLoaded, `{"path":"AGENTS.md","content":""}`, ""},
		{KindContextLoaded, `{"path":"AGENTS.md","content":["x"]}`, "data.content"},
		{KindContextLoaded, `{"path":"","content":"x"}`, "data.path"},
		{KindApprovalDecision, `{"action_id":"a","verdict":"deny","reason":"no"}`, ""},
		{KindApprovalDecision, `{"action_id":"a","verdict":"DENY"}`, "data.verdict"},
		{KindApprovalDecision, `{"verdict":"once"}`, "data.action_id"},
		{KindApprovalDecision, `{"action_id":"a","verdict":"once","log_seq":7,"digest":"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`, ""},
		{KindApprovalDecision, `{"action_id":"a","verdict":"once","log_seq":-7}`, "data.log_seq"},
		{KindApprovalDecision, `{"action_id":"a","verdict":"once","digest":"ba7816bf"}`, "data.digest"},
		{KindAllowlistChanged, `{"op":"revoke","entry_id":"al-1"}`, ""},
		{KindAllowlistChanged, `{"op":"add","entry_id":"al-1","shape":"go test <pkg>"}`, ""},
		{KindAllowlistChanged, `{"op":"add","entry_id":"al-1"}`, "data.shape"},
		{KindAllowlistChanged, `{"op":"add","entry_id":"al-1","shape":""}`, "data.shape"},
		{KindAllowlistChanged, `{"op":"remove","entry_id":"al-1"}`, "data.op"},
		{KindApprovalExpired, `{"action_id":"a"}`, ""},
		{KindApprovalExpired, `{"action_id":7}`, "data.action_id"},
		{KindPairingRequested, `{"user":"telegram:1","platform":"telegram","code_hash":"h"}`, ""},
		{KindPairingApproved, `{"platform":"telegram"}`, "data.user"},
		{KindPairingRevoked, `{"user":"u","by":false}`, "data.by"},
		{KindConfig, `{"version":1,"analyzers":{"rules":true},"confirmation":{"mode":"risky"}}`, ""},
		{KindConfig, `{"analyzers":{"rules":true},"confirmation":{"mode":"risky"}}`, "data.version"},
		{KindConfig, `{"version":-1,"analyzers":{"rules":true},"confirmation":{"mode":"risky"}}`, "data.version"},
		{KindConfig, `{"version":1}`, "data.confirmation"},
		{KindConfig, `{"version":1,"confirmation":{"mode":"risky"}}`, "data.analyzers"},
		{KindConfig, `{"version":1,"analyzers":{"rules":"yes"},"confirmation":{"mode":"risky"}}`, "data.analyzers.rules"},
		{KindConfig, `{"version":1,"analyzers":{"rules":true},"confirmation":{"mode":"risky","threshold":"low"}}`, "data.confirmation.threshold"},
		{KindConfig, `{"version":1,"analyzers":{"rules":true},"confirmation":{"mode":"risky"},"redaction":{"entropy_threshold":9}}`, "data.redaction.entropy_threshold"},
		{KindConfig, `{"version":1,"analyzers":{"rules":true},"confirmation":{"mode":"risky"},"policy_rules":[{"name":"r"}]}`, "data.policy_rules[0].expr"},
		{KindConfig, `{"version":1,"analyzers":{"rules":true},"confirmation":{"mode":"risky"},"approval_timeout":"-5m"}`, "data.approval_timeout"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+" "+tt.data, func(t *testing.T) {
			t.Parallel()
			v, err := DecodeJSONValue([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			ev := validEvent()
			ev.Kind, ev.Data = tt.kind, v.(map[string]any)
			if tt.kind.IsControl() && tt.kind != KindApprovalDecision && tt.kind != KindApprovalExpired {
				ev.Conversation = ""
			}
			err = ev.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if _, err := eventViews[tt.kind](&ev); err != nil {
					t.Fatalf("valid, but the typed view fails: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Fatalf("Validate() = %v, want a ValidationError for %s", err, tt.field)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"a", "01M81B5KP4KN9DZNWV9NV456V1", "risk:4", "5f0e2c1a-8d3b-4e7f-9a26-3c1b7d9e4f20", "!~", strings.Repeat("z", MaxIDLen)} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
	}
	for _, id := range []string{"", " ", "a b", "a\tb", "a\x00", "a\x7f", "é", strings.Repeat("z", MaxIDLen+1)} {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
	}
}

func TestValidToken(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"c-42", "C_42", "a:b", "u@h", strings.Repeat("x", 128), "_"} {
		if !ValidToken(s) {
			t.Errorf("ValidToken(%q) = false", s)
		}
	}
	for _, s := range []string{"", "a.b", "*", ">", "a b", "é", "a/b", strings.Repeat("x", 129)} {
		if ValidToken(s) {
			t.Errorf("ValidToken(%q) = true", s)
		}
	}
}

func TestSubjectToken(t *testing.T) {
	t.Parallel()
	ev := Event{Conversation: "c-42"}
	if ev.SubjectToken() != "c-42" {
		t.Errorf("SubjectToken() = %q", ev.SubjectToken())
	}
	ev.Conversation = ""
	if ev.SubjectToken() != GlobalScope {
		t.Errorf("SubjectToken() = %q, want %q", ev.SubjectToken(), GlobalScope)
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	ev := mustDecodeJSON(t, `{"v":1,"id":"a","kind":"action","data":{"tool":"bash","args":{"command":"ls","list":[1,{"k":"v"}]}},"x":{"y":[1]},"redactions":[{"rule":"r","path":"p","start":1,"end":2}]}`)
	c := ev.Clone()
	c.Data["args"].(map[string]any)["command"] = "rm -rf /"
	c.Data["args"].(map[string]any)["list"].([]any)[1].(map[string]any)["k"] = "changed"
	c.Extra["x"].(map[string]any)["y"].([]any)[0] = 2
	c.Redactions[0].Rule = "changed"
	if ev.Args()["command"] != "ls" || ev.Args()["list"].([]any)[1].(map[string]any)["k"] != "v" ||
		ev.Extra["x"].(map[string]any)["y"].([]any)[0] != int64(1) || ev.Redactions[0].Rule != "r" {
		t.Errorf("changing the clone changed the original: %+v", ev)
	}
	if empty := (&Event{}).Clone(); empty.Data != nil || empty.Extra != nil || empty.Redactions != nil {
		t.Errorf("clone of the zero event: %+v", empty)
	}
}

// LogValue logs identity only: raw event content may hold a secret.
func TestLogValue(t *testing.T) {
	t.Parallel()
	ev := validEvent()
	ev.Data["args"] = map[string]any{"command": "export TOKEN=ghp_secretsecretsecret"}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Log(context.Background(), slog.LevelInfo, "appended", "event", ev)
	out := buf.String()
	if strings.Contains(out, "ghp_") || strings.Contains(out, "command") {
		t.Errorf("the log line holds event content: %s", out)
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	got, _ := line["event"].(map[string]any)
	if got["id"] != ev.ID || got["kind"] != "action" || got["conversation"] != "c-42" {
		t.Errorf("the log line lacks the identity: %s", out)
	}
}
