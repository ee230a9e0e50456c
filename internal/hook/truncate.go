package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// DefaultMaxOutput bounds the text of a tool output an after-hook records
// (Options.MaxOutput). A NATS message holds at most a few MiB (Vigil's
// server: 4 MiB), and an event over it is refused whole; a build log or a
// `cat` of a large file must still leave a record, so the hook keeps the
// start and the end of what is too long, and says what it cut.
const DefaultMaxOutput = 256 << 10

// TruncatedMarker starts the text that replaces what was cut from a string.
const TruncatedMarker = "[vigil: output truncated: "

// Truncation is recorded as data.truncated of an observation whose content
// the hook cut: the size and digest of the whole content as the client
// sent it (its JSON encoding), and how much text was kept. The digest lets
// someone holding the original output prove it is the one recorded; it is
// not the text, so it holds no secret.
type Truncation struct {
	OriginalBytes int    `json:"original_bytes"`
	KeptBytes     int    `json:"kept_bytes"`
	SHA256        string `json:"sha256"`
}

// boundContent returns content with its strings cut so that their total
// length is at most max bytes, and what was cut; ok is false when nothing
// needed cutting. Each cut string keeps its start (three quarters of what
// it may keep) and its end, cut at line boundaries, with a marker naming
// its original size and digest and what was kept between them. The ingest
// service then redacts what is kept, as everything else.
func boundContent(content any, max int) (any, Truncation, bool) {
	if max <= 0 {
		max = DefaultMaxOutput
	}
	var lens []int
	walkStrings(content, func(s string) string { lens = append(lens, len(s)); return s })
	total := 0
	for _, n := range lens {
		total += n
	}
	whole, err := json.Marshal(content)
	if err != nil {
		whole = []byte(fmt.Sprint(content))
	}
	if total <= max && len(whole) <= 2*max {
		return content, Truncation{}, false
	}
	sum := sha256.Sum256(whole)
	tr := Truncation{OriginalBytes: len(whole), SHA256: "sha256:" + hex.EncodeToString(sum[:])}
	// Water-filling: every string keeps up to limit bytes, with limit the
	// largest that keeps the total within max.
	limit := fillLimit(lens, max)
	var out any
	if limit >= minStringKeep {
		out = mapStrings(content, func(s string) string {
			if len(s) <= limit {
				return s
			}
			return cutString(s, limit)
		})
	}
	// Many small strings, keys and numbers can still be too much: keep
	// the start and end of the JSON text instead.
	if out == nil {
		out = cutString(string(whole), max)
	} else if b, err := json.Marshal(out); err != nil || len(b) > 2*max {
		out = cutString(string(whole), max)
	}
	walkStrings(out, func(s string) string { tr.KeptBytes += keptBytes(s); return s })
	return out, tr, true
}

// minStringKeep is the least a cut string keeps; when the strings are so
// many that each would keep less, the content's JSON text is cut instead.
const minStringKeep = 1 << 10

// fillLimit is the largest per-string limit L with Σ min(len, L) ≤ max.
func fillLimit(lens []int, max int) int {
	s := append([]int(nil), lens...)
	sort.Ints(s)
	used := 0
	for i, n := range s {
		rest := len(s) - i
		if used+n*rest > max {
			return (max - used) / rest
		}
		used += n
	}
	return max
}

// cutString keeps about keep bytes of s, its start and end, around a
// marker. Cuts fall at line ends where a line is near, else at a break
// between tokens, never inside a UTF-8 sequence, so that a secret is kept
// whole (and redacted) or not at all; the end never starts inside a PEM
// block whose BEGIN line was cut (its body would not look like a key).
func cutString(s string, keep int) string {
	sum := sha256.Sum256([]byte(s))
	headN := keep * 3 / 4
	tailN := keep - headN
	head := s[:cutBack(s, headN)]
	from := cutForward(s, len(s)-tailN)
	tail := s[from:]
	// A private key's body with its BEGIN line cut off would not look like
	// a key to the redactor: an end starting inside a PEM block starts
	// after the block's END line instead.
	if b := strings.LastIndex(s[:from], "-----BEGIN"); b >= 0 && b > strings.LastIndex(s[:from], "-----END") {
		if e := strings.Index(tail, "-----END"); e < 0 {
			tail = ""
		} else if nl := strings.IndexByte(tail[e:], '\n'); nl >= 0 {
			tail = tail[e+nl+1:]
		} else {
			tail = ""
		}
	}
	marker := fmt.Sprintf("\n%s%d bytes, sha256:%s; kept the first %d and the last %d bytes]\n",
		TruncatedMarker, len(s), hex.EncodeToString(sum[:]), len(head), len(tail))
	return head + marker + tail
}

// keptBytes is how much of s is original text (not a marker).
func keptBytes(s string) int {
	i := strings.Index(s, "\n"+TruncatedMarker)
	if i < 0 {
		return len(s)
	}
	j := strings.Index(s[i+1:], "]\n")
	if j < 0 {
		return i
	}
	return len(s) - (j + 3)
}

// tokenByte reports whether c may be part of a secret-like token.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '_' || c == '-' || c == '.' || c == '%' || c >= 0x80
}

// cutBack returns a cut point at or before n: after a newline within the
// last 4 KiB before n, else at a break between tokens, else n (on a UTF-8
// boundary).
func cutBack(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	if i := strings.LastIndexByte(s[max(0, n-4096):n], '\n'); i >= 0 {
		return max(0, n-4096) + i + 1
	}
	for i := n; i > max(0, n-4096); i-- {
		if !tokenByte(s[i-1]) {
			return i
		}
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// cutForward returns a cut point at or after n: after the next newline
// within 4 KiB, else at the next break between tokens, else n.
func cutForward(s string, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(s) {
		return len(s)
	}
	end := min(len(s), n+4096)
	if i := strings.IndexByte(s[n:end], '\n'); i >= 0 {
		return n + i + 1
	}
	for i := n; i < end; i++ {
		if !tokenByte(s[i]) {
			return i
		}
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return n
}

// walkStrings calls f on every string in v (values, not keys).
func walkStrings(v any, f func(string) string) { mapStrings(v, f) }

// mapStrings returns a copy of v with f applied to every string value.
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapStrings(e, f)
		}
		return out
	}
	return v
}
