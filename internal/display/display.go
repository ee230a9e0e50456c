// Package display turns text that an agent wrote (a command, an agent or
// conversation name, a rule name, a reason's detail, a message) into text
// that is safe to show a person on a terminal, in a table, in a prompt or
// in an error message. It is the one way Vigil's CLI shows agent text.
//
// # The contract
//
// The output of Escape, Clip and Line holds only printable runes and the
// ASCII space: nothing a terminal interprets (no C0 or C1 control, no ESC
// sequence, no DEL), nothing that reorders text (no bidi override,
// embedding, isolate or mark), nothing invisible (no zero-width space,
// joiner, word joiner, soft hyphen, BOM, tag character, variation
// selector, Hangul filler, invisible operator or other default-ignorable
// code point, no line or paragraph separator, no space but U+0020), no
// private-use, surrogate or unassigned code point, and no run of more than
// MaxCombining combining marks (which stack over other lines). Each such
// rune is shown as an escape instead, never interpreted:
//
//	\t \n \r           tab, line feed, carriage return
//	\x1b \x7f          any other C0 control or DEL
//	\xff               a byte that is not valid UTF-8
//	\u202e \u00a0      any other such rune of the BMP
//	\U000e0041         any other such rune
//
// A backslash is shown as it is, so Escape is idempotent: the escape of an
// escape is the same text, and text escaped twice by two layers reads the
// same. The price is that an agent can write the six characters `\x1b`
// itself, which look like an escaped ESC; the exact bytes are always one
// flag away (--json), where JSON's own escapes are unambiguous.
//
// # Never silently cut
//
// Clip bounds a text's width for a table cell or a message and keeps both
// ends: the head, the marker "… N bytes not shown …" (N counted in the
// original text) and the tail, so a dangerous end (`&& curl … | bash`) is
// never the part that falls off. Callers offer the whole text one flag away
// (vigil pending --full).
package display

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxCombining is how many combining marks in a row are shown as marks;
// the next ones are shown as escapes (a long run stacks over the lines
// above and below on most terminals).
const MaxCombining = 2

// Escape returns s with every rune that a terminal could interpret, that
// reorders text or that cannot be seen shown as an escape (see the package
// doc). It never cuts.
func Escape(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	walk(s, func(tok string, _ int) bool {
		b.WriteString(tok)
		return true
	})
	return b.String()
}

// Clip returns Escape(s) if it is at most max runes wide, else its first
// and last runes around the marker "… N bytes not shown …", where N counts
// the bytes of s that are not shown, so the result is about max runes wide.
// An escape is kept whole or left out whole. A max below MinClip is taken
// as MinClip.
func Clip(s string, max int) string {
	if max < MinClip {
		max = MinClip
	}
	e := Escape(s)
	if utf8.RuneCountInString(e) <= max {
		return e
	}
	type tok struct {
		text string
		src  int // bytes of s it shows
	}
	var toks []tok
	walk(s, func(t string, n int) bool {
		toks = append(toks, tok{t, n})
		return true
	})
	// The marker is at most len(" … 99999999999 bytes not shown … ") wide.
	room := max - 30
	headRoom := room * 2 / 3
	tailRoom := room - headRoom
	head, width := 0, 0
	for head < len(toks) {
		w := utf8.RuneCountInString(toks[head].text)
		if width+w > headRoom {
			break
		}
		width += w
		head++
	}
	tail, width := len(toks), 0
	for tail > head {
		w := utf8.RuneCountInString(toks[tail-1].text)
		if width+w > tailRoom {
			break
		}
		width += w
		tail--
	}
	hidden := 0
	for _, t := range toks[head:tail] {
		hidden += t.src
	}
	var b strings.Builder
	for _, t := range toks[:head] {
		b.WriteString(t.text)
	}
	b.WriteString(" … ")
	b.WriteString(strconv.Itoa(hidden))
	if hidden == 1 {
		b.WriteString(" byte not shown … ")
	} else {
		b.WriteString(" bytes not shown … ")
	}
	for _, t := range toks[tail:] {
		b.WriteString(t.text)
	}
	return b.String()
}

// MinClip is the narrowest Clip: the marker and a few runes each side.
const MinClip = 40

// Field returns the escaped text of one field in a table or a line,
// clipped to max runes when max > 0 and full is false; "-" for an empty
// text, so that a field can never look absent by being empty.
func Field(s string, max int, full bool) string {
	if s == "" {
		return "-"
	}
	if full || max <= 0 {
		return Escape(s)
	}
	return Clip(s, max)
}

// Line returns what goes first on a line about an action: its level, then
// its rules, each escaped, e.g. "HIGH  shell/rm-recursive, redact/aws-key"
// ("HIGH  -" with no rule). A person reads what Vigil concluded before
// anything the agent wrote.
func Line(level string, rules ...string) string {
	var b strings.Builder
	b.WriteString(Field(level, 16, false))
	b.WriteString("  ")
	if len(rules) == 0 {
		b.WriteString("-")
	}
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Field(r, 64, false))
	}
	return b.String()
}

// Command is what an action of tool with args runs, whole, as a person
// reads it before deciding: its shell command (or code, script), else the
// tool and its main argument (path, url, query, pattern), else the tool
// and its arguments as JSON. It is never cut (unlike the gate's summary,
// which ends at 400 bytes) and not escaped: show it with Field or Clip.
//
// A program field with an argument list beside it ({"command": "rm",
// "args": ["-rf", "/"]}) is shown as the one command it makes, and every
// other field that holds a command, code or a script follows it, named
// (`ls [and cmd: rm -rf /]`): the tool may run any of them.
func Command(tool string, args map[string]any) string {
	for i, k := range commandKeys {
		s, ok := args[k].(string)
		if !ok || s == "" {
			continue
		}
		for _, lk := range []string{"args", "argv", "arguments"} {
			if l, ok := args[lk].([]any); ok && len(l) > 0 {
				s += " " + argList(l)
				break
			}
		}
		for _, k2 := range commandKeys[i+1:] {
			if s2, ok := args[k2].(string); ok && s2 != "" && s2 != s {
				s += " [and " + k2 + ": " + s2 + "]"
			}
		}
		return s
	}
	for _, k := range []string{"path", "file_path", "url", "query", "pattern"} {
		if s, ok := args[k].(string); ok && s != "" {
			return tool + " " + s
		}
	}
	if len(args) == 0 {
		return tool
	}
	b, err := json.Marshal(args)
	if err != nil {
		return tool
	}
	return tool + " " + string(b)
}

// commandKeys are the argument names whose value a tool runs, in the
// order Command shows them.
var commandKeys = []string{"command", "cmd", "code", "script"}

// argList is an argument list as a shell would read it: each string
// argument single-quoted when it holds anything but plain characters; a
// list with a value that is not a string, as JSON.
func argList(l []any) string {
	parts := make([]string, len(l))
	for i, v := range l {
		a, ok := v.(string)
		if !ok {
			b, err := json.Marshal(l)
			if err != nil {
				return fmt.Sprint(l)
			}
			return string(b)
		}
		parts[i] = shellWord(a)
	}
	return strings.Join(parts, " ")
}

func shellWord(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// Text is Escape for a message of several lines (an error): each line is
// escaped, and the line feeds between them are kept.
func Text(s string) string {
	if safe(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// Safe reports whether s is shown as it is (Escape(s) == s).
func Safe(s string) bool { return safe(s) }

func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			ok := true
			walk(s, func(tok string, n int) bool {
				if len(tok) != n {
					ok = false
					return false
				}
				return true
			})
			return ok
		}
	}
	return true
}

// walk calls f with each token of s's display (a rune shown as it is, or
// the escape that shows it) and the bytes of s it stands for, until f
// returns false.
func walk(s string, f func(tok string, src int) bool) {
	marks := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		tok := s[i : i+n]
		switch {
		case r == utf8.RuneError && n == 1:
			tok = `\x` + hex2(s[i])
			marks = 0
		case hidden(r):
			tok = escapeRune(r)
			marks = 0
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
			marks++
			if marks > MaxCombining {
				tok = escapeRune(r)
			}
		default:
			marks = 0
		}
		if !f(tok, n) {
			return
		}
		i += n
	}
}

// hidden reports whether r is shown as an escape.
func hidden(r rune) bool {
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	if !unicode.IsPrint(r) { // C0, C1, Cf (bidi, zero-width), Cs, Co, Cn, Zl, Zp, Zs
		return true
	}
	return unicode.Is(unicode.Me, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Bidi_Control, r) ||
		unicode.Is(unicode.Join_Control, r) ||
		r == 0x2800 || // braille pattern blank: looks like a space
		r == 0x034f || r == 0x17b4 || r == 0x17b5 || // invisible marks
		r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 // Hangul fillers
}

func escapeRune(r rune) string {
	switch r {
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	}
	switch {
	case r < 0x80:
		return `\x` + hex2(byte(r))
	case r <= 0xffff:
		return `\u` + pad(strconv.FormatInt(int64(r), 16), 4)
	}
	return `\U` + pad(strconv.FormatInt(int64(r), 16), 8)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}
