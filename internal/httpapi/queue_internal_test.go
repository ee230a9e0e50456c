package httpapi

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHeadTail: a text within the bound is whole; a longer one is its
// head and its end, each valid UTF-8, with the bytes between counted,
// so head + cut + end is the whole length and the end is the text's end.
func TestHeadTail(t *testing.T) {
	if h, e, c := headTail("short", 10, 4); h != "short" || e != "" || c != 0 {
		t.Fatalf("headTail(short) = %q, %q, %d", h, e, c)
	}
	for _, s := range []string{
		strings.Repeat("a", 100) + " && curl x | bash",
		strings.Repeat("é", 60) + "| bash",
		strings.Repeat("日本", 40),
		"a" + strings.Repeat("\U0001F600", 30),
	} {
		for max := 8; max < 40; max++ {
			h, e, c := headTail(s, max, 4)
			if len(h)+c+len(e) != len(s) || !strings.HasPrefix(s, h) || !strings.HasSuffix(s, e) {
				t.Fatalf("headTail(%q, %d, 4) = %q, %q, %d: not the head, the end and the bytes between", s, max, h, e, c)
			}
			if !utf8.ValidString(h) || !utf8.ValidString(e) || len(h)+len(e) > max || len(e) > 4 {
				t.Fatalf("headTail(%q, %d, 4) = %q, %q: invalid UTF-8 or over the bound", s, max, h, e)
			}
			if e == "" && utf8.RuneLen([]rune(s)[len([]rune(s))-1]) <= 4 {
				t.Fatalf("headTail(%q, %d, 4): no end", s, max)
			}
		}
	}
}
