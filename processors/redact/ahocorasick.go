package redact

import (
	"sort"
	"strconv"
)

// matcher is an ASCII case-insensitive Aho-Corasick automaton compiled to a
// dense DFA over byte classes: one table lookup per input byte, no
// allocation, and no lowercased copy of the input. It is the keyword
// prefilter that decides which rules run at all, and it checks stopwords.
//
// A matcher is immutable once built and safe for concurrent use.
type matcher struct {
	class  [256]uint8 // byte -> class; 0 is "no pattern uses this byte"
	nclass int
	// delta[state*nclass + class] is the next state, premultiplied by
	// nclass, with outFlag set when that state has outputs.
	delta []int32
	// outputs of a state s: outs[outStart[s]:outStart[s+1]] (pattern ids),
	// including those of its suffix (dictionary) links.
	outStart []int32
	outs     []int32
	plen     []int32 // pattern id -> length in bytes
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// newMatcher builds the automaton for patterns, matched ASCII
// case-insensitively. Empty patterns are ignored (they never match).
func newMatcher(patterns []string) *matcher {
	m := &matcher{plen: make([]int32, len(patterns))}
	// Byte classes: one per distinct lowercased byte used by a pattern.
	var used [256]bool
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			used[lowerASCII(p[i])] = true
		}
	}
	n := 1
	for b := 0; b < 256; b++ {
		if used[b] {
			m.class[b] = uint8(n)
			n++
		}
	}
	for b := 'A'; b <= 'Z'; b++ {
		m.class[b] = m.class[b+('a'-'A')]
	}
	m.nclass = n

	// Trie. goto_[s*n+c] = child or -1, sized once: a state is a distinct
	// (lowercased) prefix of a pattern.
	states := trieStates(patterns)
	goto_ := make([]int32, states*n)
	for i := range goto_ {
		goto_[i] = -1
	}
	own := make([][]int32, states)
	next := 1
	for id, p := range patterns {
		m.plen[id] = int32(len(p))
		if p == "" {
			continue
		}
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := int(m.class[p[i]])
			nx := goto_[int(s)*n+c]
			if nx < 0 {
				nx = int32(next)
				next++
				goto_[int(s)*n+c] = nx
			}
			s = nx
		}
		own[s] = append(own[s], int32(id))
	}
	if next != states {
		panic("redact: the keyword trie has " + strconv.Itoa(next) + " states, trieStates counted " + strconv.Itoa(states))
	}

	// BFS: failure links, complete transitions, merged outputs. The
	// transitions overwrite the trie in place: a state's row is read once,
	// just before it is written, and a failure state's row is complete
	// before any state that links to it (it is nearer the root).
	fail := make([]int32, states)
	m.delta = goto_
	outsOf := make([][]int32, states)
	queue := make([]int32, 0, states)
	for c := 0; c < n; c++ {
		nx := goto_[c]
		if nx < 0 {
			m.delta[c] = 0
			continue
		}
		fail[nx] = 0
		queue = append(queue, nx)
	}
	outsOf[0] = own[0]
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		outsOf[s] = append(append([]int32(nil), own[s]...), outsOf[fail[s]]...)
		for c := 0; c < n; c++ {
			nx := goto_[int(s)*n+c]
			if nx < 0 {
				m.delta[int(s)*n+c] = m.delta[int(fail[s])*n+c]
				continue
			}
			fail[nx] = m.delta[int(fail[s])*n+c]
			queue = append(queue, nx)
		}
	}
	// Premultiply targets and flag states with outputs, so the scan loop
	// is one load and one sign test per byte.
	for i, t := range m.delta {
		v := t * int32(n)
		if len(outsOf[t]) > 0 {
			v |= outFlag
		}
		m.delta[i] = v
	}
	m.outStart = make([]int32, states+1)
	for s := 0; s < states; s++ {
		o := outsOf[s]
		sort.Slice(o, func(i, j int) bool { return o[i] < o[j] })
		m.outs = append(m.outs, o...)
		m.outStart[s+1] = int32(len(m.outs))
	}
	return m
}

// trieStates counts the states of the patterns' trie: the root and one
// for each distinct non-empty prefix, ASCII case folded.
func trieStates(patterns []string) int {
	low := make([]string, 0, len(patterns))
	for _, p := range patterns {
		if p != "" {
			b := []byte(p)
			for i := range b {
				b[i] = lowerASCII(b[i])
			}
			low = append(low, string(b))
		}
	}
	sort.Strings(low)
	states := 1
	prev := ""
	for _, p := range low {
		lcp := 0
		for lcp < len(p) && lcp < len(prev) && p[lcp] == prev[lcp] {
			lcp++
		}
		states += len(p) - lcp
		prev = p
	}
	return states
}

const outFlag = -1 << 31

// appendRuleHits appends, for every keyword occurrence in s, one ruleHit
// per rule that uses the keyword (rules[pattern id]), in order of end
// position, then pattern id. There is no intermediate list of keyword
// hits: on keyword-dense text it would be as long again.
func (m *matcher) appendRuleHits(dst []ruleHit, s string, rules [][]int32) []ruleHit {
	var st int32
	delta, class := m.delta, &m.class
	for i := 0; i < len(s); i++ {
		st = delta[st+int32(class[s[i]])]
		if st < 0 {
			st &^= outFlag
			state := st / int32(m.nclass)
			for _, id := range m.outs[m.outStart[state]:m.outStart[state+1]] {
				for _, ri := range rules[id] {
					dst = append(dst, ruleHit{rule: ri, start: i + 1 - int(m.plen[id]), end: i + 1})
				}
			}
		}
	}
	return dst
}

// contains reports whether any pattern occurs in s.
func (m *matcher) contains(s string) bool {
	var st int32
	delta, class := m.delta, &m.class
	for i := 0; i < len(s); i++ {
		st = delta[st+int32(class[s[i]])]
		if st < 0 {
			return true
		}
	}
	return false
}
