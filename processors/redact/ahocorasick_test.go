package redact

import (
	"slices"
	"strings"
	"testing"
)

// naiveHits finds every occurrence of every pattern in s, ASCII case
// folded, as appendRuleHits reports them with rule i for pattern i.
func naiveHits(patterns []string, s string) []ruleHit {
	low := asciiLower(s)
	var out []ruleHit
	for end := 1; end <= len(s); end++ {
		for id, p := range patterns {
			if p != "" && len(p) <= end && low[end-len(p):end] == asciiLower(p) {
				out = append(out, ruleHit{rule: int32(id), start: end - len(p), end: end})
			}
		}
	}
	return out
}

func asciiLower(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lowerASCII(b[i])
	}
	return string(b)
}

func matcherHits(patterns []string, s string) []ruleHit {
	m := newMatcher(patterns)
	rules := make([][]int32, len(patterns))
	for i := range rules {
		rules[i] = []int32{int32(i)}
	}
	return m.appendRuleHits(nil, s, rules)
}

func TestMatcher(t *testing.T) {
	tests := []struct {
		patterns []string
		text     string
	}{
		{[]string{"he", "she", "his", "hers"}, "ushers and HIS hershey"},
		{[]string{"api_key", "API", "key", ""}, "my API_KEY=x and apikey"},
		{[]string{"aaa", "aa", "a"}, "aaaaA"},
		{[]string{"пароль", "Пароль", "token"}, "Пароль: x token"},
		{[]string{"ab", "AB", "aB"}, "xAbx"},
		{nil, "nothing"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.patterns, ","), func(t *testing.T) {
			got, want := matcherHits(tc.patterns, tc.text), naiveHits(tc.patterns, tc.text)
			sortHits(got)
			sortHits(want)
			if !slices.Equal(got, want) {
				t.Errorf("patterns %q in %q:\n got %v\nwant %v", tc.patterns, tc.text, got, want)
			}
		})
	}
}

func sortHits(h []ruleHit) {
	slices.SortFunc(h, func(a, b ruleHit) int {
		if a.end != b.end {
			return a.end - b.end
		}
		return int(a.rule - b.rule)
	})
}

// FuzzMatcher: the automaton finds what a naive search finds, for any
// patterns and text (newMatcher panics if its state count is wrong).
func FuzzMatcher(f *testing.F) {
	f.Add("he|she|his|hers", "ushers")
	f.Add("a|aa|AAA|", "aAaAa")
	f.Add("\xff\xfe|\xffA", "x\xff\xfeA\xffa")
	f.Fuzz(func(t *testing.T, pats, text string) {
		if len(pats) > 200 || len(text) > 500 {
			return
		}
		patterns := strings.Split(pats, "|")
		got, want := matcherHits(patterns, text), naiveHits(patterns, text)
		sortHits(got)
		sortHits(want)
		if !slices.Equal(got, want) {
			t.Fatalf("patterns %q in %q:\n got %v\nwant %v", patterns, text, got, want)
		}
	})
}
