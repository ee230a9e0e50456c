package replay

import (
	"encoding/binary"

	"github.com/vigil-dev/vigil/events"
)

// actionBody appends to buf what an action record holds besides its id
// and time: the raw msgpack of every other top-level entry, in order. Two
// records with the same body decode to events that differ at most in ID
// and Time, which the risk scorer never reads, so they score alike under
// the same config and environment. ok is false for anything but a map
// of well-formed values, and for a key that is not a plain string (such
// a record is scored without the memo).
func actionBody(buf, raw []byte) (body []byte, ok bool) {
	p := 0
	n, ok := mapLen(raw, &p)
	if !ok {
		return buf, false
	}
	for range n {
		start := p
		k, ok := strKey(raw, &p)
		if !ok || !events.SkipMsgpack(raw, &p) {
			return buf, false
		}
		if k == "id" || k == "time" {
			continue
		}
		buf = append(buf, raw[start:p]...)
	}
	return buf, p == len(raw)
}

func mapLen(b []byte, p *int) (int, bool) {
	if *p >= len(b) {
		return 0, false
	}
	c := b[*p]
	*p++
	switch {
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), true
	case c == 0xde:
		n, ok := uintN(b, p, 2)
		return int(n), ok
	case c == 0xdf:
		n, ok := uintN(b, p, 4)
		return int(n), ok
	}
	return 0, false
}

// strKey reads a str key (fixstr, str8/16/32) without copying it.
func strKey(b []byte, p *int) (string, bool) {
	if *p >= len(b) {
		return "", false
	}
	c := b[*p]
	*p++
	var n uint64
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c >= 0xd9 && c <= 0xdb:
		var ok bool
		if n, ok = uintN(b, p, 1<<(c-0xd9)); !ok {
			return "", false
		}
	default:
		return "", false
	}
	if n > uint64(len(b)-*p) {
		return "", false
	}
	k := b[*p : *p+int(n)]
	*p += int(n)
	switch string(k) { // compared without an allocation
	case "id":
		return "id", true
	case "time":
		return "time", true
	}
	return "", true
}

func uintN(b []byte, p *int, n int) (uint64, bool) {
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
	}
	*p += n
	return v, true
}
