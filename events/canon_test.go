package events

import (
	"bytes"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// TestEncodeCanonicalMatchesLibrary: the hand-written canonical writer must
// give exactly the bytes of the library's sorted-keys encoding, or stored
// events and derived outputs would change under replay.
func TestEncodeCanonicalMatchesLibrary(t *testing.T) {
	values := []any{
		nil, "", "x", "üñí", true, false,
		int64(0), int64(1), int64(-1), int64(127), int64(128), int64(-33), int64(255), int64(65536), int64(math.MinInt64), int64(math.MaxInt64),
		uint64(math.MaxUint64), 1.5, 0.1, math.MaxFloat64, float64(3),
		[]byte{1, 2, 3},
		[]any{}, []any{"a", int64(2), nil, []any{true}},
		map[string]any{}, map[string]any{"b": int64(1), "a": "x", "c": map[string]any{"z": []any{}, "y": nil}},
		map[string]any{"zeta": map[string]any{"b": 1.25, "a": []any{map[string]any{"k": "v", "j": int64(-5)}}}, "alpha": false},
	}
	big := map[string]any{}
	for i := range 40 {
		big[string(rune('a'+i%26))+string(rune('A'+i/26))] = int64(i * 1000)
	}
	values = append(values, big)
	for i, v := range values {
		got, err := encodeCanonical(v)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetSortMapKeys(true)
		enc.UseCompactInts(true)
		enc.UseCompactFloats(true)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("value %d (%v): canonical % x, library % x", i, v, got, buf.Bytes())
		}
	}
}

// TestIsNormalMeansNormalizeIsIdentity: the encoders skip normalize when
// isNormal says so, which is only right if normalize would change nothing.
func TestIsNormalMeansNormalizeIsIdentity(t *testing.T) {
	values := []any{
		nil, "x", "bad \xff utf8", true, int64(3), uint64(3), uint64(math.MaxUint64), 1.5, 2.0, math.NaN(), int(4), float32(1.5),
		[]any{"a", int64(1)}, []any{"a", 1}, map[string]any{"k": "v", "n": map[string]any{"x": []any{1.25}}},
		map[string]any{"\xff": "key not UTF-8"}, map[string]any{"k": uint64(7)},
	}
	for i, v := range values {
		if !isNormal(v, 0) {
			continue
		}
		n, err := normalize(cloneValue(v), 0)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		a, _ := encodeCanonical(v)
		b, _ := encodeCanonical(n)
		if !bytes.Equal(a, b) {
			t.Errorf("value %d (%v) is called normal but normalize changes it", i, v)
		}
	}
	for i, want := range []bool{true, true, false, true, true, false, true, true, false, false, false, false,
		true, false, true, false, false} {
		if got := isNormal(values[i], 0); got != want {
			t.Errorf("isNormal(value %d = %#v) = %v, want %v", i, values[i], got, want)
		}
	}
}

// FuzzCanonicalMatchesLibrary: for any msgpack value, normalised, the
// hand-written canonical bytes are the library's sorted-keys, compact
// encoding of it.
func FuzzCanonicalMatchesLibrary(f *testing.F) {
	for _, v := range []any{nil, "x", int64(-33), uint64(math.MaxUint64), 1.5, math.Copysign(0, -1), math.Inf(1),
		[]any{"a", int64(70000), []any{}}, map[string]any{"b": int64(1), "a": map[string]any{"z": 2.25}}} {
		b, err := msgpack.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeMsgpackValue(b, MaxDepth) // bounded: no 4-GiB map from 5 bytes
		if err != nil {
			return
		}
		n, err := normalize(v, 0)
		if err != nil {
			return
		}
		got, err := encodeCanonical(n)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetSortMapKeys(true)
		enc.UseCompactInts(true)
		enc.UseCompactFloats(true)
		if err := writeCanonical(enc, n); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Fatalf("%#v: canonical % x, library % x", n, got, buf.Bytes())
		}
	})
}
