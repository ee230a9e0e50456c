package redact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/events"
)

// Limits of the event walk. Decoded events are at most events.MaxDepth
// deep; an event built in Go could be deeper, and is then redacted whole
// below the limit rather than walked without bound.
const (
	maxWalkDepth = 128
	// A string under a key that contains a rule keyword (password, token,
	// adafruit…) is scanned as `"key": "value"` so rules that need the name
	// see it, when the value is at most this long.
	maxKeyContext = 4096
	// An array of strings (an argv) is scanned joined by spaces, so flags
	// and their values are seen together, when it is at most this long.
	maxJoined = 64 << 10
)

const ruleDepthLimit = "redaction-depth-limit"

// RedactEvent returns a redacted deep copy of ev and whether anything was
// redacted. Every string in Data and Extra is redacted, at any depth,
// including strings that hold JSON (tool arguments sent as a JSON string),
// map keys, and []byte values. The envelope (id, kind, conversation, agent,
// time) is not touched. Each finding is appended to Redactions with its
// path ("data.args.command", "data.argv[2]"; a finding inside a map key has
// the suffix "#key") and its byte offsets in the original string. ev itself
// is never changed.
//
// The work is bounded (Config.Budget): a string that would cost more than
// its own budget, and every string left once the event's budget is spent,
// is replaced whole by [REDACTED:vigil.budget], recorded with rule
// RuleBudget. Nothing is passed on unexamined.
func (r *Redactor) RedactEvent(ev *events.Event) (out events.Event, redacted bool) {
	defer func() {
		if p := recover(); p != nil {
			out, redacted = failClosedEvent(ev), true
		}
	}()
	out = ev.Clone()
	w := walker{r: r, left: r.budget.Event}
	out.Data = w.walkMap(out.Data, "data", 1)
	out.Extra = w.walkMap(out.Extra, "", 1)
	if len(w.reds) == 0 {
		return out, false
	}
	out.Redactions = append(out.Redactions, w.reds...)
	return out, true
}

type walker struct {
	r    *Redactor
	reds []events.Redaction
	left int64 // work the event may still spend
}

func (w *walker) record(path string, fs []Finding) {
	for _, f := range fs {
		w.reds = append(w.reds, events.Redaction{Rule: f.Rule, Path: path, Start: f.Start, End: f.End})
	}
}

// find is Redactor.find within both the string's budget and what is left
// of the event's. ok false: s must be replaced whole (overBudget).
func (w *walker) find(s string) ([]Finding, bool) {
	if s == "" {
		return nil, true
	}
	if w.left <= 0 {
		return nil, false
	}
	fs, work, ok := w.r.find(s, min(w.r.budget.stringLimit(len(s)), w.left))
	w.left -= work
	return fs, ok
}

// redactString is RedactString within the event's budget; cmd confines
// its findings to shell words and lines (confine).
func (w *walker) redactString(s string, cmd bool) (out string, fs []Finding) {
	defer func() {
		if p := recover(); p != nil {
			out, fs = failClosed(s)
		}
	}()
	fs, ok := w.find(s)
	if !ok {
		return overBudget(s)
	}
	if len(fs) == 0 {
		return s, nil
	}
	if cmd {
		fs = confine(s, fs)
	}
	return apply(s, fs), fs
}

// redact is redactString that records its findings under path.
func (w *walker) redact(s, path string, cmd bool) string {
	out, fs := w.redactString(s, cmd)
	w.record(path, fs)
	return out
}

// maxPathLen bounds the path recorded with a redaction. Paths are built
// level by level: unbounded, an event nested 60 deep under 60 KB keys would
// build a path of megabytes at every level (time quadratic in its depth)
// and store one with every redaction below. A path cut at the bound ends
// with pathCut, and everything below it shares it.
const (
	maxPathLen = 1024
	pathCut    = "…"
)

// boundPath cuts p to at most maxPathLen bytes, at a rune boundary, and
// marks the cut.
func boundPath(p string) string {
	if len(p) <= maxPathLen {
		return p
	}
	cut := maxPathLen - len(pathCut)
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + pathCut
}

// cutPath reports whether p was cut by boundPath: nothing is appended to
// it any more.
func cutPath(p string) bool {
	return len(p) > maxPathLen-2*len(pathCut) && strings.HasSuffix(p, pathCut)
}

// indexPath appends an array index to a path.
func indexPath(path string, i int) string {
	if cutPath(path) {
		return path
	}
	return boundPath(path + "[" + strconv.Itoa(i) + "]")
}

// childPath appends a map key to a path: .key for plain keys, ["key"]
// otherwise (the key already redacted).
func childPath(path, key string) string {
	if cutPath(path) {
		return path
	}
	if len(key) > maxPathLen {
		key = boundPath(key)
	}
	plain := key != ""
	for i := 0; i < len(key); i++ {
		if c := key[i]; !isAlnum(c) && c != '_' && c != '-' {
			plain = false
			break
		}
	}
	if !plain {
		b, _ := json.Marshal(key)
		return boundPath(path + "[" + string(b) + "]")
	}
	if path == "" {
		return key
	}
	return boundPath(path + "." + key)
}

// walkMap redacts m in place (it is the walker's own copy) and returns it,
// or a new map when a key had to be redacted.
func (w *walker) walkMap(m map[string]any, path string, depth int) map[string]any {
	if m == nil {
		return nil
	}
	keys := events.SortedKeys(m)
	renamed := false
	newKeys := make([]string, len(keys))
	keyFs := make([][]Finding, len(keys))
	for i, k := range keys {
		nk, fs := w.redactString(k, false)
		newKeys[i], keyFs[i] = nk, fs
		if len(fs) > 0 {
			renamed = true
		}
	}
	var out map[string]any
	var next map[string]int
	if renamed {
		out = make(map[string]any, len(m))
		next = map[string]int{}
	}
	for i, k := range keys {
		nk := newKeys[i]
		if renamed {
			// Two keys may redact to the same text: keep both, numbered in
			// key order.
			nk = freeKey(out, nk, next)
			if nk != k {
				w.record(childPath(path, nk)+"#key", keyFs[i])
			}
		}
		v := w.walkValue(m[k], childPath(path, nk), k, depth+1)
		if renamed {
			out[nk] = v
		} else {
			m[k] = v
		}
	}
	if renamed {
		return out
	}
	return m
}

// freeKey returns base, or else the first of base#2, base#3 … that is not
// a key of out. next remembers, for each base, the number it last gave:
// keys are never removed from out, so the numbers below it are still
// taken, and ten thousand keys that redact to the same text cost ten
// thousand lookups, not fifty million.
func freeKey(out map[string]any, base string, next map[string]int) string {
	n := next[base] // 0: base itself
	nk := base
	if n >= 2 {
		nk = base + "#" + strconv.Itoa(n)
	}
	for {
		if _, taken := out[nk]; !taken {
			break
		}
		n = max(n+1, 2)
		nk = base + "#" + strconv.Itoa(n)
	}
	next[base] = n
	return nk
}

func (w *walker) walkValue(v any, path, key string, depth int) any {
	if depth > maxWalkDepth {
		switch v.(type) {
		case nil, bool, int64, uint64, float64, int, float32:
			return v
		}
		w.reds = append(w.reds, events.Redaction{Rule: ruleDepthLimit, Path: path})
		return Marker + ruleDepthLimit + "]"
	}
	switch x := v.(type) {
	case string:
		return w.str(x, path, key)
	case []byte:
		return []byte(w.str(string(x), path, key))
	case map[string]any:
		return w.walkMap(x, path, depth)
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, vv := range x {
			out[k] = vv
		}
		return w.walkMap(out, path, depth)
	case []any:
		if joined, ok := w.strArray(x, path, CommandKey(key)); ok {
			return joined
		}
		for i := range x {
			x[i] = w.walkValue(x[i], indexPath(path, i), key, depth+1)
		}
		return x
	case []string:
		arr := make([]any, len(x))
		for i := range x {
			arr[i] = x[i]
		}
		return w.walkValue(arr, path, key, depth)
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, json.Number, time.Time:
		return v
	default:
		// A type the codec never produces (an event built in Go with typed
		// slices or structs): walk its JSON form, or, if it has none, drop
		// it rather than store it unredacted.
		b, err := json.Marshal(v)
		if err == nil {
			var generic any
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			if dec.Decode(&generic) == nil {
				return w.walkValue(generic, path, key, depth)
			}
		}
		w.reds = append(w.reds, events.Redaction{Rule: ruleRedactionError, Path: path})
		return Marker + ruleRedactionError + "]"
	}
}

// str redacts one string value found under key. When the key itself holds
// a rule keyword (password, api_key, adafruit…), the value is scanned in
// the context `"key": "value"`, so that rules which need the name fire.
func (w *walker) str(s, path, key string) string {
	if s == "" {
		return s
	}
	cmd := key != "" && CommandKey(key)
	if key == "" || len(s) > maxKeyContext || !w.r.kw.contains(key) {
		return w.redact(s, path, cmd)
	}
	prefix := `"` + key + `": "`
	ctx := prefix + s + `"`
	fs, ok := w.find(ctx)
	if !ok {
		out, fs := overBudget(s)
		w.record(path, fs)
		return out
	}
	if len(fs) == 0 {
		return s
	}
	local := clip(fs, len(prefix), len(prefix)+len(s))
	if len(local) == 0 {
		return s
	}
	if cmd {
		local = confine(s, local)
	}
	w.record(path, local)
	return apply(s, local)
}

// clip maps findings in a larger text to the part [a, b), in its offsets.
// fs is sorted by Start: the findings from b on are not looked at.
func clip(fs []Finding, a, b int) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Start >= b {
			break
		}
		s, e := max(f.Start, a), min(f.End, b)
		if s < e {
			out = append(out, Finding{Rule: f.Rule, Start: s - a, End: e - a})
		}
	}
	return out
}

// strArray redacts an array made only of strings (an argv, a list of
// lines) by scanning it joined with spaces, so that "-p" and its value,
// or "Authorization:" and its token, are seen together; cmd confines its
// findings to shell words (an argv). It reports false when the array is
// not such an array.
func (w *walker) strArray(x []any, path string, cmd bool) ([]any, bool) {
	if len(x) < 2 {
		return nil, false
	}
	total := 0
	for _, e := range x {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		total += len(s) + 1
	}
	if total > maxJoined {
		return nil, false
	}
	var b strings.Builder
	b.Grow(total)
	offs := make([]int, len(x)+1)
	for i, e := range x {
		if i > 0 {
			b.WriteByte(' ')
		}
		offs[i] = b.Len()
		b.WriteString(e.(string))
	}
	offs[len(x)] = b.Len() + 1
	fs, ok := w.find(b.String())
	if !ok {
		for i, e := range x {
			out, fs := overBudget(e.(string))
			w.record(indexPath(path, i), fs)
			x[i] = out
		}
		return x, true
	}
	if cmd {
		fs = confine(b.String(), fs)
	}
	k := 0 // fs[:k] end before the element: not looked at again
	for i, e := range x {
		s := e.(string)
		for k < len(fs) && fs[k].End <= offs[i] {
			k++
		}
		local := clip(fs[k:], offs[i], offs[i]+len(s))
		if len(local) == 0 {
			continue
		}
		local = mergeFindings(slices.Clone(local))
		p := indexPath(path, i)
		w.record(p, local)
		x[i] = apply(s, local)
	}
	return x, true
}

// failClosedEvent is the event with every string of Data and Extra replaced
// by [REDACTED:redaction-error]: what RedactEvent returns should redaction
// ever panic, so that nothing unredacted is passed on.
func failClosedEvent(ev *events.Event) events.Event {
	out := ev.Clone()
	var reds []events.Redaction
	var wipe func(v any, path string, depth int) any
	wipe = func(v any, path string, depth int) any {
		switch x := v.(type) {
		case string, []byte:
			reds = append(reds, events.Redaction{Rule: ruleRedactionError, Path: path})
			return Marker + ruleRedactionError + "]"
		case map[string]any:
			m := make(map[string]any, len(x))
			for i, k := range events.SortedKeys(x) {
				nk := "key" + strconv.Itoa(i)
				m[nk] = wipe(x[k], childPath(path, nk), depth+1)
			}
			return m
		case []any:
			a := make([]any, len(x))
			for i := range x {
				a[i] = wipe(x[i], indexPath(path, i), depth+1)
			}
			return a
		case nil, bool, int64, uint64, float64:
			return v
		default:
			reds = append(reds, events.Redaction{Rule: ruleRedactionError, Path: path})
			return Marker + ruleRedactionError + "]"
		}
	}
	if out.Data != nil {
		out.Data = wipe(out.Data, "data", 0).(map[string]any)
	}
	if out.Extra != nil {
		out.Extra = wipe(out.Extra, "", 0).(map[string]any)
	}
	out.Redactions = append(out.Redactions, reds...)
	return out
}
