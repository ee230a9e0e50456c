package install

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{`/usr/bin/vigil hook claude-code --data /d`, []string{"/usr/bin/vigil", "hook", "claude-code", "--data", "/d"}},
		{`'/a b/vigil' hook gemini --data 'it'\''s'`, []string{"/a b/vigil", "hook", "gemini", "--data", "it's"}},
		{`"a \"b\"" c\ d`, []string{`a "b"`, "c d"}},
		{"x\t\ty\nz", []string{"x", "y", "z"}},
		{`''`, []string{""}},
		{`cd /x && vigil hook cursor`, []string{"cd", "/x", "&&", "vigil", "hook", "cursor"}},
	} {
		if got := words(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzQuoteWords checks that what Quote writes, words reads back. Hook
// commands come from JSON settings, so they are valid UTF-8.
func FuzzQuoteWords(f *testing.F) {
	for _, s := range []string{"", "/usr/bin/vigil", "a b", "it's", `"\`, "nats://h:4222", "x\ty"} {
		f.Add(s, "--data")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			t.Skip()
		}
		got := words(Quote(a) + " " + Quote(b))
		if !slices.Equal(got, []string{a, b}) {
			t.Fatalf("words(Quote(%q) Quote(%q)) = %q", a, b, got)
		}
	})
}
