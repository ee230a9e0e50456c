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
	return appendCanonical(make([]byte, 0, 256), v)
}

// appendCanonical appends v to dst as encodeCanonical encodes it, writing
// the bytes itself for the normalised types (nil, bool, string, int64,
// uint64, float64, map[string]any, []any) exactly as the library's
// sorted-keys, compact encoder does; any other value is encoded by the
// library (writeCanonical) and appended.
func appendCanonical(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, 0xc0), nil
	case bool:
		if x {
			return append(dst, 0xc3), nil
		}
		return append(dst, 0xc2), nil
	case string:
		return append(appendStrLen(dst, len(x)), x...), nil
	case int64:
		return appendInt(dst, x), nil
	case uint64:
		return appendUint(dst, x), nil
	case float64:
		if float64(int64(x)) == x {
			return appendInt(dst, int64(x)), nil
		}
		u := math.Float64bits(x)
		return append(dst, 0xcb, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u)), nil
	case map[string]any:
		var small [16]string // the keys of most maps, without an allocation
		keys := small[:0]
		if len(x) > len(small) {
			keys = make([]string, 0, len(x))
		}
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = appendLen(dst, len(keys), 0x80, 0xde)
		var err error
		for _, k := range keys {
			dst = append(appendStrLen(dst, len(k)), k...)
			if dst, err = appendCanonical(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case []any:
		dst = appendLen(dst, len(x), 0x90, 0xdc)
		var err error
		for _, e := range x {
			if dst, err = appendCanonical(dst, e); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(true)
	if err := writeCanonical(enc, v); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// appendStrLen appends a string header for n bytes (fixstr, str8, str16,
// str32).
func appendStrLen(dst []byte, n int) []byte {
	switch {
	case n < 32:
		return append(dst, 0xa0|byte(n))
	case n < 256:
		return append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xda, byte(n>>8), byte(n))
	}
	return append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// appendLen appends a map or array header for n entries: the fix form
// (fix|n) under 16, else the 16-bit (code16) or 32-bit (code16+1) one.
func appendLen(dst []byte, n int, fix, code16 byte) []byte {
	switch {
	case n < 16:
		return append(dst, fix|byte(n))
	case n <= math.MaxUint16:
		return append(dst, code16, byte(n>>8), byte(n))
	}
	return append(dst, code16+1, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// appendUint appends n in the smallest unsigned form (EncodeUint).
func appendUint(dst []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(dst, byte(n))
	case n <= math.MaxUint8:
		return append(dst, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(dst, 0xce, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, 0xcf, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// appendInt appends n in the smallest form (EncodeInt).
func appendInt(dst []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(dst, uint64(n))
	case n >= -32:
		return append(dst, byte(n))
	case n >= math.MinInt8:
		return append(dst, 0xd0, byte(n))
	case n >= math.MinInt16:
		return append(dst, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(dst, 0xd2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	u := uint64(n)
	return append(dst, 0xd3, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
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
