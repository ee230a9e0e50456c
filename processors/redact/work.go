package redact

import (
	"fmt"
	"io"
	"regexp"
	"unicode/utf8"
)

// Work accounting and the work budget.
//
// Redaction runs on text an agent controls, so its cost must not depend on
// how the text is shaped, only on how long it is. Every step that examines
// the text charges the scan for what it examines: the keyword pass one unit
// per byte, a regexp the bytes it is handed (or, capped, the bytes it
// reads; an allowlist regex times its size), a detector the bytes it
// walks, a candidate the bytes its filters read. The engine is built so that these charges grow linearly with the
// length of the text whatever its shape (docs/redaction.md, "Adversarial
// text"); TestWorkIsLinear holds it to that.
//
// The budget is the safety net behind that design: a string that would
// cost more than its budget is not searched further, and is replaced whole
// by [REDACTED:vigil.budget] (fail closed: nothing unexamined is stored).

// RuleBudget is the rule a Finding and an events.Redaction carry when a
// string was replaced whole because redacting it would have cost more than
// the work budget allows.
const RuleBudget = "vigil.budget"

// Default work budget (see Budget).
const (
	DefaultWorkPerByte = 256
	DefaultWorkBase    = 64 << 10
	DefaultEventWork   = 1 << 28
)

// Budget bounds the work redaction may spend, in units of about one byte
// examined once. The zero value gives the defaults. Typical text costs
// about 3.5 units per byte, the adversarial shapes of the tests at most
// about 100; text built to maximise the cost reaches DefaultWorkPerByte,
// and is then replaced whole (BENCHMARKS.md, "Redaction on adversarial
// input"). The budget bounds what any shape can cost, linear or not.
type Budget struct {
	// PerByte and Base give one string's budget: PerByte × its length +
	// Base (the base covers the fixed costs of a short string).
	PerByte int64
	Base    int64
	// Event caps the work of one event, all its strings and keys together
	// (the default, 2^28, is a few seconds of CPU); once it is spent, the
	// strings not yet redacted are replaced whole.
	Event int64
}

// ensureDefaults fills in every zero field.
func (b *Budget) ensureDefaults() {
	if b.PerByte == 0 {
		b.PerByte = DefaultWorkPerByte
	}
	if b.Base == 0 {
		b.Base = DefaultWorkBase
	}
	if b.Event == 0 {
		b.Event = DefaultEventWork
	}
}

// validate appends a ConfigError for each negative field.
func (b Budget) validate(bad func(field, rule, reason string)) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"budget.per_byte", b.PerByte}, {"budget.base", b.Base}, {"budget.event", b.Event}} {
		if f.v < 0 {
			bad(f.name, "", fmt.Sprintf("%d is negative; give a number of work units, or 0 for the default", f.v))
		}
	}
}

// stringLimit is the budget of one string of n bytes.
func (b Budget) stringLimit(n int) int64 {
	if b.PerByte > 0 && int64(n) > (1<<62)/b.PerByte {
		return 1 << 62
	}
	return b.PerByte*int64(n) + b.Base
}

// overBudget is what a string becomes when its budget is spent.
func overBudget(s string) (string, []Finding) {
	return Marker + RuleBudget + "]", []Finding{{Rule: RuleBudget, Start: 0, End: len(s)}}
}

// callCost is charged on top of the bytes for each regexp call: its fixed
// cost (machine setup, result slice).
const callCost = 16

// charge adds n units of work to the scan and reports whether the budget
// still holds. Once it does not, over stays set and every loop stops.
func (sc *scan) charge(n int) bool {
	sc.work += int64(n)
	if sc.work > sc.limit {
		sc.over = true
	}
	return !sc.over
}

// ---- runs of a byte class ----

// runClass names a byte class whose maximal runs the engine measures.
// Many keyword hits can sit in one run (api_key=api_key=…); the end of the
// run is found once and remembered, so they do not each walk it.
type runClass uint8

const (
	runTemplateValue runClass = iota // isTemplateValueChar
	runLongValue                     // isTemplateValueChar, or any non-ASCII byte
	runCred                          // isCredChar
	runCLIWord                       // a command word: up to a blank, a stage end or a quote
	runIdent                         // isIdentChar
	runAlnumWord                     // letters, digits, '-', '_'
	runBare                          // a bare value: up to a bareStop
	numRunClasses
)

// inRunClass reports whether s[k] belongs to a run of class c.
func inRunClass(c runClass, s string, k int) bool {
	b := s[k]
	switch c {
	case runBare:
		return !bareStop(s, k)
	case runTemplateValue:
		return isTemplateValueChar(b)
	case runLongValue:
		return isTemplateValueChar(b) || b >= utf8.RuneSelf
	case runCred:
		return isCredChar(b)
	case runCLIWord:
		return !isBlank(b) && !isStageEnd(b) && b != '"' && b != '\''
	case runIdent:
		return isIdentChar(b)
	case runAlnumWord:
		return isAlnum(b) || b == '-' || b == '_'
	}
	return false
}

// runMemo remembers one run: every byte of s[from:end] is in the class and
// s[end] is not (or end is len(s)). from < 0: nothing remembered.
type runMemo struct{ from, end int }

// runEnd returns the end of the run of class c that starts at i: the first
// index at or after i whose byte is not in c. Queries inside a remembered
// run cost nothing; walking up to a remembered run jumps to its end.
func (sc *scan) runEnd(c runClass, i int) int {
	m := &sc.runs[c]
	if m.from >= 0 && m.from <= i && i <= m.end {
		return m.end
	}
	s := sc.s
	j := i
	for j < len(s) && inRunClass(c, s, j) {
		if j == m.from {
			sc.charge(j - i + 1)
			m.from = i
			return m.end
		}
		j++
	}
	sc.charge(j - i + 1)
	m.from, m.end = i, j
	return j
}

// ---- regexp calls with bounded input ----

// widthSlack is how far a window reaches past a rule's longest match: one
// more rune and a byte, so that \b and $ at the end of a longest match see
// the text that follows it.
const widthSlack = utf8.UTFMax + 1

// windowEnd returns the end of a window starting at a that holds any match
// of width w (-1: unbounded) starting at a, within b.
func windowEnd(s string, a, w, b int) int {
	if w < 0 {
		return b
	}
	return runeEnd(s, a+w+widthSlack, b)
}

// runeEnd returns e moved on to the start of a rune, and at most b.
func runeEnd(s string, e, b int) int {
	if e >= b {
		return b
	}
	for e < b && !utf8.RuneStart(s[e]) {
		e++
	}
	return e
}

// matchAt runs re (anchored with ^) on s[a:b] and charges for it.
func (sc *scan) matchAt(re *regexp.Regexp, a, b int) []int {
	sc.charge(b - a + callCost)
	return re.FindStringSubmatchIndex(sc.s[a:b])
}

// matchBounded runs the anchored re, whose matches are at most w bytes
// long (-1: unbounded), at a, within the line ending at b. A bounded rule
// is handed only the text its longest match could cover. An unbounded one
// is fed through a capReader that stops it after capBytes; cut then
// reports that it wanted to read on, and m must not be trusted: the match
// (or the failure to match) may depend on text past the cap.
func (sc *scan) matchBounded(re *regexp.Regexp, w, a, b, capBytes int) (m []int, cut bool) {
	if w >= 0 {
		e := windowEnd(sc.s, a, w, b)
		m = sc.matchRead(re, a, e, e-a)
		if m != nil && e < b && m[1] >= e-a {
			// Unreachable if w is right; should it ever be wrong, decide
			// on the whole line rather than on a window that cut the match.
			m = sc.matchAt(re, a, b)
		}
		return m, false
	}
	if b-a <= capBytes {
		return sc.matchRead(re, a, b, b-a), false
	}
	m = sc.matchRead(re, a, b, capBytes)
	return m, sc.rd.cut
}

// matchRead runs the anchored re on s[a:b], letting it read at most lim
// bytes (sc.rd.cut then tells whether it wanted more), and charges for what
// it read. A short window goes to re as a string (Go's backtracker is
// fastest there); a longer one through a capReader: the backtracker clears
// a bitmap as large as the window times the program on every call, while
// an attempt at a keyword hit mostly dies within a few bytes.
func (sc *scan) matchRead(re *regexp.Regexp, a, b, lim int) []int {
	if b-a <= readerMin && lim >= b-a {
		sc.rd.cut = false
		return sc.matchAt(re, a, b)
	}
	rd := &sc.rd
	*rd = capReader{s: sc.s[a:b], lim: lim}
	m := re.FindReaderSubmatchIndex(rd)
	sc.charge(rd.i + callCost)
	return m
}

// readerMin is the window length up to which matchRead hands re a string.
const readerMin = 64

// capReader hands a string to a regexp rune by rune, up to lim bytes, and
// records whether the regexp asked for more: an anchored match attempt
// stops reading once no thread can continue, so a regexp that never
// reached lim decided on the text it read, exactly as on the whole string.
type capReader struct {
	s   string
	i   int
	lim int
	cut bool
}

// ReadRune implements io.RuneReader.
func (r *capReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.s) {
		return 0, 0, io.EOF
	}
	if r.i >= r.lim {
		r.cut = true
		return 0, 0, io.EOF
	}
	if c := r.s[r.i]; c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	ru, n := utf8.DecodeRuneInString(r.s[r.i:])
	r.i += n
	return ru, n, nil
}
