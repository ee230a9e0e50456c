package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

const baseAction = `{"v":1,"id":"01M81B5KP4KN9DZNWV9NV456V1","kind":"action","conversation":"c-42","agent":"coder-1","time":"2026-11-22T10:00:02.5Z","data":{"tool":"bash","args":{"command":"ls -la"}}}`

// withFields returns baseAction's JSON with extra top-level and data fields.
func withFields(t testing.TB, top, data map[string]any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseAction), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range top {
		m[k] = v
	}
	for k, v := range data {
		m["data"].(map[string]any)[k] = v
	}
	return m
}

// msgpackOf encodes any Go value with the msgpack library, as a producer in
// another language might: unsorted keys, its own integer widths.
func msgpackOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUnknownFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		top, data map[string]any
	}{
		{"top-level scalar", map[string]any{"trace_id": "4bf92f35"}, nil},
		{"top-level object", map[string]any{"producer": map[string]any{"name": "hook", "version": "0.3.1", "pid": 4242}}, nil},
		{"top-level list", map[string]any{"tags": []any{"a", 1, 2.5, true, nil}}, nil},
		{"top-level null", map[string]any{"reply_to": nil}, nil},
		{"data scalar", nil, map[string]any{"tool_call_id": "toolu_01"}},
		{"data nested", nil, map[string]any{"mcp_server": map[string]any{"name": "github", "env": map[string]any{"DEBUG": "1"}}}},
		{"inside args", nil, map[string]any{"args": map[string]any{"command": "ls", "description": "list", "run_in_background": false, "timeout": 600}}},
		{"looks like an envelope field", nil, map[string]any{"v": 9, "id": "inner", "kind": "x"}},
		{"big and small numbers", map[string]any{"n": uint64(math.MaxUint64), "m": int64(math.MinInt64), "f": 0.1}, nil},
		{"unicode", map[string]any{"note": "日本語 🔒 \u2028"}, map[string]any{"ключ": "значение"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := withFields(t, tt.top, tt.data)
			jsonIn, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range []struct {
				name   string
				decode func() (Event, error)
			}{
				{"json", func() (Event, error) { return DecodeJSON(jsonIn) }},
				{"msgpack", func() (Event, error) { return DecodeMsgpack(msgpackOf(t, in)) }},
			} {
				ev, err := src.decode()
				if err != nil {
					t.Fatalf("%s: %v", src.name, err)
				}
				checkCanonical(t, ev)
				// Through both encodings and back, every unknown field is there.
				for _, enc := range []struct {
					name   string
					encode func(Event) (Event, error)
				}{
					{"json", func(e Event) (Event, error) { return DecodeJSON(mustJSON(t, e)) }},
					{"msgpack", func(e Event) (Event, error) { return DecodeMsgpack(mustMsgpack(t, e)) }},
				} {
					back, err := enc.encode(ev)
					if err != nil {
						t.Fatalf("%s → %s: %v", src.name, enc.name, err)
					}
					for k, want := range tt.top {
						if got, ok := back.Extra[k]; !ok || !sameValue(got, want) {
							t.Errorf("%s → %s: Extra[%q] = %#v (present %v), want %#v", src.name, enc.name, k, got, ok, want)
						}
					}
					for k, want := range tt.data {
						if got, ok := back.Data[k]; !ok || !sameValue(got, want) {
							t.Errorf("%s → %s: Data[%q] = %#v (present %v), want %#v", src.name, enc.name, k, got, ok, want)
						}
					}
				}
			}
		})
	}
}

// TestCanonicalEncoding: equal events give equal bytes however they were
// built; keys are sorted; integers are compact.
func TestCanonicalEncoding(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 11, 22, 10, 0, 2, 500_000_000, time.UTC)
	build := func(data map[string]any, extra map[string]any, tm time.Time) Event {
		return Event{V: 1, ID: "01M81B5KP4KN9DZNWV9NV456V1", Kind: KindAction, Conversation: "c-42",
			Agent: "coder-1", Time: tm, Data: data, Extra: extra}
	}
	variants := []Event{
		build(map[string]any{"tool": "bash", "args": map[string]any{"timeout": int64(120), "command": "ls"}, "n": 1.0}, map[string]any{"z": "last", "a": "first"}, when),
		build(map[string]any{"n": 1, "args": map[string]any{"command": "ls", "timeout": 120}, "tool": "bash"}, map[string]any{"a": "first", "z": "last"}, when),
		build(map[string]any{"args": map[string]any{"command": []byte("ls"), "timeout": uint8(120)}, "tool": "bash", "n": int32(1)}, map[string]any{"a": "first", "z": "last"}, when.In(time.FixedZone("CET", 3600))),
		mustDecodeJSON(t, `{"z":"last","data":{"n":1.0,"tool":"bash","args":{"timeout":1.2e2,"command":"ls"}},"a":"first","time":"2026-11-22T11:00:02.500+01:00","agent":"coder-1","conversation":"c-42","kind":"action","id":"01M81B5KP4KN9DZNWV9NV456V1","v":1}`),
	}
	want := mustMsgpack(t, variants[0])
	wantJSON := `{"a":"first","agent":"coder-1","conversation":"c-42","data":{"args":{"command":"ls","timeout":120},"n":1,"tool":"bash"},"id":"01M81B5KP4KN9DZNWV9NV456V1","kind":"action","time":"2026-11-22T10:00:02.5Z","v":1,"z":"last"}`
	for i, ev := range variants {
		if got := mustMsgpack(t, ev); !bytes.Equal(got, want) {
			t.Errorf("variant %d encodes to\n%x, want\n%x", i, got, want)
		}
		if got := string(mustJSON(t, ev)); got != wantJSON {
			t.Errorf("variant %d JSON\n%s, want\n%s", i, got, wantJSON)
		}
	}
	// Encoding never changes the caller's event.
	ev := variants[2]
	before := ev.Data["args"].(map[string]any)["timeout"]
	_ = mustMsgpack(t, ev)
	_ = mustJSON(t, ev)
	if after := ev.Data["args"].(map[string]any)["timeout"]; after != before {
		t.Errorf("encoding changed Data: %#v → %#v", before, after)
	}
	// Compact integers: 120 is one byte, the key order is sorted.
	if !bytes.Contains(want, []byte("\xa7timeout\x78")) {
		t.Errorf("120 is not encoded as a positive fixint in %x", want)
	}
	if i, j := bytes.Index(want, []byte("\xa5agent")), bytes.Index(want, []byte("\xa4kind")); i < 0 || j < 0 || i > j {
		t.Errorf("keys are not sorted in %x", want)
	}
}

// TestNormalizedValues: the values a decoder returns, from either format.
func TestNormalizedValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string // the value of data.x in JSON
		mp   any    // the same value as a producer's msgpack might carry it
		want any
	}{
		{"small int", `7`, uint8(7), int64(7)},
		{"negative int", `-7`, int8(-7), int64(-7)},
		{"max int64", `9223372036854775807`, int64(math.MaxInt64), int64(math.MaxInt64)},
		{"beyond int64", `18446744073709551615`, uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{"integral float", `1.0`, 1.0, int64(1)},
		{"integral float32", `2`, float32(2), int64(2)},
		{"exponent", `1e2`, 100.0, int64(100)},
		{"negative zero", `-0.0`, math.Copysign(0, -1), int64(0)},
		{"fraction", `0.1`, 0.1, 0.1},
		{"2^63 as a float", `9223372036854775808.0`, 9223372036854775808.0, uint64(1 << 63)},
		{"-2^63 as a float", `-9223372036854775808.0`, -9223372036854775808.0, int64(math.MinInt64)},
		{"huge float", `1e300`, 1e300, 1e300},
		{"2^64 as a float", `18446744073709551616`, 18446744073709551616.0, 18446744073709551616.0},
		{"NaN (msgpack only)", `null`, math.NaN(), nil},
		{"infinity (msgpack only)", `null`, math.Inf(-1), nil},
		{"binary as text", `"ls"`, []byte("ls"), "ls"},
		{"invalid UTF-8", `"a\ufffd\ufffdb"`, "a\xff\xfeb", "a\ufffd\ufffdb"},
		{"time as a timestamp", `"2026-11-22T10:00:00Z"`, time.Date(2026, 11, 22, 11, 0, 0, 0, time.FixedZone("", 3600)), "2026-11-22T10:00:00Z"},
		{"nested", `{"a":[1,1.5,"\ufffd"]}`, map[string]any{"a": []any{uint16(1), float32(1.5), "\xff"}}, map[string]any{"a": []any{int64(1), 1.5, "\ufffd"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fromJSON, err := DecodeJSON([]byte(`{"v":1,"data":{"x":` + tt.json + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			fromMP, err := DecodeMsgpack(msgpackOf(t, map[string]any{"v": 1, "data": map[string]any{"x": tt.mp}}))
			if err != nil {
				t.Fatal(err)
			}
			for name, ev := range map[string]Event{"json": fromJSON, "msgpack": fromMP} {
				if got := ev.Data["x"]; !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: data.x = %#v (%T), want %#v (%T)", name, got, got, tt.want, tt.want)
				}
				checkCanonical(t, ev)
			}
			if !bytes.Equal(mustMsgpack(t, fromJSON), mustMsgpack(t, fromMP)) {
				t.Errorf("JSON and msgpack decode to different events")
			}
		})
	}
}

func TestInvalidUTF8Keys(t *testing.T) {
	t.Parallel()
	ev, err := DecodeMsgpack(msgpackOf(t, map[string]any{"v": 1, "data": map[string]any{"k\xff": 1}, "\xfeextra": 2}))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Data["k\ufffd"] != int64(1) || ev.Extra["\ufffdextra"] != int64(2) {
		t.Errorf("keys not made valid: data %#v extra %#v", ev.Data, ev.Extra)
	}
	checkCanonical(t, ev)
	// Two keys that become the same key: refused, never an arbitrary pick.
	b := msgpackOf(t, map[string]any{"v": 1, "data": map[string]any{"k\xff": 1, "k\xfe": 2}})
	_, err = DecodeMsgpack(b)
	checkDecodeError(t, err, b)
	b = msgpackOf(t, map[string]any{"v": 1, "data": map[string]any{"k\xff": 1, "k\ufffd": 2}})
	_, err = DecodeMsgpack(b)
	checkDecodeError(t, err, b)
}

func TestDecodeJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, reason string
	}{
		{"empty", ``, "EOF"},
		{"not JSON", `ls -la`, "invalid character"},
		{"truncated", `{"v":1,"data":{`, "unexpected EOF"},
		{"array", `[{"v":1}]`, "top level is an array"},
		{"string", `"event"`, "top level is a string"},
		{"null", `null`, "top level is null"},
		{"trailing object", `{} {}`, "trailing data"},
		{"trailing brace", `{} }`, "trailing data"},
		{"trailing bracket", `{}]`, "trailing data"},
		{"v string", `{"v":"1"}`, `"v"`},
		{"v negative", `{"v":-1}`, `"v"`},
		{"v fraction", `{"v":1.5}`, `"v"`},
		{"v huge", `{"v":18446744073709551615}`, `"v"`},
		{"v null", `{"v":null}`, `"v"`},
		{"id number", `{"v":1,"id":7}`, `"id"`},
		{"id null", `{"v":1,"id":null}`, `"id"`},
		{"kind object", `{"v":1,"kind":{}}`, `"kind"`},
		{"conversation number", `{"v":1,"conversation":42}`, `"conversation"`},
		{"agent null", `{"v":1,"agent":null}`, `"agent"`},
		{"time number", `{"v":1,"time":1732269600}`, `"time"`},
		{"time not RFC 3339", `{"v":1,"time":"22/11/2026"}`, `"time"`},
		{"time date only", `{"v":1,"time":"2026-11-22"}`, `"time"`},
		{"time beyond 9999 in UTC", `{"v":1,"time":"9999-12-31T23:59:59-23:59"}`, `"time"`},
		{"data string", `{"v":1,"data":"ls"}`, `"data"`},
		{"data null", `{"v":1,"data":null}`, `"data"`},
		{"data array", `{"v":1,"data":[]}`, `"data"`},
		{"redactions object", `{"v":1,"redactions":{}}`, `"redactions"`},
		{"redactions null", `{"v":1,"redactions":null}`, `"redactions"`},
		{"redaction not an object", `{"v":1,"redactions":["x"]}`, `"redactions"`},
		{"redaction negative start", `{"v":1,"redactions":[{"rule":"r","start":-1}]}`, `"redactions"`},
		{"redaction rule number", `{"v":1,"redactions":[{"rule":1}]}`, `"redactions"`},
		{"number out of range", `{"v":1,"data":{"x":1e400}}`, "out of range"},
		{"too deep", `{"v":1,"data":{"x":` + strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth) + `}}`, "nested deeper"},
		{"OpenHands with a non-string conversation", `{"kind":"ActionEvent","conversation":1}`, `"conversation"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeJSON([]byte(tt.body))
			if err == nil {
				t.Fatal("decoded, want an error")
			}
			checkDecodeError(t, err, []byte(tt.body))
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
			var ev Event
			if err := json.Unmarshal([]byte(tt.body), &ev); err == nil {
				t.Error("json.Unmarshal into Event accepted it")
			}
		})
	}
}

func TestDecodeJSONDepthLimit(t *testing.T) {
	t.Parallel()
	// data is level 1, so MaxDepth-1 nested arrays inside it are fine.
	ok := `{"v":1,"data":{"x":` + strings.Repeat(`[`, MaxDepth-1) + strings.Repeat(`]`, MaxDepth-1) + `}}`
	ev, err := DecodeJSON([]byte(ok))
	if err != nil {
		t.Fatalf("depth %d refused: %v", MaxDepth, err)
	}
	checkCanonical(t, ev)
	// encoding/json's own limit is far deeper; ours refuses cleanly.
	deep := strings.Repeat(`[`, 100000) + strings.Repeat(`]`, 100000)
	_, err = DecodeJSON([]byte(`{"data":` + deep + `}`))
	checkDecodeError(t, err, nil)
}

func TestDecodeMsgpackErrors(t *testing.T) {
	t.Parallel()
	valid := mustMsgpack(t, mustDecodeJSON(t, baseAction))
	tests := []struct {
		name   string
		body   []byte
		reason string
	}{
		{"empty", nil, "truncated"},
		{"truncated", valid[:len(valid)-3], "truncated"},
		{"trailing data", append(append([]byte{}, valid...), 0xc0), "trailing data"},
		{"never-used code", []byte{0xc1}, "invalid msgpack code"},
		{"array", msgpackOf(t, []any{1}), "want a map"},
		{"string", msgpackOf(t, "x"), "want a map"},
		{"nil", []byte{0xc0}, "want a map"},
		{"integer key", []byte{0x81, 0x01, 0x02}, "not a string"},
		{"array key", []byte{0x81, 0x90, 0x02}, "not a string"},
		{"array32 of 2^32-1", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, "declares 4294967295 items"},
		{"map32 of 2^32-1", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, "items but only"},
		{"map16 longer than the body", []byte{0xde, 0xff, 0xff, 0xa1, 'a'}, "items but only"},
		{"str32 longer than the body", []byte{0x81, 0xa1, 'a', 0xdb, 0x7f, 0xff, 0xff, 0xff, 'x'}, "truncated"},
		{"bin8 truncated", []byte{0x81, 0xa1, 'a', 0xc4, 0x05, 'x'}, "truncated"},
		{"unknown extension", []byte{0x81, 0xa1, 'a', 0xd4, 0x05, 0x00}, "extension"},
		{"timestamp of a bad length", []byte{0x81, 0xa1, 'a', 0xd5, 0xff, 0, 0}, "extension"},
		{"too deep", append(bytes.Repeat([]byte{0x81, 0xa1, 'a'}, MaxDepth+2), 0xc0), "nested deeper"},
		{"very deep", append(bytes.Repeat([]byte{0x91}, 1_000_000), 0xc0), "nested deeper"},
		{"v string", msgpackOf(t, map[string]any{"v": "1"}), `"v"`},
		{"time number", msgpackOf(t, map[string]any{"v": 1, "time": 5}), `"time"`},
		{"timestamp year 10000", []byte{0x81, 0xa4, 't', 'i', 'm', 'e', 0xc7, 12, 0xff, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x3a, 0xff, 0xf4, 0x41, 0x80}, `"time"`},
		{"colliding keys", msgpackOf(t, map[string]any{"\xff": 1, "\xfe": 2}), "valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeMsgpack(tt.body)
			if err == nil {
				t.Fatal("decoded, want an error")
			}
			checkDecodeError(t, err, tt.body)
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
			// msgpack.Unmarshal itself reads nil as the zero value and
			// stops after the first value; otherwise it must refuse too.
			var ev Event
			// (The library walks the whole value before handing it over,
			// recursively: untrusted bodies go to DecodeMsgpack.)
			if len(tt.body) > 1<<16 {
				return
			}
			if err := msgpack.Unmarshal(tt.body, &ev); err == nil && tt.name != "nil" && tt.name != "trailing data" {
				t.Error("msgpack.Unmarshal into Event accepted it")
			}
		})
	}
}

// TestHostileBodiesAreCheap: a tiny body may not make the decoder allocate
// more than a small multiple of its size (it once asked for 64 GiB).
func TestHostileBodiesAreCheap(t *testing.T) {
	for _, b := range hostileMsgpack {
		allocs := testing.AllocsPerRun(3, func() { _, _ = DecodeMsgpack(b) })
		if allocs > 10_000 {
			t.Errorf("%d-byte body: %v allocations", len(b), allocs)
		}
	}
	for _, b := range [][]byte{{0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdf, 0xff, 0xff, 0xff, 0xff}, {0xdc, 0xff, 0xff}} {
		var before, after runtimeMem
		before.read()
		for range 100 {
			_, _ = DecodeMsgpack(b)
			_, _ = DecodeMsgpackArray(b)
			_, _ = DecodeDerived(b)
		}
		after.read()
		if grew := after.total - before.total; grew > 1<<20 {
			t.Errorf("body %x: decoding it 300 times allocated %d bytes", b, grew)
		}
	}
}

func TestDecodeMsgpackArray(t *testing.T) {
	t.Parallel()
	a := mustMsgpack(t, mustDecodeJSON(t, baseAction))
	b := mustMsgpack(t, mustDecodeJSON(t, `{"v":1,"id":"m1","kind":"message","conversation":"c-42","time":"2026-11-22T10:00:00Z","data":{"role":"user","content":"hi"}}`))
	batch := append(append([]byte{0x92}, a...), b...)
	evs, err := DecodeMsgpackArray(batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Kind != KindAction || evs[1].Kind != KindMessage {
		t.Fatalf("got %d events: %+v", len(evs), evs)
	}
	for i, ev := range evs {
		one, err := DecodeMsgpack([][]byte{a, b}[i])
		if err != nil || !reflect.DeepEqual(one, ev) {
			t.Errorf("batch item %d differs from decoding it alone (%v)", i, err)
		}
	}
	if evs, err := DecodeMsgpackArray([]byte{0x90}); err != nil || len(evs) != 0 {
		t.Errorf("empty batch: %v, %v", evs, err)
	}
	tests := []struct {
		name   string
		body   []byte
		reason string
	}{
		{"not an array", a, "want an array"},
		{"item not a map", append(append([]byte{0x92}, a...), 0x01), "batch item 1 is a number"},
		{"bad item", append(append([]byte{0x92}, a...), msgpackOf(t, map[string]any{"v": "x"})...), "batch item 1"},
		{"trailing data", append(append([]byte{0x91}, a...), 0xc0), "trailing data"},
		{"lying length", []byte{0xdd, 0x00, 0x10, 0x00, 0x00, 0x80}, "declares"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeMsgpackArray(tt.body)
			if err == nil {
				t.Fatal("decoded, want an error")
			}
			checkDecodeError(t, err, tt.body)
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not say %q", err, tt.reason)
			}
		})
	}
}

// TestLibraryInterfaces: msgpack and encoding/json reach the same codec
// through Marshal/Unmarshal, for values, pointers and nested events.
func TestLibraryInterfaces(t *testing.T) {
	t.Parallel()
	ev := mustDecodeJSON(t, baseAction)
	want := mustMsgpack(t, ev)
	for name, v := range map[string]any{"value": ev, "pointer": &ev} {
		got, err := msgpack.Marshal(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("msgpack.Marshal(%s) = %x, %v; want the canonical bytes", name, got, err)
		}
		js, err := json.Marshal(v)
		if err != nil || !bytes.Equal(js, mustJSON(t, ev)) {
			t.Errorf("json.Marshal(%s) = %s, %v", name, js, err)
		}
	}
	var back Event
	if err := msgpack.Unmarshal(want, &back); err != nil || !reflect.DeepEqual(back, ev) {
		t.Errorf("msgpack.Unmarshal: %v\n%+v", err, back)
	}
	back = Event{}
	if err := json.Unmarshal(mustJSON(t, ev), &back); err != nil || !reflect.DeepEqual(back, ev) {
		t.Errorf("json.Unmarshal: %v\n%+v", err, back)
	}
	// Nested in another value.
	type envelope struct {
		Events []Event `msgpack:"events" json:"events"`
	}
	b, err := msgpack.Marshal(envelope{Events: []Event{ev, ev}})
	if err != nil {
		t.Fatal(err)
	}
	var nested envelope
	if err := msgpack.Unmarshal(b, &nested); err != nil || len(nested.Events) != 2 || !reflect.DeepEqual(nested.Events[1], ev) {
		t.Errorf("nested msgpack: %v %+v", err, nested)
	}
	js, err := json.Marshal(envelope{Events: []Event{ev}})
	if err != nil {
		t.Fatal(err)
	}
	nested = envelope{}
	if err := json.Unmarshal(js, &nested); err != nil || !reflect.DeepEqual(nested.Events[0], ev) {
		t.Errorf("nested JSON: %v %+v", err, nested)
	}
}

func TestEncodeRefusesWhatCannotBeCanonical(t *testing.T) {
	t.Parallel()
	deep := any("x")
	for range MaxDepth + 1 {
		deep = []any{deep}
	}
	for name, ev := range map[string]Event{
		"too deep":        {V: 1, ID: "x", Data: map[string]any{"x": deep}},
		"colliding keys":  {V: 1, ID: "x", Data: map[string]any{"k\xff": 1, "k\xfe": 2}},
		"colliding extra": {V: 1, ID: "x", Extra: map[string]any{"\xff": 1, "\ufffd": 2}},
	} {
		if _, err := ev.MarshalMsgpack(); err == nil {
			t.Errorf("%s: MarshalMsgpack succeeded", name)
		}
		if _, err := ev.MarshalJSON(); err == nil {
			t.Errorf("%s: MarshalJSON succeeded", name)
		}
	}
	// Values JSON cannot carry are written as null, in both formats.
	ev := Event{V: 1, ID: "x", Data: map[string]any{"nan": math.NaN(), "inf": math.Inf(1)}}
	back, err := DecodeMsgpack(mustMsgpack(t, ev))
	if err != nil || back.Data["nan"] != nil || back.Data["inf"] != nil {
		t.Errorf("NaN and Inf: %v %#v", err, back.Data)
	}
	if got := string(mustJSON(t, ev)); !strings.Contains(got, `"data":{"inf":null,"nan":null}`) {
		t.Errorf("JSON: %s", got)
	}
}

func TestTimes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z"},
		{"2026-11-22T11:00:00+01:00", "2026-11-22T10:00:00Z"},
		{"2026-11-22t10:00:00z", "2026-11-22T10:00:00Z"},
		{"2026-11-22T10:00:00.500000Z", "2026-11-22T10:00:00.5Z"},
		{"2026-11-22T10:00:00.123456789-00:30", "2026-11-22T10:30:00.123456789Z"},
		{"0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		ev := mustDecodeJSON(t, `{"v":1,"time":"`+tt.in+`"}`)
		if got := ev.Time.Format(time.RFC3339Nano); got != tt.want {
			t.Errorf("time %s decodes as %s, want %s", tt.in, got, tt.want)
		}
		if ev.Time.Location() != time.UTC {
			t.Errorf("time %s is in %v, want UTC", tt.in, ev.Time.Location())
		}
		if js := string(mustJSON(t, ev)); !strings.Contains(js, `"time":"`+tt.want+`"`) {
			t.Errorf("time %s encodes as %s", tt.in, js)
		}
		checkCanonical(t, ev)
	}
	// No time: none written, and Validate says so.
	ev := mustDecodeJSON(t, `{"v":1}`)
	if !ev.Time.IsZero() || strings.Contains(string(mustJSON(t, ev)), "time") {
		t.Errorf("absent time: %v %s", ev.Time, mustJSON(t, ev))
	}
}

func TestDecodeErrorIsTyped(t *testing.T) {
	t.Parallel()
	_, err := DecodeJSON([]byte(`{"v":1,"id":"01J","kind":"action","data":"AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`))
	var de *DecodeError
	if !errors.As(err, &de) || de.Format != "json" {
		t.Fatalf("err = %#v", err)
	}
	if strings.Contains(err.Error(), "AKIA") || strings.Contains(err.Error(), "wJalr") {
		t.Errorf("the error repeats a secret from the body: %v", err)
	}
	if !errors.Is(err, ErrDecode) || errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is: ErrDecode %v, ErrInvalid %v", errors.Is(err, ErrDecode), errors.Is(err, ErrInvalid))
	}
}
