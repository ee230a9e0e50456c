package events

// Upcasting turns older event shapes into the current one on read, so a log
// or an export written by an older producer always decodes.
//
// v0 → v1 covers two shapes:
//   - an event with no "v": the v1 layout without the version (early
//     producers); it is stamped v=1 and otherwise kept as it is;
//   - an OpenHands ActionEvent ("kind": "ActionEvent", "tool_name",
//     "tool_call": {"arguments": "<JSON string>"}, "security_risk",
//     "timestamp"): it becomes a v1 action whose data.tool is tool_name (or
//     tool_call.name) and whose data.args are the decoded arguments (or the
//     action object when there is no tool_call). security_risk and thought
//     move into data. Fields with no v1 home, tool_call and action included,
//     are kept in Extra as "openhands_<name>" (and so round-trip). OpenHands
//     events carry no conversation id: the adapter that forwards them adds
//     "conversation" (and may add "agent") at the top level.
//
// An explicit "v": 0 is the same as no v. Upcasting is idempotent: its
// output is a v1 event, which decodes unchanged.

// openHandsActionKind is the discriminator OpenHands writes on ActionEvents.
const openHandsActionKind = "ActionEvent"

// upcast rewrites a v0 map into the v1 layout. fromMap has already checked
// that v, when present, is a non-negative integer.
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

// openHandsExtraPrefix marks the OpenHands fields that have no v1 home; they
// are kept, under this prefix, so they round-trip.
const openHandsExtraPrefix = "openhands_"

func upcastOpenHandsAction(m map[string]any) map[string]any {
	out := map[string]any{"v": int64(1), "kind": string(KindAction)}
	data := map[string]any{}
	// consumed lists the fields that found a home in v1; everything else is
	// kept under openHandsExtraPrefix. A field is consumed only when it was
	// used, so a timestamp that is not a string, say, is kept, not lost.
	consumed := map[string]bool{"kind": true, "v": true}
	for _, k := range []string{"id", "conversation", "agent"} {
		if v, ok := m[k]; ok {
			out[k] = v
			consumed[k] = true
		}
	}
	if ts, ok := m["timestamp"].(string); ok {
		out["time"] = normalizeOpenHandsTime(ts)
		consumed["timestamp"] = true
	}
	if tool, ok := m["tool_name"].(string); ok {
		data["tool"] = tool
		consumed["tool_name"] = true
	}
	var args map[string]any
	if tc, ok := m["tool_call"].(map[string]any); ok {
		if tool, ok := tc["name"].(string); ok && data["tool"] == nil {
			data["tool"] = tool
		}
		switch a := tc["arguments"].(type) {
		case string:
			// The arguments land at data.args, two levels down: they must
			// fit MaxDepth there, or the event could not be re-encoded.
			if v, err := DecodeJSONValue([]byte(a)); err == nil {
				if _, err := normalize(v, 2); err == nil {
					args, _ = v.(map[string]any)
				}
			}
			if args == nil {
				// Not a JSON object: keep the text, where SecurityRisk
				// still looks for a security_risk.
				args = map[string]any{"raw_arguments": a}
			}
		case map[string]any:
			args = cloneMap(a)
		}
	}
	if args == nil {
		if a, ok := m["action"].(map[string]any); ok {
			args = cloneMap(a)
		}
	}
	if args != nil {
		data["args"] = args
	}
	for _, k := range []string{"security_risk", "thought"} {
		if v, ok := m[k]; ok {
			data[k] = v
			consumed[k] = true
		}
	}
	for k, v := range m {
		if !consumed[k] {
			out[openHandsExtraPrefix+k] = v
		}
	}
	out["data"] = data
	return out
}

// normalizeOpenHandsTime reads OpenHands' ISO times without a zone
// ("2025-01-02T03:04:05.123456", Python's datetime.isoformat) as UTC.
func normalizeOpenHandsTime(ts string) string {
	if len(ts) >= 19 {
		last := ts[len(ts)-1]
		hasZone := last == 'Z' || last == 'z' || ts[len(ts)-6] == '+' || ts[len(ts)-6] == '-'
		if !hasZone {
			return ts + "Z"
		}
	}
	return ts
}
