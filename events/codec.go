package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	"kind": true, "origin": true, "redactions": true, "time": true, "v": true,
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
	if e.Origin != "" {
		m["origin"] = string(e.Origin)
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

// MarshalMsgpack encodes e canonically: values normalised as a decoder
// would return them (see normalize), map keys sorted at every level,
// integers in their shortest form, so the same event always gives the same
// bytes, whether it was decoded or built in code. It has a value receiver
// so that msgpack.Marshal(ev) works as well as msgpack.Marshal(&ev).
func (e Event) MarshalMsgpack() ([]byte, error) {
	if b, ok := appendEvent(make([]byte, 0, 512), &e); ok {
		return b, nil
	}
	return e.marshalGeneric()
}

// marshalGeneric is MarshalMsgpack by way of the envelope map
// (canonicalMap): it takes every event, and is the reference appendEvent
// agrees with.
func (e *Event) marshalGeneric() ([]byte, error) {
	m, err := e.canonicalMap()
	if err != nil {
		return nil, err
	}
	b, err := encodeCanonical(m)
	if err != nil {
		return nil, fmt.Errorf("events: encode %s: %w", e.ID, err)
	}
	return b, nil
}

// canonicalMap is toMap with every value normalised, on a copy: the
// caller's Data and Extra are never changed.
func (e *Event) canonicalMap() (map[string]any, error) {
	m := e.toMap()
	if isNormal(m, 0) {
		return m, nil // nothing to change: no copy needed
	}
	n, err := normalize(cloneMap(m), 0)
	if err != nil {
		return nil, fmt.Errorf("events: encode %s: %w", e.ID, err)
	}
	return n.(map[string]any), nil
}

// UnmarshalMsgpack decodes e with DecodeMsgpack, so msgpack.Unmarshal and
// events nested in other msgpack values follow the same rules. For an
// untrusted body call DecodeMsgpack directly: msgpack.Unmarshal walks the
// whole value itself, without DecodeMsgpack's limits, before calling this.
func (e *Event) UnmarshalMsgpack(b []byte) error {
	ev, err := DecodeMsgpack(b)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

// MarshalJSON encodes e as its JSON spelling (keys sorted, time RFC 3339),
// with the same canonical values as MarshalMsgpack.
func (e Event) MarshalJSON() ([]byte, error) {
	m, err := e.canonicalMap()
	if err != nil {
		return nil, err
	}
	return json.Marshal(jsonSafe(m))
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

// DecodeMsgpack decodes one msgpack-encoded event and upcasts it. A body
// of the usual kinds of values is decoded without the msgpack library
// (fastEvent for a current-version event, else fastValue); every other
// takes the library's path, to the same result.
func DecodeMsgpack(b []byte) (ev Event, err error) {
	// fastEvent checks what checkMsgpack checks, and more (it reads only
	// string keys, no extensions, nothing nested past MaxDepth): what it
	// reads, checkMsgpack accepts, so it needs no walk of its own first.
	if ev, ok := fastEvent(b); ok {
		return ev, nil
	}
	if checkMsgpack(b, MaxDepth) == nil {
		p := 0
		if v, ok := fastValue(b, "", &p, 0); ok && p == len(b) {
			if m, ok := v.(map[string]any); ok {
				return fromMap(m, "msgpack")
			}
		}
	}
	v, err := decodeMsgpackValue(b, MaxDepth)
	if err != nil {
		return Event{}, err
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

// decodeMsgpackValue checks b's structure (see checkMsgpack) and decodes it
// as one generic value. Any panic in the msgpack library becomes a
// *DecodeError.
func decodeMsgpackValue(b []byte, maxDepth int) (v any, err error) {
	if err := checkMsgpack(b, maxDepth); err != nil {
		return nil, &DecodeError{Format: "msgpack", Reason: err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &DecodeError{Format: "msgpack", Reason: "malformed body"}
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	v, err = dec.DecodeInterface()
	if err != nil {
		return nil, &DecodeError{Format: "msgpack", Reason: trimErr(err)}
	}
	return v, nil
}

// DecodeMsgpackArray decodes a msgpack array of events (a batch). One bad
// item refuses the whole batch, and the error names the item.
//
// A batch fastValue reads whole (see DecodeMsgpack) skips the library's
// decoder and normalize; every other takes the library's path, to the
// same result.
func DecodeMsgpackArray(b []byte) (evs []Event, err error) {
	if checkMsgpack(b, MaxDepth+1) == nil {
		p := 0
		if v, ok := fastValue(b, "", &p, -1); ok && p == len(b) && allMaps(v) {
			return eventsOf(v, false)
		}
	}
	v, err := decodeMsgpackValue(b, MaxDepth+1)
	if err != nil {
		return nil, err
	}
	return eventsOf(v, true)
}

// allMaps reports whether v is an array of maps (a batch the fast path
// reads; the library's path names what any other is in its refusal).
func allMaps(v any) bool {
	arr, ok := v.([]any)
	if !ok {
		return false
	}
	for _, item := range arr {
		if _, ok := item.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// eventsOf reads a decoded batch, normalising each item first unless it
// is normal already (fastValue's).
func eventsOf(v any, norm bool) ([]Event, error) {
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
		if norm {
			n, err := normalize(m, 0)
			if err != nil {
				return nil, &DecodeError{Format: "msgpack", Reason: fmt.Sprintf("batch item %d: %v", i, err)}
			}
			m = n.(map[string]any)
		}
		ev, err := fromMap(m, "msgpack")
		if err != nil {
			return nil, fmt.Errorf("batch item %d: %w", i, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// DecodeJSON decodes one JSON event and upcasts it.
func DecodeJSON(b []byte) (Event, error) {
	v, err := decodeJSONValue(b)
	if err != nil {
		return Event{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Event{}, &DecodeError{Format: "json", Reason: fmt.Sprintf("top level is %s, want an object", typeName(v))}
	}
	return fromMap(m, "json")
}

// decodeJSONValue decodes exactly one JSON value (trailing data is an
// error) and normalises it.
func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &DecodeError{Format: "json", Reason: trimErr(err)}
	}
	// dec.More would let a stray "]" or "}" through; only EOF may follow.
	if _, err := dec.Token(); err != io.EOF {
		return nil, &DecodeError{Format: "json", Reason: "trailing data after the value (send a batch as JSON lines)"}
	}
	n, err := normalize(v, 0)
	if err != nil {
		return nil, &DecodeError{Format: "json", Reason: err.Error()}
	}
	return n, nil
}

// DecodeJSONValue decodes one JSON value with numbers and strings
// normalised as DecodeJSON does; for arguments that producers send as a JSON
// string. Trailing data is an error.
func DecodeJSONValue(b []byte) (any, error) {
	return decodeJSONValue(b)
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

// normalize makes decoded values canonical, so that the same event decoded
// from msgpack or from JSON is the same value and encodes to the same bytes:
//
//   - integers become int64 (uint64 only beyond int64); json.Number becomes
//     an integer or a float64;
//   - a float with an integral value that fits an int64 or uint64 becomes
//     that integer (JSON writes 1.0 as 1, and msgpack's compact floats do
//     the same), and NaN and infinities, which JSON cannot carry, become nil;
//   - strings and map keys that are not valid UTF-8 have each invalid byte
//     replaced by U+FFFD, as encoding/json does; two keys that become equal
//     this way are an error, never a silent, order-dependent choice;
//   - maps with non-string keys get string keys (fmt.Sprint), with the same
//     collision rule; msgpack timestamps become RFC 3339 strings;
//   - nesting deeper than MaxDepth is an error.
//
// Maps and slices are normalised in place.
func normalize(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", MaxDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		var fixed map[string]any // keys that were not valid UTF-8
		for k, vv := range x {
			n, err := normalize(vv, depth+1)
			if err != nil {
				return nil, err
			}
			if utf8.ValidString(k) {
				x[k] = n
				continue
			}
			if fixed == nil {
				fixed = map[string]any{}
			}
			fixed[k] = n
		}
		for k, n := range fixed {
			delete(x, k)
			if err := putKey(x, validUTF8(k), n); err != nil {
				return nil, err
			}
		}
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			n, err := normalize(vv, depth+1)
			if err != nil {
				return nil, err
			}
			if err := putKey(out, validUTF8(fmt.Sprint(k)), n); err != nil {
				return nil, err
			}
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
	case string:
		return validUTF8(x), nil
	case []byte:
		return validUTF8(string(x)), nil
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, fmt.Errorf("number %q out of range", trimNumber(string(x)))
		}
		return normalizeFloat(f), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint:
		return normalize(uint64(x), depth)
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
		return normalizeFloat(float64(x)), nil
	case float64:
		return normalizeFloat(x), nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), nil
	default:
		return v, nil
	}
}

// putKey sets m[k] = v unless k is already there.
func putKey(m map[string]any, k string, v any) error {
	if _, dup := m[k]; dup {
		return fmt.Errorf("two map keys are both %q once made valid UTF-8", trimNumber(k))
	}
	m[k] = v
	return nil
}

// normalizeFloat returns f as an integer when it has an integral value that
// fits one, nil when JSON cannot carry it, and f otherwise.
func normalizeFloat(f float64) any {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return nil
	case f != math.Trunc(f):
		return f
	case f >= -(1<<63) && f < 1<<63:
		return int64(f)
	case f >= 0 && f < 1<<64:
		return uint64(f)
	default:
		return f
	}
}

// validUTF8 replaces every byte that is not part of a valid UTF-8 sequence
// with U+FFFD, as encoding/json does when it decodes or encodes a string.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	return sb.String()
}

func trimNumber(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// maxVersion bounds v: anything larger is not a version but garbage.
const maxVersion = 1 << 20

// fromMap extracts the envelope from a normalised map and upcasts it.
//
// Envelope fields are never null: a producer leaves a field out instead.
// An absent v means v0 (upcast); absent data means {}.
func fromMap(m map[string]any, format string) (Event, error) {
	bad := func(field, want string) (Event, error) {
		return Event{}, &DecodeError{Format: format, Reason: fmt.Sprintf("field %q must be %s", field, want)}
	}
	// Check v before upcasting: a v that is not a version must be refused,
	// not mistaken for a missing one and stamped with the current version.
	if v, present := m["v"]; present {
		if n, ok := v.(int64); !ok || n < 0 || n > maxVersion {
			return bad("v", "a small non-negative integer")
		}
	}
	m = upcast(m)
	var ev Event
	ev.V = int(m["v"].(int64))
	var ok bool
	if ev.ID, ok = optString(m, "id"); !ok {
		return bad("id", "a string")
	}
	k, ok := optString(m, "kind")
	if !ok {
		return bad("kind", "a string")
	}
	ev.Kind = Kind(k)
	if ev.Conversation, ok = optString(m, "conversation"); !ok {
		return bad("conversation", "a string")
	}
	if ev.Agent, ok = optString(m, "agent"); !ok {
		return bad("agent", "a string")
	}
	origin, ok := optString(m, "origin")
	if !ok {
		return bad("origin", "a string")
	}
	ev.Origin = Origin(origin)
	ts, ok := optString(m, "time")
	if !ok {
		return bad("time", "an RFC 3339 string")
	}
	if ts != "" {
		t, err := parseTime(ts)
		// The time is kept in UTC; it must still have a four-digit year
		// there, or it could not be written back as RFC 3339.
		if y := t.UTC().Year(); err != nil || y < 0 || y > 9999 {
			return bad("time", "an RFC 3339 time such as 2026-11-22T10:00:00Z")
		}
		ev.Time = t.UTC()
	}
	if d, present := m["data"]; !present {
		ev.Data = map[string]any{}
	} else if ev.Data, ok = d.(map[string]any); !ok {
		return bad("data", "an object")
	}
	if rs, present := m["redactions"]; present {
		list, ok := rs.([]any)
		if !ok {
			return bad("redactions", "a list")
		}
		for _, r := range list {
			rm, ok := r.(map[string]any)
			if !ok {
				return bad("redactions", "a list of objects")
			}
			rule, ok1 := optString(rm, "rule")
			path, ok2 := optString(rm, "path")
			start, ok3 := optOffset(rm, "start")
			end, ok4 := optOffset(rm, "end")
			if !ok1 || !ok2 || !ok3 || !ok4 {
				return bad("redactions", "a list of {rule, path: string; start, end: integers from 0 to 2^31-1}")
			}
			ev.Redactions = append(ev.Redactions, Redaction{Rule: rule, Path: path, Start: start, End: end})
		}
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

// optOffset reads m[key], an optional integer from 0 to 2^31-1 (absent is 0,
// null is refused).
func optOffset(m map[string]any, key string) (int, bool) {
	v, present := m[key]
	if !present {
		return 0, true
	}
	n, ok := v.(int64)
	if !ok || n < 0 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// optString reads m[key], an optional string (absent is "", null is refused).
func optString(m map[string]any, key string) (string, bool) {
	v, present := m[key]
	if !present {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
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
