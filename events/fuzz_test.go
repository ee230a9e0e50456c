package events

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Fuzz targets for every decoder. Their seeds are the f.Add calls below
// and the corpus files in testdata/fuzz/<target>/ (generated from the
// golden examples; see TestFuzzSeedsUpToDate), and they run in every plain
// go test. Properties checked on every input:
//
//   - no panic, and a refused body is a *DecodeError;
//   - decode→encode→decode is stable: the same event gives the same bytes;
//   - the fast decoders agree with the msgpack library's path;
//   - the JSON and msgpack spellings agree;
//   - SecurityRisk never fails and gives the same answer after a round trip
//     (live and replay see the same hint).
//
// Run one for longer with, e.g.:
//
//	go test ./events -run '^$' -fuzz '^FuzzDecodeMsgpack$' -fuzztime 60s

// hostileMsgpack are bodies that once could crash or hang a decoder.
var hostileMsgpack = [][]byte{
	{},
	{0xc1},                              // never-used code
	{0xdd, 0xff, 0xff, 0xff, 0xff},      // array32 claiming 2^32-1 items: used to OOM the process
	{0xdf, 0x0f, 0xff, 0xff, 0xff},      // map32 claiming 2^28 pairs: same
	{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, // str32 longer than the body
	{0x81, 0x01, 0x02},                  // integer map key
	{0x81, 0xa1, 'v', 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1}, // v = NaN
	{0xd4, 0x05, 0x00}, // unknown extension
	{0x80, 0x80},       // trailing data
	append(bytes.Repeat([]byte{0x91}, 100000), 0xc0), // 100,000 nested arrays
	append(bytes.Repeat([]byte{0x81, 0xa1, 'a'}, 70), 0xc0),
	{0x82, 0xa1, 0xff, 0x01, 0xa1, 0xfe, 0x02},               // two keys that are both U+FFFD once valid
	{0x81, 0xa4, 't', 'i', 'm', 'e', 0xd6, 0xff, 0, 0, 0, 0}, // msgpack timestamp as time
}

func FuzzDecodeMsgpack(f *testing.F) {
	for _, b := range hostileMsgpack {
		f.Add(b)
	}
	for _, s := range jsonSeeds {
		if ev, err := DecodeJSON([]byte(s)); err == nil {
			if b, err := ev.MarshalMsgpack(); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeMsgpack(b)
		if err != nil {
			checkDecodeError(t, err, b)
			return
		}
		checkCanonical(t, ev)
		checkRiskStable(t, ev)
		checkEventEncoders(t, ev)
		_ = ev.Validate() // must not panic
	})
}

// checkEventEncoders: MarshalMsgpack's direct encoder writes what the
// envelope map's path writes, for ev and for ev with every envelope
// string set to awkward values.
func checkEventEncoders(t *testing.T, ev Event) {
	t.Helper()
	variants := []Event{ev}
	for _, s := range []string{"", "x", "\xff\xfe", strings.Repeat("é", 40), "ü\x80"} {
		v := ev
		v.Agent, v.Conversation, v.Origin = s, s, Origin(s)
		v.Redactions = append([]Redaction(nil), ev.Redactions...)
		v.Redactions = append(v.Redactions, Redaction{Rule: s, Path: s, Start: -1, End: 1 << 40})
		variants = append(variants, v)
	}
	for _, v := range variants {
		got, gerr := v.MarshalMsgpack()
		want, werr := v.marshalGeneric()
		if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("MarshalMsgpack of %+v:\n% x (%v)\nthe envelope map's path:\n% x (%v)", v, got, gerr, want, werr)
		}
	}
}

func FuzzDecodeMsgpackArray(f *testing.F) {
	f.Add([]byte{0x90})
	f.Add([]byte{0x91, 0x80})
	f.Add([]byte{0x92, 0x80, 0x01})
	for _, b := range hostileMsgpack {
		f.Add(append([]byte{0x91}, b...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := DecodeMsgpackArray(b)
		// The fast path gives what the library's path gives: the same
		// events or the same error.
		want, werr := slowDecodeMsgpackArray(b)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("% x: error %v, the library's path %v", b[:min(len(b), 40)], err, werr)
		}
		if !reflect.DeepEqual(evs, want) {
			t.Fatalf("% x: decoded\n%#v\nthe library's path\n%#v", b[:min(len(b), 40)], evs, want)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "batch item ") {
				checkDecodeError(t, err, b)
			}
			return
		}
		for _, ev := range evs {
			checkCanonical(t, ev)
		}
	})
}

// jsonSeeds cover each decoding rule once.
var jsonSeeds = []string{
	`{"v":1,"id":"01JD","kind":"action","conversation":"c-42","agent":"coder-1","time":"2026-11-22T10:00:00Z","data":{"tool":"bash","args":{"command":"ls -la"},"security_risk":"LOW","backend":"local"}}`,
	`{"id":"x","kind":"message","time":"2026-11-22T10:00:00Z","data":{"role":"user","content":"hi"}}`,
	`{"kind":"ActionEvent","id":"u","timestamp":"2026-11-22T10:00:00.5","tool_name":"execute_bash","tool_call":{"name":"execute_bash","arguments":"{\"command\":\"ls\",\"security_risk\":\"HIGH\"}"},"security_risk":"HIGH"}`,
	`{"kind":"ActionEvent","tool_call":{"arguments":"not json"}}`,
	`{"v":1,"unknown":{"nested":[1,2.5,"x",null,true]},"data":{"x":1.0,"y":-0.0,"z":1e300,"u":18446744073709551615}}`,
	`{"v":1,"time":"2026-11-22t10:00:00z","data":{"s":"\ud800 lone surrogate"}}`,
	`{"v":0}`, `{"v":-1}`, `{"v":"1"}`, `{"v":null}`, `{"data":null}`, `{"redactions":[{"rule":"r","start":1}]}`,
	`{} }`, `{}]`, `[]`, `null`, `1e400`, `{"a":1e400}`, `"`, ``,
	`{"v":1,"time":"9999-12-31T23:59:59-23:59"}`,
	strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70),
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeJSON(b)
		if err != nil {
			checkDecodeError(t, err, b)
			return
		}
		checkCanonical(t, ev)
		checkRiskStable(t, ev)
		_ = ev.Validate()
		for _, view := range eventViews {
			_, _ = view(&ev) // any view of any data: an error, never a panic
		}
	})
}

func FuzzDecodeDerived(f *testing.F) {
	for _, s := range derivedJSONSeeds {
		if d, err := DecodeDerivedJSON([]byte(s)); err == nil {
			if b, err := d.Marshal(); err == nil {
				f.Add(b)
			}
		}
	}
	for _, b := range hostileMsgpack {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeDerivedAgrees(t, b)
		d, err := DecodeDerived(b)
		if err != nil {
			checkDecodeError(t, err, b)
			return
		}
		checkDerivedCanonical(t, d)
		_ = d.Validate()
		for _, view := range derivedViews {
			_, _ = view(&d)
		}
	})
}

var derivedJSONSeeds = []string{
	`{"v":1,"id":"risk:4","kind":"risk.assessed","conversation":"c-42","seq":4,"time":"2026-11-22T10:00:00Z","data":{"action_id":"a","log_seq":4,"config_version":3,"level":"HIGH","reasons":[{"analyzer":"rules","rule":"rm","span":[0,5]}]}}`,
	`{"v":1,"id":"stats:1","kind":"stats","seq":18446744073709551615,"time":"x","data":{"counts":{"a":1}}}`,
	`{"seq":-1}`, `{"seq":null}`, `{"v":1.5}`, `{"data":[1,2]}`,
}

func FuzzDecodeDerivedJSON(f *testing.F) {
	for _, s := range append(derivedJSONSeeds, jsonSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDerivedJSON(b)
		if err != nil {
			checkDecodeError(t, err, b)
			return
		}
		checkDerivedCanonical(t, d)
		_ = d.Validate()
	})
}

func FuzzNormalizeRisk(f *testing.F) {
	for _, s := range []string{"LOW", "low", " Medium ", "HIGH", "high\n", "UNKNOWN", "SecurityRisk.HIGH",
		"ActionSecurityRisk.medium", "2", "-1", "+1", "3", "", "hıgh", "ＨＩＧＨ", "\xff"} {
		f.Add(s, int64(0), 0.0)
	}
	for _, n := range []int64{-2, -1, 0, 1, 2, 3, math.MaxInt64, math.MinInt64} {
		f.Add("", n, float64(n))
	}
	for _, x := range []float64{1.5, 2.0000001, math.NaN(), math.Inf(1), math.Copysign(0, -1), 1e300, -1e300} {
		f.Add("", int64(0), x)
	}
	f.Fuzz(func(t *testing.T, s string, n int64, x float64) {
		for _, v := range []any{s, n, x, float32(x), json.Number(s), []byte(s), nil} {
			r := NormalizeRisk(v)
			if !r.Valid() {
				t.Fatalf("NormalizeRisk(%#v) = %q, not a level", v, r)
			}
			if again := NormalizeRisk(string(r)); again != r {
				t.Fatalf("NormalizeRisk is not idempotent on %#v: %q then %q", v, r, again)
			}
		}
		// Case never matters.
		if lo, up := NormalizeRisk(asciiCase(s, false)), NormalizeRisk(asciiCase(s, true)); lo != up {
			t.Fatalf("NormalizeRisk(%q) depends on case: %q vs %q", s, lo, up)
		}
		// An integer means the same in every spelling.
		want := NormalizeRisk(n)
		for _, v := range []any{strconv.FormatInt(n, 10), json.Number(strconv.FormatInt(n, 10))} {
			if got := NormalizeRisk(v); got != want {
				t.Fatalf("NormalizeRisk(%#v) = %q, want %q as for int64 %d", v, got, want, n)
			}
		}
		if n >= -1<<52 && n <= 1<<52 {
			if got := NormalizeRisk(float64(n)); got != want {
				t.Fatalf("NormalizeRisk(float64(%d)) = %q, want %q", n, got, want)
			}
		}
		if n >= 0 {
			if got := NormalizeRisk(uint64(n)); got != want {
				t.Fatalf("NormalizeRisk(uint64(%d)) = %q, want %q", n, got, want)
			}
		}
	})
}

func asciiCase(s string, upper bool) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case upper && c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// FuzzSecurityRisk treats its input as the JSON data of an action and puts
// it everywhere producers have put a hint.
func FuzzSecurityRisk(f *testing.F) {
	for _, s := range []string{
		`{"security_risk":"HIGH"}`, `{"SECURITY_RISK":2}`, `{"Security_Risk":null,"security_RISK":"low"}`,
		`{"args":{"security_risk":"medium"}}`, `{"args":{"raw_arguments":"{\"security_risk\":1}"}}`,
		`{"arguments":"{\"command\":\"ls\",\"security_risk\":\"HIGH\"}"}`, `{"tool_input":{"security_risk":-1}}`,
		`{"input":"security_risk"}`, `{"security_risk":null,"args":{"security_risk":"HIGH"}}`,
		`{"security_risk":"LOW","args":{"security_risk":"HIGH"}}`, `{"security_risk":{"level":"HIGH"}}`,
		`{"security_risk":1.5}`, `{"security_risk":true}`, `{"args":"{\"security_risk\":[2]}"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeJSONValue(b)
		if err != nil {
			return
		}
		data, ok := v.(map[string]any)
		if !ok {
			data = map[string]any{"security_risk": v, "args": map[string]any{"security_risk": v}, "arguments": string(b)}
		}
		ev := Event{V: 1, ID: "x", Kind: KindAction, Data: data}
		level, raw, found := ev.SecurityRisk()
		if !level.Valid() {
			t.Fatalf("level %q is not a level", level)
		}
		if !found && (level != RiskUnknown || raw != nil) {
			t.Fatalf("no hint found, but SecurityRisk() = %q, %#v", level, raw)
		}
		if found && NormalizeRisk(raw) != level {
			t.Fatalf("level %q is not NormalizeRisk(raw %#v) = %q", level, raw, NormalizeRisk(raw))
		}
		// A hint in data is never lowered by the others.
		if d, ok := lookupFold(data, "security_risk"); ok && NormalizeRisk(d).Rank() > level.Rank() {
			t.Fatalf("data hint %#v ranks above the answer %q", d, level)
		}
		checkRiskStable(t, ev)
	})
}

// checkRiskStable asserts SecurityRisk is deterministic and survives a
// canonical round trip, so a fold sees the same hint live and on replay.
func checkRiskStable(t testing.TB, ev Event) {
	t.Helper()
	l1, r1, f1 := ev.SecurityRisk()
	for range 3 {
		if l, r, f := ev.SecurityRisk(); l != l1 || !sameValue(r, r1) || f != f1 {
			t.Fatalf("SecurityRisk is not deterministic: %q %#v %v then %q %#v %v", l1, r1, f1, l, r, f)
		}
	}
	b, err := ev.MarshalMsgpack()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	ev2, err := DecodeMsgpack(b)
	if err != nil {
		// Not a decodable event (e.g. built by the fuzzer around odd data).
		return
	}
	if l, _, f := ev2.SecurityRisk(); l != l1 || f != f1 {
		t.Fatalf("SecurityRisk changed across a round trip: %q %v then %q %v", l1, f1, l, f)
	}
}

func sameValue(a, b any) bool {
	ja, err1 := json.Marshal(jsonSafe(a))
	jb, err2 := json.Marshal(jsonSafe(b))
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// slowDecodeMsgpackArray is DecodeMsgpackArray without its fast path.
func slowDecodeMsgpackArray(b []byte) ([]Event, error) {
	v, err := decodeMsgpackValue(b, MaxDepth+1)
	if err != nil {
		return nil, err
	}
	return eventsOf(v, true)
}

// BenchmarkDecodeMsgpackArray decodes a batch of 100 actions, as ingest
// does, through the fast path and the library's.
func BenchmarkDecodeMsgpackArray(b *testing.B) {
	ev, err := DecodeJSON([]byte(jsonSeeds[0]))
	if err != nil {
		b.Fatal(err)
	}
	one, err := ev.MarshalMsgpack()
	if err != nil {
		b.Fatal(err)
	}
	batch := append([]byte{0xdc, 0, 100}, bytes.Repeat(one, 100)...)
	for _, c := range []struct {
		name string
		f    func([]byte) ([]Event, error)
	}{{"Fast", DecodeMsgpackArray}, {"Library", slowDecodeMsgpackArray}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.f(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEventMarshal encodes an action as ingest stores it, directly
// and by way of the envelope map.
func BenchmarkEventMarshal(b *testing.B) {
	ev, err := DecodeJSON([]byte(jsonSeeds[0]))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func() ([]byte, error)
	}{{"Direct", ev.MarshalMsgpack}, {"Map", ev.marshalGeneric}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
