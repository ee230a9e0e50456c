package redact

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Window sizes. A regex rule runs on the text around its keyword hits,
// not the whole string (see spanKind): within the hit's line, at most
// maxLine bytes either side (and at most the rule's width when that is
// bounded); a block rule from the hit's line to blockAhead bytes on.
const (
	maxLine    = 64 << 10
	blockAhead = 16 << 10
	// assignBefore is how far before its keyword a gitleaks assignment rule
	// can start matching: [\w.-]{0,50}? plus slack.
	assignBefore = 64
	// assignAfter is how far after its keyword hit the operator can be:
	// the rest of the keyword, [ \t\w.-]{0,20} and [\s'"]{0,3}.
	assignAfter = 48
	// tailCap is how many bytes the unbounded value part of an assignment
	// rule (generic-api-key's [\w.=-]{10,}) may read at one keyword hit,
	// and anchorCap the same for an unbounded anchored rule (jwt, ya29.…).
	// A longer value is handled once for all its hits (emitLong,
	// scanRest), so that hits inside it do not each read it again.
	tailCap   = 4096
	anchorCap = 4096
	// maxRereads is how many times over the keyword hits of a rule inside
	// a value may read it again before it is removed whole (nestGuard).
	// In real text a value holds at most a few short ones
	// (TOKEN=abc.api_key=…); api_key=api_key=… has one every 8 bytes,
	// each reading the rest of the run.
	maxRereads = 8
)

// ruleHit is a keyword hit routed to one rule.
type ruleHit struct {
	rule       int32
	start, end int
}

// cand is a secret found by a rule: the span to remove, and the rule's
// whole match (for allowlists that target the match or the line).
type cand struct {
	rule         int32
	start, end   int
	mstart, mend int
}

// scan is the per-call state of one RedactString; never shared.
type scan struct {
	r     *Redactor
	s     string
	cur   int32 // rule being run
	rhits []ruleHit
	cands []cand
	// cache of the last line looked up
	lineA, lineB int
	// nls holds the offsets of every '\n' in s, found on the first line
	// lookup (nlsDone), so that a lookup costs a binary search, not a walk
	// of the line: on text with many rules' keywords on every line, each
	// rule would walk each line again.
	nls     []int
	nlsDone bool

	// work is what the scan has spent (see charge); limit is its budget,
	// and over is set once work passes it.
	work, limit int64
	over        bool
	runs        [numRunClasses]runMemo
	rd          capReader
	lineAllow   []lineVerdict
	// lastEmit is the last candidate emit judged: a rule often finds the
	// same one from several hits (the api and key of api_key=…), and the
	// verdict depends only on these offsets.
	lastEmit cand
	// concat and concatAt hold the literals of the concatenation
	// concatValue read last, and their spans.
	concat   []string
	concatAt [][2]int
}

// lineVerdict remembers whether an allowlist's regexes match one line, so
// that many candidates on a long line do not each run them on all of it.
type lineVerdict struct {
	a      *allowlist
	la, lb int
	re     bool
}

// reset prepares the scan for s, with a budget of limit units of work.
func (sc *scan) reset(s string, limit int64) {
	sc.s = s
	sc.rhits = sc.rhits[:0]
	sc.cands = sc.cands[:0]
	sc.lineA, sc.lineB = -1, -1
	sc.nls, sc.nlsDone = sc.nls[:0], false
	sc.work, sc.limit, sc.over = 0, limit, false
	for i := range sc.runs {
		sc.runs[i] = runMemo{-1, -1}
	}
	sc.rd = capReader{}
	sc.lineAllow = sc.lineAllow[:0]
	sc.lastEmit = cand{rule: -1}
}

// line returns the bounds of the line holding byte i, without its '\n',
// looking at most maxLine bytes either way.
func (sc *scan) line(i int) (int, int) {
	if i >= sc.lineA && i <= sc.lineB {
		return sc.lineA, sc.lineB
	}
	s := sc.s
	if !sc.nlsDone {
		for off := 0; ; {
			k := strings.IndexByte(s[off:], '\n')
			if k < 0 {
				break
			}
			sc.nls = append(sc.nls, off+k)
			off += k + 1
		}
		sc.nlsDone = true
		sc.charge(len(s))
	}
	i = min(i, len(s))
	k, _ := slices.BinarySearch(sc.nls, i) // the first '\n' at or after i
	a, b := 0, len(s)
	if k > 0 {
		a = sc.nls[k-1] + 1
	}
	if k < len(sc.nls) {
		b = sc.nls[k]
	}
	a, b = max(a, i-maxLine), min(b, i+maxLine)
	sc.charge(1)
	sc.lineA, sc.lineB = a, b
	return a, b
}

// find runs every rule whose keywords occur in s and collects candidates.
// It stops early once the budget is spent (sc.over).
func (sc *scan) find() {
	r := sc.r
	sc.charge(len(sc.s))
	sc.rhits = r.kw.appendRuleHits(sc.rhits, sc.s, r.kwRules)
	if !sc.charge(len(sc.rhits)) {
		return
	}
	sortRuleHits(sc.rhits)
	for i := 0; i < len(sc.rhits) && !sc.over; {
		j := i + 1
		for j < len(sc.rhits) && sc.rhits[j].rule == sc.rhits[i].rule {
			j++
		}
		sc.run(sc.rhits[i].rule, sc.rhits[i:j])
		i = j
	}
	for _, ri := range r.always {
		if sc.over {
			return
		}
		sc.run(ri, nil)
	}
}

func (sc *scan) run(ri int32, hits []ruleHit) {
	ru := sc.r.rules[ri]
	sc.cur = ri
	if ru.detect != nil {
		ru.detect(sc, hits)
		return
	}
	if hits == nil { // a rule without keywords: the whole string
		sc.matchWindow(ru, 0, len(sc.s), false, false)
		return
	}
	if ru.kwRe != nil {
		sc.runTemplate(ru, hits)
		return
	}
	if ru.anchored != nil {
		sc.runAnchored(ru, hits)
		return
	}
	wa, wb, ca, cb := -1, -1, false, false
	for _, h := range hits {
		if sc.over {
			return
		}
		if ru.assign && !sc.assignFollows(h.end) {
			continue
		}
		a, b, cutA, cutB := sc.window(ru, h.start, h.end)
		if wa >= 0 && a <= wb {
			if b > wb {
				wb, cb = b, cutB
			}
			continue
		}
		if wa >= 0 {
			sc.matchWindow(ru, wa, wb, ca, cb)
		}
		wa, wb, ca, cb = a, b, cutA, cutB
	}
	if wa >= 0 {
		sc.matchWindow(ru, wa, wb, ca, cb)
	}
}

// window returns the text a regex rule runs on for one keyword hit, and
// whether each edge cuts a line (a match touching such an edge is dropped).
func (sc *scan) window(ru *rule, hs, he int) (a, b int, cutA, cutB bool) {
	s := sc.s
	la, _ := sc.line(hs)
	_, lb := sc.line(max(hs, he-1))
	a, b = la, lb
	switch ru.span {
	case spanLine:
		switch {
		case ru.assign:
			a = max(a, hs-assignBefore)
		case ru.width >= 0:
			a, b = max(a, hs-ru.width), min(b, he+ru.width)
		}
	case spanContinued:
		for k := 0; k < 5 && b < len(s) && strings.HasSuffix(strings.TrimSuffix(s[a:b], "\r"), "\\"); k++ {
			_, b = sc.line(b + 1)
		}
	case spanBlock:
		b = min(len(s), he+blockAhead)
	}
	for a > 0 && a < len(s) && !utf8.RuneStart(s[a]) {
		a--
	}
	for b < len(s) && !utf8.RuneStart(s[b]) {
		b++
	}
	cutA = a > 0 && s[a-1] != '\n'
	cutB = b < len(s) && s[b] != '\n'
	return a, b, cutA, cutB
}

// assignFollows is a fast, exact-enough filter for gitleaks' generated
// assignment rules at a keyword ending at i: within the line come the rest
// of a name, blanks or quotes (at most assignAfter), operator characters
// (= > : | ? ,), at most 5 of ` ' " blank =, then a value of at least
// assignMinValue characters of the union of the rules' value classes,
// then one of the rules' terminators (gitleaksEnd or widerEnd, or the end
// of the line). Every match of those rules passes it; most keyword hits in code
// and logs ("auth: token for user 42", "key, value :=") do not.
func (sc *scan) assignFollows(i int) bool {
	_, _, ok := sc.assignValue(i)
	return ok
}

// assignValue is assignFollows that also returns where the value starts
// and where the run of value characters holding it ends. The run's end is
// remembered (runEnd), so keyword hits inside one long value
// (api_key=api_key=…) do not each walk it.
func (sc *scan) assignValue(i int) (vs, ve int, ok bool) {
	s := sc.s
	i0 := i
	for k := 0; k <= assignAfter && i < len(s); k, i = k+1, i+1 {
		c := s[i]
		if !(isAlnum(c) || c == '_' || c == '.' || c == '-' || c == ' ' || c == '\t' || c == '\'' || c == '"') {
			break
		}
	}
	n := 0
	for i < len(s) && n < 4 && isAssignOpChar(s[i]) {
		i++
		n++
	}
	sc.charge(i - i0 + 1)
	if n == 0 {
		return 0, 0, false
	}
	for k := 0; k < 5 && i < len(s); k, i = k+1, i+1 {
		if c := s[i]; c != '`' && c != '\'' && c != '"' && c != ' ' && c != '\t' && c != '=' {
			break
		}
	}
	j := sc.runEnd(runTemplateValue, i)
	if j-i < assignMinValue {
		return 0, 0, false
	}
	if j == len(s) {
		return i, j, true
	}
	switch s[j] {
	case '`', '\'', '"', ' ', '\t', '\n', '\r', '\f', '\v', ';', '\\', // gitleaks' end
		',', ')', ']', '}', '>', '|', '&', '<', '!', '?', '*', '@', '#': // widerEnd
		return i, j, true
	}
	return 0, 0, false
}

// assignMinValue is the shortest value any generated assignment rule
// accepts ([\w.=-]{10,150} in generic-api-key).
const assignMinValue = 10

func isAssignOpChar(c byte) bool {
	switch c {
	case '=', '>', ':', '|', '?', ',':
		return true
	}
	return false
}

// isTemplateValueChar is the union of the value classes of gitleaks'
// generated assignment rules (letters, digits, _ . = + / - % :).
func isTemplateValueChar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	switch c {
	case '_', '.', '=', '+', '/', '-', '%', ':':
		return true
	}
	return false
}

// runTemplate runs a gitleaks assignment rule at each keyword hit: the
// name regex anchored at the hit, then the operator-and-value regex
// anchored where the name ends, both within the hit's line. The match (for
// allowlists that target it) starts where [\w.-]{0,50}? would: at most 50
// name characters before the hit.
//
// Linear on any text: the name regex is handed only its maximum width, and
// an unbounded tail (generic-api-key's value) reads at most tailCap bytes.
// A value longer than that, or read more than maxRereads times over by the
// hits of the rule inside it (api_key=api_key=…, see nestGuard), is removed
// whole (emitLong) and the hits inside it are not tried again; see
// docs/redaction.md.
func (sc *scan) runTemplate(ru *rule, hits []ruleHit) {
	skip := 0
	g := newNestGuard()
	for i := 0; i < len(hits); {
		if sc.over {
			return
		}
		h := hits[i]
		vs, ve, ok := sc.assignValue(h.end)
		if h.start < skip || !ok {
			i++
			continue
		}
		// hits[i:j] are the rule's hits in the name before this value's
		// operator: they share the value.
		j := i + 1
		for j < len(hits) && hits[j].start < vs {
			if v, _, ok := sc.assignValue(hits[j].end); !ok || v != vs {
				break
			}
			j++
		}
		if g.reads(vs, ve) {
			skip = sc.longValueEnd(g.vs, g.ve)
			sc.emitLong(g.vs, skip, h.start)
			i = j
			continue
		}
		// Closest to the operator first. The tail from where a name ends
		// reaches the operator at the same place whatever name came
		// before, and reads the same value: once it fails from ke, it
		// fails from any earlier ke (a longer name), and once it matches,
		// a rule whose verdict depends only on the secret (spanOnly) has
		// nothing more to find in this name.
		failKE := -1
		for k := j - 1; k >= i; k-- {
			r := sc.templateAt(ru, hits[k], vs, ve, failKE)
			if r.long {
				skip = max(sc.longValueEnd(vs, ve), g.ve)
				sc.emitLong(vs, skip, hits[k].start)
				break
			}
			if r.fromValue && ru.spanOnly {
				break
			}
			failKE = max(failKE, r.failKE)
		}
		i = j
	}
}

// tmplResult is what templateAt found at one hit.
type tmplResult struct {
	fromValue bool // a match, whose secret lies in the value
	long      bool // a value too long to judge: the caller removes it whole
	failKE    int  // the name ended at failKE and the tail failed there; else -1
}

// templateAt tries a template rule at one keyword hit whose value
// (assignValue) is s[vs:ve], and emits what it finds. The tail is not run
// when the name ends at or before failKE, where it already failed.
func (sc *scan) templateAt(ru *rule, h ruleHit, vs, ve, failKE int) tmplResult {
	s := sc.s
	_, lb := sc.line(h.start)
	k, cut := sc.matchBounded(ru.kwRe, ru.kwWidth, h.start, lb, tailCap)
	if cut {
		return tmplResult{long: true, failKE: -1}
	}
	if k == nil {
		return tmplResult{failKE: -1}
	}
	ke := h.start + k[1]
	if ke <= failKE {
		return tmplResult{failKE: ke}
	}
	t, cut := sc.matchTail(ru, ke, lb, vs, ve)
	if cut {
		return tmplResult{long: true, failKE: -1}
	}
	if t == nil {
		return tmplResult{failKE: ke}
	}
	// One group index space, as the whole regex would number it: the
	// name's groups, then the tail's, in text offsets.
	var groups [32]int
	m := append(groups[:0], k[2:]...)
	for i := 0; i+1 < len(m); i += 2 {
		if m[i] >= 0 {
			m[i], m[i+1] = m[i]+h.start, m[i+1]+h.start
		}
	}
	for i := 2; i+1 < len(t); i += 2 {
		if t[i] >= 0 {
			m = append(m, t[i]+ke, t[i+1]+ke)
		} else {
			m = append(m, -1, -1)
		}
	}
	ms := h.start
	for ms > 0 && h.start-ms < 50 && (isIdentChar(s[ms-1])) {
		ms--
	}
	me := ke + t[1]
	ss, se := -1, -1
	if g := ru.secretGroup; g > 0 {
		if 2*g-1 < len(m) {
			ss, se = m[2*g-2], m[2*g-1]
		}
	} else {
		for i := 0; i+1 < len(m); i += 2 {
			if m[i] >= 0 && m[i+1] > m[i] {
				ss, se = m[i], m[i+1]
				break
			}
		}
	}
	if ss < 0 {
		ss, se = ms, me
	}
	sc.emit(ss, se, ms, me)
	return tmplResult{fromValue: ss >= ke, failKE: -1}
}

// runAnchored tries an anchored rule at each of its keyword hits, within
// the hit's line. \b at the start of the regex is checked against the byte
// before the hit, which the anchored regex cannot see.
//
// A bounded rule is handed only its maximum width. An unbounded one reads
// at most anchorCap bytes per hit; when an attempt wants more (eyeyey… for
// the jwt rule: each hit would read to the end of the run), the rest of
// the line is searched once, unanchored (scanRest), which finds the same
// matches: every match starts with one of the rule's keywords, and the
// leftmost-first search skips what a match covers, as next does here.
func (sc *scan) runAnchored(ru *rule, hits []ruleHit) {
	s := sc.s
	next := 0
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < next || ru.wordStart && h.start > 0 && isWordByte(s[h.start-1]) {
			continue
		}
		_, lb := sc.line(h.start)
		m, cut := sc.matchBounded(ru.anchored, ru.anchorWidth, h.start, lb, anchorCap)
		if cut {
			sc.scanRest(ru, h.start, lb)
			next = lb
			continue
		}
		if m == nil || m[1] == 0 {
			continue
		}
		next = h.start + m[1]
		sc.emitMatch(ru, m, h.start)
	}
}

// scanRest runs an anchored rule's regex unanchored on s[a:b], where a is
// a keyword hit that passed the \b check, and emits every match.
func (sc *scan) scanRest(ru *rule, a, b int) {
	ms := ru.scanRe.FindAllStringSubmatchIndex(sc.s[a:b], -1)
	sc.charge(b - a + callCost*(len(ms)+1))
	for _, m := range ms {
		if sc.over {
			return
		}
		if m[1] > m[0] {
			sc.emitMatch(ru, m, a)
		}
	}
}

// emitMatch emits the secret of one regex match m found in s[off:].
func (sc *scan) emitMatch(ru *rule, m []int, off int) {
	ss, se := m[0], m[1]
	if ngroups := len(m)/2 - 1; ngroups > 0 && !ru.wholeMatch {
		if g := ru.secretGroup; g > 0 {
			ss, se = m[2*g], m[2*g+1]
		} else {
			for g := 1; g <= ngroups; g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					ss, se = m[2*g], m[2*g+1]
					break
				}
			}
		}
	}
	if ss < 0 || se <= ss {
		return
	}
	sc.emit(ss+off, se+off, m[0]+off, m[1]+off)
}

// matchWindow runs a regex rule on s[a:b]. A match that touches a cut edge
// is dropped: it contains none of the rule's keyword hits (those sit at
// least the rule's width inside the window) and its context is unknown.
func (sc *scan) matchWindow(ru *rule, a, b int, cutA, cutB bool) {
	sub := sc.s[a:b]
	ms := ru.re.FindAllStringSubmatchIndex(sub, -1)
	sc.charge(len(sub) + callCost*(len(ms)+1))
	for _, m := range ms {
		if sc.over {
			return
		}
		if (cutA && m[0] == 0) || (cutB && m[1] == len(sub)) || m[1] <= m[0] {
			continue
		}
		sc.emitMatch(ru, m, a)
	}
}

// emit records a secret at s[start:end] found by the current rule, unless
// an allowlist, the entropy floor or the placeholder check lets it go.
func (sc *scan) emit(start, end, mstart, mend int) {
	r := sc.r
	ru := r.rules[sc.cur]
	s := sc.s
	if start < 0 || end > len(s) || start >= end {
		return
	}
	c := cand{rule: sc.cur, start: start, end: end, mstart: mstart, mend: mend}
	if c == sc.lastEmit {
		return // judged just now, and kept or not
	}
	sc.lastEmit = c
	secret := s[start:end]
	sc.charge(end - start + mend - mstart)
	if insideMarker(s, start, end) {
		return // already redacted: [REDACTED:rule] is never a secret
	}
	if ru.entropy > 0 && entropy(secret) <= ru.entropy {
		return
	}
	if _, ok := r.allowed[secret]; ok {
		return
	}
	if ru.source != sourceConfig && !ru.shape && isMasked(secret) {
		return
	}
	if ru.prio != prioSpecific && inARN(s, start) {
		return // arn:aws:secretsmanager:…:secret:name names a secret, it is not one
	}
	if ru.ctxValue && isPlaceholderValue(secret) {
		return
	}
	if ru.maxSecret > 0 && len(strings.TrimRight(secret, ".")) > ru.maxSecret {
		return // longer than the rule as written allows (a full stop after it aside)
	}
	if ru.check != nil && !ru.check(secret) {
		return
	}
	if ru.prio != prioSpecific && (isPublicByDesign(secret) || isCiphertext(secret)) {
		return
	}
	if ru.prio == prioSpecific && ru.detect == nil && ru.source != sourceConfig && dottedNameSegment(s, start, end) {
		return // video_box.ico-7a38….png: a fingerprint between a file name and its extension
	}
	if ru.detect == nil && ru.source != sourceConfig && isWordyPhrase(secret) {
		return // a format rule matched words or an identifier (s.ReadUint16LengthPrefixed)
	}
	if ru.prio == prioGeneric && (looksLikeCode(secret) || isSynthetic(secret) || shortBody(secret) || isJOSEHeader(secret) || isPublicKeyDER(secret) || namesDigest(s[max(0, mstart-40):start]) || copiesField(s[mstart:start], secret) || namesPublic(s[max(0, mstart-24):start]) || end-start >= 64 && sc.underEncryptedData(mstart) || isUUIDShape(secret) && namesID(s[mstart:start]) || namesAttribute(s[mstart:start])) {
		return // generic-api-key on "x = a.b.C", "a.Key = b.v1.Key" or "Public key pin: …": not a secret
	}
	if len(r.global) > 0 || len(ru.allow) > 0 {
		match := s[mstart:mend]
		la, _ := sc.line(mstart)
		_, lb := sc.line(max(mstart, mend-1))
		lb = max(lb, mend)
		for i := range r.global {
			if sc.allows(&r.global[i], secret, match, la, lb) {
				return
			}
		}
		for i := range ru.allow {
			if sc.allows(&ru.allow[i], secret, match, la, lb) {
				return
			}
		}
	}
	sc.cands = append(sc.cands, c)
}

// matchTail runs a template rule's tail (operator, value, terminator) at
// ke, where the name ends, on the line ending at lb; vs, ve are the value
// and its run from assignValue. The value classes of the tails lie within
// runLongValue's, so no match reaches past the run's end plus a two-byte
// terminator: the tail is handed only that much. A run longer than tailCap
// goes through matchBounded, and cut reports a value too long to judge.
func (sc *scan) matchTail(ru *rule, ke, lb, vs, ve int) (t []int, cut bool) {
	e := runeEnd(sc.s, sc.longValueEnd(vs, ve)+2+widthSlack, lb)
	if ru.tailWidth >= 0 {
		e = min(e, windowEnd(sc.s, ke, ru.tailWidth, lb))
	}
	if e-ke > tailCap {
		return sc.matchBounded(ru.tailRe, ru.tailWidth, ke, lb, tailCap)
	}
	t = sc.matchAt(ru.tailRe, ke, e)
	if t != nil && e < lb && t[1] >= e-ke {
		// Unreachable while the value classes lie within runLongValue's;
		// should a rule break that, decide without the bound.
		return sc.matchBounded(ru.tailRe, ru.tailWidth, ke, lb, tailCap)
	}
	return t, false
}

// emitLongRun is emitLong for the whole run of class c that holds s[a:e]
// (at least s[a:e]), and returns where it ends. A detector's value ends at
// the first byte outside its class; removing only part of a run would let
// a hit before it find, in the redacted text, a shorter value ending at the
// marker, and redacting again would not give the same text.
func (sc *scan) emitLongRun(c runClass, a, e, mstart int) int {
	s := sc.s
	a0 := a
	for a > 0 && inRunClass(c, s, a-1) {
		a--
	}
	sc.charge(a0 - a)
	e = max(e, sc.runEnd(c, a0))
	sc.emitLong(a, e, mstart)
	return e
}

// longValueEnd is where a long assignment value starting at vs ends: the
// end of its run of value characters (ve, from assignValue), continued
// over any non-ASCII bytes, which some rules' value classes take in
// ((?i) makes [a-z] match ſ and K).
func (sc *scan) longValueEnd(vs, ve int) int {
	return max(ve, sc.runEnd(runLongValue, vs))
}

// nestGuard bounds, for one rule, how often the keyword hits inside a
// value read it again. A value-reading rule judges the value after each
// hit; when hits sit inside an earlier hit's value (api_key=api_key=…,
// authorization:…authorization:…), each reads the rest of it, a cost
// quadratic in its length. The guard keeps the union [vs, ve) of
// overlapping values and the bytes read in it; past maxRereads times its
// length, the rule removes it whole (emitLong) and skips past it.
type nestGuard struct{ vs, ve, read int }

func newNestGuard() nestGuard { return nestGuard{vs: -1, ve: -1} }

// reads records that a hit is about to judge the value s[vs:ve], and
// reports whether the values overlapping it have now been read more than
// maxRereads times over: the caller then removes [g.vs, g.ve) whole.
func (g *nestGuard) reads(vs, ve int) bool {
	if vs >= g.ve || ve <= g.vs {
		*g = nestGuard{vs: vs, ve: ve}
	} else {
		g.vs, g.ve = min(g.vs, vs), max(g.ve, ve)
	}
	g.read += ve - vs
	return g.read > maxRereads*(g.ve-g.vs)
}

// allows reports whether allowlist a lets a candidate go, whose secret and
// match are given and whose line is s[la:lb], and charges for its regexes.
// An allowlist that targets the line runs them once per line, not once per
// candidate on it.
func (sc *scan) allows(a *allowlist, secret, match string, la, lb int) bool {
	switch a.target {
	case targetSecret, targetMatch:
		t := secret
		if a.target == targetMatch {
			t = match
		}
		ok, cost := a.matches(t, &sc.rd)
		sc.charge(cost)
		return a.decide(secret, ok)
	}
	for _, v := range sc.lineAllow {
		if v.a == a && v.la == la && v.lb == lb {
			return a.decide(secret, v.re)
		}
	}
	ok, cost := a.matches(sc.s[la:lb], &sc.rd)
	sc.charge(cost)
	v := lineVerdict{a: a, la: la, lb: lb, re: ok}
	if len(sc.lineAllow) < 8 {
		sc.lineAllow = append(sc.lineAllow, v)
	} else {
		sc.lineAllow[0] = v
	}
	return a.decide(secret, v.re)
}

// emitLong records the value s[a:e] as a secret of the current rule,
// without the content filters of emit. It is for a value too long to judge
// exactly on every keyword hit inside it (longer than tailCap, or read more
// than maxRereads times over by the hits inside it, see nestGuard): each
// filter reads the whole value, and a hit inside it would judge its
// suffix, so exact verdicts cost time quadratic in its length. Such a
// value is removed whole: failing closed costs a false positive on text no
// person writes, never a leak.
func (sc *scan) emitLong(a, e, mstart int) {
	if a < 0 || a >= e || e > len(sc.s) {
		return
	}
	if _, ok := sc.r.allowed[sc.s[a:e]]; ok {
		return
	}
	sc.charge(e - a)
	sc.cands = append(sc.cands, cand{rule: sc.cur, start: a, end: e, mstart: min(mstart, a), mend: e})
}

// dottedNameSegment reports whether s[start:end] sits between a file
// name and its extension (name.SEGMENT.ext, the extension 2 to 5 letters
// ending the word): build tools write content hashes there
// (video_box.ico-<hash>.png), where a vendor prefix is only a coincidence.
// A ']' before the first dot counts as a name too, so that the verdict is
// the same once a secret before it is replaced by its marker.
func dottedNameSegment(s string, start, end int) bool {
	if start < 2 || s[start-1] != '.' || !(isWordByte(s[start-2]) || s[start-2] == ']') || end >= len(s) || s[end] != '.' {
		return false
	}
	k := end + 1
	for k < len(s) && k-end <= 6 && (isUpper(s[k]) || isLower(s[k])) {
		k++
	}
	return k-end-1 >= 2 && k-end-1 <= 5 && (k == len(s) || !isWordByte(s[k]))
}

// insideMarker reports whether s[start:end] lies within the rule name of a
// well-formed [REDACTED:rule] marker. Only rule-name characters count, so
// text dressed up as a marker ("[REDACTED: ghp_…]") does not hide a secret.
func insideMarker(s string, start, end int) bool {
	lo := max(0, start-len(Marker)-maxRuleName)
	k := strings.LastIndex(s[lo:start], Marker)
	if k < 0 {
		return false
	}
	i := lo + k + len(Marker)
	for i < len(s) && i-start < maxRuleName && isRuleNameChar(s[i]) {
		i++
	}
	return i < len(s) && s[i] == ']' && end <= i+1
}

func isRuleNameChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '-'
}

// merge turns candidates into non-overlapping findings, sorted by offset.
// Overlapping or touching spans become one, named by the most specific rule
// among them (lowest priority value, then rule id).
func (sc *scan) merge() []Finding {
	if len(sc.cands) == 0 {
		return nil
	}
	rules := sc.r.rules
	slices.SortFunc(sc.cands, func(x, y cand) int {
		if c := cmp.Compare(x.start, y.start); c != 0 {
			return c
		}
		if c := cmp.Compare(y.end, x.end); c != 0 {
			return c
		}
		if c := cmp.Compare(rules[x.rule].prio, rules[y.rule].prio); c != 0 {
			return c
		}
		return cmp.Compare(rules[x.rule].id, rules[y.rule].id)
	})
	var out []Finding
	best := sc.cands[0].rule
	cs, ce := sc.cands[0].start, sc.cands[0].end
	better := func(x, y int32) bool {
		if rules[x].prio != rules[y].prio {
			return rules[x].prio < rules[y].prio
		}
		return rules[x].id < rules[y].id
	}
	for _, c := range sc.cands[1:] {
		if c.start <= ce {
			ce = max(ce, c.end)
			if better(c.rule, best) {
				best = c.rule
			}
			continue
		}
		out = append(out, Finding{Rule: rules[best].id, Start: cs, End: ce})
		best, cs, ce = c.rule, c.start, c.end
	}
	return append(out, Finding{Rule: rules[best].id, Start: cs, End: ce})
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	n := 0
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
		counts[s[i]]++
	}
	if !ascii {
		m := map[rune]int{}
		for _, r := range s {
			m[r]++
			n++
		}
		h := 0.0
		for _, c := range m {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
		return h
	}
	n = len(s)
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
}

func sortRuleHits(rh []ruleHit) {
	slices.SortFunc(rh, func(x, y ruleHit) int {
		if c := cmp.Compare(x.rule, y.rule); c != 0 {
			return c
		}
		if c := cmp.Compare(x.start, y.start); c != 0 {
			return c
		}
		return cmp.Compare(x.end, y.end)
	})
}

// inARN reports whether s[i] lies in an Amazon Resource Name
// (arn:PARTITION:SERVICE:…): the shell word or quoted string holding it
// starts with "arn:aws". An ARN names a resource, a secret's too
// (arn:aws:secretsmanager:…:secret:prod/db-AbCdEf), and holds none.
func inARN(s string, i int) bool {
	from := max(0, i-256)
	k := i
	for k > from && !isSpace(s[k-1]) && !isQuote(s[k-1]) && s[k-1] != '=' && s[k-1] != ',' && s[k-1] != '(' && s[k-1] != '[' {
		k--
	}
	return strings.HasPrefix(s[k:], "arn:aws")
}

// namesID reports whether the name part of a generic match (SECRET_ID = ,
// "tokenId": ) ends in the word id: a UUID under it identifies a secret,
// a token or a key (a secret manager's entry, a key's id), it does not
// grant anything. (Vault's AppRole secret_id is a UUID that does; it is
// given up for the far more common ids.)
func namesID(name string) bool {
	name = strings.TrimRight(name, " \t\"':=>")
	n := len(name)
	if n < 3 || !(name[n-2:] == "id" || name[n-2:] == "Id" || name[n-2:] == "ID") {
		return false
	}
	if strings.Contains(strings.ToLower(name), "pass") {
		return false
	}
	c := name[n-3]
	return c == '_' || c == '-' || c == '.' || name[n-2] == 'I' && isLower(c)
}

// attributeWords end a name that describes a secret rather than holding
// it (secretVersion, TOKEN_AUDIENCE, key_hint, token_type, secret_arn).
// A final id (token_id, keyId) counts too, unless the name says secret,
// auth, access or pass: an access key's id (TENCENTCLOUD_SECRET_ID,
// PLIVO_AUTH_ID) is half of a credential.
var attributeWords = map[string]bool{
	"version": true, "versions": true, "audience": true, "aud": true,
	"type": true, "hint": true, "prefix": true, "suffix": true, "hash": true, "name": true,
	"names": true, "length": true, "len": true, "ttl": true, "expiry": true, "expires": true,
	"expiration": true, "url": true, "uri": true, "path": true, "file": true, "region": true,
	"issuer": true, "scope": true, "scopes": true, "algorithm": true, "alg": true, "format": true,
	"count": true, "size": true, "label": true, "description": true, "header": true, "policy": true,
	"rotation": true, "arn": true, "kind": true, "mode": true, "endpoint": true, "location": true,
}

// namesAttribute reports whether the name part of a generic match (the
// identifier before its operator) ends in a word that describes the secret
// (secretVersion, TOKEN_AUDIENCE) or is a key that is no credential
// (CACHE_KEY, sort_key): gitleaks' generic rule takes any name holding
// key, secret or token, wherever the word stands.
func namesAttribute(m string) bool {
	m = strings.TrimRight(m, " \t\"'`:=>")
	i := len(m)
	for i > 0 && (isIdentChar(m[i-1]) || m[i-1] == '-' || m[i-1] == '.') && len(m)-i < 128 {
		i--
	}
	name := strings.Trim(m[i:], "-._")
	if name == "" {
		return false
	}
	var buf [16]string
	toks := splitName(name, buf[:0])
	if len(toks) < 2 {
		return false
	}
	last, prev := toks[len(toks)-1], toks[len(toks)-2]
	if last == "id" {
		// token_id, keyId: an identifier. But SECRET_ID, AUTH_ID,
		// ACCESS_KEY_ID name the public half of a key pair that
		// vendors print beside the secret half, and credential rules
		// (AKID…, AKIA…) treat it as a credential.
		for _, t := range toks {
			if t == "secret" || t == "auth" || t == "access" || strings.Contains(t, "pass") {
				return false
			}
		}
		return true
	}
	return attributeWords[last] || last == "key" && keyDeny[prev]
}
