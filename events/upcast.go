package events

// Upcasting turns older event shapes into the current one on read, so a log
// or an export written by an older producer always decodes.
//
// v0 → v1 covers two shapes:
//   - an event with no "v": the v1 layout without the version (early
//     producers); it is stamped v=1 and otherwise kept as it is;
//   - an OpenHands ActionEvent ("kind": "ActionEvent", "tool_name",
//     "tool_call": {"arguments": "<JSON string>"}, "security_risk",
//     "timestamp"): it becomes a v1 action whose data.tool is tool_name and
//     whose data.args are the decoded arguments. Fields with no v1 home are
//     kept in Extra (and so round-trip).

// openHandsActionKind is the discriminator OpenHands writes on ActionEvents.
const openHandsActionKind = "ActionEvent"

func upcast(m map[string]any) map[string]any {
	if v, ok := m["v"].(int64); ok && v >= 1 {
		return m
	}
	if k, _ := m["kind"].(string); k == openHandsActionKind {
		return upcastOpenHandsAction(m)
	}
	m["v"] = int64(1)
	return m
}

func upcastOpenHandsAction(m map[string]any) map[string]any {
	out := map[string]any{"v": int64(1), "kind": string(KindAction)}
	data := map[string]any{}
	if id, ok := m["id"]; ok {
		out["id"] = id
	}
	if ts, ok := m["timestamp"].(string); ok {
		out["time"] = normalizeOpenHandsTime(ts)
	}
	for _, k := range []string{"conversation", "agent"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	if tool, ok := m["tool_name"].(string); ok {
		data["tool"] = tool
	}
	var args map[string]any
	if tc, ok := m["tool_call"].(map[string]any); ok {
		if tool, ok := tc["name"].(string); ok && data["tool"] == nil {
			data["tool"] = tool
		}
		switch a := tc["arguments"].(type) {
		case string:
			if v, err := DecodeJSONValue([]byte(a)); err == nil {
				args, _ = v.(map[string]any)
			}
			if args == nil {
				args = map[string]any{"raw_arguments": a}
			}
		case map[string]any:
			args = a
		}
	}
	if args == nil {
		if a, ok := m["action"].(map[string]any); ok {
			args = a
		}
	}
	if args != nil {
		data["args"] = args
	}
	if sr, ok := m["security_risk"]; ok {
		data["security_risk"] = sr
	}
	if th, ok := m["thought"]; ok {
		data["thought"] = th
	}
	consumed := map[string]bool{"id": true, "timestamp": true, "kind": true, "tool_name": true,
		"security_risk": true, "thought": true, "conversation": true, "agent": true, "v": true}
	for k, v := range m {
		if !consumed[k] {
			out["openhands_"+k] = v
		}
	}
	out["data"] = data
	return out
}

// normalizeOpenHandsTime accepts OpenHands' ISO times without a zone
// ("2025-01-02T03:04:05.123456") as UTC.
func normalizeOpenHandsTime(ts string) string {
	if len(ts) >= 19 {
		last := ts[len(ts)-1]
		hasZone := last == 'Z' || (len(ts) > 6 && (ts[len(ts)-6] == '+' || ts[len(ts)-6] == '-'))
		if !hasZone {
			return ts + "Z"
		}
	}
	return ts
}
