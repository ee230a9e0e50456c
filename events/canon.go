package events

import (
	"bytes"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// encodeCanonical writes a normalised value (what normalize returns) as
// canonical msgpack: map keys sorted, compact integers and floats. It
// produces the same bytes as the library's SetSortMapKeys encoding, without
// its reflection, which made it the most expensive step of writing an event.
// Values of other types fall back to the library encoder.
func encodeCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(true)
	if err := writeCanonical(enc, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(enc *msgpack.Encoder, v any) error {
	switch x := v.(type) {
	case nil:
		return enc.EncodeNil()
	case string:
		return enc.EncodeString(x)
	case bool:
		return enc.EncodeBool(x)
	case int64:
		return enc.EncodeInt(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if err := enc.EncodeMapLen(len(keys)); err != nil {
			return err
		}
		for _, k := range keys {
			if err := enc.EncodeString(k); err != nil {
				return err
			}
			if err := writeCanonical(enc, x[k]); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if err := enc.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, e := range x {
			if err := writeCanonical(enc, e); err != nil {
				return err
			}
		}
		return nil
	default:
		return enc.Encode(x)
	}
}

// isNormal reports whether normalize would return v unchanged: then an
// encoder can skip the defensive copy and the normalising pass. Every event
// a decoder returns is normal, so the hot paths (ingest re-encoding, the
// drivers) take this shortcut; anything unusual takes the full path.
func isNormal(v any, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return utf8.ValidString(x)
	case uint64:
		return x > math.MaxInt64
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0) && x != math.Trunc(x)
	case map[string]any:
		for k, vv := range x {
			if !utf8.ValidString(k) || !isNormal(vv, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, vv := range x {
			if !isNormal(vv, depth+1) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
