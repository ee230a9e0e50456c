package events

import (
	"bytes"
	"slices"

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
