package replay

import "encoding/binary"

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
		if !ok || !skipValue(raw, &p, 0) {
			return buf, false
		}
		if k == "id" || k == "time" {
			continue
		}
		buf = append(buf, raw[start:p]...)
	}
	return buf, p == len(raw)
}

// maxSkipDepth bounds the nesting skipValue follows (the decoder's own
// bound is lower: deeper records do not decode, so are never scored).
const maxSkipDepth = 256

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

// skipValue moves *p past one msgpack value.
func skipValue(b []byte, p *int, depth int) bool {
	if depth > maxSkipDepth || *p >= len(b) {
		return false
	}
	c := b[*p]
	*p++
	skip := func(n uint64) bool {
		if n > uint64(len(b)-*p) {
			return false
		}
		*p += int(n)
		return true
	}
	items := func(n uint64) bool {
		for range n {
			if !skipValue(b, p, depth+1) {
				return false
			}
		}
		return true
	}
	sized := func(width int, extra uint64) bool {
		n, ok := uintN(b, p, width)
		return ok && skip(n+extra)
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return true
	case c >= 0x80 && c <= 0x8f:
		return items(2 * uint64(c&0x0f))
	case c >= 0x90 && c <= 0x9f:
		return items(uint64(c & 0x0f))
	case c >= 0xa0 && c <= 0xbf:
		return skip(uint64(c & 0x1f))
	}
	switch c {
	case 0xc4, 0xd9: // bin8, str8
		return sized(1, 0)
	case 0xc5, 0xda:
		return sized(2, 0)
	case 0xc6, 0xdb:
		return sized(4, 0)
	case 0xc7: // ext8: length, type, data
		return sized(1, 1)
	case 0xc8:
		return sized(2, 1)
	case 0xc9:
		return sized(4, 1)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return skip(4)
	case 0xcb, 0xcf, 0xd3:
		return skip(8)
	case 0xcc, 0xd0:
		return skip(1)
	case 0xcd, 0xd1:
		return skip(2)
	case 0xd4: // fixext 1, 2, 4, 8, 16: type and data
		return skip(2)
	case 0xd5:
		return skip(3)
	case 0xd6:
		return skip(5)
	case 0xd7:
		return skip(9)
	case 0xd8:
		return skip(17)
	case 0xdc, 0xdd: // array16, array32
		n, ok := uintN(b, p, 2<<(c-0xdc))
		return ok && items(n)
	case 0xde, 0xdf: // map16, map32
		n, ok := uintN(b, p, 2<<(c-0xde))
		return ok && items(2*n)
	}
	return false // 0xc1 is never used
}
