package events

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// emittedData are the typed Data values processors and services put in a
// derived event (processors/..., internal/driver, internal/ingest,
// internal/node): appendDerived writes each of them itself.
func emittedData() []any {
	return []any{RiskAssessed{}, GateDecided{}, GateRequested{}, Alert{}, AuditCheckpoint{}, DeadLetter{}, Stats{}}
}

// source hands out the choices fill makes: from a fuzzer's bytes, or from
// a seeded generator. Once its bytes run out every choice is zero.
type source struct {
	b   []byte
	rnd *rand.Rand
	// full makes every choice non-empty: every field written.
	full bool
}

func (s *source) byte() byte {
	if s.rnd != nil {
		return byte(s.rnd.Uint32())
	}
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

// bytes returns n bytes (fewer once a fuzzer's run out).
func (s *source) bytes(n int) []byte {
	if s.rnd != nil {
		out := make([]byte, n)
		for i := range out {
			out[i] = s.byte()
		}
		return out
	}
	n = min(n, len(s.b))
	out := s.b[:n]
	s.b = s.b[n:]
	return out
}

// fillStrings are strings at every header boundary (fixstr, str8, str16,
// str32) and with invalid UTF-8, which a decoder replaces.
var fillStrings = []string{
	"", "x", "HIGH", "rm -rf /", "bad \xff byte", "\xfe", "\xff\xfe", "é", "\xed\xa0\x80", "a\x00b",
	strings.Repeat("a", 31), strings.Repeat("b", 32), strings.Repeat("c", 255), strings.Repeat("d", 256),
	strings.Repeat("\xff", 31), strings.Repeat("é", 16),
}

// longStrings are the str16 and str32 boundaries, chosen rarely.
var longStrings = []string{strings.Repeat("e", 65535), strings.Repeat("f", 65536)}

// fillInts are integers at every boundary of the compact forms.
var fillInts = []int64{
	0, 1, -1, 31, 32, -32, -33, 127, 128, 255, 256, -128, -129, 32767, 32768, -32768, -32769, 65535, 65536,
	math.MaxInt32, math.MaxInt32 + 1, math.MinInt32, math.MinInt32 - 1, math.MaxUint32, math.MaxUint32 + 1,
	math.MaxInt64, math.MinInt64,
}

func (s *source) string() string {
	c := s.byte()
	if c == 127 {
		return longStrings[s.byte()&1]
	}
	if c < 127 {
		str := fillStrings[int(c)%len(fillStrings)]
		if s.full && str == "" {
			return "s"
		}
		return str
	}
	str := string(s.bytes(int(s.byte()) % 40))
	if s.full && str == "" {
		return "t"
	}
	return str
}

func (s *source) int() int64 {
	c := s.byte()
	var n int64
	if c < 200 {
		n = fillInts[int(c)%len(fillInts)]
	} else {
		var b [8]byte
		copy(b[:], s.bytes(8))
		n = int64(binary.BigEndian.Uint64(b[:]))
	}
	if s.full && n == 0 {
		return 300
	}
	return n
}

// fill sets every field v holds (a struct's, a slice's, a map's) from s;
// interface fields are left alone.
func fill(v reflect.Value, s *source) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s.string())
	case reflect.Bool:
		v.SetBool(s.full || s.byte()&1 == 1)
	case reflect.Int, reflect.Int64:
		v.SetInt(s.int())
	case reflect.Uint64:
		n := uint64(s.int())
		if s.byte() == 1 {
			n = math.MaxUint64
		}
		v.SetUint(n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), s)
		}
	case reflect.Slice:
		c := int(s.byte() % 6)
		if s.full {
			c = 3
		}
		switch c {
		case 0:
			v.SetZero() // nil
		default:
			v.Set(reflect.MakeSlice(v.Type(), c-1, c-1))
			for i := range c - 1 {
				fill(v.Index(i), s)
			}
		}
	case reflect.Map:
		c := int(s.byte() % 8)
		if s.full {
			c = 3
		}
		switch c {
		case 0:
			v.SetZero() // nil
		default:
			n := c - 1
			if c == 7 {
				n = 20 // past a fixmap
			}
			v.Set(reflect.MakeMap(v.Type()))
			for range n {
				k := reflect.New(v.Type().Key()).Elem()
				fill(k, s)
				e := reflect.New(v.Type().Elem()).Elem()
				fill(e, s)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Interface:
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}

// filledDerived is a derived event whose envelope and Data (of data's
// type) are filled from s.
func filledDerived(data any, s *source) Derived {
	var d Derived
	fill(reflect.ValueOf(&d).Elem(), s)
	if !s.full && s.byte()&1 == 1 {
		d.Conversation = ""
	}
	if s.byte()&3 != 0 {
		d.V = int(s.byte() % 3) // the usual versions, more often than the rest
	}
	p := reflect.New(reflect.TypeOf(data))
	fill(p.Elem(), s)
	d.Data = p.Elem().Interface()
	return d
}

// checkAppendAgrees: appendDerived gives d the bytes of the general path
// (marshalGeneric) and of the library's own (slowMarshal), or reports that
// it cannot, and Marshal gives them too; mustAppend says it must be able
// to. It returns the bytes.
func checkAppendAgrees(t *testing.T, d *Derived, mustAppend bool) []byte {
	t.Helper()
	want, werr := d.marshalGeneric()
	lib, lerr := slowMarshal(d)
	if (werr == nil) != (lerr == nil) || !bytes.Equal(want, lib) {
		t.Fatalf("%T: the general path gives % x (%v), the library's % x (%v)", d.Data, clip(want), werr, clip(lib), lerr)
	}
	got, ok := appendDerived(nil, d)
	if ok && (werr != nil || !bytes.Equal(got, want)) {
		t.Fatalf("%T %#v:\nappendDerived % x\nthe general path % x (%v)", d.Data, clip(d), clip(got), clip(want), werr)
	}
	if !ok && mustAppend {
		t.Fatalf("%T: appendDerived cannot write %#v", d.Data, clip(d))
	}
	m, merr := d.Marshal()
	if (merr == nil) != (werr == nil) || !bytes.Equal(m, want) {
		t.Fatalf("%T: Marshal gives % x (%v), the general path % x (%v)", d.Data, clip(m), merr, clip(want), werr)
	}
	return want
}

// clip keeps failure messages short when a value holds a 64 KiB string.
func clip(v any) any {
	if b, ok := v.([]byte); ok && len(b) > 200 {
		return b[:200]
	}
	if d, ok := v.(*Derived); ok {
		if s := reflect.ValueOf(d.Data).String(); len(s) > 200 {
			return "(a large value)"
		}
	}
	return v
}

// checkGenericAgrees decodes body (a canonical encoding) through both
// decoders, which must agree, and checks that the generic derived event
// encodes to body again. It reports whether body decoded (one with a v
// that is no version does not).
func checkGenericAgrees(t *testing.T, body []byte) bool {
	t.Helper()
	checkDecodeDerivedAgrees(t, body)
	g, err := DecodeDerived(body)
	if err != nil {
		return false
	}
	if b := checkAppendAgrees(t, &g, true); !bytes.Equal(b, body) {
		t.Fatalf("decoded and encoded again: % x, was % x", clip(b), clip(body))
	}
	return true
}

// slowDecodeDerived is DecodeDerived without its fast path: the library's
// decoder, normalize, then the envelope's checks.
func slowDecodeDerived(b []byte) (Derived, error) {
	v, err := decodeMsgpackValue(b, MaxDepth)
	if err != nil {
		return Derived{}, err
	}
	return derivedFromValue(v, "msgpack")
}

// checkDecodeDerivedAgrees: DecodeDerived gives what the library's path
// gives, the same derived event or the same refusal.
func checkDecodeDerivedAgrees(t *testing.T, b []byte) {
	t.Helper()
	got, gerr := DecodeDerived(b)
	want, werr := slowDecodeDerived(b)
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("% x: error %v, the library's path %v", clip(b), gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("% x: decoded\n%#v\nthe library's path\n%#v", clip(b), got, want)
	}
}

// appendable says whether appendDerived writes data itself: all but a
// Stats with a by_kind key that is not valid UTF-8.
func appendable(data any) bool {
	if s, ok := data.(Stats); ok {
		for k := range s.ByKind {
			if !utf8.ValidString(k) {
				return false
			}
		}
	}
	return true
}

// TestDerivedAppendAgrees: every typed Data the processors emit, with no
// field set, with every field set, and with thousands of awkward values
// (invalid UTF-8, every integer and string header boundary, nil and empty
// lists and maps, maps past 16 keys), encodes to the same bytes through
// appendDerived as through the general path and the library's; the
// generic event decoded from those bytes does too, and decodes alike
// through both decoders.
func TestDerivedAppendAgrees(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, data := range emittedData() {
		d := Derived{V: 1, ID: "x:1", Kind: KindAlert, Time: "2026-11-22T10:00:00Z", Data: data}
		if !checkGenericAgrees(t, checkAppendAgrees(t, &d, true)) {
			t.Fatalf("%T: the encoding of the zero value does not decode", data)
		}

		full := filledDerived(data, &source{rnd: rnd, full: true})
		v := reflect.ValueOf(full.Data)
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("%T.%s is not set", data, v.Type().Field(i).Name)
			}
		}
		if body := checkAppendAgrees(t, &full, appendable(full.Data)); appendable(full.Data) {
			checkGenericAgrees(t, body)
		}

		decoded := 0
		for range 1000 {
			d := filledDerived(data, &source{rnd: rnd})
			if body := checkAppendAgrees(t, &d, appendable(d.Data)); body != nil && checkGenericAgrees(t, body) {
				decoded++
			}
		}
		if decoded < 500 {
			t.Fatalf("%T: only %d of 1000 encodings decoded", data, decoded)
		}
	}
}

// TestDerivedAppendDeclines: Data appendDerived does not write itself (a
// type it does not know, a generic value not in normal form) takes the
// general path, to the same bytes or the same error.
func TestDerivedAppendDeclines(t *testing.T) {
	t.Parallel()
	for _, data := range []any{
		&RiskAssessed{ActionID: "a"}, (*Alert)(nil), Reason{Analyzer: "a", Rule: "r"}, []Reason{{Rule: "r"}},
		map[string]any{"n": 1}, map[string]any{"f": 2.0}, map[string]any{"s": "\xff"}, map[string]any{"\xff": 1, "\xfe": 2},
		[]any{int32(3)}, uint64(5), 1.0, math.NaN(), "\xfe", map[string]any{"t": []byte("x")},
		Stats{ByKind: map[string]uint64{"\xff": 1}}, Stats{ByKind: map[string]uint64{"\xff": 1, "\xfe": 2}},
		deepData(MaxDepth),
	} {
		d := Derived{V: 1, ID: "x:1", Kind: KindAlert, Conversation: "c", Time: "2026-11-22T10:00:00Z", Data: data}
		if _, ok := appendDerived(nil, &d); ok {
			t.Errorf("appendDerived wrote %T %v itself", data, clip(data))
		}
		checkAppendAgrees(t, &d, false)
	}
	for _, data := range []any{nil, true, "s", int64(-3), uint64(math.MaxUint64), 1.5, []any{}, map[string]any{},
		map[string]any{"a": []any{int64(1), "b", nil, map[string]any{"c": false}}}, deepData(MaxDepth - 1)} {
		d := Derived{V: 1, ID: "x:1", Kind: KindAlert, Time: "2026-11-22T10:00:00Z", Data: data}
		checkAppendAgrees(t, &d, true)
	}
}

// deepData is a generic value nested n maps deep.
func deepData(n int) any {
	var v any = int64(1)
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// FuzzDerivedMarshal: a derived event built from the fuzzer's bytes, with
// typed Data of each emitted type, encodes to the same bytes through
// appendDerived as through the general path; the bytes taken as a body,
// when they decode, decode alike through both decoders and encode again
// alike.
func FuzzDerivedMarshal(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(bytes.Repeat([]byte{0xff, 0x80, 0x05}, 40))
	for _, d := range benchDerived() {
		b, err := d.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kinds := emittedData()
		if len(b) > 0 {
			data := kinds[int(b[0])%len(kinds)]
			d := filledDerived(data, &source{b: b[1:]})
			if body := checkAppendAgrees(t, &d, appendable(d.Data)); body != nil {
				checkGenericAgrees(t, body)
			}
		}
		checkDecodeDerivedAgrees(t, b)
		if d, err := DecodeDerived(b); err == nil {
			checkAppendAgrees(t, &d, false)
		}
	})
}
