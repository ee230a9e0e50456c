package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Characters that make a command display differently from what runs
// (deceptive-characters, MEDIUM): raw control characters (an ESC sequence
// recolours or hides text, a lone carriage return moves the cursor back so
// later text overprints earlier, a NUL cuts the displayed line), invisible
// format characters (zero-width spaces and joiners, bidirectional
// overrides, Unicode tags), and, in a command name, fullwidth letters or an
// ideographic space (`ｒｍ`, `rm　-rf　/` display like rm but name another
// program). The person approving a command reads the display; an agent
// has no honest reason to send either.

// invisibleRune reports whether r is a control or invisible format
// character.
func invisibleRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069,
		r == 0xfeff, r >= 0xe0000 && r <= 0xe007f, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// deceptiveChars reports the first control or invisible character of src.
func (w *walker) deceptiveChars(src string) {
	for i := 0; i < len(src); i++ {
		b := src[i]
		if b < 0x80 {
			if b >= 0x20 && b != 0x7f || b == '\t' || b == '\n' || b == '\r' && i+1 < len(src) && src[i+1] == '\n' {
				continue
			}
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleDeceptiveCharacters, Level: med,
				Detail: fmt.Sprintf("the command holds the control character %U, which changes how it is displayed to the person approving it", rune(b)), Span: [2]int{i, i + 1}})
			return
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if invisibleRune(r) {
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleDeceptiveCharacters, Level: med,
				Detail: fmt.Sprintf("the command holds the invisible character %U, which hides or reorders what is displayed", r), Span: [2]int{i, i + n}})
			return
		}
		i += n - 1
	}
}

// wideName returns name with fullwidth forms and ideographic spaces folded
// to ASCII, and whether there were any.
func wideName(name string) (string, bool) {
	if !strings.ContainsFunc(name, func(r rune) bool { return r == 0x3000 || r >= 0xff01 && r <= 0xff5e }) {
		return name, false
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0x3000:
			return ' '
		case r >= 0xff01 && r <= 0xff5e:
			return r - 0xfee0
		}
		return r
	}, name), true
}

// wideCommand flags a command name written with fullwidth letters or wide
// spaces.
func (w *walker) wideCommand(c *command) {
	folded, ok := wideName(c.path)
	if !ok {
		return
	}
	// Only a name that reads as a program the rules judge impersonates it
	// (ｒｍ, ｄｄ, ｃｈｍｏｄ); ｌｓ displays and does nothing worth hiding.
	first := folded
	if i := strings.IndexByte(first, ' '); i >= 0 {
		first = first[:i]
	}
	if n := CanonicalName(first); ruledCmds()[n] && !mentionCmds()[n] || shells[n] {
		w.hit(c, ruleDeceptiveCharacters, med, "the command name "+core.TrimArg(c.path)+" is written with fullwidth letters or wide spaces: it displays like "+core.TrimArg(folded)+" but names another program")
		if strings.ContainsRune(c.path, 0x3000) && !strings.ContainsAny(folded, "$`\\'\"") {
			// Tokenizers differ: POSIX shells keep U+3000 inside a word,
			// Python's str.split and .NET's char.IsWhiteSpace split on it.
			// The command is judged in the reading that splits too.
			w.reparse(strings.Join(append([]string{folded}, c.args...), " "), "ideographic spaces read as spaces", nil, nil, c.sudo)
		}
	}
}
