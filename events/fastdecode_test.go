package events

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// slowDecodeMsgpack is DecodeMsgpack without its fast path: the
// reference the fast path must agree with.
func slowDecodeMsgpack(b []byte) (Event, error) {
	v, err := decodeMsgpackValue(b, MaxDepth)
	if err != nil {
		return Event{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Event{}, &DecodeError{Format: "msgpack", Reason: "top level is " + typeName(v) + ", want a map"}
	}
	n, err := normalize(m, 0)
	if err != nil {
		return Event{}, &DecodeError{Format: "msgpack", Reason: err.Error()}
	}
	return fromMap(n.(map[string]any), "msgpack")
}

// fastSeeds cover every msgpack code fastValue reads, and the ones it
// leaves to the library.
func fastSeeds(t testing.TB) [][]byte {
	enc := func(v any) []byte {
		var buf bytes.Buffer
		e := msgpack.NewEncoder(&buf)
		e.UseCompactInts(false)
		if err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	data := map[string]any{
		"tool": "bash", "args": map[string]any{"command": "ls -la", "n": []any{int8(-3), int16(-300), int32(-70000), int64(-1 << 40)}},
		"u": []any{uint8(200), uint16(60000), uint32(1 << 31), uint64(1 << 63), uint64(5)},
		"f": []any{float32(1.5), float32(2), 3.25, 4.0, math.NaN(), math.Inf(1), 1e300},
		"b": []byte("bin \xff value"), "s": "bad \xfe utf8", "nil": nil, "t": true, "no": false,
		"empty": map[string]any{}, "list": []any{}, "long": string(bytes.Repeat([]byte("x"), 70000)),
		"big": map[string]any{"k00": 0, "k01": 1, "k02": 2, "k03": 3, "k04": 4, "k05": 5, "k06": 6, "k07": 7,
			"k08": 8, "k09": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16},
	}
	seeds := [][]byte{
		enc(map[string]any{"v": 1, "id": "01J", "kind": "action", "conversation": "c", "time": "2026-11-22T10:00:00Z", "data": data}),
		enc(map[string]any{"v": 1, "id": "01J", "kind": "message", "data": map[string]any{"content": "hi"}, "extra": []any{1, "x"}}),
		enc(map[string]any{"kind": "action", "id": "no-version"}),
		enc(map[string]any{"v": -1, "id": "x"}),
		enc(map[string]any{"v": 1, "id": 5}),
		enc(map[string]any{"v": 1, "id": "x", "data": "not a map"}),
		enc(map[string]any{"v": 1, "id": "x", "redactions": []any{map[string]any{"rule": "r", "path": "p", "start": 1, "end": 2}}}),
		enc(map[string]any{"v": 2, "id": "x", "kind": "observation", "origin": "agent", "agent": "a", "time": "2026-11-22t10:00:00.5z"}),
		enc(map[string]any{"v": 1, "id": nil, "kind": "action"}),
		enc(map[string]any{"v": 1, "id": "x", "kind": nil}),
		enc(map[string]any{"v": 1, "id": "x", "time": "yesterday"}),
		enc(map[string]any{"v": 1, "id": "x", "data": nil}),
		enc(map[string]any{"v": 1, "id": "x", "redactions": []any{map[string]any{"rule": "r", "start": -1}}}),
		enc(map[string]any{"v": 1 << 21, "id": "x"}),
		enc(map[string]any{"v": 1.5, "id": "x"}),
		enc(map[string]any{"v": 0, "kind": "ActionEvent", "tool_name": "bash"}),
		enc([]any{1, 2}),
		enc("top string"),
		{0x83, 0xa1, 'v', 0x01, 0xa4, 'k', 'i', 'n', 'd', 0xa6, 'a', 'c', 't', 'i', 'o', 'n', 0xa4, 'k', 'i', 'n', 'd', 0x05}, // a known kind, then another
		{0x83, 0xa1, 'v', 0x01, 0xa4, 'k', 'i', 'n', 'd', 0x05, 0xa4, 'k', 'i', 'n', 'd', 0xa6, 'a', 'c', 't', 'i', 'o', 'n'}, // and after
		{0x82, 0xa1, 'v', 0x01, 0xa4, 'k', 'i', 'n', 'd', 0xa3, 'a', 'c', 't'},                                                // a kind no constant names
		{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02},                                                                              // a repeated key
		{0x81, 0xc4, 0x01, 'a', 0x01},                                                                                         // a bin key
		{0x81, 0xa1, 0xff, 0x01},                                                                                              // a key that is not UTF-8
		{0x81, 0xa4, 'd', 'a', 't', 'a', 0xd6, 0xff, 0, 0, 0, 1},                                                              // a timestamp
	}
	deep := append(bytes.Repeat([]byte{0x81, 0xa1, 'a'}, MaxDepth+1), 0x01)
	seeds = append(seeds, deep, deep[3:])
	return append(seeds, hostileMsgpack...)
}

// TestFastDecodeAgrees: the fast path decodes every seed to exactly what
// the library's path gives (the same event, or the same error), as an
// event and as a derived event.
func TestFastDecodeAgrees(t *testing.T) {
	fast := 0
	for _, b := range fastSeeds(t) {
		checkFastAgrees(t, b)
		checkFastValueAgrees(t, b)
		checkDecodeDerivedAgrees(t, b)
		p := 0
		if checkMsgpack(b, MaxDepth) == nil {
			if _, ok := fastValue(b, "", &p, 0); ok {
				fast++
			}
		}
	}
	if fast < 8 {
		t.Fatalf("only %d seeds took the fast path", fast)
	}
}

func checkFastAgrees(t *testing.T, b []byte) {
	t.Helper()
	if _, ok := fastEvent(b); ok {
		if err := checkMsgpack(b, MaxDepth); err != nil {
			t.Fatalf("% x: fastEvent reads a body checkMsgpack refuses: %v", b[:min(len(b), 40)], err)
		}
	}
	got, gerr := DecodeMsgpack(b)
	want, werr := slowDecodeMsgpack(b)
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("% x: error %v, the library's path %v", b[:min(len(b), 40)], gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("% x: decoded\n%#v\nthe library's path\n%#v", b[:min(len(b), 40)], got, want)
	}
}

// FuzzFastDecode checks the fast path against the library's on any body.
func FuzzFastDecode(f *testing.F) {
	for _, b := range fastSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastAgrees(t, b)
		checkFastValueAgrees(t, b)
		checkDecodeDerivedAgrees(t, b)
	})
}

// slowMarshal is Derived.Marshal with its data rendered by the library's
// decoder alone: the reference the fast path must give the same bytes as.
func slowMarshal(d *Derived) ([]byte, error) {
	m, err := d.envelope(toGeneric)
	if err != nil {
		return nil, err
	}
	n, err := normalize(m, 0)
	if err != nil {
		return nil, err
	}
	return encodeCanonical(n)
}

// TestDerivedMarshalAgrees: every derived type, with awkward values
// (invalid UTF-8, floats, large integers, empty and nil lists), encodes
// to the same bytes through the fast path as through the library's.
func TestDerivedMarshalAgrees(t *testing.T) {
	reasons := []Reason{{Analyzer: "shell", Rule: "rm-rf", Detail: "bad \xff byte", Level: RiskHigh, Span: []int{0, 5}}, {Analyzer: "a", Rule: "b"}}
	for _, data := range []any{
		RiskAssessed{ActionID: "a1", LogSeq: 1 << 63, ConfigVersion: -2, Level: RiskLow, Reasons: reasons},
		RiskAssessed{ActionID: "a1", Reasons: []Reason{}},
		RiskAssessed{ActionID: "a1"},
		&GateRequested{ActionID: "a2", LogSeq: 7, Level: RiskMedium, Reasons: reasons, Tool: "bash", Command: "rm -rf /", Digest: "sha256:00"},
		GateDecided{ActionID: "a3", Outcome: OutcomeDeny, By: ByRule, Reasons: reasons, DecisionSeq: 9, AskSecurityRisk: true},
		Alert{Severity: SeverityHigh, Reason: "r\xfe", LogSeq: 3},
		AuditCheckpoint{TreeSize: 4, RootHash: "cm9vdA==", Note: "note\n", Leaves: "x"},
		Stats{Conversation: "c", Events: 3, ByKind: map[string]uint64{"action": 2, "message": 1}},
		DeadLetter{Reason: "r", Subject: "s", Size: 12},
		struct {
			F  float64   `msgpack:"f"`
			G  float32   `msgpack:"g"`
			H  []float64 `msgpack:"h"`
			U  uint64    `msgpack:"u"`
			B  []byte    `msgpack:"b"`
			M  map[string]any
			NP *Alert `msgpack:"np"`
		}{F: 2, G: 1.5, H: []float64{math.NaN(), 1e300, -0.5}, U: math.MaxUint64, B: []byte("\xffx"), M: map[string]any{"k": []any{1, "v"}}},
		map[string]any{"generic": true, "n": 1.0},
	} {
		d := Derived{V: 1, ID: "risk:1", Kind: KindRiskAssessed, Conversation: "c-1", Seq: 1, Time: "2026-11-22T10:00:00Z", Data: data}
		got, gerr := d.Marshal()
		want, werr := slowMarshal(&d)
		if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%T: % x (%v), the library's path % x (%v)", data, got, gerr, want, werr)
		}
	}
}

// checkFastValueAgrees: fastValue gives what the library's decoder and
// normalize give, for any value (not only an event).
func checkFastValueAgrees(t *testing.T, b []byte) {
	t.Helper()
	if checkMsgpack(b, MaxDepth) != nil {
		return
	}
	p := 0
	got, ok := fastValue(b, "", &p, 0)
	if !ok || p != len(b) {
		return
	}
	v, err := decodeMsgpackValue(b, MaxDepth)
	if err != nil {
		t.Fatalf("% x: the fast path decodes what the library refuses: %v", b[:min(len(b), 40)], err)
	}
	want, err := normalize(v, 0)
	if err != nil {
		t.Fatalf("% x: the fast path decodes what normalize refuses: %v", b[:min(len(b), 40)], err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("% x: %#v, the library's path %#v", b[:min(len(b), 40)], got, want)
	}
}

// TestFastDecodeAgreesOnExamples: every golden example (docs/schemas'
// events, v0 ones and the derived ones) decodes, and encodes, the same
// through both paths.
func TestFastDecodeAgreesOnExamples(t *testing.T) {
	n := 0
	for _, x := range append(validExamples(t), readExamples(t, "invalid/*.json")...) {
		if d, err := DecodeDerivedJSON(x.raw); err == nil {
			got, gerr := d.Marshal()
			want, werr := slowMarshal(&d)
			if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%s: % x (%v), the library's path % x (%v)", x.name, got, gerr, want, werr)
			}
			n++
			continue
		}
		ev, err := DecodeJSON(x.raw)
		if err != nil {
			continue
		}
		b := mustMsgpack(t, ev)
		checkFastAgrees(t, b)
		checkFastValueAgrees(t, b)
		n++
	}
	if n < 20 {
		t.Fatalf("only %d examples checked", n)
	}
}
