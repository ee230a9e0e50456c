package hook

import (
	"encoding/json"
	"fmt"
	"io"
)

// Answer renders v as client call.Client expects it on stdout, and the
// exit status to use. Every client parses JSON on stdout at exit 0; the
// OpenHands SDK also blocks on exit 2, which its deny uses as a second
// lock.
func Answer(call Call, v Verdict) ([]byte, int) {
	var out any
	code := 0
	perm := v.Permission
	if perm == Ask && !supportsAsk(call) {
		perm = Deny
	}
	switch call.Client {
	case ClaudeCode:
		switch {
		case call.Phase != PhaseBefore || perm == Defer:
			out = map[string]any{}
		default:
			out = map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName":            call.EventName,
				"permissionDecision":       perm,
				"permissionDecisionReason": v.Reason,
			}}
		}
	case Gemini:
		switch {
		case call.Phase != PhaseBefore || perm == Defer:
			out = map[string]any{}
		default:
			m := map[string]any{"decision": perm, "reason": v.Reason}
			if perm == Deny && v.UserMessage != "" {
				m["systemMessage"] = v.UserMessage
			}
			out = m
		}
	case Cursor:
		switch {
		case call.Phase != PhaseBefore || perm == Defer:
			out = map[string]any{}
		case call.EventName == "beforeReadFile":
			out = map[string]any{"permission": perm}
		default:
			user := v.UserMessage
			if user == "" {
				user = v.Reason
			}
			// Both spellings: early Cursor docs used camelCase.
			out = map[string]any{"permission": perm,
				"user_message": user, "agent_message": v.Reason,
				"userMessage": user, "agentMessage": v.Reason}
		}
	case OpenHands:
		switch {
		case call.Phase != PhaseBefore || perm == Defer:
			out = map[string]any{}
		default:
			out = map[string]any{"decision": perm, "reason": v.Reason}
			if perm == Deny {
				code = 2
			}
		}
	default:
		out = map[string]any{"decision": Deny, "reason": "unknown client " + call.Client}
		code = 2
	}
	b, err := json.Marshal(out)
	if err != nil {
		return []byte(`{"decision":"deny"}`), 2
	}
	return append(b, '\n'), code
}

// writeAnswer writes the answer; if it cannot, it exits 2, which every
// client treats as a block.
func writeAnswer(stdout, stderr io.Writer, call Call, v Verdict) int {
	b, code := Answer(call, v)
	if _, err := stdout.Write(b); err != nil {
		fmt.Fprintf(stderr, "vigil hook: write answer: %v (blocking with exit 2)\n", err)
		return 2
	}
	if v.Permission == Deny && call.Phase == PhaseBefore && v.Reason != "" {
		fmt.Fprintln(stderr, "vigil hook: "+v.Reason)
	}
	return code
}
