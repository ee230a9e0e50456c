package inject

import (
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Invisible characters and look-alike letters, as a signal and normalised
// away before the sentence rules run: "ig\u2063nore all previous
// instructions" reads, to the model, like the plain phrase; the scanner
// reads it the same way.

// zeroWidth reports the characters that render as nothing in running text:
// zero-width spaces and joiners, direction marks, invisible operators,
// word joiners, the byte-order mark inside a text, fillers.
func zeroWidth(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x2060 && r <= 0x2064, r == 0xFEFF, r == 0x180E, r == 0x034F,
		r == 0x061C, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x17B4, r == 0x17B5:
		return true
	}
	return false
}

// bidiControl: embeddings, overrides and isolates that reorder display.
func bidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// tagChar: the Unicode Tags block, invisible copies of ASCII.
func tagChar(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// emojiTagSequence returns the length in bytes of the tag characters that
// make a flag of a subdivision after U+1F3F4 (🏴 + "gbsct" in tags +
// CANCEL TAG: a region and a subdivision code, 3-7 tag digits or lowercase
// letters, then U+E007F), or 0 when s does not start with one. Such flags
// are what tag characters are for in text; a longer run spells words.
func emojiTagSequence(s string) int {
	n := 0
	for i, r := range s {
		switch {
		case r == 0xE007F:
			if n < 3 {
				return 0
			}
			return i + utf8.RuneLen(r)
		case n < 7 && (r >= 0xE0030 && r <= 0xE0039 || r >= 0xE0061 && r <= 0xE007A):
			n++
		default:
			return 0
		}
	}
	return 0
}

// variationSelector: VS1–VS256. After an emoji they choose its style; a
// run of them after one character is a known way to hide bytes.
func variationSelector(r rune) (byte, bool) {
	switch {
	case r >= 0xFE00 && r <= 0xFE0F:
		return byte(r - 0xFE00), true
	case r >= 0xE0100 && r <= 0xE01EF:
		return byte(r-0xE0100) + 16, true
	}
	return 0, false
}

// foldRune maps compatibility forms to the ASCII a reader sees: fullwidth
// forms, mathematical alphanumerics, ideographic space.
func foldRune(r rune) (rune, bool) {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFF01 + '!', true
	case r == 0x3000 || r == 0x00A0 || (r >= 0x2000 && r <= 0x200A) || r == 0x202F || r == 0x205F:
		return ' ', true
	case r >= 0x1D400 && r <= 0x1D6A3:
		i := (r - 0x1D400) % 52
		if i < 26 {
			return 'A' + i, true
		}
		return 'a' + i - 26, true
	case r >= 0x1D7CE && r <= 0x1D7FF:
		return '0' + (r-0x1D7CE)%10, true
	case r == 0x00AD:
		return 0, true // soft hyphen: dropped
	}
	return r, false
}

// confusable maps Cyrillic and Greek letters that look like Latin ones; it
// is applied only inside words that also hold Latin letters, so Russian
// or Greek text is left alone.
var confusable = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'х': 'x', 'у': 'y', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'һ': 'h',
	'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O',
	'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S',
	'ο': 'o', 'α': 'a', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'Α': 'A', 'Β': 'B', 'Ε': 'E',
	'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
}

func asciiLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// foldText returns text as the sentence rules should read it: invisible
// characters and variation selectors removed, compatibility forms and
// look-alike letters inside Latin words folded to ASCII. pos maps each
// byte of out (and len(out)) to its byte in text. changed is false, and
// out is text, when there is nothing to fold.
func foldText(text string) (out string, pos []int32, changed bool) {
	need := false
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			need = true
			break
		}
	}
	if !need {
		return text, nil, false
	}
	type rr struct {
		r   rune
		at  int
		end int
	}
	rs := make([]rr, 0, len(text))
	for i, r := range text {
		rs = append(rs, rr{r, i, i + utf8.RuneLen(r)})
	}
	var b strings.Builder
	b.Grow(len(text))
	pos = make([]int32, 0, len(text)+1)
	// latinNear: is there a Latin letter next to rs[k], looking past other
	// confusables and invisible characters?
	latinNear := func(k int) bool {
		for j := k - 1; j >= 0; j-- {
			r := rs[j].r
			if asciiLetter(r) {
				return true
			}
			if _, ok := confusable[r]; ok || zeroWidth(r) {
				continue
			}
			break
		}
		for j := k + 1; j < len(rs); j++ {
			r := rs[j].r
			if asciiLetter(r) {
				return true
			}
			if _, ok := confusable[r]; ok || zeroWidth(r) {
				continue
			}
			break
		}
		return false
	}
	emit := func(r rune, at int) {
		n := b.Len()
		if r < utf8.RuneSelf {
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(r)
		}
		for k := n; k < b.Len(); k++ {
			pos = append(pos, int32(at))
		}
	}
	// wordChar: is the visible character next to rs[k] (looking past
	// other invisible ones, in direction d) a letter or a digit?
	wordChar := func(k, d int) bool {
		for j := k + d; j >= 0 && j < len(rs); j += d {
			r := rs[j].r
			if zeroWidth(r) || tagChar(r) || bidiControl(r) {
				continue
			}
			return r >= 0x80 || asciiLetter(r) || r >= '0' && r <= '9'
		}
		return false
	}
	for k, x := range rs {
		r := x.r
		if zeroWidth(r) || tagChar(r) || bidiControl(r) {
			if r == 0x200D || r == 0x200C {
				// joiners inside emoji and scripts that need them
				if k > 0 && !asciiLetter(rs[k-1].r) && rs[k-1].r >= 0x80 {
					emit(r, x.at)
					continue
				}
			}
			changed = true
			// inside a word it splits the word: drop it; between words or
			// after punctuation it separates them ("tabs.\u200bignore"):
			// read a space, once
			if !(wordChar(k, -1) && wordChar(k, 1)) && (k == 0 || !(zeroWidth(rs[k-1].r) || tagChar(rs[k-1].r) || bidiControl(rs[k-1].r))) {
				emit(' ', x.at)
			}
			continue
		}
		if _, ok := variationSelector(r); ok {
			if r >= 0xE0100 || (k > 0 && rs[k-1].r < 0x80) {
				changed = true
				continue
			}
			emit(r, x.at)
			continue
		}
		if f, ok := foldRune(r); ok {
			changed = true
			if f != 0 {
				emit(f, x.at)
			}
			continue
		}
		if c, ok := confusable[r]; ok && latinNear(k) {
			changed = true
			emit(c, x.at)
			continue
		}
		emit(r, x.at)
	}
	if !changed {
		return text, nil, false
	}
	pos = append(pos, int32(len(text)))
	return b.String(), pos, true
}

// invisibleSignals reports invisible characters in text (original bytes):
// Unicode tag characters (decoded and scanned), bidirectional controls
// (reversed runs read back and judged), zero-width characters (strong when
// they split a Latin word or when there are three or more), and variation
// selector runs that carry bytes (decoded and scanned).
func (s *scanner) invisible(text string, base int) {
	// every character it reports is outside ASCII
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return
	}
	var tags strings.Builder
	tagStart, tagEnd := -1, -1
	zw, bidi := 0, 0
	zwStart, zwEnd, bidiStart := -1, -1, -1
	splits := false
	var vsBytes []byte
	vsStart, vsEnd := -1, -1
	var vsRuns [][]byte
	var vsSpans [][2]int
	prev, prevVisible := rune(0), rune(0)
	flushVS := func() {
		if len(vsBytes) >= 4 {
			vsRuns = append(vsRuns, vsBytes)
			vsSpans = append(vsSpans, [2]int{vsStart, vsEnd})
		}
		vsBytes, vsStart = nil, -1
	}
	skipTo := 0
	for i, r := range text {
		if i < skipTo {
			continue // an emoji tag sequence (a subdivision flag)
		}
		if r == 0x1F3F4 {
			if n := emojiTagSequence(text[i+utf8.RuneLen(r):]); n > 0 {
				skipTo = i + utf8.RuneLen(r) + n
				prev, prevVisible = r, r
				continue
			}
		}
		if v, ok := variationSelector(r); ok && r >= 0xE0100 || ok && prev != 0 && (len(vsBytes) > 0 || prev < 0x80) {
			if vsStart < 0 {
				vsStart = i
			}
			vsEnd = i + utf8.RuneLen(r)
			vsBytes = append(vsBytes, v)
			prev = r
			continue
		}
		flushVS()
		switch {
		case tagChar(r):
			if tagStart < 0 {
				tagStart = i
			}
			tagEnd = i + utf8.RuneLen(r)
			if r >= 0xE0020 && r <= 0xE007E {
				tags.WriteRune(r - 0xE0000)
			}
			prev = r
			continue
		case zeroWidth(r) && !(r == 0xFEFF && i == 0):
			if (r == 0x200D || r == 0x200C) && prev >= 0x80 && !zeroWidth(prev) {
				// joiners inside emoji and scripts that need them
				prev = r
				continue
			}
			zw++
			if zwStart < 0 {
				zwStart = i
			}
			zwEnd = i + utf8.RuneLen(r)
			prev = r
			continue
		case bidiControl(r):
			bidi++
			if bidiStart < 0 {
				bidiStart = i
			}
			prev = r
			continue
		}
		// a Latin letter right after invisible characters that followed a
		// Latin letter: a word split in two
		if asciiLetter(r) && asciiLetter(prevVisible) && prev != prevVisible && (zeroWidth(prev) || tagChar(prev)) {
			splits = true
		}
		prev, prevVisible = r, r
	}
	flushVS()
	if tagStart >= 0 {
		s.add(injInvisibleTagCharacters, "Unicode tag characters hide text: "+core.TrimArg(tags.String()), base+tagStart, base+tagEnd, true)
		if tags.Len() > 0 && s.depth < 3 {
			s.nested(tags.String(), base+tagStart, base+tagEnd)
		}
	}
	if bidi > 0 {
		s.add(injBidiOverride, "bidirectional control characters reorder what is displayed", base+bidiStart, base+bidiStart+3, true)
		// Read the reversed runs the way a terminal would execute them.
		for _, seg := range strings.Split(text, "\u202e")[1:] {
			end := strings.IndexAny(seg, "\u202c\n")
			if end < 0 {
				end = len(seg)
			}
			rev := core.Reverse(seg[:end])
			s.hiddenCode = true
			s.judgeCode("sh", rev, base+bidiStart)
			s.hiddenCode = false
		}
	}
	if zw > 0 {
		switch {
		case splits:
			s.add(injZeroWidthCharacters, "invisible characters split a word, so it reads differently to a filter and to the model", base+zwStart, base+zwEnd, true)
		case zw >= 3:
			s.add(injZeroWidthCharacters, "zero-width characters hide or split words", base+zwStart, base+zwEnd, true)
		default:
			s.add(injZeroWidthCharacters, "a zero-width character with no typographic use", base+zwStart, base+zwEnd, false)
		}
	}
	for k, run := range vsRuns {
		if !utf8.Valid(run) || !printable(string(run)) {
			s.add(injVariationSelectorPayload, "a run of variation selectors carries hidden bytes", base+vsSpans[k][0], base+vsSpans[k][1], false)
			continue
		}
		s.add(injVariationSelectorPayload, "variation selectors hide text: "+core.TrimArg(string(run)), base+vsSpans[k][0], base+vsSpans[k][1], true)
		if s.depth < 3 {
			s.nested(string(run), base+vsSpans[k][0], base+vsSpans[k][1])
		}
	}
}

// nested scans text decoded from a hidden channel; its findings point at
// the channel's span [a, b).
func (s *scanner) nested(text string, a, b int) {
	sub := &scanner{depth: s.depth + 1, judged: s.judged, hiddenCode: true}
	sub.body(text, 0)
	for _, f := range sub.findings {
		f.Span = [2]int{a, b}
		f.Detail += " (in hidden text)"
		s.findings = append(s.findings, f)
	}
}

// textLines yields each line of text, without its newline, with its
// offset in text.
func textLines(text string) iter.Seq2[int, string] { return textPieces(text, "\n") }

// textPieces yields the pieces of text between occurrences of sep,
// without sep, each with its offset in text.
func textPieces(text, sep string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for off := 0; off < len(text); {
			end := strings.Index(text[off:], sep)
			if end < 0 {
				end = len(text)
			} else {
				end += off
			}
			if !yield(off, text[off:end]) {
				return
			}
			off = end + len(sep)
		}
	}
}
