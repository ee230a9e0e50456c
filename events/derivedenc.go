package events

import (
	"slices"
	"unicode/utf8"
)

// appendDerived appends d's canonical encoding (what marshalGeneric gives)
// to dst without building a generic value: the envelope's keys are written
// in sorted order, and Data is written by appendDerivedData. It reports
// false, having appended nothing that counts, when Data is of a type it
// does not write itself; the caller then takes marshalGeneric.
func appendDerived(dst []byte, d *Derived) ([]byte, bool) {
	n := 6
	if d.Conversation != "" {
		n++
	}
	dst = append(dst, 0x80|byte(n))
	if d.Conversation != "" {
		dst = appendText(appendKey(dst, "conversation"), d.Conversation)
	}
	dst, ok := appendDerivedData(appendKey(dst, "data"), d.Data)
	if !ok {
		return dst, false
	}
	dst = appendText(appendKey(dst, "id"), d.ID)
	dst = appendText(appendKey(dst, "kind"), string(d.Kind))
	dst = appendUint(appendKey(dst, "seq"), d.Seq)
	dst = appendText(appendKey(dst, "time"), d.Time)
	return appendInt(appendKey(dst, "v"), int64(d.V)), true
}

// derivedSizeHint is about the size of d's encoding, so that Marshal
// allocates its buffer once: the lengths of the strings that can be long,
// and a margin for the keys and the rest.
func derivedSizeHint(d *Derived) int {
	n := 160 + len(d.ID) + len(d.Conversation) + len(d.Time)
	switch x := d.Data.(type) {
	case RiskAssessed:
		n += len(x.ActionID) + reasonsSizeHint(x.Reasons)
	case GateDecided:
		n += 160 + len(x.ActionID) + len(x.Approver) + len(x.Reason) + len(x.Shape) + len(x.Digest) + reasonsSizeHint(x.Reasons)
	case GateRequested:
		n += 160 + len(x.ActionID) + len(x.Command) + len(x.Shape) + len(x.Digest) + reasonsSizeHint(x.Reasons)
	case Alert:
		n += len(x.Reason) + len(x.EventID) + len(x.Subject)
	case AuditCheckpoint:
		n += len(x.Note) + len(x.Leaves) + len(x.Prefix) + len(x.RootHash)
	default:
		n += 256
	}
	return n
}

func reasonsSizeHint(rs []Reason) int {
	n := 0
	for i := range rs {
		n += 48 + len(rs[i].Analyzer) + len(rs[i].Rule) + len(rs[i].Detail) + 10*len(rs[i].Span)
	}
	return n
}

// appendDerivedData appends the canonical encoding of a derived event's
// Data, as the value of the envelope's "data" key: the typed values the
// processors emit, field by field as the msgpack library lays them out
// (their msgpack tags, omitempty, nil slices and maps as nil), and a
// generic value already in normal form as it is. It reports false for
// anything else (another type, a generic value normalize would change, a
// map key that is not valid UTF-8), which the general path handles.
func appendDerivedData(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case RiskAssessed:
		return appendRiskAssessed(dst, &x), true
	case GateDecided:
		return appendGateDecided(dst, &x), true
	case GateRequested:
		return appendGateRequested(dst, &x), true
	case Alert:
		return appendAlert(dst, &x), true
	case AuditCheckpoint:
		return appendAuditCheckpoint(dst, &x), true
	case DeadLetter:
		return appendDeadLetter(dst, &x), true
	case Stats:
		return appendStats(dst, &x)
	case nil, map[string]any, []any, string, bool, int64, uint64, float64:
		// Data sits at depth 1 of the envelope, as isNormal sees it there.
		if !isNormal(v, 1) {
			return dst, false
		}
		out, err := appendCanonical(dst, v)
		return out, err == nil
	}
	return dst, false
}

// appendKey appends a map key that is a constant of this package: valid
// UTF-8 and shorter than 32 bytes (a fixstr).
func appendKey(dst []byte, k string) []byte {
	return append(append(dst, 0xa0|byte(len(k))), k...)
}

// appendText appends s as a decoder returns it: invalid UTF-8 replaced.
func appendText(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	return append(appendStrLen(dst, len(s)), s...)
}

// count is 1 for true: the number of omitempty fields a value writes.
func count(present ...bool) int {
	n := 0
	for _, p := range present {
		if p {
			n++
		}
	}
	return n
}

func appendReasons(dst []byte, rs []Reason) []byte {
	if rs == nil {
		return append(dst, 0xc0)
	}
	dst = appendLen(dst, len(rs), 0x90, 0xdc)
	for i := range rs {
		dst = appendReason(dst, &rs[i])
	}
	return dst
}

// Reason's keys, sorted: analyzer, detail?, level?, rule, span?.
func appendReason(dst []byte, r *Reason) []byte {
	dst = appendLen(dst, 2+count(r.Detail != "", r.Level != "", len(r.Span) > 0), 0x80, 0xde)
	dst = appendText(appendKey(dst, "analyzer"), r.Analyzer)
	if r.Detail != "" {
		dst = appendText(appendKey(dst, "detail"), r.Detail)
	}
	if r.Level != "" {
		dst = appendText(appendKey(dst, "level"), string(r.Level))
	}
	dst = appendText(appendKey(dst, "rule"), r.Rule)
	if len(r.Span) > 0 {
		dst = appendLen(appendKey(dst, "span"), len(r.Span), 0x90, 0xdc)
		for _, n := range r.Span {
			dst = appendInt(dst, int64(n))
		}
	}
	return dst
}

// RiskAssessed's keys, sorted: action_id, config_version, level, log_seq,
// reasons.
func appendRiskAssessed(dst []byte, x *RiskAssessed) []byte {
	dst = append(dst, 0x80|5)
	dst = appendText(appendKey(dst, "action_id"), x.ActionID)
	dst = appendInt(appendKey(dst, "config_version"), x.ConfigVersion)
	dst = appendText(appendKey(dst, "level"), string(x.Level))
	dst = appendUint(appendKey(dst, "log_seq"), x.LogSeq)
	return appendReasons(appendKey(dst, "reasons"), x.Reasons)
}

// GateRequested's keys, sorted: action_id, agent?, backend?,
// backend_claimed?, command?, config_version?, digest?, level, log_seq,
// reasons, shape?, timeout?, tool?.
func appendGateRequested(dst []byte, x *GateRequested) []byte {
	dst = appendLen(dst, 4+count(x.Agent != "", x.Backend != "", x.BackendClaimed != "", x.Command != "",
		x.ConfigVersion != 0, x.Digest != "", x.Shape != "", x.Timeout != "", x.Tool != ""), 0x80, 0xde)
	dst = appendText(appendKey(dst, "action_id"), x.ActionID)
	if x.Agent != "" {
		dst = appendText(appendKey(dst, "agent"), x.Agent)
	}
	if x.Backend != "" {
		dst = appendText(appendKey(dst, "backend"), x.Backend)
	}
	if x.BackendClaimed != "" {
		dst = appendText(appendKey(dst, "backend_claimed"), x.BackendClaimed)
	}
	if x.Command != "" {
		dst = appendText(appendKey(dst, "command"), x.Command)
	}
	if x.ConfigVersion != 0 {
		dst = appendInt(appendKey(dst, "config_version"), x.ConfigVersion)
	}
	if x.Digest != "" {
		dst = appendText(appendKey(dst, "digest"), x.Digest)
	}
	dst = appendText(appendKey(dst, "level"), string(x.Level))
	dst = appendUint(appendKey(dst, "log_seq"), x.LogSeq)
	dst = appendReasons(appendKey(dst, "reasons"), x.Reasons)
	if x.Shape != "" {
		dst = appendText(appendKey(dst, "shape"), x.Shape)
	}
	if x.Timeout != "" {
		dst = appendText(appendKey(dst, "timeout"), x.Timeout)
	}
	if x.Tool != "" {
		dst = appendText(appendKey(dst, "tool"), x.Tool)
	}
	return dst
}

// GateDecided's keys, sorted: action_id, approver?, ask_security_risk?, by,
// config_version?, decision_seq, digest?, entry_id?, level, log_seq,
// outcome, reason?, reasons, shape?, verdict?, would?.
func appendGateDecided(dst []byte, x *GateDecided) []byte {
	dst = appendLen(dst, 7+count(x.Approver != "", x.AskSecurityRisk, x.ConfigVersion != 0, x.Digest != "",
		x.EntryID != "", x.Reason != "", x.Shape != "", x.Verdict != "", x.Would != ""), 0x80, 0xde)
	dst = appendText(appendKey(dst, "action_id"), x.ActionID)
	if x.Approver != "" {
		dst = appendText(appendKey(dst, "approver"), x.Approver)
	}
	if x.AskSecurityRisk {
		dst = append(appendKey(dst, "ask_security_risk"), 0xc3)
	}
	dst = appendText(appendKey(dst, "by"), string(x.By))
	if x.ConfigVersion != 0 {
		dst = appendInt(appendKey(dst, "config_version"), x.ConfigVersion)
	}
	dst = appendUint(appendKey(dst, "decision_seq"), x.DecisionSeq)
	if x.Digest != "" {
		dst = appendText(appendKey(dst, "digest"), x.Digest)
	}
	if x.EntryID != "" {
		dst = appendText(appendKey(dst, "entry_id"), x.EntryID)
	}
	dst = appendText(appendKey(dst, "level"), string(x.Level))
	dst = appendUint(appendKey(dst, "log_seq"), x.LogSeq)
	dst = appendText(appendKey(dst, "outcome"), string(x.Outcome))
	if x.Reason != "" {
		dst = appendText(appendKey(dst, "reason"), x.Reason)
	}
	dst = appendReasons(appendKey(dst, "reasons"), x.Reasons)
	if x.Shape != "" {
		dst = appendText(appendKey(dst, "shape"), x.Shape)
	}
	if x.Verdict != "" {
		dst = appendText(appendKey(dst, "verdict"), string(x.Verdict))
	}
	if x.Would != "" {
		dst = appendText(appendKey(dst, "would"), x.Would)
	}
	return dst
}

// Alert's keys, sorted: event_id?, log_seq?, reason, severity, subject?.
func appendAlert(dst []byte, x *Alert) []byte {
	dst = append(dst, 0x80|byte(2+count(x.EventID != "", x.LogSeq != 0, x.Subject != "")))
	if x.EventID != "" {
		dst = appendText(appendKey(dst, "event_id"), x.EventID)
	}
	if x.LogSeq != 0 {
		dst = appendUint(appendKey(dst, "log_seq"), x.LogSeq)
	}
	dst = appendText(appendKey(dst, "reason"), x.Reason)
	dst = appendText(appendKey(dst, "severity"), string(x.Severity))
	if x.Subject != "" {
		dst = appendText(appendKey(dst, "subject"), x.Subject)
	}
	return dst
}

// DeadLetter's keys, sorted: digest, event_id?, reason, size, subject, time.
func appendDeadLetter(dst []byte, x *DeadLetter) []byte {
	dst = append(dst, 0x80|byte(5+count(x.EventID != "")))
	dst = appendText(appendKey(dst, "digest"), x.Digest)
	if x.EventID != "" {
		dst = appendText(appendKey(dst, "event_id"), x.EventID)
	}
	dst = appendText(appendKey(dst, "reason"), x.Reason)
	dst = appendInt(appendKey(dst, "size"), int64(x.Size))
	dst = appendText(appendKey(dst, "subject"), x.Subject)
	return appendText(appendKey(dst, "time"), x.Time)
}

// AuditCheckpoint's keys, sorted: first_seq?, interval?, leaves?, note,
// prefix?, root_hash, tree_size.
func appendAuditCheckpoint(dst []byte, x *AuditCheckpoint) []byte {
	dst = append(dst, 0x80|byte(3+count(x.FirstSeq != 0, x.Interval != 0, x.Leaves != "", x.Prefix != "")))
	if x.FirstSeq != 0 {
		dst = appendUint(appendKey(dst, "first_seq"), x.FirstSeq)
	}
	if x.Interval != 0 {
		dst = appendUint(appendKey(dst, "interval"), x.Interval)
	}
	if x.Leaves != "" {
		dst = appendText(appendKey(dst, "leaves"), x.Leaves)
	}
	dst = appendText(appendKey(dst, "note"), x.Note)
	if x.Prefix != "" {
		dst = appendText(appendKey(dst, "prefix"), x.Prefix)
	}
	dst = appendText(appendKey(dst, "root_hash"), x.RootHash)
	return appendUint(appendKey(dst, "tree_size"), x.TreeSize)
}

// Stats' keys, sorted: actions, by_kind, conversation, events, first_seq,
// last_seq, redacted. A by_kind key that is not valid UTF-8 reports false:
// the general path makes it valid, or refuses two keys that collide so.
func appendStats(dst []byte, x *Stats) ([]byte, bool) {
	dst = append(dst, 0x80|7)
	dst = appendUint(appendKey(dst, "actions"), x.Actions)
	dst = appendKey(dst, "by_kind")
	if x.ByKind == nil {
		dst = append(dst, 0xc0)
	} else {
		keys := make([]string, 0, len(x.ByKind))
		for k := range x.ByKind {
			if !utf8.ValidString(k) {
				return dst, false
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = appendLen(dst, len(keys), 0x80, 0xde)
		for _, k := range keys {
			dst = appendUint(append(appendStrLen(dst, len(k)), k...), x.ByKind[k])
		}
	}
	dst = appendText(appendKey(dst, "conversation"), x.Conversation)
	dst = appendUint(appendKey(dst, "events"), x.Events)
	dst = appendUint(appendKey(dst, "first_seq"), x.FirstSeq)
	dst = appendUint(appendKey(dst, "last_seq"), x.LastSeq)
	return appendUint(appendKey(dst, "redacted"), x.Redacted), true
}
