package ingest

import (
	"encoding/binary"
	"math"

	"github.com/vigil-dev/vigil/events"
)

// fastGateOut is decodeGateOut without the msgpack package's reflection,
// for bodies spelled as events.Derived.Marshal writes a gate output: a map
// of string keys, each at most once, whose data is a map of the typed
// view's fields (strings as str, integers as ints, no nil but for a
// list). ok is false for anything else (another kind too), and the caller
// decodes with the msgpack package instead: what this accepts, it reads
// as that decoding does.
func fastGateOut(body []byte) (id string, r WaitReply, ok bool) {
	m := mpReader{b: body}
	var kind string
	var data []byte
	var gotID, gotKind, gotData bool
	n, ok := m.mapLen()
	if !ok {
		return "", r, false
	}
	for range n {
		k, ok := m.str()
		if !ok {
			return "", r, false
		}
		switch k {
		case "id":
			if gotID {
				return "", r, false
			}
			gotID = true
			if id, ok = m.str(); !ok {
				return "", r, false
			}
		case "kind":
			if gotKind {
				return "", r, false
			}
			gotKind = true
			if kind, ok = m.str(); !ok {
				return "", r, false
			}
		case "data":
			if gotData {
				return "", r, false
			}
			gotData = true
			start := m.p
			if !m.skip(0) {
				return "", r, false
			}
			data = body[start:m.p]
		default:
			if !m.skip(0) {
				return "", r, false
			}
		}
	}
	if m.p != len(body) || id == "" || !gotData {
		return "", r, false
	}
	// The data's strings are substrings of one copy of it (the id, kept
	// by the watcher, is a copy of its own).
	d := mpReader{b: data, whole: string(data)}
	switch events.Kind(kind) {
	case events.KindGateDecided:
		gd := &events.GateDecided{}
		if !d.fields(func(k string) bool { return decidedField(&d, gd, k) }) || d.p != len(data) {
			return "", r, false
		}
		r.Decided = gd
	case events.KindGateRequested:
		gr := &events.GateRequested{}
		if !d.fields(func(k string) bool { return requestedField(&d, gr, k) }) || d.p != len(data) {
			return "", r, false
		}
		r.Requested = gr
	default:
		return "", r, false
	}
	return id, r, true
}

func decidedField(m *mpReader, d *events.GateDecided, key string) bool {
	switch key {
	case "action_id":
		return m.text(&d.ActionID)
	case "log_seq":
		return m.uint(&d.LogSeq)
	case "outcome":
		return m.text((*string)(&d.Outcome))
	case "by":
		return m.text((*string)(&d.By))
	case "level":
		return m.text((*string)(&d.Level))
	case "reasons":
		return m.reasons(&d.Reasons)
	case "approver":
		return m.text(&d.Approver)
	case "reason":
		return m.text(&d.Reason)
	case "decision_seq":
		return m.uint(&d.DecisionSeq)
	case "shape":
		return m.text(&d.Shape)
	case "config_version":
		return m.int(&d.ConfigVersion)
	case "verdict":
		return m.text((*string)(&d.Verdict))
	case "entry_id":
		return m.text(&d.EntryID)
	case "would":
		return m.text(&d.Would)
	case "ask_security_risk":
		return m.boolean(&d.AskSecurityRisk)
	case "digest":
		return m.text(&d.Digest)
	}
	return m.skip(0) // a field this build does not know, skipped as the msgpack package does
}

func requestedField(m *mpReader, r *events.GateRequested, key string) bool {
	switch key {
	case "action_id":
		return m.text(&r.ActionID)
	case "log_seq":
		return m.uint(&r.LogSeq)
	case "level":
		return m.text((*string)(&r.Level))
	case "reasons":
		return m.reasons(&r.Reasons)
	case "tool":
		return m.text(&r.Tool)
	case "command":
		return m.text(&r.Command)
	case "shape":
		return m.text(&r.Shape)
	case "timeout":
		return m.text(&r.Timeout)
	case "config_version":
		return m.int(&r.ConfigVersion)
	case "agent":
		return m.text(&r.Agent)
	case "backend":
		return m.text(&r.Backend)
	case "backend_claimed":
		return m.text(&r.BackendClaimed)
	case "digest":
		return m.text(&r.Digest)
	}
	return m.skip(0)
}

func reasonField(m *mpReader, r *events.Reason, key string) bool {
	switch key {
	case "analyzer":
		return m.text(&r.Analyzer)
	case "rule":
		return m.text(&r.Rule)
	case "detail":
		return m.text(&r.Detail)
	case "level":
		return m.text((*string)(&r.Level))
	case "span":
		return m.list(func(n int) { r.Span = make([]int, 0, n) }, func() bool {
			var v int64
			if !m.int(&v) || int64(int(v)) != v {
				return false
			}
			r.Span = append(r.Span, int(v))
			return true
		})
	}
	return m.skip(0)
}

// mpReader reads the msgpack fastGateOut takes; every method returns
// false on anything outside it.
type mpReader struct {
	b []byte
	// whole, when set, is a copy of b: str returns its substrings
	// instead of allocating each string.
	whole string
	p     int
}

func (m *mpReader) byte() (byte, bool) {
	if m.p >= len(m.b) {
		return 0, false
	}
	c := m.b[m.p]
	m.p++
	return c, true
}

func (m *mpReader) n(size int) ([]byte, bool) {
	if size < 0 || len(m.b)-m.p < size {
		return nil, false
	}
	v := m.b[m.p : m.p+size]
	m.p += size
	return v, true
}

// length reads a big-endian length of 1, 2 or 4 bytes.
func (m *mpReader) length(size int) (int, bool) {
	v, ok := m.n(size)
	if !ok {
		return 0, false
	}
	switch size {
	case 1:
		return int(v[0]), true
	case 2:
		return int(binary.BigEndian.Uint16(v)), true
	}
	n := binary.BigEndian.Uint32(v)
	if uint64(n) > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

func (m *mpReader) mapLen() (int, bool) {
	c, ok := m.byte()
	switch {
	case !ok:
		return 0, false
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), true
	case c == 0xde:
		return m.length(2)
	case c == 0xdf:
		return m.length(4)
	}
	return 0, false
}

// str reads a str (not a bin, not nil).
func (m *mpReader) str() (string, bool) {
	c, ok := m.byte()
	if !ok {
		return "", false
	}
	var n int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xd9:
		n, ok = m.length(1)
	case c == 0xda:
		n, ok = m.length(2)
	case c == 0xdb:
		n, ok = m.length(4)
	default:
		return "", false
	}
	if !ok {
		return "", false
	}
	start := m.p
	v, ok := m.n(n)
	if !ok {
		return "", false
	}
	if m.whole != "" {
		return m.whole[start:m.p], true
	}
	return string(v), true
}

func (m *mpReader) text(dst *string) bool {
	v, ok := m.str()
	*dst = v
	return ok
}

// integer reads any msgpack integer: neg is set for a negative one, whose
// value is then u as an int64's bits.
func (m *mpReader) integer() (u uint64, neg bool, ok bool) {
	c, ok := m.byte()
	if !ok {
		return 0, false, false
	}
	switch {
	case c <= 0x7f:
		return uint64(c), false, true
	case c >= 0xe0:
		return uint64(int64(int8(c))), true, true
	}
	var v []byte
	switch c {
	case 0xcc, 0xd0:
		v, ok = m.n(1)
	case 0xcd, 0xd1:
		v, ok = m.n(2)
	case 0xce, 0xd2:
		v, ok = m.n(4)
	case 0xcf, 0xd3:
		v, ok = m.n(8)
	default:
		return 0, false, false
	}
	if !ok {
		return 0, false, false
	}
	switch c {
	case 0xcc:
		return uint64(v[0]), false, true
	case 0xcd:
		return uint64(binary.BigEndian.Uint16(v)), false, true
	case 0xce:
		return uint64(binary.BigEndian.Uint32(v)), false, true
	case 0xcf:
		return binary.BigEndian.Uint64(v), false, true
	case 0xd0:
		x := int64(int8(v[0]))
		return uint64(x), x < 0, true
	case 0xd1:
		x := int64(int16(binary.BigEndian.Uint16(v)))
		return uint64(x), x < 0, true
	case 0xd2:
		x := int64(int32(binary.BigEndian.Uint32(v)))
		return uint64(x), x < 0, true
	}
	x := int64(binary.BigEndian.Uint64(v))
	return uint64(x), x < 0, true
}

// uint reads a non-negative integer (a negative one is left to the
// msgpack package).
func (m *mpReader) uint(dst *uint64) bool {
	u, neg, ok := m.integer()
	if !ok || neg {
		return false
	}
	*dst = u
	return true
}

// int reads an integer that fits an int64.
func (m *mpReader) int(dst *int64) bool {
	u, neg, ok := m.integer()
	if !ok || (!neg && u > math.MaxInt64) {
		return false
	}
	*dst = int64(u)
	return true
}

func (m *mpReader) boolean(dst *bool) bool {
	c, ok := m.byte()
	switch {
	case ok && c == 0xc3:
		*dst = true
	case ok && c == 0xc2:
		*dst = false
	default:
		return false
	}
	return true
}

// fields reads a map, calling field for each key with the reader at its
// value; a key seen twice is refused.
func (m *mpReader) fields(field func(key string) bool) bool {
	n, ok := m.mapLen()
	if !ok || n > 64 {
		return false
	}
	var seen [64]string
	for i := range n {
		k, ok := m.str()
		if !ok {
			return false
		}
		for _, o := range seen[:i] {
			if o == k {
				return false
			}
		}
		seen[i] = k
		if !field(k) {
			return false
		}
	}
	return true
}

// list reads an array, or nil (nothing set: the slice stays nil, as with
// the msgpack package); start is called with its length first (an empty
// array makes an empty, non-nil slice there too).
func (m *mpReader) list(start func(n int), elem func() bool) bool {
	if m.p < len(m.b) && m.b[m.p] == 0xc0 {
		m.p++
		return true
	}
	c, ok := m.byte()
	if !ok {
		return false
	}
	var n int
	switch {
	case c >= 0x90 && c <= 0x9f:
		n = int(c & 0x0f)
	case c == 0xdc:
		n, ok = m.length(2)
	case c == 0xdd:
		n, ok = m.length(4)
	default:
		return false
	}
	if !ok || n > len(m.b)-m.p { // each element takes a byte at least
		return false
	}
	start(n)
	for range n {
		if !elem() {
			return false
		}
	}
	return true
}

func (m *mpReader) reasons(dst *[]events.Reason) bool {
	return m.list(func(n int) { *dst = make([]events.Reason, 0, n) }, func() bool {
		var r events.Reason
		if !m.fields(func(k string) bool { return reasonField(m, &r, k) }) {
			return false
		}
		*dst = append(*dst, r)
		return true
	})
}

// skip passes one value of any msgpack type, nested at most
// events.MaxDepth deep.
func (m *mpReader) skip(depth int) bool {
	if depth > events.MaxDepth {
		return false
	}
	c, ok := m.byte()
	if !ok {
		return false
	}
	size := 0
	items := 0
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return true
	case c >= 0x80 && c <= 0x8f:
		items = 2 * int(c&0x0f)
	case c >= 0x90 && c <= 0x9f:
		items = int(c & 0x0f)
	case c >= 0xa0 && c <= 0xbf:
		size = int(c & 0x1f)
	default:
		switch c {
		case 0xcc, 0xd0:
			size = 1
		case 0xcd, 0xd1:
			size = 2
		case 0xce, 0xd2, 0xca:
			size = 4
		case 0xcf, 0xd3, 0xcb:
			size = 8
		case 0xd9, 0xc4:
			size, ok = m.length(1)
		case 0xda, 0xc5:
			size, ok = m.length(2)
		case 0xdb, 0xc6:
			size, ok = m.length(4)
		case 0xdc:
			items, ok = m.length(2)
		case 0xdd:
			items, ok = m.length(4)
		case 0xde:
			items, ok = m.length(2)
			items *= 2
		case 0xdf:
			items, ok = m.length(4)
			items *= 2
		default:
			return false // ext types and the unused code: left to the msgpack package
		}
	}
	if !ok {
		return false
	}
	if _, ok := m.n(size); !ok {
		return false
	}
	if items > len(m.b)-m.p {
		return false
	}
	for range items {
		if !m.skip(depth + 1) {
			return false
		}
	}
	return true
}
