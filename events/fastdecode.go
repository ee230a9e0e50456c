package events

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// fastValue decodes the msgpack value at b[*p:] straight into the
// normalised value (see normalize) that the msgpack library's loose
// decoding followed by normalize gives, without the library's decoder,
// reader and intermediate copies. It runs only on a body checkMsgpack
// accepted. It reports false, and the caller takes the general path, on
// anything it does not reproduce exactly: an extension (a timestamp), a
// map key that is not a valid UTF-8 string, nesting past MaxDepth. It
// never fails otherwise and never allocates more than the value it returns.
//
// s is "" or b as a string: then the strings and keys it returns are
// substrings of s, with no allocation of their own (and keep all of s
// alive while any of them is).
func fastValue(b []byte, s string, p *int, depth int) (any, bool) {
	if depth > MaxDepth || *p >= len(b) {
		return nil, false
	}
	c := b[*p]
	*p++
	switch {
	case c <= 0x7f:
		return int64(c), true
	case c >= 0xe0:
		return int64(int8(c)), true
	case c >= 0x80 && c <= 0x8f:
		return fastMap(b, s, p, int(c&0x0f), depth)
	case c >= 0x90 && c <= 0x9f:
		return fastArray(b, s, p, int(c&0x0f), depth)
	case c >= 0xa0 && c <= 0xbf:
		return fastString(b, s, p, int(c&0x1f))
	}
	switch c {
	case 0xc0:
		return nil, true
	case 0xc2:
		return false, true
	case 0xc3:
		return true, true
	case 0xc4, 0xd9: // bin8, str8 (bin normalises to a string too)
		n, ok := fastUint(b, p, 1)
		if !ok {
			return nil, false
		}
		return fastString(b, s, p, int(n))
	case 0xc5, 0xda:
		n, ok := fastUint(b, p, 2)
		if !ok {
			return nil, false
		}
		return fastString(b, s, p, int(n))
	case 0xc6, 0xdb:
		n, ok := fastUint(b, p, 4)
		if !ok {
			return nil, false
		}
		return fastString(b, s, p, int(n))
	case 0xca:
		n, ok := fastUint(b, p, 4)
		if !ok {
			return nil, false
		}
		return normalizeFloat(float64(math.Float32frombits(uint32(n)))), true
	case 0xcb:
		n, ok := fastUint(b, p, 8)
		if !ok {
			return nil, false
		}
		return normalizeFloat(math.Float64frombits(n)), true
	case 0xcc, 0xcd, 0xce, 0xcf: // uint 8, 16, 32, 64
		n, ok := fastUint(b, p, 1<<(c-0xcc))
		if !ok {
			return nil, false
		}
		if n <= math.MaxInt64 {
			return int64(n), true
		}
		return n, true
	case 0xd0:
		n, ok := fastUint(b, p, 1)
		return int64(int8(n)), ok
	case 0xd1:
		n, ok := fastUint(b, p, 2)
		return int64(int16(n)), ok
	case 0xd2:
		n, ok := fastUint(b, p, 4)
		return int64(int32(n)), ok
	case 0xd3:
		n, ok := fastUint(b, p, 8)
		return int64(n), ok
	case 0xdc, 0xdd:
		n, ok := fastUint(b, p, 2<<(c-0xdc))
		if !ok {
			return nil, false
		}
		return fastArray(b, s, p, int(n), depth)
	case 0xde, 0xdf:
		n, ok := fastUint(b, p, 2<<(c-0xde))
		if !ok {
			return nil, false
		}
		return fastMap(b, s, p, int(n), depth)
	}
	return nil, false // extensions, and 0xc1 (checkMsgpack refuses it)
}

// fastUint reads an n-byte big-endian unsigned integer.
func fastUint(b []byte, p *int, n int) (uint64, bool) {
	if len(b)-*p < n {
		return 0, false
	}
	var v uint64
	switch n {
	case 1:
		v = uint64(b[*p])
	case 2:
		v = uint64(binary.BigEndian.Uint16(b[*p:]))
	case 4:
		v = uint64(binary.BigEndian.Uint32(b[*p:]))
	case 8:
		v = binary.BigEndian.Uint64(b[*p:])
	default:
		return 0, false
	}
	*p += n
	return v, true
}

func fastString(b []byte, s string, p *int, n int) (any, bool) {
	if n < 0 || len(b)-*p < n {
		return nil, false
	}
	if v, ok := commonValue(b[*p : *p+n]); ok {
		*p += n
		return v, true
	}
	str := bodyString(b, s, *p, n)
	*p += n
	return validUTF8(str), true
}

func fastArray(b []byte, s string, p *int, n int, depth int) (any, bool) {
	if n < 0 || n > len(b)-*p {
		return nil, false
	}
	out := make([]any, 0, n)
	for range n {
		v, ok := fastValue(b, s, p, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func fastMap(b []byte, s string, p *int, n int, depth int) (any, bool) {
	if n < 0 || 2*n > len(b)-*p {
		return nil, false
	}
	out := make(map[string]any, n)
	for range n {
		k, ok := fastKey(b, s, p)
		if !ok {
			return nil, false
		}
		v, ok := fastValue(b, s, p, depth+1)
		if !ok {
			return nil, false
		}
		out[k] = v // a repeated key: the last wins, as in the library
	}
	return out, true
}

// fastKey reads a map key: a valid UTF-8 str (bin keys and invalid UTF-8
// take the general path, whose collision rule it does not repeat). The
// envelope's keys and the commonest data keys are returned without an
// allocation.
func fastKey(b []byte, s string, p *int) (string, bool) {
	if *p >= len(b) {
		return "", false
	}
	c := b[*p]
	*p++
	var n int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xda || c == 0xdb:
		u, ok := fastUint(b, p, 1<<(c-0xd9))
		if !ok {
			return "", false
		}
		n = int(u)
	default:
		return "", false
	}
	if n < 0 || len(b)-*p < n {
		return "", false
	}
	kb := b[*p : *p+n]
	*p += n
	switch string(kb) { // no allocation for these, valid UTF-8 all
	case "v":
		return "v", true
	case "id":
		return "id", true
	case "kind":
		return "kind", true
	case "conversation":
		return "conversation", true
	case "agent":
		return "agent", true
	case "origin":
		return "origin", true
	case "time":
		return "time", true
	case "data":
		return "data", true
	case "redactions":
		return "redactions", true
	case "tool":
		return "tool", true
	case "args":
		return "args", true
	case "command":
		return "command", true
	case "action_id":
		return "action_id", true
	case "content":
		return "content", true
	case "path":
		return "path", true
	case "seq": // and the keys of the commonest derived data
		return "seq", true
	case "level":
		return "level", true
	case "log_seq":
		return "log_seq", true
	case "config_version":
		return "config_version", true
	case "reasons":
		return "reasons", true
	case "analyzer":
		return "analyzer", true
	case "rule":
		return "rule", true
	case "detail":
		return "detail", true
	case "span":
		return "span", true
	case "outcome":
		return "outcome", true
	case "by":
		return "by", true
	case "decision_seq":
		return "decision_seq", true
	case "shape":
		return "shape", true
	case "digest":
		return "digest", true
	case "reason":
		return "reason", true
	case "severity":
		return "severity", true
	case "event_id":
		return "event_id", true
	case "subject":
		return "subject", true
	}
	if !utf8.Valid(kb) {
		return "", false
	}
	return bodyString(b, s, *p-n, n), true
}

// bodyString is b[p:p+n] as a string: a substring of s, which is b as a
// string or "", or a copy when s is "".
func bodyString(b []byte, s string, p, n int) string {
	if s != "" {
		return s[p : p+n]
	}
	return string(b[p : p+n])
}

// commonValue returns, already boxed, a string value that many events
// carry (tool names, risk levels, roles, verdicts): no copy and no
// allocation for them. Strings are immutable, so sharing one is the same
// value.
func commonValue(b []byte) (any, bool) {
	if len(b) == 0 || len(b) > 9 {
		return nil, false
	}
	switch string(b) { // compared without an allocation
	case "bash":
		return valBash, true
	case "Bash":
		return valBashTitle, true
	case "Read":
		return valRead, true
	case "Edit":
		return valEdit, true
	case "Write":
		return valWrite, true
	case "LOW":
		return valLow, true
	case "MEDIUM":
		return valMedium, true
	case "HIGH":
		return valHigh, true
	case "UNKNOWN":
		return valUnknown, true
	case "assistant":
		return valAssistant, true
	case "user":
		return valUser, true
	case "once":
		return valOnce, true
	case "session":
		return valSession, true
	case "always":
		return valAlways, true
	case "deny":
		return valDeny, true
	}
	return nil, false
}

// The values commonValue returns.
var (
	valBash, valBashTitle, valRead, valEdit, valWrite any = "bash", "Bash", "Read", "Edit", "Write"
	valLow, valMedium, valHigh, valUnknown            any = "LOW", "MEDIUM", "HIGH", "UNKNOWN"
	valAssistant, valUser                             any = "assistant", "user"
	valOnce, valSession, valAlways, valDeny           any = "once", "session", "always", "deny"
)
