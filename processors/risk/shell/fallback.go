package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

var fdDupRe = core.LazyRE(`^\d*[<>]&\d*-?$`)

// fallback analyses input that neither bash nor POSIX sh accepts: a rough
// tokenisation into commands (split on ; && || | & and newlines, quotes
// removed) so that an unbalanced quote cannot hide "rm -rf /".
func (w *walker) fallback(src string) {
	if w.top {
		w.outer = [2]int{0, len(src)}
	}
	type tok struct {
		words []string
		pipe  bool // followed by |
	}
	var cmds []tok
	var cur []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func(pipe bool) {
		flushWord()
		if len(cur) > 0 {
			cmds = append(cmds, tok{words: cur, pipe: pipe})
		}
		cur = nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\'' || c == '"':
			inWord = true
			j := i + 1
			for j < len(src) && src[j] != c {
				if c == '"' && src[j] == '\\' && j+1 < len(src) {
					j++
				}
				word.WriteByte(src[j])
				j++
			}
			i = j
		case c == '\\' && i+1 < len(src):
			inWord = true
			i++
			word.WriteByte(src[i])
		case c == ' ' || c == '\t':
			flushWord()
		case c == '\n' || c == ';':
			flushCmd(false)
		case c == '&':
			if i+1 < len(src) && src[i+1] == '&' {
				i++
			}
			flushCmd(false)
		case c == '|':
			if i+1 < len(src) && src[i+1] == '|' {
				i++
				flushCmd(false)
			} else {
				flushCmd(true)
			}
		case c == '(' || c == ')' || c == '{' || c == '}' || c == '`':
			flushWord()
		default:
			inWord = true
			word.WriteByte(c)
		}
		if len(cmds) > maxCommands {
			break
		}
	}
	flushCmd(false)
	var prev *data
	prevPipe := false
	for _, t := range cmds {
		var fs []field
		for _, s := range t.words {
			if strings.HasPrefix(s, "$") {
				fs = append(fs, field{s: s, dyn: true})
			} else {
				fs = append(fs, field{s: s})
			}
		}
		// strip redirections the tokeniser kept as words
		var clean []field
		var redirs []redir
		for i := 0; i < len(fs); i++ {
			s := fs[i].s
			if fdDupRe.MatchString(s) {
				continue
			}
			if s == ">" || s == ">>" || s == "<" {
				if i+1 < len(fs) {
					redirs = append(redirs, redir{op: s, target: fs[i+1].s})
					i++
				}
				continue
			}
			if (strings.HasPrefix(s, ">") || strings.HasPrefix(s, "<")) && len(s) > 1 && s[1] != '(' {
				op := s[:1]
				rest := s[1:]
				if strings.HasPrefix(rest, ">") {
					op, rest = ">>", rest[1:]
				}
				redirs = append(redirs, redir{op: op, target: rest})
				continue
			}
			clean = append(clean, fs[i])
		}
		ctx := stmtCtx{}
		if prevPipe {
			ctx.stdin = prev
			ctx.inPipe = true
		}
		ctx.pipeOut = t.pipe
		if len(clean) == 0 {
			prevPipe = t.pipe
			continue
		}
		for len(clean) > 0 && strings.Contains(clean[0].s, "=") && !strings.HasPrefix(clean[0].s, "=") && !strings.Contains(clean[0].s[:strings.IndexByte(clean[0].s, '=')], "/") {
			kv := clean[0].s
			eq := strings.IndexByte(kv, '=')
			w.sc.vars[kv[:eq]] = value{s: kv[eq+1:]}
			w.checkAssign(kv[:eq], kv[eq+1:], false, w.outer)
			clean = clean[1:]
		}
		if len(clean) == 0 {
			prevPipe = t.pipe
			continue
		}
		prev = w.runFields(clean, nil, redirs, ctx, nil)
		prevPipe = t.pipe
		if w.exhausted {
			return
		}
	}
}
