package events

import "unicode/utf8"

// DerivedKind reads the kind of the derived event encoded in b without
// decoding the rest of it, so a reader that wants one kind can pass over
// the others for the cost of a scan. Its answer is a hint with one
// guarantee: whenever DecodeDerived(b) succeeds, DerivedKind(b) returns
// that event's Kind with true, or false. False means "decode it to know"
// (b is not a msgpack map, its kind is not a string naming a derived kind,
// or it is past what the scan reads), never "it is not that kind".
func DerivedKind(b []byte) (Kind, bool) {
	v, ok := peekTop(b, "kind")
	if !ok {
		return "", false
	}
	return derivedKindNamed(v)
}

// DerivedID reads the id of the derived event encoded in b, as bytes of
// b, without decoding the rest of it. The same guarantee as DerivedKind:
// whenever DecodeDerived(b) succeeds, DerivedID(b) returns that event's
// ID with true, or false (decode it to know).
func DerivedID(b []byte) ([]byte, bool) {
	v, ok := peekTop(b, "id")
	if !ok || !utf8.Valid(v) || len(v) == 0 {
		return nil, false // left to the decoder, which may replace invalid UTF-8
	}
	return v, true
}

// peekTop returns the str value of b's top-level key (the last, when it is
// repeated, as in DecodeDerived), scanning past the others.
func peekTop(b []byte, key string) ([]byte, bool) {
	p := 0
	n, ok := peekMapLen(b, &p)
	if !ok {
		return nil, false
	}
	var val []byte
	found := false
	for range n {
		k, ok := peekStr(b, &p)
		if !ok {
			return nil, false
		}
		if string(k) != key {
			if !skipMsgpack(b, &p, 0) {
				return nil, false
			}
			continue
		}
		if val, ok = peekStr(b, &p); !ok {
			return nil, false
		}
		found = true
	}
	return val, found
}

// derivedKindNamed returns the derived kind spelled b, without an
// allocation.
func derivedKindNamed(b []byte) (Kind, bool) {
	for _, k := range [...]Kind{KindRiskAssessed, KindGateRequested, KindGateDecided, KindAuditCheckpoint, KindAlert, KindStats, KindDeadLetter} {
		if string(b) == string(k) {
			return k, true
		}
	}
	return "", false
}

// peekMapLen reads a map header.
func peekMapLen(b []byte, p *int) (uint64, bool) {
	if *p >= len(b) {
		return 0, false
	}
	c := b[*p]
	*p++
	switch {
	case c >= 0x80 && c <= 0x8f:
		return uint64(c & 0x0f), true
	case c == 0xde:
		return fastUint(b, p, 2)
	case c == 0xdf:
		return fastUint(b, p, 4)
	}
	return 0, false
}

// peekStr reads a str value (not bin: a key or kind spelled as bin is
// left to the full decoder).
func peekStr(b []byte, p *int) ([]byte, bool) {
	if *p >= len(b) {
		return nil, false
	}
	c := b[*p]
	*p++
	var n uint64
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xd9, c == 0xda, c == 0xdb:
		var ok bool
		if n, ok = fastUint(b, p, 1<<(c-0xd9)); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	if n > uint64(len(b)-*p) {
		return nil, false
	}
	s := b[*p : *p+int(n)]
	*p += int(n)
	return s, true
}

// SkipMsgpack moves *p past the msgpack value at b[*p:] and reports
// whether there is a well-formed one there, nested at most MaxDepth deep
// (what is deeper no decoder of this package takes). It never reads past
// b and allocates nothing.
func SkipMsgpack(b []byte, p *int) bool { return skipMsgpack(b, p, 0) }

func skipMsgpack(b []byte, p *int, depth int) bool {
	if depth > MaxDepth || *p >= len(b) {
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
		if n > uint64(len(b)-*p) { // every item takes a byte at least
			return false
		}
		for range n {
			if !skipMsgpack(b, p, depth+1) {
				return false
			}
		}
		return true
	}
	sized := func(width int, extra uint64) bool {
		n, ok := fastUint(b, p, width)
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
	case 0xcc, 0xd0:
		return skip(1)
	case 0xcd, 0xd1:
		return skip(2)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return skip(4)
	case 0xcb, 0xcf, 0xd3:
		return skip(8)
	case 0xd4: // fixext 1, 2, 4, 8, 16: type, data
		return skip(2)
	case 0xd5:
		return skip(3)
	case 0xd6:
		return skip(5)
	case 0xd7:
		return skip(9)
	case 0xd8:
		return skip(17)
	case 0xdc:
		n, ok := fastUint(b, p, 2)
		return ok && items(n)
	case 0xdd:
		n, ok := fastUint(b, p, 4)
		return ok && items(n)
	case 0xde:
		n, ok := fastUint(b, p, 2)
		return ok && items(2*n)
	case 0xdf:
		n, ok := fastUint(b, p, 4)
		return ok && items(2*n)
	}
	return false // 0xc1
}
