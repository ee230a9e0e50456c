package core

import (
	"encoding/base64"
	"strings"
	"sync"
)

// LazySet is SetOf, built on first use: the analyzers' name sets are
// package variables, and built at initialisation they cost every command
// of the vigil binary its start-up (`vigil hook` included, which never
// scores). Use it as name()[key].
func LazySet(names ...string) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool { return SetOf(names...) })
}

// SetOf returns the set of names.
func SetOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// TrimArg cuts s to 60 bytes for a reason's detail.
func TrimArg(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// DecodeBase64 decodes s (white space dropped) in any of the four base64
// alphabets.
func DecodeBase64(s string) (string, bool) {
	s = strings.Join(strings.Fields(s), "")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// Reverse returns s with its runes in reverse order.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
