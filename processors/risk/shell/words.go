package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// wellKnownVars are variables a script reads without setting, with the
// value they hold on nearly every system (or the conventional default when
// unset). Resolving them lets "$HOME/.ssh", "rm${IFS}-rf${IFS}/",
// "$SHELL -c …" and "$CODEX_HOME/config.toml" be judged for what they
// are. HOME stays "~" so that paths are classed as the user's.
var wellKnownVars = map[string]string{
	"HOME":                        "~",
	"TMPDIR":                      "/tmp",
	"IFS":                         " \t\n",
	"SHELL":                       "/bin/sh",
	"BASH":                        "/bin/bash",
	"EDITOR":                      "vi",
	"VISUAL":                      "vi",
	"PAGER":                       "less",
	"XDG_CONFIG_HOME":             "~/.config",
	"XDG_DATA_HOME":               "~/.local/share",
	"XDG_CACHE_HOME":              "~/.cache",
	"XDG_STATE_HOME":              "~/.local/state",
	"ZDOTDIR":                     "~",
	"GNUPGHOME":                   "~/.gnupg",
	"CODEX_HOME":                  "~/.codex",
	"CLAUDE_CONFIG_DIR":           "~/.claude",
	"HERMES_HOME":                 "~/.hermes",
	"GEMINI_CLI_HOME":             "~",
	"AWS_CONFIG_FILE":             "~/.aws/config",
	"AWS_SHARED_CREDENTIALS_FILE": "~/.aws/credentials",
	"KUBECONFIG":                  "~/.kube/config",
	"DOCKER_CONFIG":               "~/.docker",
}

// value is what a shell variable holds, as far as the walker knows.
type value struct {
	s     string
	arr   []string // set for arrays
	isArr bool
	dyn   bool
	d     *data
}

// scope holds variables, positional parameters and the working directory.
// Subshells and command substitutions work on a copy.
type scope struct {
	vars map[string]value
	pos  []string // $0, $1 …
	cwd  string
}

func newScope() *scope { return &scope{vars: map[string]value{}} }

func (s *scope) clone() *scope {
	c := &scope{vars: make(map[string]value, len(s.vars)), cwd: s.cwd}
	for k, v := range s.vars {
		c.vars[k] = v
	}
	c.pos = append([]string(nil), s.pos...)
	return c
}

// field is one word after expansion and splitting.
type field struct {
	s    string
	dyn  bool
	d    *data
	glob bool // holds an unquoted glob pattern
}

// fieldBuilder accumulates the pieces of one word into fields, splitting
// unquoted expansions on blanks as a shell would.
type fieldBuilder struct {
	out     []field
	cur     strings.Builder
	curDyn  bool
	curData *data
	curGlob bool
	started bool
}

func (b *fieldBuilder) lit(s string) {
	b.cur.WriteString(s)
	b.started = true
}

func (b *fieldBuilder) attach(d *data) {
	if d == nil {
		return
	}
	if b.curData == nil {
		b.curData = &data{}
	}
	b.curData.flags |= d.flags
	b.curData.paths = append(b.curData.paths, d.paths...)
	b.curData.items = append(b.curData.items, d.items...)
}

// expansion adds the result of an expansion; unquoted ones are split.
func (b *fieldBuilder) expansion(s string, dyn, quoted bool, d *data) {
	if dyn {
		b.curDyn = true
	}
	b.attach(d)
	if quoted {
		b.cur.WriteString(s)
		b.started = true
		return
	}
	parts := strings.Fields(s)
	if len(parts) == 0 {
		// Only blanks (an unquoted ${IFS}): they separate fields.
		if s != "" && b.started {
			b.flush()
		}
		return
	}
	if s != "" && isBlank(s[0]) && b.started {
		b.flush()
	}
	for i, p := range parts {
		if i > 0 {
			b.flush()
			if dyn {
				b.curDyn = true
			}
			b.attach(d)
		}
		b.cur.WriteString(p)
		b.started = true
	}
	if isBlank(s[len(s)-1]) {
		b.flush()
	}
}

func (b *fieldBuilder) flush() {
	if !b.started && !b.curDyn {
		b.curData = nil
		return
	}
	b.out = append(b.out, field{s: b.cur.String(), dyn: b.curDyn, d: b.curData, glob: b.curGlob})
	b.cur.Reset()
	b.curDyn = false
	b.curGlob = false
	b.curData = nil
	b.started = false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// fields expands w into zero or more fields.
func (w *walker) fields(word *syntax.Word) []field {
	if word == nil {
		return nil
	}
	var b fieldBuilder
	if ws := braceWords(word); ws != nil {
		// {rm,-rf,/srv} and a{b,c}: each alternative is a word of its own
		for _, bw := range ws {
			w.wordParts(&b, bw.Parts, false)
			b.flush()
		}
	} else {
		w.wordParts(&b, word.Parts, false)
		b.flush()
	}
	if w.self != nil && w.self.home != "" {
		for i := range b.out {
			b.out[i].s = homeRel(w.self.home, b.out[i].s)
		}
	}
	return b.out
}

// maxBraceWords bounds the words one brace expansion may yield; beyond it
// the word is kept as written (as before brace expansion was modelled).
const maxBraceWords = 64

// braceWords returns the words bash's brace expansion makes of word, nil
// when it has no brace expansion or would make more than maxBraceWords.
// The parsed word itself is not changed.
func braceWords(word *syntax.Word) []*syntax.Word {
	has := false
	for _, p := range word.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 && (strings.IndexByte(l.Value, ',') >= 0 || strings.Contains(l.Value, "..")) {
			has = true
		}
	}
	if !has {
		return nil
	}
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), word.Parts...)}
	if !syntax.SplitBraces(cp) {
		return nil
	}
	var out []*syntax.Word
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) >= maxBraceWords {
			return nil
		}
		out = append(out, bw)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// str expands w into one string (no splitting), as in an assignment or a
// redirection target.
func (w *walker) str(word *syntax.Word) field {
	if word == nil {
		return field{}
	}
	var b fieldBuilder
	for _, p := range word.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			// an unquoted literal: backslashes escape (X=rm\ -rf is "rm -rf")
			b.lit(unescapeLit(l.Value))
			continue
		}
		w.wordParts(&b, []syntax.WordPart{p}, true)
	}
	f := field{s: b.cur.String(), dyn: b.curDyn, d: b.curData}
	if w.self != nil && w.self.home != "" {
		f.s = homeRel(w.self.home, f.s)
	}
	return f
}

func (w *walker) wordParts(b *fieldBuilder, parts []syntax.WordPart, quoted bool) {
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if quoted {
				b.lit(unescapeDouble(x.Value))
			} else {
				if hasGlobMeta(x.Value) {
					b.curGlob = true
				}
				b.lit(unescapeLit(x.Value))
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				b.lit(DecodeANSIC(x.Value))
			} else {
				b.lit(x.Value)
			}
		case *syntax.DblQuoted:
			b.started = true
			for _, q := range x.Parts {
				if pe, ok := q.(*syntax.ParamExp); ok && isAtArray(pe) {
					v, found := w.lookup(pe.Param.Value)
					if found && v.isArr && w.spend(len(v.s)) {
						for i, e := range v.arr {
							if i > 0 {
								b.flush()
								b.started = true
							}
							b.lit(e)
						}
						continue
					}
				}
				w.wordParts(b, []syntax.WordPart{q}, true)
			}
		case *syntax.ParamExp:
			s, dyn, d := w.paramExp(x, quoted)
			if !quoted && isAtArray(x) {
				if v, ok := w.lookup(x.Param.Value); ok && v.isArr && w.spend(len(v.s)) {
					for i, e := range v.arr {
						if i > 0 {
							b.flush()
						}
						b.lit(e)
					}
					continue
				}
			}
			b.expansion(w.ifsSplit(s, quoted), dyn, quoted, d)
		case *syntax.CmdSubst:
			d := w.cmdSubst(x.Stmts, x)
			if d.known {
				b.expansion(w.ifsSplit(strings.TrimRight(d.text, "\n"), quoted), false, quoted, d)
			} else {
				txt := "$(…)"
				if d.text != "" && d.flags&(flowStatic) != 0 {
					txt = strings.TrimRight(d.text, "\n")
				}
				b.expansion(txt, true, true, d)
			}
		case *syntax.ProcSubst:
			d := w.procSubst(x)
			b.expansion("/dev/fd/63", false, true, d)
		case *syntax.ArithmExp:
			w.walkNodeSubsts(x)
			b.expansion("0", true, true, nil)
		case *syntax.ExtGlob:
			b.curGlob = true
			b.lit(x.Op.String() + x.Pattern.Value + ")")
		case *syntax.BraceExp:
			var sb strings.Builder
			sb.WriteByte('{')
			for i, e := range x.Elems {
				if i > 0 {
					if x.Sequence {
						sb.WriteString("..")
					} else {
						sb.WriteByte(',')
					}
				}
				sb.WriteString(w.str(e).s)
			}
			sb.WriteByte('}')
			b.lit(sb.String())
		default:
			b.expansion("$?", true, true, nil)
		}
	}
}

// ifsSplit prepares an unquoted expansion for word splitting under an IFS
// the script set (IFS=,; x=rm,-rf,/; $x): its non-blank separators become
// blanks, which the field builder splits on.
func (w *walker) ifsSplit(s string, quoted bool) string {
	if quoted {
		return s
	}
	v, ok := w.sc.vars["IFS"]
	if !ok || v.dyn || strings.Trim(v.s, " \t\n") == "" {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x80 && strings.ContainsRune(v.s, r) {
			return ' '
		}
		return r
	}, s)
}

func isAtArray(pe *syntax.ParamExp) bool {
	if pe.Param == nil || pe.Index == nil || pe.Exp != nil || pe.Length || pe.Excl {
		return false
	}
	if iw, ok := pe.Index.(*syntax.Word); ok {
		l := iw.Lit()
		return l == "@" || l == "*"
	}
	return false
}

func (w *walker) lookup(name string) (value, bool) {
	v, ok := w.sc.vars[name]
	return v, ok
}

// paramExp evaluates a parameter expansion.
func (w *walker) paramExp(pe *syntax.ParamExp, quoted bool) (string, bool, *data) {
	if pe.Param == nil {
		return "$?", true, nil
	}
	name := pe.Param.Value
	if pe.Length {
		return "0", true, nil
	}
	if pe.Excl {
		return "$" + name, true, nil
	}
	var v value
	set := false
	switch {
	case name == "@" || name == "*":
		if len(w.sc.pos) > 1 {
			v = value{s: strings.Join(w.sc.pos[1:], " "), arr: w.sc.pos[1:], isArr: true}
			set = true
		}
	case len(name) == 1 && name[0] >= '0' && name[0] <= '9':
		i := int(name[0] - '0')
		if i < len(w.sc.pos) {
			v = value{s: w.sc.pos[i]}
			set = true
		} else if len(w.sc.pos) == 0 {
			v = value{s: "$" + name, dyn: true}
			set = true
		}
	case name == "#" || name == "?" || name == "$" || name == "!" || name == "-":
		return "$" + name, true, nil
	default:
		if vv, ok := w.sc.vars[name]; ok {
			v, set = vv, true
			if pe.Index != nil && vv.isArr {
				if iw, ok := pe.Index.(*syntax.Word); ok {
					if n, err := strconv.Atoi(iw.Lit()); err == nil && n >= 0 && n < len(vv.arr) {
						v = value{s: vv.arr[n]}
					}
				}
			}
		} else {
			if d, ok := wellKnownVars[name]; ok {
				v, set = value{s: d}, true
			}
			if name == "PWD" {
				v, set = value{s: "."}, true
				if w.sc.cwd != "" {
					v = value{s: w.sc.cwd}
				}
			}
		}
	}
	if set && !w.spend(len(v.s)) {
		return "$" + name, true, nil
	}
	if pe.Exp != nil {
		switch pe.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if !set || (v.s == "" && !v.dyn && (pe.Exp.Op == syntax.DefaultUnsetOrNull || pe.Exp.Op == syntax.AssignUnsetOrNull)) {
				f := w.str(pe.Exp.Word)
				if pe.Exp.Op == syntax.AssignUnset || pe.Exp.Op == syntax.AssignUnsetOrNull {
					w.sc.vars[name] = value{s: f.s, dyn: f.dyn, d: f.d}
				}
				return f.s, f.dyn, f.d
			}
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			if set && !v.dyn {
				f := w.str(pe.Exp.Word)
				return f.s, f.dyn, f.d
			}
			if !set {
				return "", false, nil
			}
			return "$" + name, true, nil
		case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
			if set && !v.dyn {
				pat := w.str(pe.Exp.Word)
				if !pat.dyn && !strings.ContainsAny(pat.s, "*?[") {
					switch pe.Exp.Op {
					case syntax.RemSmallPrefix, syntax.RemLargePrefix:
						return strings.TrimPrefix(v.s, pat.s), false, v.d
					default:
						return strings.TrimSuffix(v.s, pat.s), false, v.d
					}
				}
			}
			return "$" + name, true, v.d
		case syntax.UpperAll:
			if set && !v.dyn {
				return strings.ToUpper(v.s), false, v.d
			}
		case syntax.LowerAll:
			if set && !v.dyn {
				return strings.ToLower(v.s), false, v.d
			}
		case syntax.UpperFirst, syntax.LowerFirst:
			if set && !v.dyn && v.s != "" {
				r, n := utf8.DecodeRuneInString(v.s)
				s := string(r)
				if pe.Exp.Op == syntax.UpperFirst {
					s = strings.ToUpper(s)
				} else {
					s = strings.ToLower(s)
				}
				return s + v.s[n:], false, v.d
			}
		}
	}
	if pe.Repl != nil && set && !v.dyn {
		orig, with := w.str(pe.Repl.Orig), w.str(pe.Repl.With)
		if !orig.dyn && !with.dyn && !strings.ContainsAny(orig.s, "*?[") && orig.s != "" {
			if pe.Repl.All {
				return strings.ReplaceAll(v.s, orig.s, with.s), false, v.d
			}
			return strings.Replace(v.s, orig.s, with.s, 1), false, v.d
		}
		return "$" + name, true, v.d
	}
	if pe.Slice != nil && set && !v.dyn {
		off, ok1 := arithLit(pe.Slice.Offset)
		if ok1 {
			s := v.s
			if off < 0 {
				off += len(s)
			}
			if off >= 0 && off <= len(s) {
				s = s[off:]
				if pe.Slice.Length != nil {
					if n, ok := arithLit(pe.Slice.Length); ok && n >= 0 && n <= len(s) {
						s = s[:n]
					} else {
						return "$" + name, true, v.d
					}
				}
				return s, false, v.d
			}
		}
		return "$" + name, true, v.d
	}
	if !set {
		return "$" + name, true, nil
	}
	if v.dyn && v.s == "" {
		return "$" + name, true, v.d
	}
	return v.s, v.dyn, v.d
}

func arithLit(e syntax.ArithmExpr) (int, bool) {
	switch x := e.(type) {
	case *syntax.Word:
		n, err := strconv.Atoi(x.Lit())
		return n, err == nil
	case *syntax.UnaryArithm:
		if x.Op == syntax.Minus {
			n, ok := arithLit(x.X)
			return -n, ok
		}
	}
	return 0, false
}

// unescapeLit removes the backslashes of an unquoted literal: \r -> r.
func unescapeLit(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble handles the escapes that work inside double quotes.
func unescapeDouble(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// DecodeANSIC interprets the escapes of $'…' (and echo -e, printf formats).
func DecodeANSIC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(s[i])
		case 'x':
			n, j := 0, i+1
			for ; j < len(s) && j < i+3 && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteString("\\x")
				continue
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'u', 'U':
			max := 4
			if s[i] == 'U' {
				max = 8
			}
			n, j := 0, i+1
			for ; j < len(s) && j < i+1+max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(s[i])
				continue
			}
			b.WriteRune(rune(n))
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}
