package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// ErrDecode is wrapped by every decoding error.
var ErrDecode = errors.New("events: cannot decode")

// DecodeError says why a body could not be decoded. It never holds the body.
type DecodeError struct {
	Format string // "msgpack" or "json"
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("events: cannot decode %s body: %s", e.Format, e.Reason)
}

// Unwrap makes errors.Is(err, ErrDecode) true.
func (e *DecodeError) Unwrap() error { return ErrDecode }

// MaxDepth bounds the nesting of decoded values, so a hostile body cannot
// exhaust the stack of anything that walks an event.
const MaxDepth = 64

// envelope keys, in the canonical (sorted) order the encoders write them.
var knownKeys = map[string]bool{
	"agent": true, "conversation": true, "data": true, "id": true,
	"kind": true, "redactions": true, "time": true, "v": true,
}

// toMap renders the event as a generic map with canonical values.
func (e *Event) toMap() map[string]any {
	m := make(map[string]any, 8+len(e.Extra))
	for k, v := range e.Extra {
		if !knownKeys[k] {
			m[k] = v
		}
	}
	m["v"] = int64(e.V)
	m["id"] = e.ID
	m["kind"] = string(e.Kind)
	if e.Conversation != "" {
		m["conversation"] = e.Conversation
	}
	if e.Agent != "" {
		m["agent"] = e.Agent
	}
	if !e.Time.IsZero() {
		m["time"] = e.Time.UTC().Format(time.RFC3339Nano)
	}
	if e.Data != nil {
		m["data"] = e.Data
	} else {
		m["data"] = map[string]any{}
	}
	if len(e.Redactions) > 0 {
		rs := make([]any, len(e.Redactions))
		for i, r := range e.Redactions {
			rs[i] = map[string]any{"rule": r.Rule, "path": r.Path, "start": int64(r.Start), "end": int64(r.End)}
		}
		m["redactions"] = rs
	}
	return m
}

// MarshalMsgpack encodes e canonically: map keys sorted at every level, so
// the same event always gives the same bytes.
func (e *Event) MarshalMsgpack() ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(true)
	if err := enc.Encode(e.toMap()); err != nil {
		return nil, fmt.Errorf("events: encode %s: %w", e.ID, err)
	}
	return buf.Bytes(), nil
}

// MarshalJSON encodes e as its JSON spelling (keys sorted, time RFC 3339).
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonSafe(e.toMap()))
}

// jsonSafe converts values JSON cannot carry as they are ([]byte, NaN).
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			out[k] = jsonSafe(vv)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = jsonSafe(x[i])
		}
		return out
	case []byte:
		return string(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil
		}
		return x
	default:
		return v
	}
}

// UnmarshalJSON decodes the JSON spelling of an event, upcasting older shapes.
func (e *Event) UnmarshalJSON(b []byte) error {
	ev, err := DecodeJSON(b)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

// DecodeMsgpack decodes one msgpack-encoded event and upcasts it.
func DecodeMsgpack(b []byte) (ev Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &DecodeError{Format: "msgpack", Reason: "malformed body"}
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	v, err := dec.DecodeInterface()
	if err != nil {
		return Event{}, &DecodeError{Format: "msgpack", Reason: trimErr(err)}
	}
	if _, err := dec.PeekCode(); err == nil {
		return Event{}, &DecodeError{Format: "msgpack", Reason: "trailing data after the event"}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Event{}, &DecodeError{Format: "msgpack", Reason: fmt.Sprintf("top level is %s, want a map", typeName(v))}
	}
	n, err := normalize(m, 0)
	if err != nil {
		return Event{}, &DecodeError{Format: "msgpack", Reason: err.Error()}
	}
	return fromMap(n.(map[string]any), "msgpack")
}

// DecodeMsgpackArray decodes a msgpack array of events (a batch).
func DecodeMsgpackArray(b []byte) (evs []Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &DecodeError{Format: "msgpack", Reason: "malformed body"}
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	v, err := dec.DecodeInterface()
	if err != nil {
		return nil, &DecodeError{Format: "msgpack", Reason: trimErr(err)}
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, &DecodeError{Format: "msgpack", Reason: fmt.Sprintf("batch is %s, want an array", typeName(v))}
	}
	out := make([]Event, 0, len(arr))
	for i, item := range arr {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, &DecodeError{Format: "msgpack", Reason: fmt.Sprintf("batch item %d is %s, want a map", i, typeName(item))}
		}
		n, err := normalize(m, 0)
		if err != nil {
			return nil, &DecodeError{Format: "msgpack", Reason: fmt.Sprintf("batch item %d: %v", i, err)}
		}
		ev, err := fromMap(n.(map[string]any), "msgpack")
		if err != nil {
			return nil, fmt.Errorf("batch item %d: %w", i, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// DecodeJSON decodes one JSON event and upcasts it.
func DecodeJSON(b []byte) (Event, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Event{}, &DecodeError{Format: "json", Reason: trimErr(err)}
	}
	if dec.More() {
		return Event{}, &DecodeError{Format: "json", Reason: "trailing data after the event (send a batch as JSON lines)"}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Event{}, &DecodeError{Format: "json", Reason: fmt.Sprintf("top level is %s, want an object", typeName(v))}
	}
	n, err := normalize(m, 0)
	if err != nil {
		return Event{}, &DecodeError{Format: "json", Reason: err.Error()}
	}
	return fromMap(n.(map[string]any), "json")
}

// DecodeJSONValue decodes a JSON value with numbers normalised as DecodeJSON
// does; for arguments that producers send as a JSON string.
func DecodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &DecodeError{Format: "json", Reason: trimErr(err)}
	}
	return normalize(v, 0)
}

func trimErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a map"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, uint64, float64, float32, json.Number:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// normalize makes decoded values canonical: integers become int64 (uint64
// only beyond int64), json.Number becomes int64 or float64, maps with
// non-string keys get string keys, and depth is bounded.
func normalize(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", MaxDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			n, err := normalize(vv, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			n, err := normalize(vv, depth+1)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = n
		}
		return out, nil
	case []any:
		for i := range x {
			n, err := normalize(x[i], depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, fmt.Errorf("number %q out of range", string(x))
		}
		return f, nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
		return x, nil
	case float32:
		return float64(x), nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), nil
	default:
		return v, nil
	}
}

// fromMap extracts the envelope from a normalised map and upcasts it.
func fromMap(m map[string]any, format string) (Event, error) {
	m = upcast(m)
	var ev Event
	bad := func(field, want string) (Event, error) {
		return Event{}, &DecodeError{Format: format, Reason: fmt.Sprintf("field %q must be %s", field, want)}
	}
	switch v := m["v"].(type) {
	case int64:
		if v < 0 || v > 1<<20 {
			return bad("v", "a small non-negative integer")
		}
		ev.V = int(v)
	case nil:
	default:
		return bad("v", "an integer")
	}
	var ok bool
	if ev.ID, ok = optString(m["id"]); !ok {
		return bad("id", "a string")
	}
	k, ok := optString(m["kind"])
	if !ok {
		return bad("kind", "a string")
	}
	ev.Kind = Kind(k)
	if ev.Conversation, ok = optString(m["conversation"]); !ok {
		return bad("conversation", "a string")
	}
	if ev.Agent, ok = optString(m["agent"]); !ok {
		return bad("agent", "a string")
	}
	ts, ok := optString(m["time"])
	if !ok {
		return bad("time", "an RFC 3339 string")
	}
	if ts != "" {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return bad("time", "an RFC 3339 time such as 2026-11-22T10:00:00Z")
		}
		ev.Time = t.UTC()
	}
	switch d := m["data"].(type) {
	case map[string]any:
		ev.Data = d
	case nil:
		ev.Data = map[string]any{}
	default:
		return bad("data", "an object")
	}
	switch rs := m["redactions"].(type) {
	case nil:
	case []any:
		for _, r := range rs {
			rm, ok := r.(map[string]any)
			if !ok {
				return bad("redactions", "a list of objects")
			}
			rule, _ := rm["rule"].(string)
			path, _ := rm["path"].(string)
			start, _ := rm["start"].(int64)
			end, _ := rm["end"].(int64)
			ev.Redactions = append(ev.Redactions, Redaction{Rule: rule, Path: path, Start: int(start), End: int(end)})
		}
	default:
		return bad("redactions", "a list")
	}
	for key, v := range m {
		if !knownKeys[key] {
			if ev.Extra == nil {
				ev.Extra = map[string]any{}
			}
			ev.Extra[key] = v
		}
	}
	return ev, nil
}

func optString(v any) (string, bool) {
	switch s := v.(type) {
	case nil:
		return "", true
	case string:
		return s, true
	case []byte:
		return string(s), true
	default:
		return "", false
	}
}

// SortedKeys returns m's keys in order; for deterministic walks of data.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
