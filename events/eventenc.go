package events

import (
	"time"
	"unicode/utf8"
)

// appendEvent appends e's canonical encoding (what canonicalMap and
// encodeCanonical give) to dst without building the envelope map: its keys
// are written in sorted order around Data, which is written by
// appendCanonical. It reports false, having appended nothing that counts,
// for an event the general path must take: Extra keys, a string that is
// not valid UTF-8, or Data that is not in normal form.
func appendEvent(dst []byte, e *Event) ([]byte, bool) {
	if len(e.Extra) != 0 {
		return dst, false
	}
	for _, s := range []string{e.ID, string(e.Kind), e.Conversation, e.Agent, string(e.Origin)} {
		if !utf8.ValidString(s) {
			return dst, false
		}
	}
	for i := range e.Redactions {
		if !utf8.ValidString(e.Redactions[i].Rule) || !utf8.ValidString(e.Redactions[i].Path) {
			return dst, false
		}
	}
	var data any = e.Data
	if e.Data == nil {
		data = map[string]any{}
	} else if !isNormal(data, 1) {
		return dst, false
	}
	n := 4 + count(e.Agent != "", e.Conversation != "", e.Origin != "", len(e.Redactions) > 0, !e.Time.IsZero())
	dst = append(dst, 0x80|byte(n))
	if e.Agent != "" {
		dst = appendStr(appendKey(dst, "agent"), e.Agent)
	}
	if e.Conversation != "" {
		dst = appendStr(appendKey(dst, "conversation"), e.Conversation)
	}
	dst, err := appendCanonical(appendKey(dst, "data"), data)
	if err != nil {
		return dst, false
	}
	dst = appendStr(appendKey(dst, "id"), e.ID)
	dst = appendStr(appendKey(dst, "kind"), string(e.Kind))
	if e.Origin != "" {
		dst = appendStr(appendKey(dst, "origin"), string(e.Origin))
	}
	if len(e.Redactions) > 0 {
		dst = appendLen(appendKey(dst, "redactions"), len(e.Redactions), 0x90, 0xdc)
		for i := range e.Redactions {
			r := &e.Redactions[i]
			dst = append(dst, 0x84)
			dst = appendInt(appendKey(dst, "end"), int64(r.End))
			dst = appendStr(appendKey(dst, "path"), r.Path)
			dst = appendStr(appendKey(dst, "rule"), r.Rule)
			dst = appendInt(appendKey(dst, "start"), int64(r.Start))
		}
	}
	if !e.Time.IsZero() {
		dst = appendKey(dst, "time")
		var tb [40]byte
		ts := e.Time.UTC().AppendFormat(tb[:0], time.RFC3339Nano)
		dst = append(appendStrLen(dst, len(ts)), ts...)
	}
	return appendInt(appendKey(dst, "v"), int64(e.V)), true
}

// appendStr appends s, valid UTF-8, as a msgpack string.
func appendStr(dst []byte, s string) []byte {
	return append(appendStrLen(dst, len(s)), s...)
}
