package inject

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// The injection scanner's word classes live in data/inject_lexicon.txt: a
// newcomer adds a word to its class there, and the rules that combine
// classes stay in clause.go.

//go:embed data/inject_lexicon.txt
var lexiconText string

// The scanner's plain word sets (negations, verbs that show or send, TLDs,
// commands written in prose …) live in data/inject_words.txt, one section
// per Go variable of the same name.

//go:embed data/inject_words.txt
var wordsText string

var wordSets = sync.OnceValue(func() map[string]map[string]bool {
	m, err := parseWordSets(wordsText)
	if err != nil {
		panic("risk: data/inject_words.txt: " + err.Error())
	}
	return m
})

// wordSet returns the set named name in data/inject_words.txt, read on
// first use: parsed at initialisation, the file cost every command of the
// vigil binary its start-up (`vigil hook` included, which never scores),
// so the sets are package variables holding a getter. It panics when the
// file has no such section; TestInjectWordSets finds a renamed section
// before that.
func wordSet(name string) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool {
		s, ok := wordSets()[name]
		if !ok || len(s) == 0 {
			panic("risk: data/inject_words.txt has no set " + name)
		}
		return s
	})
}

// parseWordSets reads "[name]" sections of comma-separated, lower-case
// entries; "#" starts a comment line. It runs once, on the first use of a
// set, and does not allocate per entry beyond the map.
func parseWordSets(text string) (map[string]map[string]bool, error) {
	sets := map[string]map[string]bool{}
	var cur map[string]bool
	for n := 1; text != ""; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' && line[len(line)-1] == ']' {
			name := line[1 : len(line)-1]
			if sets[name] != nil {
				return nil, fmt.Errorf("line %d: set %s twice", n, name)
			}
			cur = make(map[string]bool, 32)
			sets[name] = cur
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: entries before any section", n)
		}
		for line != "" {
			var e string
			e, line, _ = strings.Cut(line, ",")
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			for i := 0; i < len(e); i++ {
				if c := e[i]; c >= 'A' && c <= 'Z' || c >= 0x80 && e != strings.ToLower(e) {
					return nil, fmt.Errorf("line %d: %q is not lower-case", n, e)
				}
			}
			cur[e] = true
		}
	}
	return sets, nil
}

// lexClass is a set of word classes, one bit each.
type lexClass uint64

const (
	lxOverride lexClass = 1 << iota
	lxReveal
	lxSend
	lxRead
	lxModify
	lxExec
	lxTransform
	lxTell
	lxC2Verb
	lxSkip
	lxAnswer
	lxFiller
	lxNegation
	lxInstr
	lxText
	lxQualPrior
	lxQualTime
	lxPrompt
	lxPromptCompound
	lxData
	lxSink
	lxAudience
	lxC2
	lxC2Name
	lxC2Suffix
	lxNode
	lxSafetyQual
	lxSafetyObj
	lxSafetyFree
	lxLang
	lxTrace
	lxAgentCfg
	lxRCRisky
	lxResult
	lxCall
	// file classes: matched against path-like tokens, not words
	lxFileAgent
	lxFileRC
)

// lxVerbs are the classes that name verbs (matched inflected too).
const lxVerbs = lxOverride | lxReveal | lxSend | lxRead | lxModify | lxExec | lxTransform | lxTell | lxC2Verb | lxSkip | lxAnswer | lxCall

var lexSections = map[string]lexClass{
	"verb.override": lxOverride, "verb.reveal": lxReveal, "verb.send": lxSend, "verb.read": lxRead,
	"verb.modify": lxModify, "verb.exec": lxExec, "verb.transform": lxTransform, "verb.tell": lxTell,
	"verb.c2": lxC2Verb, "verb.skip": lxSkip, "verb.answer": lxAnswer, "filler": lxFiller, "negation": lxNegation,
	"obj.instructions": lxInstr, "obj.text": lxText, "qual.prior": lxQualPrior, "qual.time": lxQualTime,
	"obj.prompt": lxPrompt, "obj.prompt.compound": lxPromptCompound, "obj.data": lxData, "obj.sink": lxSink,
	"obj.audience": lxAudience, "obj.c2": lxC2, "c2.name": lxC2Name, "c2.suffix": lxC2Suffix, "obj.node": lxNode,
	"safety.qual": lxSafetyQual, "safety.obj": lxSafetyObj, "safety.free": lxSafetyFree, "obj.lang": lxLang,
	"obj.trace": lxTrace, "obj.agentcfg": lxAgentCfg, "rc.risky": lxRCRisky, "obj.result": lxResult, "verb.call": lxCall,
	"file.agent": lxFileAgent, "file.rc": lxFileRC,
}

// lexPhrase is an entry of several words.
type lexPhrase struct {
	words []string
	cls   lexClass
}

// lexicon is the parsed data file; it is built once and never changed.
type lexicon struct {
	words   map[string]lexClass    // one-word entries
	phrases map[string][]lexPhrase // entries of several words, by first word
	maxLen  int                    // longest phrase, in words
	files   map[lexClass][]string  // file classes
	// fileBase maps a base name entry to its file classes; fileRest lists
	// the entries with a "/" (directories and path tails).
	fileBase map[string]lexClass
	fileRest []fileEntry
}

type fileEntry struct {
	e   string
	cls lexClass
}

// lex is parsed on first use, like the rules' expressions (lazyRE): a
// command that never scans pays nothing at start.
var lexOnce = sync.OnceValue(func() *lexicon { return mustLexicon(lexiconText) })

func mustLexicon(text string) *lexicon {
	l, err := parseLexicon(text)
	if err != nil {
		panic("risk: data/inject_lexicon.txt: " + err.Error())
	}
	return l
}

func parseLexicon(text string) (*lexicon, error) {
	l := &lexicon{words: map[string]lexClass{}, phrases: map[string][]lexPhrase{}, files: map[lexClass][]string{}, fileBase: map[string]lexClass{}}
	var cur lexClass
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			c, ok := lexSections[line[1:len(line)-1]]
			if !ok {
				return nil, fmt.Errorf("line %d: unknown section %s", n+1, line)
			}
			cur = c
			continue
		}
		if cur == 0 {
			return nil, fmt.Errorf("line %d: entries before any section", n+1)
		}
		for _, e := range strings.Split(line, ",") {
			e = strings.TrimSpace(e)
			if e == "" {
				continue
			}
			if e != strings.ToLower(e) {
				return nil, fmt.Errorf("line %d: %q is not lower-case", n+1, e)
			}
			if cur == lxFileAgent || cur == lxFileRC {
				l.files[cur] = append(l.files[cur], e)
				if strings.Contains(e, "/") {
					l.fileRest = append(l.fileRest, fileEntry{e, cur})
				} else {
					l.fileBase[e] |= cur
				}
				continue
			}
			ws := strings.Fields(e)
			if len(ws) == 1 {
				l.words[e] |= cur
				continue
			}
			l.phrases[ws[0]] = append(l.phrases[ws[0]], lexPhrase{words: ws, cls: cur})
			l.maxLen = max(l.maxLen, len(ws))
		}
	}
	return l, nil
}

// verbStem returns the base form of an inflected verb when the lexicon
// knows it as a verb ("sends" → "send", "copied" → "copy"), else "".
func verbStem(w string) string {
	try := func(b string) string {
		if len(b) >= 2 && lexOnce().words[b]&lxVerbs != 0 {
			return b
		}
		return ""
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return try(w[:len(w)-3] + "y")
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		return try(w[:len(w)-3] + "y")
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		b := w[:len(w)-3]
		if s := try(b); s != "" {
			return s
		}
		if s := try(b + "e"); s != "" {
			return s
		}
		if n := len(b); n > 2 && b[n-1] == b[n-2] {
			return try(b[:n-1])
		}
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		b := w[:len(w)-2]
		if s := try(b); s != "" {
			return s
		}
		if s := try(w[:len(w)-1]); s != "" {
			return s
		}
		if n := len(b); n > 2 && b[n-1] == b[n-2] {
			return try(b[:n-1])
		}
	case strings.HasSuffix(w, "es") && len(w) > 4:
		if s := try(w[:len(w)-2]); s != "" {
			return s
		}
		return try(w[:len(w)-1])
	case strings.HasSuffix(w, "s") && len(w) > 3:
		return try(w[:len(w)-1])
	}
	return ""
}

// fileClass reports which file classes a path-like token (lower-cased)
// belongs to: an entry ending in "/" is a directory anywhere in the path,
// one with a "/" a tail of the path, others a base name.
func fileClass(tok string) lexClass {
	if tok == "" || !strings.ContainsAny(tok, "./") {
		return 0
	}
	lx := lexOnce()
	base := tok
	if i := strings.LastIndexByte(strings.TrimSuffix(tok, "/"), '/'); i >= 0 {
		base = tok[i+1:]
	}
	c := lx.fileBase[base]
	if !strings.Contains(tok, "/") {
		return c
	}
	for _, f := range lx.fileRest {
		e := f.e
		if strings.HasSuffix(e, "/") {
			if i := strings.Index(tok, e); i >= 0 && (i == 0 || tok[i-1] == '/' || tok[i-1] == '~' || e[0] == '/') {
				c |= f.cls
			}
		} else if strings.HasSuffix(tok, e) && (len(tok) == len(e) || tok[len(tok)-len(e)-1] == '/' || e[0] == '/') {
			c |= f.cls
		}
	}
	return c
}
