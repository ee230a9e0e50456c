package events

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestUpcast(t *testing.T) {
	t.Parallel()
	const args = `"{\"command\": \"ls -la\", \"security_risk\": \"HIGH\"}"`
	tests := []struct {
		name      string
		in        string
		time      string
		tool      string
		args      map[string]any // nil: no args
		risk      Risk
		riskFound bool
		extra     []string // the Extra keys, sorted
		data      []string // the data keys, sorted
	}{
		{
			name: "v1 is left alone",
			in:   `{"v":1,"id":"a","kind":"action","time":"2026-11-22T10:00:00Z","data":{"tool":"bash","security_risk":"low"},"x":1}`,
			time: "2026-11-22T10:00:00Z", tool: "bash", risk: RiskLow, riskFound: true,
			extra: []string{"x"}, data: []string{"security_risk", "tool"},
		},
		{
			name: "no v: the v1 layout, stamped",
			in:   `{"id":"a","kind":"action","time":"2026-11-22T10:00:00Z","data":{"tool":"bash"}}`,
			time: "2026-11-22T10:00:00Z", tool: "bash", data: []string{"tool"},
		},
		{
			name: "v 0 is the same as no v",
			in:   `{"v":0,"id":"a","kind":"message","time":"2026-11-22T10:00:00Z","data":{"role":"user","content":"hi"}}`,
			time: "2026-11-22T10:00:00Z", data: []string{"content", "role"},
		},
		{
			name: "OpenHands ActionEvent, arguments as a JSON string",
			in: `{"kind":"ActionEvent","id":"u-1","timestamp":"2026-11-22T10:00:00.123456","source":"agent",` +
				`"tool_name":"execute_bash","tool_call_id":"call_1","tool_call":{"id":"call_1","name":"execute_bash","arguments":` + args + `},` +
				`"security_risk":"HIGH","thought":[{"type":"text","text":"look"}],"conversation":"c-42"}`,
			time: "2026-11-22T10:00:00.123456Z", tool: "execute_bash",
			args: map[string]any{"command": "ls -la", "security_risk": "HIGH"}, risk: RiskHigh, riskFound: true,
			extra: []string{"openhands_source", "openhands_tool_call", "openhands_tool_call_id"},
			data:  []string{"args", "security_risk", "thought", "tool"},
		},
		{
			name: "OpenHands, explicit v 0",
			in:   `{"v":0,"kind":"ActionEvent","id":"u-1","tool_name":"execute_bash","tool_call":{"arguments":"{}"}}`,
			tool: "execute_bash", args: map[string]any{}, extra: []string{"openhands_tool_call"}, data: []string{"args", "tool"},
		},
		{
			name: "OpenHands, tool from tool_call.name, risk only in the arguments",
			in:   `{"kind":"ActionEvent","id":"u-2","tool_call":{"name":"str_replace_editor","arguments":"{\"path\":\"/a\",\"security_risk\":1}"}}`,
			tool: "str_replace_editor", args: map[string]any{"path": "/a", "security_risk": int64(1)}, risk: RiskMedium, riskFound: true,
			extra: []string{"openhands_tool_call"}, data: []string{"args", "tool"},
		},
		{
			name: "OpenHands, arguments already an object",
			in:   `{"kind":"ActionEvent","id":"u-3","tool_name":"browse","tool_call":{"arguments":{"url":"https://example.com"}}}`,
			tool: "browse", args: map[string]any{"url": "https://example.com"},
			extra: []string{"openhands_tool_call"}, data: []string{"args", "tool"},
		},
		{
			name: "OpenHands, arguments not JSON: kept as raw_arguments",
			in:   `{"kind":"ActionEvent","id":"u-4","tool_name":"bash","tool_call":{"arguments":"{\"security_risk\": \"medium\", oops"}}`,
			tool: "bash", args: map[string]any{"raw_arguments": `{"security_risk": "medium", oops`},
			extra: []string{"openhands_tool_call"}, data: []string{"args", "tool"},
		},
		{
			name: "OpenHands, arguments a JSON array",
			in:   `{"kind":"ActionEvent","id":"u-5","tool_name":"bash","tool_call":{"arguments":"[1,2]"}}`,
			tool: "bash", args: map[string]any{"raw_arguments": "[1,2]"},
			extra: []string{"openhands_tool_call"}, data: []string{"args", "tool"},
		},
		{
			name: "OpenHands, no tool_call: the action object is the arguments",
			in:   `{"kind":"ActionEvent","id":"u-6","tool_name":"execute_bash","action":{"kind":"ExecuteBashAction","command":"pwd"},"security_risk":null}`,
			tool: "execute_bash", args: map[string]any{"kind": "ExecuteBashAction", "command": "pwd"}, riskFound: true,
			extra: []string{"openhands_action"}, data: []string{"args", "security_risk", "tool"},
		},
		{
			name: "OpenHands, timestamp with a zone, non-string fields kept",
			in:   `{"kind":"ActionEvent","id":"u-7","timestamp":"2026-11-22T11:00:00+01:00","tool_name":7,"time":"kept","data":"kept","openhands_x":1}`,
			time: "2026-11-22T10:00:00Z", extra: []string{"openhands_data", "openhands_openhands_x", "openhands_time", "openhands_tool_name"},
		},
		{
			name: "OpenHands, non-string timestamp kept",
			in:   `{"kind":"ActionEvent","id":"u-8","timestamp":1732269600,"tool_name":"bash"}`,
			tool: "bash", extra: []string{"openhands_timestamp"}, data: []string{"tool"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := mustDecodeJSON(t, tt.in)
			if ev.V != CurrentVersion {
				t.Errorf("v = %d, want %d", ev.V, CurrentVersion)
			}
			if tt.time != "" {
				if got := ev.Time.Format("2006-01-02T15:04:05.999999999Z07:00"); got != tt.time {
					t.Errorf("time = %s, want %s", got, tt.time)
				}
			}
			if ev.Tool() != tt.tool {
				t.Errorf("tool = %q, want %q", ev.Tool(), tt.tool)
			}
			if tt.args != nil && !reflect.DeepEqual(ev.Args(), tt.args) {
				t.Errorf("args = %#v, want %#v", ev.Args(), tt.args)
			}
			wantRisk := tt.risk
			if wantRisk == "" {
				wantRisk = RiskUnknown
			}
			if level, _, found := ev.SecurityRisk(); level != wantRisk || found != tt.riskFound {
				t.Errorf("SecurityRisk() = %s, %v; want %s, %v", level, found, wantRisk, tt.riskFound)
			}
			if got := keys(ev.Extra); !slices.Equal(got, tt.extra) {
				t.Errorf("Extra keys = %q, want %q", got, tt.extra)
			}
			if got := keys(ev.Data); !slices.Equal(got, tt.data) {
				t.Errorf("data keys = %q, want %q", got, tt.data)
			}
			checkCanonical(t, ev)
			// Idempotent: the upcast event decodes unchanged.
			again, err := DecodeJSON(mustJSON(t, ev))
			if err != nil || !reflect.DeepEqual(again, ev) {
				t.Errorf("re-decoding the upcast event changed it (%v)", err)
			}
		})
	}
}

func keys(m map[string]any) []string {
	if len(m) == 0 {
		return nil
	}
	return SortedKeys(m)
}

// An OpenHands event as the SDK writes it has no conversation: it decodes,
// and Validate says what the adapter must add.
func TestUpcastOpenHandsNeedsAConversation(t *testing.T) {
	t.Parallel()
	ev := mustDecodeJSON(t, `{"kind":"ActionEvent","id":"5f0e2c1a-8d3b-4e7f-9a26-3c1b7d9e4f20","timestamp":"2026-11-22T10:00:00","tool_name":"execute_bash","tool_call":{"arguments":"{\"command\":\"ls\"}"}}`)
	checkValidationError(t, ev.Validate(), "conversation")
	ev.Conversation = "c-42"
	if err := ev.Validate(); err != nil {
		t.Errorf("with a conversation: %v", err)
	}
}

// Arguments nested so deep that they would not fit under data.args are kept
// as text rather than refused.
func TestUpcastDeepArguments(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`[`, MaxDepth-1) + strings.Repeat(`]`, MaxDepth-1)
	in := `{"kind":"ActionEvent","id":"u","tool_name":"bash","tool_call":{"arguments":"{\"x\":` + deep + `}"}}`
	ev := mustDecodeJSON(t, in)
	if _, ok := ev.Args()["raw_arguments"].(string); !ok {
		t.Fatalf("args = %#v, want raw_arguments", ev.Args())
	}
	checkCanonical(t, ev)
}

func TestUpcastRefusesBadVersions(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"v":"0"}`, `{"v":-1}`, `{"v":1.5}`, `{"v":null}`, `{"v":true}`, `{"v":18446744073709551615}`, `{"v":1048577}`} {
		if _, err := DecodeJSON([]byte(in)); err == nil {
			t.Errorf("%s decoded; a v that is not a version must be refused, not stamped", in)
		} else {
			checkDecodeError(t, err, []byte(in))
		}
	}
	// A future version decodes as it is; Validate refuses it.
	ev := mustDecodeJSON(t, `{"v":2,"id":"a","kind":"message","conversation":"c","time":"2026-11-22T10:00:00Z","data":{"role":"user","content":"hi"}}`)
	if ev.V != 2 {
		t.Errorf("v = %d, want 2", ev.V)
	}
	checkValidationError(t, ev.Validate(), "v")
	checkCanonical(t, ev)
}
