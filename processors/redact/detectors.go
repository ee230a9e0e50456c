package redact

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// ---- PEM private keys ----

// pemMax bounds the body of a PEM block (an RSA-16384 key is about 13 KB).
const pemMax = 64 << 10

// detectPEM finds "-----BEGIN … PRIVATE KEY-----" blocks and removes them
// whole, up to the END line. Newlines may be real or JSON-escaped ("\n"
// inside a string, as in a GCP service-account file). A block with no END
// line (truncated output) is removed up to where its base64 stops. A header
// with no body (documentation) is not a secret.
func detectPEM(sc *scan, hits []ruleHit) {
	s := sc.s
	next := 0
	// Positions of every "-----END", found in one pass when first needed,
	// so that many BEGIN lines cost one search, not one each.
	var ends []int
	endsDone := false
	for _, h := range hits {
		if h.start < next {
			continue
		}
		j := h.end // just past "-----BEGIN"
		if j >= len(s) || s[j] != ' ' {
			continue
		}
		le := strings.Index(s[j:min(len(s), j+128)], "-----")
		if le < 0 || !containsFold(s[j:j+le], "private key") {
			continue
		}
		body := j + le + 5
		if !endsDone {
			endsDone = true
			for k := body; k < len(s); {
				e := indexFold(s[k:], "-----end")
				if e < 0 {
					break
				}
				ends = append(ends, k+e)
				k += e + 1
			}
		}
		endAt := -1
		if x, _ := slices.BinarySearch(ends, body); x < len(ends) {
			endAt = ends[x]
		}
		end, b64 := pemBody(s, body, endAt)
		if b64 < 32 {
			continue
		}
		sc.emit(h.start, end, h.start, end)
		next = end
	}
}

// pemBody returns the end of a PEM block whose body starts at i and whose
// END line starts at endAt (-1: none), and how many base64 characters the
// body holds.
func pemBody(s string, i, endAt int) (end, b64 int) {
	lim := min(len(s), i+pemMax)
	if endAt >= i && endAt < lim {
		t := endAt + len("-----end")
		if c := strings.Index(s[t:min(len(s), t+128)], "-----"); c >= 0 {
			return t + c + 5, countB64(s[i:endAt])
		}
		return t, countB64(s[i:endAt])
	}
	j := i
	last := i
loop:
	for j < lim {
		c := s[j]
		switch {
		case isB64(c) || c == ':' || c == ',' || c == '-':
			j++
			last = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j++
		case c == '\\' && j+1 < lim && (s[j+1] == 'n' || s[j+1] == 'r' || s[j+1] == 't'):
			j += 2
		default:
			break loop
		}
	}
	return last, countB64(s[i:last])
}

func isB64(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// countB64 counts base64 characters, skipping backslash escapes.
func countB64(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case isB64(c):
			n++
		}
	}
	return n
}

// ---- credentials in URLs ----

// detectURLCredentials removes the password of scheme://user:password@host,
// or the whole userinfo when it is a bare token (https://TOKEN@host). The
// authority ends at the first / ? # or space, as RFC 3986 requires of an
// unencoded password; the userinfo ends at the last @ before that.
func detectURLCredentials(sc *scan, hits []ruleHit) {
	s := sc.s
	for _, h := range hits {
		if h.start == 0 || !isAlnum(s[h.start-1]) {
			continue
		}
		i := h.end
		e := i
		for e < len(s) && e-i < 2048 && !urlAuthorityStop(s[e]) {
			e++
		}
		at := strings.LastIndexByte(s[i:e], '@')
		if at >= 0 && e < len(s) && (s[e] == '#' || s[e] == '?') && strings.IndexByte(s[i:i+at], ':') >= 0 {
			// user:m@ple#12@host: an @ and then an unencoded # or ? in the
			// password; the authority's @ is the one after them when no
			// path, query parameter or blank comes between.
			e2 := e
			for e2 < len(s) && e2-i < 2048 && (s[e2] == '#' || s[e2] == '?' || !urlAuthorityStop(s[e2])) {
				e2++
			}
			sc.charge(e2 - e)
			if a := strings.LastIndexByte(s[i:e2], '@'); a > e-i && !strings.ContainsAny(s[e:i+a], "=&") {
				at, e = a, e2
			}
		}
		if at < 0 && e < len(s) && (s[e] == '#' || s[e] == '?') {
			// An unencoded # or ? in a password (invalid, but typed): look
			// on to the end of the URL for the @ of a user:password.
			e2 := e
			for e2 < len(s) && e2-i < 2048 && (s[e2] == '#' || s[e2] == '?' || !urlAuthorityStop(s[e2])) {
				e2++
			}
			if a := strings.LastIndexByte(s[i:e2], '@'); a > 0 {
				if c := strings.IndexByte(s[i:i+a], ':'); c >= 0 && !strings.ContainsAny(s[i:i+c], "#?") {
					at, e = a, e2
				}
			}
		}
		if at <= 0 {
			continue
		}
		ui := s[i : i+at]
		if c := strings.IndexByte(ui, ':'); c >= 0 {
			pw := ui[c+1:]
			if pw != "" {
				if !isPlaceholderValue(pw) && !isPlaceholderValue(ui[:c]+"_"+pw) {
					sc.emit(i+c+1, i+at, h.start, e)
				}
				continue
			}
			ui = ui[:c]
		}
		if looksRandomToken(ui, 16, sc.r.threshold) && !isPlaceholderValue(ui) {
			sc.emit(i, i+len(ui), h.start, e)
		}
	}
}

func urlAuthorityStop(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', '\\':
		return true
	}
	return false
}

// ---- .netrc ----

var netrcKeys = map[string]bool{"machine": true, "login": true, "account": true, "password": true, "port": true, "protocol": true, "default": true}

// detectNetrc reads .netrc entries: from "machine HOST" (or "default" at the
// start of a line), pairs of netrc keywords and values across blanks and
// newlines; the value after "password" is the secret.
func detectNetrc(sc *scan, hits []ruleHit) {
	s := sc.s
	next := 0
	for _, h := range hits {
		if h.start < next || h.start > 0 && !isSpace(s[h.start-1]) || h.end < len(s) && !isSpace(s[h.end]) {
			continue
		}
		if h.end-h.start == len("default") {
			if la, _ := sc.line(h.start); strings.TrimSpace(s[la:h.start]) != "" {
				continue
			}
		}
		i := h.start
		for range 16 {
			ks, ke := netrcToken(s, i)
			if ks < 0 {
				break
			}
			key := strings.ToLower(s[ks:ke])
			if !netrcKeys[key] || (key == "default" && ks != h.start) || (key == "machine" && ks != h.start) {
				break
			}
			i = ke
			if key == "default" {
				continue
			}
			vs, ve := netrcToken(s, i)
			if vs < 0 {
				break
			}
			i = ve
			if key == "password" {
				vs, ve = unquote(s, vs, ve)
				if vs < ve && !isPlaceholderValue(s[vs:ve]) {
					sc.emit(vs, ve, h.start, ve)
				}
			}
		}
		next = i
	}
}

// netrcToken returns the next blank-separated token at or after i, at most
// 256 bytes on, or -1.
func netrcToken(s string, i int) (int, int) {
	lim := min(len(s), i+256)
	for i < lim && isSpace(s[i]) {
		i++
	}
	if i >= lim {
		return -1, -1
	}
	j := i
	for j < len(s) && j-i < 256 && !isSpace(s[j]) {
		j++
	}
	return i, j
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ---- Authorization headers and bearer tokens ----

var authSchemes = map[string]bool{
	"basic": true, "bearer": true, "token": true, "bot": true, "apikey": true,
	"api-key": true, "key": true, "sso-key": true, "ssws": true, "jwt": true,
	"oauth": true, "otp": true, "dpop": true, "pat": true, "splunk": true,
	"klaviyo-api-key": true, "genie-key": true, "gateway-token": true,
}

// detectAuthorization removes the credential of an Authorization header
// (any scheme that carries one), and any "Bearer <token>" that looks random.
//
// Runs of credential characters are measured once (runEnd), and a
// credential read too often by the hits inside it is removed whole
// (nestGuard).
func detectAuthorization(sc *scan, hits []ruleHit) {
	s := sc.s
	skip := 0
	g := newNestGuard()
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < skip {
			continue
		}
		if h.end-h.start == len("bearer") {
			if h.start > 0 && isAlnum(s[h.start-1]) {
				continue
			}
			cs, ce := sc.credentialAfter(h.end)
			if cs < 0 {
				continue
			}
			if g.reads(cs, ce) {
				skip = sc.emitLongRun(runCred, g.vs, g.ve, h.start)
				continue
			}
			if c := s[cs:ce]; looksRandomToken(c, 16, sc.r.threshold) && !isPlaceholderValue(c) {
				sc.emit(cs, ce, h.start, ce)
			}
			continue
		}
		// "authorization", possibly inside Proxy-Authorization or HTTP_AUTHORIZATION.
		if h.end < len(s) && isAlnum(s[h.end]) {
			continue
		}
		i := skipNameEnd(s, h.start, h.end)
		j, ok := assignOp(s, i, false)
		if !ok {
			// "Authorization Token VALUE": a scheme word must follow.
			if j = skipBlanks(s, i); j == i || j-i > 4 {
				continue
			}
		}
		schemeOnly := !ok
		j = skipBlanks(s, j)
		sc.charge(j - h.start)
		if j < len(s) && isQuote(s[j]) {
			j++
		} else if j+1 < len(s) && s[j] == '\\' && isQuote(s[j+1]) {
			j += 2
		}
		we := sc.runEnd(runAlnumWord, j)
		if we == j {
			continue
		}
		if we-j <= maxSchemeLen && authSchemes[strings.ToLower(s[j:we])] {
			cs, ce := sc.credentialAfter(we)
			if cs < 0 {
				continue
			}
			if g.reads(cs, ce) {
				skip = sc.emitLongRun(runCred, g.vs, g.ve, h.start)
				continue
			}
			if c := s[cs:ce]; len(c) >= 8 && !isPlaceholderValue(c) && (!schemeOnly || looksRandomToken(c, 16, sc.r.threshold)) {
				sc.emit(cs, ce, h.start, ce)
			}
			continue
		}
		if schemeOnly {
			continue
		}
		ce := sc.runEnd(runCred, j)
		if g.reads(j, ce) {
			skip = sc.emitLongRun(runCred, g.vs, g.ve, h.start)
			continue
		}
		sc.charge(ce - j)
		if c := s[j:ce]; looksRandomToken(c, 16, sc.r.threshold) && !isPlaceholderValue(c) {
			sc.emit(j, ce, h.start, ce)
			continue
		}
		// A scheme Vigil has no name for ("Authorization: Custom VALUE",
		// RFC 9110's auth-scheme then token68): the credential after it,
		// when it looks generated.
		if isSchemeWord(s[j:ce]) {
			cs, ce2 := sc.credentialAfter(ce)
			if cs < 0 {
				continue
			}
			if c := s[cs:ce2]; looksRandomToken(c, 16, sc.r.threshold) && !isPlaceholderValue(c) {
				sc.emit(cs, ce2, h.start, ce2)
			}
		}
	}
}

// maxUnknownSchemeLen bounds an auth-scheme Vigil has no name for.
const maxUnknownSchemeLen = 32

// isSchemeWord reports whether w can be an HTTP auth-scheme: a letter,
// then letters, digits, '-' or '_' (AWS4-HMAC-SHA256, X-Custom).
func isSchemeWord(w string) bool {
	if w == "" || len(w) > maxUnknownSchemeLen || !(isUpper(w[0]) || isLower(w[0])) {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// maxSchemeLen is the longest authSchemes entry ("klaviyo-api-key").
const maxSchemeLen = 16

// credentialAfter skips one or more blanks after a scheme word and returns
// the credential that follows, or -1 when there is none.
func (sc *scan) credentialAfter(i int) (int, int) {
	s := sc.s
	j := skipBlanks(s, i)
	sc.charge(j - i)
	if j == i || j >= len(s) {
		return -1, -1
	}
	k := sc.runEnd(runCred, j)
	if k == j {
		return -1, -1
	}
	sc.charge(k - j)
	return j, k
}

func isCredChar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	switch c {
	case '.', '_', '~', '+', '/', '=', '-', ':', '%':
		return true
	}
	return false
}

// ---- assignments to secret-looking names ----

func detectPasswordAssignment(sc *scan, hits []ruleHit) { detectAssignment(sc, hits, true) }
func detectSecretAssignment(sc *scan, hits []ruleHit)   { detectAssignment(sc, hits, false) }

// detectAssignment finds NAME <op> VALUE where NAME is password-like
// (password rule) or secret-like (secret rule), in the syntaxes of shell,
// env files, YAML, JSON, TOML, INI, XML, CLI flags and most languages, and
// removes VALUE when it is not a placeholder, reference or code.
func detectAssignment(sc *scan, hits []ruleHit, password bool) {
	s := sc.s
	last := -1
	g := newNestGuard()
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < last {
			continue
		}
		ns, ne := identBounds(s, h.start, h.end)
		sc.charge(ne - ns + 1)
		last = ne
		cls := classifyName(s[ns:ne])
		if cls != nameNone {
			// "API KEY", "Vendor Token", "cache key": a name may be two
			// words; the word before decides with it.
			if pw := wordBefore(s, ns); pw != "" {
				cls = qualifyName(cls, s[ns:ne], pw)
			}
		}
		if cls == nameNone || password != (cls == namePassword) {
			continue
		}
		flag := s[ns] == '-'
		if n, pe := sc.concatValue(ns, ne, flag); n >= 2 {
			// "sk-proj-" + "…" + "…": the literals of a concatenation are
			// judged together and each removed.
			last = pe
			joined := strings.Join(sc.concat[:n], "")
			if assignedSecret(joined, cls, true, sc.r.threshold) && !isPlaceholderValue(joined) {
				for _, p := range sc.concatAt[:n] {
					sc.emit(p[0], p[1], min(ns, p[0]), pe)
				}
			}
			continue
		}
		loose := false
		vs, ve, quoted, ok := sc.assignedValue(ns, ne, flag)
		if !ok {
			// name: DB_PASSWORD / value: … pairs (Kubernetes env, ECS, Helm).
			if cls == nameWeak {
				// VENDOR_KEY VALUE, Vendor key VALUE: a compound or
				// two-word name, and a generated value.
				if !multiPart(s[ns:ne]) && wordBefore(s, ns) == "" {
					continue
				}
				if vs, ve, quoted, ok = sc.spacedValue(ns, ne); !ok {
					continue
				}
				loose = true
			} else if vs, ve, quoted, ok = sc.elementValue(ns, ne); ok {
				// <entry key="password">VALUE</entry>, <string name="api_key">VALUE</string>
			} else if vs, ve, quoted, ok = sc.argumentValue(ns, ne); ok {
				// setProperty("password", "VALUE"), Header.Set("X-Api-Key", "VALUE")
			} else if vs, ve, quoted, ok = sc.pairedValue(ns, ne); !ok {
				// password == "…", "…" != token: a literal compared with
				// the name; password "…"; or a config line "token VALUE".
				if vs, ve, ok = sc.comparedValue(ns, ne); ok {
					quoted = true
				} else if vs, ve, quoted, ok = sc.besideValue(ns, ne); !ok {
					// VENDOR_TOKEN VALUE, export X_TOKEN VALUE, set PASSWORD
					// VALUE: no operator, so the value must look generated.
					if vs, ve, quoted, ok = sc.spacedValue(ns, ne); !ok {
						continue
					}
					loose = true
				}
			}
		}
		if g.reads(vs, ve) {
			last = sc.emitLongRun(runBare, g.vs, g.ve, h.start)
			continue
		}
		sc.charge(ve - vs)
		v := s[vs:ve]
		if !quoted && copiesField(s[ns:ne], v) || sameName(v, s[ns:ne]) {
			continue // u.Token = o.Token; password := "password"; X_PASSWORD: "xPassword"
		}
		if ns > 0 && s[ns-1] == ':' && (ns < 2 || s[ns-2] != '/') && !(ns >= 5 && strings.EqualFold(s[ns-5:ns], "$env:")) {
			continue // a colon-separated record: name:password:uid:gid (not .npmrc's //host/:_authToken=, nor PowerShell's $env:NAME)
		}
		if s[ns:ne] == "PASS" && s[ne] == ':' {
			continue // test runner output: "--- PASS: TestX/case (0.01s)"
		}
		if isCoordinate(s, ns, ne) {
			continue // io.jsonwebtoken:jjwt-api:0.11.5: a package's group and artifact
		}
		if !quoted && bareStatement(s, vs, ve) {
			continue // password = DEFAULT_PW; / password => m{{…}}: code, not a literal
		}
		if !assignedSecret(v, cls, quoted, sc.r.threshold) || loose && !generatedValue(v, cls, sc.r.threshold) {
			continue
		}
		if len(v) >= 64 && sc.underEncryptedData(ns) {
			continue // a SealedSecret's encryptedData: ciphertext for the cluster's key, safe to commit
		}
		sc.emit(vs, ve, min(ns, vs), max(ve, ne))
	}
}

// underEncryptedData reports whether the YAML key at ns sits in an
// encryptedData: block (a Bitnami SealedSecret, which holds each value
// encrypted to the cluster's key): the nearest line above it that is
// indented less is "encryptedData:". It reads back at most 4 KB.
func (sc *scan) underEncryptedData(ns int) bool {
	s := sc.s
	ls, _ := sc.line(ns)
	ind := ns - ls
	if ind == 0 || ind > 64 || ls > 0 && s[ls-1] != '\n' || strings.TrimLeft(s[ls:ns], " ") != "" {
		return false
	}
	for k := 0; k < 64 && ls > 0; k++ {
		b, e := sc.line(ls - 1)
		line := s[b:e]
		ls = b
		if b > 0 && s[b-1] != '\n' {
			return false // a line longer than line() reads: no YAML block
		}
		sc.charge(len(line) + 1)
		t := strings.TrimLeft(line, " ")
		if t != "" && len(line)-len(t) < ind {
			return strings.TrimRight(t, " \r") == "encryptedData:"
		}
	}
	return false
}

// dnsRoots are the top-level domains that start reverse-DNS package names
// (Maven group ids, Java packages): io.jsonwebtoken, com.auth0, org.apache.
var dnsRoots = map[string]bool{
	"com": true, "org": true, "net": true, "io": true, "dev": true, "edu": true, "gov": true,
	"co": true, "me": true, "ai": true, "app": true, "info": true, "biz": true, "eu": true,
	"uk": true, "de": true, "fr": true, "nl": true, "ch": true, "jp": true, "cn": true,
	"ru": true, "br": true, "in": true, "au": true, "ca": true, "us": true, "se": true,
	"no": true, "fi": true, "dk": true, "pl": true, "it": true, "es": true, "be": true, "at": true,
}

// isCoordinate reports whether the name at s[ns:ne] is the group of a
// Maven, Gradle or Ivy coordinate (group:artifact[:version]): a lower-case
// reverse-DNS name, then a colon with no blank after it. Build files and
// dependency trees print such coordinates, and a group may end in a secret
// word (io.jsonwebtoken:jjwt-jackson:0.11.2).
func isCoordinate(s string, ns, ne int) bool {
	if ne+1 >= len(s) || s[ne] != ':' || !isIdentChar(s[ne+1]) {
		return false
	}
	name := s[ns:ne]
	root, rest, ok := strings.Cut(name, ".")
	if !ok || !dnsRoots[root] || rest == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(isLower(c) || isDigit(c) || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// bareStatement reports whether the bare value at s[vs:ve] is written as
// code: after "=>" (PHP, Ruby, Perl, Apex maps, where a literal is quoted),
// or as "name = value;" with blanks around the "=" and nothing but a
// comment after the ";" (a C-family statement; shell allows no blank
// around "=" and config files end no line with ";"). There a bare value is
// an identifier, a constant or an expression, not a string literal.
func bareStatement(s string, vs, ve int) bool {
	i := vs
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i < 2 {
		return false
	}
	if s[i-1] == '>' && s[i-2] == '=' {
		return true
	}
	if i == vs || s[i-1] != '=' || s[i-2] != ' ' && s[i-2] != '\t' {
		return false
	}
	if ve >= len(s) || s[ve] != ';' {
		return false
	}
	j := ve + 1
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r') {
		j++
	}
	return j == len(s) || s[j] == '\n' || strings.HasPrefix(s[j:], "//") || strings.HasPrefix(s[j:], "/*")
}

func isIdentChar(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.'
}

// identBounds widens a keyword hit to the identifier holding it.
func identBounds(s string, a, b int) (int, int) {
	for a > 0 && isIdentChar(s[a-1]) {
		a--
	}
	for b < len(s) && isIdentChar(s[b]) {
		b++
	}
	for b > a+1 && (s[b-1] == '.' || s[b-1] == '-') {
		b--
	}
	return a, b
}

type nameClass uint8

const (
	nameNone     nameClass = iota
	namePassword           // any non-placeholder value
	nameSecret             // secret, token, api key…: a random-looking value
	nameWeak               // key, auth, credentials alone: a longer random value
)

// Name tokens that make a name not secret-bearing wherever they appear.
var nameDeny = map[string]bool{
	"public": true, "publishable": true, "pub": true, "csrf": true, "xsrf": true,
	"authenticity": true, // Rails' CSRF token (authenticity_token), in every form it serves
	"example":      true, "sample": true, "dummy": true, "fake": true, "placeholder": true,
}

// Tokens that, before a final "key", make it an ordinary key.
var keyDeny = map[string]bool{
	"primary": true, "foreign": true, "cache": true, "sort": true, "partition": true,
	"idempotency": true, "routing": true, "shard": true, "hash": true, "lookup": true,
	"map": true, "dict": true, "object": true, "row": true, "unique": true, "composite": true,
	"natural": true, "surrogate": true, "hot": true, "short": true, "cut": true, "group": true,
	"index": true, "id": true, "gpg": true, "pgp": true, "kms": true, "dedup": true, "dedupe": true,
	"cursor": true, "page": true, "next": true, "prev": true, "last": true, "first": true,
	"bucket": true, "s3": true, "lock": true, "message": true, "event": true, "react": true,
	"list": true, "item": true, "table": true, "column": true, "field": true, "registry": true,
	"translation": true, "i18n": true, "locale": true, "lang": true, "label": true, "json": true,
	"yaml": true, "sign": false, "ssh": true, "host": true, "known": true, "fingerprint": true,
	"public_key": true, "query": true, "search": true, "state": true, "storage_class": true,
	"redis": true, "memcache": true, "session": false, "trace": true, "span": true, "idem": true,
	"component": true, "widget": true, "prop": true, "props": true, "dom": true, "node": true,
	"music": true, "piano": true, "keyboard": true, "turkey": true, "monkey": true, "the": true,
}

// Final tokens that pass the decision to the token before them.
var nameNeutral = map[string]bool{
	"value": true, "val": true, "str": true, "string": true, "b64": true, "base64": true,
	"raw": true, "plain": true, "plaintext": true, "hex": true, "data": true, "content": true,
	// Environments and generations a deployment keeps a secret for
	// (API_KEY_PROD, SECRET_KEY_BASE, TOKEN_V2).
	"prod": true, "production": true, "staging": true, "stage": true, "dev": true, "live": true,
	"sandbox": true, "qa": true, "uat": true, "base": true, "v1": true, "v2": true, "v3": true,
	"primary": true, "secondary": true, "old": true, "new": true, "current": true, "previous": true,
}

// classifyName decides whether an identifier names a secret.
func classifyName(name string) nameClass {
	name = strings.Trim(name, "-._")
	if name == "" || len(name) > 128 {
		return nameNone
	}
	var buf [16]string
	toks := splitName(name, buf[:0])
	for _, t := range toks {
		if nameDeny[t] {
			return nameNone
		}
	}
	for len(toks) > 1 && nameNeutral[toks[len(toks)-1]] {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return nameNone
	}
	last := toks[len(toks)-1]
	prev := ""
	if len(toks) > 1 {
		prev = toks[len(toks)-2]
	}
	switch last {
	case "password", "passwd", "pwd", "pass", "passphrase", "passcode", "pw", "psk",
		// The same word in other languages' configs and code.
		// (ASCII spellings: identifiers stop at non-ASCII bytes.)
		"passwort", "kennwort", "contrasena", "senha", "wachtwoord", "haslo", "salasana", "losenord",
		// LDAP clients' and servers' configs (nslcd, pam_ldap, slapd, sssd).
		"bindpw", "rootpw", "rootbindpw", "authtok":
		if last == "pw" && prev == "" {
			return nameNone
		}
		return namePassword
	case "secret", "token", "apikey", "accesskey", "secretkey", "privatekey", "signingkey",
		"masterkey", "authkey", "encryptionkey", "clientsecret", "accesstoken", "authtoken",
		"refreshtoken", "bearertoken", "sessiontoken", "apitoken", "idtoken", "webhooksecret",
		"licensekey", "subscriptionkey", "connectionstring":
		if last == "token" && (prev == "csrf" || prev == "xsrf" || prev == "max" || prev == "next" || prev == "page" || prev == "continuation") {
			return nameNone
		}
		return nameSecret
	case "key":
		if keyDeny[prev] {
			return nameNone
		}
		if keySecret[prev] {
			return nameSecret
		}
		return nameWeak
	case "auth", "credential", "credentials", "creds", "cred":
		return nameWeak
	}
	switch {
	case last == "secreto" || last == "secreta" || last == "secrete":
		return nameSecret // the word in Spanish, Portuguese, Italian and French configs
	case strings.HasSuffix(last, "password") || strings.HasSuffix(last, "passwd") || strings.HasSuffix(last, "passphrase"):
		return namePassword
	case strings.HasSuffix(last, "token") && !strings.HasPrefix(last, "csrf") && !strings.HasPrefix(last, "xsrf"),
		strings.HasSuffix(last, "secret"), strings.HasSuffix(last, "apikey"), strings.HasSuffix(last, "accesskey"),
		strings.HasSuffix(last, "secretkey"), strings.HasSuffix(last, "privatekey"):
		return nameSecret
	}
	return nameNone
}

// multiPart reports whether an identifier has two parts or more, split as
// splitName splits it (VENDOR_KEY, vendor-key, vendorKey).
func multiPart(name string) bool {
	name = strings.Trim(name, "-._")
	for i := 1; i < len(name); i++ {
		if c := name[i]; c == '_' || c == '-' || c == '.' || isUpper(c) && isLower(name[i-1]) {
			return true
		}
	}
	return false
}

// keySecret are the words that, before a final "key", name a secret key.
var keySecret = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "signing": true, "master": true,
	"auth": true, "encryption": true, "client": true, "app": true, "service": true,
	"subscription": true, "admin": true, "account": true, "storage": true, "license": true,
	"shared": true, "hmac": true, "jwt": true, "session": true, "webhook": true, "crypto": true,
	"cipher": true, "aes": true, "secure": true, "x": true, "preshared": true, "consumer": true,
}

// qualifyName is classifyName of the two-word name "word name" (name of
// class cls), decided without building the joined string: the word before
// can deny the name (public token, cache key, csrf token) or make a lone
// "key" a secret key (api key, secret key).
func qualifyName(cls nameClass, name, word string) nameClass {
	var buf [16]byte
	w := buf[:0]
	for i := 0; i < len(word) && i < len(buf); i++ {
		w = append(w, lowerASCII(word[i]))
	}
	if nameDeny[string(w)] {
		return nameNone
	}
	switch {
	case strings.EqualFold(name, "key"):
		if keyDeny[string(w)] {
			return nameNone
		}
		if keySecret[string(w)] {
			return nameSecret
		}
	case strings.EqualFold(name, "token"):
		switch string(w) {
		case "csrf", "xsrf", "max", "next", "page", "continuation":
			return nameNone
		}
	}
	return cls
}

// splitName lowercases name and splits it on _ - . and camelCase.
func splitName(name string, out []string) []string {
	start := 0
	emit := func(i int) {
		if i > start {
			out = append(out, strings.ToLower(name[start:i]))
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' || c == '.' {
			emit(i)
			start = i + 1
			continue
		}
		if i > start && isUpper(c) {
			p := name[i-1]
			// fooBar | FOOBar (acronym then word)
			if isLower(p) || isDigit(p) || (isUpper(p) && i+1 < len(name) && isLower(name[i+1])) {
				emit(i)
				start = i
			}
		}
	}
	emit(len(name))
	return out
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// skipNameEnd steps over the closing quote of a quoted name ("name", \"name\"),
// the close of Markdown emphasis (**name**) and a closing bracket
// (headers["X-Api-Key"] = …).
func skipNameEnd(s string, ns, ne int) int {
	i := ne
	switch {
	case i < len(s) && ns > 0 && isQuote(s[i]) && s[ns-1] == s[i]:
		i++
	case i+1 < len(s) && ns > 1 && s[i] == '\\' && isQuote(s[i+1]) && s[ns-1] == s[i+1] && s[ns-2] == '\\':
		i += 2
	}
	if i+1 < len(s) && (s[i] == '*' && s[i+1] == '*' || s[i] == '_' && s[i+1] == '_') {
		i += 2 // Markdown emphasis around the name: **API token**: VALUE
	}
	if i < len(s) && s[i] == ']' {
		i++
	} else if i < len(s) && s[i] == '[' {
		// A C array: char password[32] = "…", secret[] = "…".
		k := i + 1
		for k < len(s) && k-i <= 5 && isDigit(s[k]) {
			k++
		}
		if k < len(s) && s[k] == ']' {
			i = k + 1
		}
	}
	return i
}

// assignOp recognises an assignment operator at s[i:] (after blanks): =
// (not == or =~), :=, : (not :: or ://), =>, ?=; and for a CLI flag, blanks
// alone. It returns the index just past it.
func assignOp(s string, i int, flag bool) (int, bool) {
	j := skipBlanks(s, i)
	if j >= len(s) {
		return 0, false
	}
	next := byte(0)
	if j+1 < len(s) {
		next = s[j+1]
	}
	switch s[j] {
	case '=':
		switch next {
		case '=', '~':
			return 0, false
		case '>':
			return j + 2, true
		}
		return j + 1, true
	case ':':
		switch next {
		case '=':
			return j + 2, true
		case ':':
			return 0, false
		case '/':
			if j+2 < len(s) && s[j+2] == '/' {
				return 0, false
			}
		}
		return j + 1, true
	case '?':
		if next == '=' {
			return j + 2, true
		}
		return 0, false
	}
	if flag && j > i && s[j] != '-' {
		return j, true
	}
	return 0, false
}

// pairedValue handles a secret name given as the value of a "name" (or
// "key") field whose secret sits in a sibling "value" field, as in
// Kubernetes env lists (- name: DB_PASSWORD / value: "…") and ECS task
// definitions ({"name": "DB_PASSWORD", "value": "…"}).
func (sc *scan) pairedValue(ns, ne int) (vs, ve int, quoted, ok bool) {
	s := sc.s
	// Backwards: optional quote, blanks, ':' or '=', blanks, optional quote, name|key.
	i := ns
	if i > 0 && isQuote(s[i-1]) {
		i--
	}
	for i > 0 && isBlank(s[i-1]) {
		i--
	}
	if i == 0 || (s[i-1] != ':' && s[i-1] != '=') {
		return 0, 0, false, false
	}
	i--
	for i > 0 && isBlank(s[i-1]) {
		i--
	}
	if i > 0 && isQuote(s[i-1]) {
		i--
	}
	ks := i
	for ks > 0 && isWordByte(s[ks-1]) {
		ks--
	}
	if k := strings.ToLower(s[ks:i]); k != "name" && k != "key" {
		return 0, 0, false, false
	}
	// Forwards: the very next field is "value" (after blanks, newlines
	// and a comma).
	j := skipNameEnd(s, ns, ne)
	for j < len(s) && j-ne < 64 && (isSpace(s[j]) || s[j] == ',') {
		j++
	}
	if j < len(s) && isQuote(s[j]) {
		j++
	}
	if j+5 > len(s) || !strings.EqualFold(s[j:j+5], "value") || j+5 < len(s) && isIdentChar(s[j+5]) {
		return 0, 0, false, false
	}
	sc.charge(ne - ks + j - ne)
	return sc.assignedValue(j, j+5, false)
}

// assignedValue returns the value assigned to the name at s[ns:ne].
func (sc *scan) assignedValue(ns, ne int, flag bool) (vs, ve int, quoted, ok bool) {
	s := sc.s
	i := skipNameEnd(s, ns, ne)
	if ns > 0 && s[ns-1] == '<' && i < len(s) && s[i] == '>' { // <password>v</password>
		e := strings.IndexByte(s[i+1:min(len(s), i+1+1024)], '<')
		if e <= 0 {
			return 0, 0, false, false
		}
		// The value may sit on its own line(s) between the tags.
		vs, ve := i+1, i+1+e
		for vs < ve && isSpace(s[vs]) {
			vs++
		}
		for ve > vs && isSpace(s[ve-1]) {
			ve--
		}
		sc.charge(e)
		return vs, ve, vs < ve, vs < ve
	}
	j, ok := assignOp(s, i, flag)
	if !ok {
		return 0, 0, false, false
	}
	colon := s[j-1] == ':'
	if vs, ve, quoted, ok = sc.nextLineValue(j); ok {
		return vs, ve, quoted, ok
	}
	vs, ve, quoted, ok = sc.parseValue(skipBlanks(s, j), colon)
	if ok && !quoted && typeWords[strings.ToLower(s[vs:ve])] {
		// password: str = "…" (a typed declaration): the value follows "=".
		k := skipBlanks(s, ve)
		if k < len(s) && s[k] == '=' && (k+1 >= len(s) || s[k+1] != '=') {
			return sc.parseValue(skipBlanks(s, k+1), false)
		}
	}
	return vs, ve, quoted, ok
}

// nextLineValue reads a value written alone on the line after its name
// (YAML "token:\n  VALUE", "key = \n    \"VALUE\"", and after a YAML block
// indicator "key: |"): j is just past the operator, and the rest of its
// line must be blank. The next line must be indented (or the value quoted)
// and hold nothing but the value; a quoted one may end a JSON member or a
// statement there (`"…",`, `"…"}`, `"…";`, `"…"),`).
func (sc *scan) nextLineValue(j int) (vs, ve int, quoted, ok bool) {
	s := sc.s
	k := skipBlanks(s, j)
	if k < len(s) && (s[k] == '|' || s[k] == '>') { // YAML block scalar
		k++
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		k = skipBlanks(s, k)
	}
	if k < len(s) && s[k] == '\r' {
		k++
	}
	if k >= len(s) || s[k] != '\n' {
		return 0, 0, false, false
	}
	k++
	a := skipBlanks(s, k)
	sc.charge(a - j)
	if a >= len(s) || a == k && !isQuote(s[a]) {
		return 0, 0, false, false
	}
	vs, ve, quoted, ok = sc.parseValue(a, false)
	if !ok {
		return 0, 0, false, false
	}
	e := ve
	if quoted {
		e++
		for n := 0; e < len(s) && n < 3 && isValueTerminator(s[e]); n++ {
			e++
		}
	}
	e = skipBlanks(s, e)
	if e < len(s) && s[e] == '\r' {
		e++
	}
	if e < len(s) && s[e] != '\n' {
		return 0, 0, false, false
	}
	return vs, ve, quoted, true
}

// isValueTerminator: what may follow a quoted value at the end of its
// line in JSON and code: a member's comma, a closing bracket, a
// statement's semicolon.
func isValueTerminator(c byte) bool {
	return c == ',' || c == ';' || c == '}' || c == ']' || c == ')'
}

// comparedValue finds a quoted literal compared with the name at s[ns:ne]
// (==, ===, != or !==, on either side): code that checks a credential
// against a hard-coded one holds that credential.
func (sc *scan) comparedValue(ns, ne int) (vs, ve int, ok bool) {
	s := sc.s
	// NAME == "literal"
	j := skipBlanks(s, skipNameEnd(s, ns, ne))
	if k, cmp := compareOp(s, j); cmp {
		k = skipBlanks(s, k)
		if k < len(s) && isQuote(s[k]) {
			vs, ve, quoted, ok := sc.parseValue(k, false)
			return vs, ve, ok && quoted
		}
		return 0, 0, false
	}
	// "literal" == NAME
	i := ns
	for i > 0 && isBlank(s[i-1]) {
		i--
	}
	sc.charge(ns - i)
	switch t := s[max(0, i-3):i]; {
	case strings.HasSuffix(t, "===") || strings.HasSuffix(t, "!=="):
		i -= 3
	case strings.HasSuffix(t, "==") || strings.HasSuffix(t, "!="):
		i -= 2
	default:
		return 0, 0, false
	}
	for i > 0 && isBlank(s[i-1]) {
		i--
	}
	if i == 0 || !isQuote(s[i-1]) {
		return 0, 0, false
	}
	q := s[i-1]
	la, _ := sc.line(i - 1)
	from := max(la, i-1-256)
	sc.charge(i - 1 - from)
	o := strings.LastIndexByte(s[from:i-1], q)
	if o < 0 {
		return 0, 0, false
	}
	return from + o + 1, i - 1, from+o+1 < i-1
}

// compareOp reports whether an equality operator (==, ===, !=, !==)
// starts at s[j], and returns the index past it.
func compareOp(s string, j int) (int, bool) {
	switch {
	case strings.HasPrefix(s[j:], "===") || strings.HasPrefix(s[j:], "!=="):
		return j + 3, true
	case strings.HasPrefix(s[j:], "==") || strings.HasPrefix(s[j:], "!="):
		if j+2 < len(s) && s[j+2] == '~' {
			return 0, false
		}
		return j + 2, true
	}
	return 0, false
}

// besideValue finds a value written beside its name with no operator: a
// quoted literal after blanks (password "…"; Ruby, Tcl and nginx style
// calls and directives), or, when the name starts its line, a single bare
// value that ends it (redis.conf "requirepass VALUE", space-separated
// config files).
func (sc *scan) besideValue(ns, ne int) (vs, ve int, quoted, ok bool) {
	s := sc.s
	i := skipNameEnd(s, ns, ne)
	j := skipBlanks(s, i)
	if j == i || j-i > 4 || j >= len(s) {
		return 0, 0, false, false
	}
	if isQuote(s[j]) {
		// The quote must open a literal: with an odd number of the same
		// quotes before the name on its line, the name is inside a string
		// ("wrong password "+pw) and this quote closes it. Only the 64
		// bytes before the name are counted, so that each hit costs little.
		la, _ := sc.line(ns)
		from := max(la, ns-64)
		sc.charge(ns - from)
		if strings.Count(s[from:ns], s[j:j+1])%2 == 1 {
			return 0, 0, false, false
		}
		vs, ve, quoted, ok = sc.parseValue(j, false)
		if !ok || !quoted {
			return 0, 0, false, false
		}
		// Then the statement or the line ends: in prose more words follow
		// (you can pass "-gcflags" to a build).
		if e := skipBlanks(s, ve+1); e < len(s) && s[e] != '\n' && s[e] != '\r' && strings.IndexByte(";,)]}", s[e]) < 0 {
			return 0, 0, false, false
		}
		return vs, ve, true, true
	}
	la, lb := sc.line(ns)
	k := ns
	for k > la && isBlank(s[k-1]) {
		k--
	}
	sc.charge(ns - k)
	if k != la {
		return 0, 0, false, false
	}
	if strings.EqualFold(s[ns:ne], "passwd") {
		return 0, 0, false, false // the passwd command: its argument is a user name
	}
	vs, ve, quoted, ok = sc.parseValue(j, false)
	if !ok || quoted {
		return 0, 0, false, false
	}
	e := ve
	if e < lb && s[e] == ';' {
		e++
	}
	if e = skipBlanks(s, e); e < lb && s[e] != '\r' {
		return 0, 0, false, false
	}
	return vs, ve, false, true
}

// spacedValue finds a value written after its name and one to four blanks,
// anywhere on a line (VENDOR TOKEN VALUE, export API_TOKEN VALUE, set
// PASSWORD VALUE, Ruby and Tcl calls): the value, quoted or bare, must then
// end at a blank, a line end or closing punctuation. With no operator
// between them the pair may be prose, so the caller also requires the
// value to look generated (generatedValue).
func (sc *scan) spacedValue(ns, ne int) (vs, ve int, quoted, ok bool) {
	s := sc.s
	i := skipNameEnd(s, ns, ne)
	j := skipBlanks(s, i)
	if j == i || j-i > 4 || j >= len(s) {
		return 0, 0, false, false
	}
	if k := qualifiedIs(s, j); k > j {
		j = k // "the password for the vpn is VALUE"
	} else if k := qualifiedLast(s, j); k > j {
		j = k // "password for the staging db VALUE"
	}
	if j+3 < len(s) && (s[j] == 'i' || s[j] == 'I') && (s[j+1] == 's' || s[j+1] == 'S') && isBlank(s[j+2]) {
		j = skipBlanks(s, j+2) // "the vendor token is VALUE"
	} else if j+3 < len(s) && (s[j] == 't' || s[j] == 'T') && (s[j+1] == 'o' || s[j+1] == 'O') && isBlank(s[j+2]) {
		j = skipBlanks(s, j+2) // "set api_key to VALUE"
	} else if d := dashSep(s[j:]); d > 0 && j+d < len(s) && isBlank(s[j+d]) {
		j = skipBlanks(s, j+d) // "API key - VALUE", "| DEPLOY TOKEN | VALUE |"
	}
	vs, ve, quoted, ok = sc.parseValue(j, false)
	if !ok {
		return 0, 0, false, false
	}
	e := ve
	if quoted {
		e++
	}
	if e < len(s) && !isSpace(s[e]) && strings.IndexByte(";,)]}\"'`", s[e]) < 0 {
		return 0, 0, false, false
	}
	return vs, ve, quoted, true
}

// isDigest reports whether v is a content digest written with its
// algorithm (sha256:…, sha1-…, md5:…): the hash of public content, which
// image references, lock files and caches name.
func isDigest(v string) bool {
	i := strings.IndexAny(v, ":-")
	if i < 0 {
		return false
	}
	switch strings.ToLower(v[:i]) {
	case "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "blake2b", "blake3":
	default:
		return false
	}
	h := v[i+1:]
	if len(h) < 32 {
		return false
	}
	for j := 0; j < len(h); j++ {
		if c := h[j]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// qualifierWord reports whether the word at j opens a qualifier of a
// name (for, of, on, in), and the index after it.
func qualifierWord(s string, j int) (int, bool) {
	w := j
	for w < len(s) && isWordByte(s[w]) {
		w++
	}
	switch strings.ToLower(s[j:w]) {
	case "for", "of", "on", "in":
		return w, true
	}
	return j, false
}

// qualifiedIs: at j, a short qualifier of the name then "is" ("for the
// vpn is", "of the staging account is"): the index of that "is", or j. At
// most five words and 48 bytes, on the same line.
func qualifiedIs(s string, j int) int {
	w, ok := qualifierWord(s, j)
	if !ok {
		return j
	}
	for k, words := w, 0; k < len(s) && k-j <= 48 && words <= 5; words++ {
		k = skipBlanks(s, k)
		e := k
		for e < len(s) && (isWordByte(s[e]) || s[e] == '.' || s[e] == '-') {
			e++
		}
		if e == k {
			return j
		}
		if e+1 < len(s) && strings.EqualFold(s[k:e], "is") && isBlank(s[e]) {
			return k
		}
		k = e
	}
	return j
}

// qualifiedLast: at j, a short qualifier of the name (for, of, on, in and
// at most four words, all on the line) and then one last word that ends
// the line or the sentence ("password for the staging db VALUE"): the
// index of that word, or j. The caller requires it to look generated.
func qualifiedLast(s string, j int) int {
	k, ok := qualifierWord(s, j)
	if !ok {
		return j
	}
	for words := 0; words <= 4; words++ {
		if k >= len(s) || !isBlank(s[k]) {
			return j
		}
		k = skipBlanks(s, k)
		e := k
		for e < len(s) && !isSpace(s[e]) && e-k <= 128 {
			e++
		}
		if e == k || e-j > 160 {
			return j
		}
		t := s[k:e]
		if t[len(t)-1] == '.' || t[len(t)-1] == ',' {
			t = t[:len(t)-1]
		}
		if end := skipBlanks(s, e); end >= len(s) || s[end] == '\n' || s[end] == '\r' {
			if words == 0 {
				return j // "password for VALUE": no qualifier
			}
			return k
		}
		for i := 0; i < len(t); i++ {
			if !isWordByte(t[i]) && t[i] != '.' && t[i] != '-' {
				return j // the qualifier is words
			}
		}
		k = e
	}
	return j
}

// dashSep is the length of the separator that starts s when it is one
// that sets a name and its value apart in prose and tables (a dash, an en
// or em dash, a table's cell bar), or 0.
func dashSep(s string) int {
	switch {
	case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "|"):
		return 1
	case strings.HasPrefix(s, "\u2013"), strings.HasPrefix(s, "\u2014"):
		return 3
	}
	return 0
}

// elementValue reads the content of an XML element whose key or name
// attribute is the name at s[ns:ne]: <entry key="password">VALUE</entry>
// (Java properties XML), <string name="api_key">VALUE</string> (Android
// resources), <setting name="ApiSecret" serializeAs="String"><value>VALUE</value>
// (.NET settings). The value is treated as quoted: the markup delimits it.
func (sc *scan) elementValue(ns, ne int) (vs, ve int, quoted, ok bool) {
	s := sc.s
	if ns >= 5 && s[ns-5:ns] == "<key>" && strings.HasPrefix(s[ne:min(len(s), ne+6)], "</key>") {
		// A property list: <key>APIKey</key> then <string>VALUE</string>.
		j := ne + 6
		for j < len(s) && j-ne < 70 && isSpace(s[j]) {
			j++
		}
		if !strings.HasPrefix(s[j:min(len(s), j+8)], "<string>") {
			return 0, 0, false, false
		}
		i := j + 8
		e := strings.Index(s[i:min(len(s), i+1033)], "</string>")
		sc.charge(j - ne + max(e, 0))
		if e <= 0 {
			return 0, 0, false, false
		}
		return i, i + e, true, true
	}
	if ns < 6 || ne+2 > len(s) || !isQuote(s[ns-1]) || s[ne] != s[ns-1] || s[ns-2] != '=' {
		return 0, 0, false, false
	}
	a := ns - 2
	k := a
	for k > 0 && isWordByte(s[k-1]) && a-k < 8 {
		k--
	}
	if attr := strings.ToLower(s[k:a]); attr != "key" && attr != "name" || k == 0 || s[k-1] != ' ' {
		return 0, 0, false, false
	}
	i := ne + 1
	// Other attributes may follow the name (serializeAs="String").
	for k := i; k < len(s) && k-i <= 64; k++ {
		if s[k] == '>' || s[k] == '<' || s[k] == '\n' {
			if s[k] == '>' && s[k-1] != '/' {
				i = k
			}
			break
		}
	}
	if i >= len(s) || s[i] != '>' {
		return 0, 0, false, false
	}
	i++
	// .NET settings hold the value in a child: <setting name="X"><value>VALUE</value>.
	j := i
	for j < len(s) && j-i < 64 && isSpace(s[j]) {
		j++
	}
	if j+7 <= len(s) && s[j:j+7] == "<value>" {
		i = j + 7
	}
	e := strings.IndexByte(s[i:min(len(s), i+1024)], '<')
	sc.charge(max(e, 0))
	if e <= 0 || i+e+1 >= len(s) || s[i+e+1] != '/' {
		return 0, 0, false, false
	}
	vs, ve = i, i+e
	for vs < ve && isSpace(s[vs]) {
		vs++
	}
	for ve > vs && isSpace(s[ve-1]) {
		ve--
	}
	return vs, ve, vs < ve, vs < ve
}

// argumentValue reads the literal passed beside a quoted name as the last
// argument of a call: props.setProperty("password", "VALUE"),
// req.Header.Set("X-Api-Key", "VALUE"), ("token", "VALUE") in a list of
// pairs. The literal must close the call or the pair.
func (sc *scan) argumentValue(ns, ne int) (vs, ve int, quoted, ok bool) {
	s := sc.s
	if ns == 0 || ne >= len(s) || !isQuote(s[ns-1]) || s[ne] != s[ns-1] {
		return 0, 0, false, false
	}
	j := skipBlanks(s, ne+1)
	if j >= len(s) || s[j] != ',' {
		return 0, 0, false, false
	}
	j = skipBlanks(s, j+1)
	if j >= len(s) || !isQuote(s[j]) {
		return 0, 0, false, false
	}
	vs, ve, quoted, ok = sc.parseValue(j, false)
	if !ok || !quoted {
		return 0, 0, false, false
	}
	if e := skipBlanks(s, ve+1); e >= len(s) || s[e] != ')' {
		return 0, 0, false, false
	}
	return vs, ve, true, true
}

// generatedValue reports whether a value written beside its name without
// an operator looks machine-made: a token of at least 16 characters (a
// password: 8) that mixes letters and digits, reads as no word or
// identifier, and has the entropy of a random string.
func generatedValue(v string, cls nameClass, threshold float64) bool {
	if !hasDigit(v) || countDigits(v) == len(v) || isIdentifier(v) && isWordySnake(v) {
		return false
	}
	if cls == namePassword && len(v) >= 8 && len(v) < 16 {
		return charClasses(v) >= 3 && !isWordyPhrase(v) && entropy(v) >= 2.5
	}
	return looksRandomToken(v, 16, max(threshold, 3.0))
}

// wordBefore returns the word that ends one blank before s[ns] when it is
// letters only (at most 16): the first word of a two-word name ("api key",
// "Vendor Token"). Otherwise it returns "".
func wordBefore(s string, ns int) string {
	if ns < 2 || s[ns-1] != ' ' && s[ns-1] != '\t' {
		return ""
	}
	k := ns - 1
	b := k
	for k > 0 && b-k < 17 && (isUpper(s[k-1]) || isLower(s[k-1])) {
		k--
	}
	if k == b || b-k > 16 || k > 0 && isIdentChar(s[k-1]) {
		return ""
	}
	return s[k:b]
}

// parseValue reads a quoted, escaped-quoted (\"…\") or bare value at s[j:].
// The end of a bare value is remembered (runEnd), so hits inside one long
// run (password=password=…) do not each walk it.
func (sc *scan) parseValue(j int, colon bool) (vs, ve int, quoted, ok bool) {
	s := sc.s
	if j >= len(s) {
		return 0, 0, false, false
	}
	lim := min(len(s), j+1025)
	c := s[j]
	switch {
	case isQuote(c):
		k := j + 1
		for k < lim && s[k] != c && s[k] != '\n' {
			if s[k] == '\\' && c != '\'' {
				if k+1 < lim && s[k+1] == c {
					break // \" ends a value inside an escaped JSON string
				}
				k++
			}
			k++
		}
		sc.charge(k - j)
		if k >= lim || (s[k] != c && s[k] != '\\') {
			return 0, 0, false, false
		}
		return j + 1, k, true, true
	case c == '@' && j+1 < len(s) && s[j+1] == '"':
		// @"…": Objective-C and C# verbatim string literals.
		vs, ve, quoted, ok = sc.parseValue(j+1, colon)
		return vs, ve, quoted && ok, quoted && ok
	case c == '\\' && j+1 < len(s) && isQuote(s[j+1]):
		q := s[j+1]
		k := j + 2
		for ; k+1 < lim && s[k] != '\n'; k++ {
			if s[k] == '\\' && s[k+1] == q {
				sc.charge(k - j)
				return j + 2, k, true, true
			}
		}
		sc.charge(k - j)
		return 0, 0, false, false
	case c == '{' || c == '[' || c == '(' || c == '|' || c == '>':
		return 0, 0, false, false // object, list, expression, YAML block
	case colon && c == '#':
		return 0, 0, false, false // YAML comment
	case c == ':':
		return 0, 0, false, false // ":type password: :py:data:", "a ::= b"
	}
	k := min(sc.runEnd(runBare, j), lim)
	if k == j || (k == lim && lim < len(s)) {
		return 0, 0, false, false
	}
	if k < len(s) && (s[k] == ')' || s[k] == ']' || s[k] == '}') && mismatchedBrackets(s[j:min(len(s), j+64)]) {
		// m{{h}o)p${e]…: brackets no code nests this way; the value is a
		// literal and runs to the next blank.
		e := min(sc.runEnd(runCLIWord, j), lim)
		for e > k && strings.IndexByte(",;`", s[e-1]) >= 0 {
			e--
		}
		sc.charge(64)
		return j, e, false, true
	}
	return j, k, false, true
}

// mismatchedBrackets reports whether t, read up to its first blank,
// closes a bracket of another kind than the last one opened ("{)", "(]"),
// which no expression does: the brackets are characters of a literal.
// A closer with nothing open is not a mismatch (the value ends a call).
func mismatchedBrackets(t string) bool {
	var stack [16]byte
	n := 0
	for i := 0; i < len(t) && !isSpace(t[i]); i++ {
		switch c := t[i]; c {
		case '(', '[', '{':
			if n == len(stack) {
				return false
			}
			stack[n] = c
			n++
		case ')', ']', '}':
			if n == 0 {
				continue
			}
			n--
			if open := stack[n]; !(open == '(' && c == ')' || open == '[' && c == ']' || open == '{' && c == '}') {
				return true
			}
		}
	}
	return false
}

func bareStop(s string, k int) bool {
	switch s[k] {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', ',', ';', ')', ']', '}', '<', '>', '&', '|':
		return true
	case '\\':
		if k+1 < len(s) {
			switch s[k+1] {
			case 'n', 'r', 't', '"', '\'', '\\':
				return true
			}
		}
	}
	return false
}

var typeWords = map[string]bool{
	"str": true, "string": true, "int": true, "bool": true, "boolean": true, "number": true,
	"any": true, "object": true, "bytes": true, "secretstr": true, "text": true, "varchar": true,
	"char": true, "optional": true, "none": true, "null": true, "nil": true, "undefined": true,
	"true": true, "false": true, "secretbytes": true, "unknown": true, "never": true, "void": true,
}

// passwordWords are the word for password in other languages, lower-cased:
// a locale file gives it to its password key as the label to show.
var passwordWords = map[string]bool{
	"passwort": true, "kennwort": true, "contraseña": true, "contrasena": true, "senha": true,
	"wachtwoord": true, "hasło": true, "haslo": true, "lösenord": true, "losenord": true,
	"salasana": true, "parola": true, "adgangskode": true, "passord": true, "heslo": true,
	"jelszó": true, "şifre": true, "sifre": true, "parool": true, "lozinka": true, "geslo": true,
	"slaptažodis": true, "parole": true, "sandi": true, "пароль": true, "κωδικός": true,
	"סיסמה": true, "密码": true, "密碼": true, "パスワード": true, "비밀번호": true,
	"รหัสผ่าน": true, "पासवर्ड": true, "mật khẩu": true, "kata sandi": true,
}

// isLabelWord reports whether v is one capitalised word of letters (any
// script's: Pasahitza, Lykilorð, Zugangstoken): the way a locale file
// writes the label of a field. A generated secret mixes in digits or
// symbols or changes case inside; one a person chose and wrote as a
// single capitalised dictionary word is given up for the locale files.
//
// Parts joined by a hyphen, slash or apostrophe (Mot-de-passe,
// E-Mail/Passwort, PIN-Code) read the same, each part capitalised,
// lower-case or a short acronym, and a label may end in the colon,
// asterisk, question mark, full stop or ellipsis of a form. Letters
// outside ASCII with no digit or symbol (Passwort_bestätigen, Mật khẩu)
// are a label too, whatever their case: keys and generated passwords are
// ASCII.
func isLabelWord(v string) bool {
	v = strings.TrimSuffix(v, "…")
	if n := len(v); n > 0 && strings.IndexByte(":*?.", v[n-1]) >= 0 {
		v = v[:n-1]
	}
	if v == "" {
		return false
	}
	if !isASCII(v) && lettersAndSeparators(v) {
		return true
	}
	letters, parts, start := 0, 0, true
	partStart, partUpper := 0, 0
	for i, r := range v {
		if r == '-' || r == '/' || r == '\'' || r == '’' {
			if start {
				return false // two separators in a row, or one first
			}
			start = true
			continue
		}
		if !unicode.IsLetter(r) {
			return false
		}
		switch {
		case start:
			if i == 0 && !unicode.IsUpper(r) {
				return false
			}
			parts++
			partStart, partUpper = letters, 0
			if unicode.IsUpper(r) {
				partUpper = 1
			}
		case unicode.IsUpper(r):
			// Only an acronym (PIN, API, two to four capitals) has
			// capitals after its first letter.
			partUpper++
			if partUpper != letters-partStart+1 || partUpper > 4 {
				return false
			}
		case partUpper > 1:
			return false // PINcode
		}
		start = false
		letters++
	}
	return letters >= 4 && !start && (parts > 1 || partUpper <= 1)
}

// lettersAndSeparators reports whether v holds only letters and the
// blanks, hyphens, underscores and slashes between words.
func lettersAndSeparators(v string) bool {
	for _, r := range v {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !strings.ContainsRune(" -_/'’\u00a0", r) {
			return false
		}
	}
	return true
}

// isSecretNameRef reports whether v, a quoted value, is a snake, kebab or
// camelCase name holding a secret word (db_password, api-token,
// passwordConfirm): the name of a variable or field that holds the secret
// (psql's :'db_password', a key of a secret store), not the secret.
func isSecretNameRef(v string) bool {
	sep := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isLower(c):
		case c == '_' || c == '-':
			sep = true
		case isUpper(c) && i > 0 && isLower(v[i-1]):
			sep = true // a camelCase hump
		default:
			return false
		}
	}
	l := strings.ToLower(v)
	return sep && isLower(v[0]) && (strings.Contains(l, "pass") || strings.Contains(l, "secret") || strings.Contains(l, "token") || strings.Contains(l, "key") || strings.Contains(l, "pwd"))
}

func isASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return false
		}
	}
	return true
}

// assignedSecret decides whether a value assigned to a name of class cls is
// a secret.
func assignedSecret(v string, cls nameClass, quoted bool, threshold float64) bool {
	if len(v) < 4 || isPlaceholderValue(v) || looksLikePath(v) {
		return false
	}
	if !quoted && typeWords[strings.ToLower(strings.TrimRight(v, "!?"))] {
		return false // password: String! (GraphQL), var password: String? (Swift, Kotlin)
	}
	if isCiphertext(v) || isAgeRecipient(v) {
		return false // ENC(…), a KMS blob: encrypted for a key elsewhere; age1…: a public key
	}
	if cls == namePassword && passwordWords[strings.ToLower(v)] || isLabelWord(v) || isSecretNameRef(v) {
		return false // "password": "Passwort", "Pasahitza", "Lykilorð": a locale file's label
	}
	if cls != namePassword && !isASCII(v) {
		return false // "api_key": "API-Schlüssel": keys and tokens are ASCII; a label need not be
	}
	if !quoted && cls != namePassword && looksLikeCode(v) {
		return false
	}
	if strings.ContainsAny(v, " \t") {
		return false
	}
	if !quoted && isNumberLiteral(v) {
		return false // PASS_BIT = 0x115, TIMEOUT = 3600
	}
	if cls != namePassword && isDigest(v) {
		return false // cache key: "sha256:16b0…": a content digest names public data
	}
	switch cls {
	case namePassword:
		if len(v) < 6 && !hasDigit(v) {
			return false
		}
		if quoted {
			return true
		}
		// A bare value is code when it calls or indexes something, is a
		// member path on a receiver (self.pw), or is an identifier made of
		// words without digits (db_password); else a typed literal.
		if strings.ContainsAny(v, "()[]{}") && !mismatchedBrackets(v) {
			return false
		}
		if onlyIdentChars(v) {
			if i := strings.IndexByte(v, '.'); i > 0 && codeRoots[strings.ToLower(v[:i])] {
				return false
			}
			return !isPlainWords(v)
		}
		return true
	case nameSecret:
		return !strings.Contains(v, ",") && looksRandomToken(v, 12, threshold)
	default:
		return !strings.Contains(v, ",") && looksRandomToken(v, 16, max(threshold, 3.5))
	}
}

// looksRandomToken reports whether v could be a generated credential: long
// enough, above the entropy threshold, mixing character classes, and not a
// phrase of words.
func looksRandomToken(v string, minLen int, threshold float64) bool {
	if len(v) < minLen || charClasses(v) < 2 || isWordyPhrase(v) {
		return false
	}
	if len(v) >= 32 && isHexString(v) {
		// Sixteen symbols: a random key of 32 or 40 hex digits scores 3.4
		// to 3.9 bits a character, under a bar set for letters and digits.
		threshold = min(threshold, hexEntropyBar)
	}
	return entropy(v) >= threshold
}

// hexEntropyBar is the entropy a hex value of 32 digits or more must
// reach: a random one is above it but for one in many thousands.
const hexEntropyBar = 3.0

// isHexString reports whether v is all hex digits of one case.
func isHexString(v string) bool {
	lo, up := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
		case 'a' <= c && c <= 'f':
			lo = true
		case 'A' <= c && c <= 'F':
			up = true
		default:
			return false
		}
	}
	return !(lo && up)
}

// charClasses counts which of lower, upper, digit and other occur in v.
func charClasses(v string) int {
	var lo, up, di, ot int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isLower(c):
			lo = 1
		case isUpper(c):
			up = 1
		case isDigit(c):
			di = 1
		default:
			ot = 1
		}
	}
	return lo + up + di + ot
}

// isWordyPhrase reports whether every alphanumeric run of v reads like a
// word or identifier (letters only, with a case pattern people type:
// lower, UPPER, Capitalised or camelCase), so v is text, not a random key.
func isWordyPhrase(v string) bool {
	if symbolKinds(v) >= 4 {
		return false // m{{h}o)p${e]…: symbols typed into a password, not punctuation
	}
	n := 0
	for w := range words(v) {
		n++
		if !isWordy(w) {
			return false
		}
	}
	return n > 0
}

// symbolKinds counts the distinct brackets and special symbols in v, the
// characters password generators add and prose and identifiers rarely mix.
func symbolKinds(v string) int {
	var seen [128]bool
	n := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 128 && !seen[c] && strings.IndexByte("{}[]()<>$#@!%^&*~|\\?", c) >= 0 {
			seen[c] = true
			n++
		}
	}
	return n
}

// isWordy reports whether an alphanumeric run reads as a word or an
// identifier: a number of at most 4 digits, or camelCase / snake parts
// that are letters followed by at most 6 digits (proto3, Ed25519, Key1024),
// with few one-letter parts (a random mix of cases is mostly 1-2 letter
// parts; a random alphanumeric run has digits inside its parts).
func isWordy(w string) bool {
	if len(w) > 48 || w == "" {
		return false
	}
	if countDigits(w) == len(w) {
		return len(w) <= 4
	}
	var buf [16]string
	parts := buf[:0]
	if hasLower(w) {
		parts = camelParts(w, parts)
	} else {
		parts = append(parts, w) // ABC123DEF is not ABC123 + DEF
	}
	single := 0
	for _, p := range parts {
		d := len(p)
		for d > 0 && isDigit(p[d-1]) {
			d--
		}
		letters := p[:d]
		// Letters then digits; no run of letters longer than a word.
		if d == 0 || len(p)-d > 6 || countDigits(letters) > 0 || d > 20 || d > 12 && !hasLower(letters) {
			return false
		}
		// A word of two letters or more has a vowel, unless it is a
		// short acronym (HTTP, KV): random case mixes give "Lzw", "Qz".
		// Lower-case abbreviations (ws, db, cfg, ctx) are fine.
		lowerAbbrev := d <= 3 && !hasUpper(letters)
		if d >= 2 && hasLower(letters) && !lowerAbbrev && !hasVowel(letters) || d > 5 && !hasLower(letters) && !hasVowel(letters) {
			return false
		}
		if d == 1 {
			single++
		}
	}
	if len(parts) == 1 {
		return true
	}
	if len(parts) >= 6 && len(w) < 4*len(parts) {
		return false // many short parts: a random mix of cases
	}
	return single <= 1 && len(w) >= 3*len(parts)
}

// camelParts splits an identifier at case changes (fooBar, HTTPServer,
// Ed25519Key), keeping the case of each part.
func camelParts(w string, out []string) []string {
	start := 0
	for i := 1; i < len(w); i++ {
		c, p := w[i], w[i-1]
		if isUpper(c) && (isLower(p) || isDigit(p) || isUpper(p) && i+1 < len(w) && isLower(w[i+1])) {
			out = append(out, w[start:i])
			start = i
		}
	}
	return append(out, w[start:])
}

func hasVowel(s string) bool {
	for i := 0; i < len(s); i++ {
		switch lowerASCII(s[i]) {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}

// isPlainWords is isWordyPhrase without digits: how a bare value that is
// an identifier (db_password, userPassword) differs from a typed password
// (hunter2, WYHipJMoMbzE).
func isPlainWords(v string) bool {
	return countDigits(v) == 0 && isWordyPhrase(v)
}

// looksLikeCode reports whether a bare (unquoted) value is an expression
// rather than a literal: a call, a dotted member path, or a plain
// identifier without digits.
func looksLikeCode(v string) bool {
	if strings.ContainsAny(v, "()[]{}") {
		return !mismatchedBrackets(v)
	}
	segs := 0
	for seg := range strings.SplitSeq(v, ".") {
		segs++
		if !isIdentifier(seg) {
			return false
		}
	}
	if segs > 1 && (!hasDigit(v) || codeRoots[strings.ToLower(v[:strings.IndexByte(v, '.')])]) {
		return true // a.b.C member path; self._lib.NID_SHA1
	}
	for seg := range strings.SplitSeq(v, ".") {
		if !isWordySnake(seg) {
			return false
		}
	}
	return true
}

// sameName reports whether a value only repeats the name it is assigned
// to, in any case or separator style (CHALLENGE_PASSWORD: "challengePassword").
func sameName(v, name string) bool {
	i, j, n := 0, 0, 0
	for {
		for i < len(v) && !isAlnum(v[i]) {
			i++
		}
		for j < len(name) && !isAlnum(name[j]) {
			j++
		}
		if i == len(v) || j == len(name) {
			return i == len(v) && j == len(name) && n > 0
		}
		if lowerASCII(v[i]) != lowerASCII(name[j]) {
			return false
		}
		i, j, n = i+1, j+1, n+1
	}
}

// copiesField reports whether v is a member path ending in the same field
// as name: u.Token = other.v1.Token copies a field, it holds no literal.
func copiesField(name, v string) bool {
	i := strings.LastIndexByte(v, '.')
	if i < 0 || !isIdentifier(v[i+1:]) {
		return false
	}
	field := v[i+1:]
	name = strings.TrimRight(name, " \t=:\"'`")
	return len(name) >= len(field) && strings.EqualFold(name[len(name)-len(field):], field) &&
		(len(name) == len(field) || !isWordByte(name[len(name)-len(field)-1]))
}

// isNumberLiteral reports whether v is a decimal, hex, octal or binary
// number as code writes it.
func isNumberLiteral(v string) bool {
	t := strings.ToLower(strings.ReplaceAll(v, "_", ""))
	switch {
	case strings.HasPrefix(t, "0x"):
		t = strings.TrimLeft(t[2:], "0123456789abcdef")
	case strings.HasPrefix(t, "0o"), strings.HasPrefix(t, "0b"):
		t = strings.TrimLeft(t[2:], "01234567")
	default:
		t = strings.TrimLeft(strings.TrimPrefix(t, "-"), "0123456789.")
	}
	return t == "" || t == "l" || t == "u" || t == "ul"
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if isUpper(s[i]) {
			return true
		}
	}
	return false
}

func hasLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLower(s[i]) {
			return true
		}
	}
	return false
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

func onlyIdentChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// codeRoots start member paths in code, never a key.
var codeRoots = map[string]bool{
	"self": true, "this": true, "cls": true, "os": true, "ctx": true, "config": true,
	"cfg": true, "conf": true, "settings": true, "opts": true, "options": true, "params": true,
	"args": true, "kwargs": true, "request": true, "req": true, "res": true, "resp": true,
	"response": true, "app": true, "env": true, "process": true, "window": true, "document": true,
	"props": true, "state": true, "data": true, "secrets": true, "vars": true, "inputs": true,
	"github": true, "steps": true, "needs": true, "values": true, "spec": true,
}

func isIdentifier(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' && s[i] != '$' {
			return false
		}
	}
	return true
}

func isWordySnake(s string) bool {
	for p := range strings.SplitSeq(s, "_") {
		if p != "" && !isWordy(p) {
			return false
		}
	}
	return true
}

// looksLikePath reports whether v is a file path or URL rather than a key.
func looksLikePath(v string) bool {
	if strings.Contains(v, "://") {
		return true
	}
	if len(v) >= 3 && isAlnum(v[0]) && v[1] == ':' && v[2] == '\\' {
		return true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") {
		return !(len(v) >= 20 && charClasses(v) >= 3 && entropy(v) >= 4)
	}
	return false
}

// containsFold reports whether s contains the lowercase ASCII needle,
// ignoring ASCII case.
func containsFold(s, needle string) bool { return indexFold(s, needle) >= 0 }

// indexFold is strings.Index ignoring ASCII case; needle must be lowercase.
func indexFold(s, needle string) int {
	if len(needle) == 0 {
		return 0
	}
	first := needle[0]
	for i := 0; i+len(needle) <= len(s); i++ {
		if lowerASCII(s[i]) != first {
			continue
		}
		j := 1
		for j < len(needle) && lowerASCII(s[i+j]) == needle[j] {
			j++
		}
		if j == len(needle) {
			return i
		}
	}
	return -1
}

// ---- Mailchimp keys ----

// detectMailchimp checks each "-us" hit in constant time: 32 lower-case
// hex digits before it (after a non-word byte), one or two digits after.
func detectMailchimp(sc *scan, hits []ruleHit) {
	s := sc.s
	for _, h := range hits {
		a := h.start - 32
		if a < 0 || a > 0 && isWordByte(s[a-1]) {
			continue
		}
		sc.charge(40)
		hex := true
		for i := a; i < h.start && hex; i++ {
			hex = isDigit(s[i]) || 'a' <= s[i] && s[i] <= 'f'
		}
		e := h.end
		for e < len(s) && e-h.end < 2 && isDigit(s[e]) {
			e++
		}
		if !hex || e == h.end || e < len(s) && isWordByte(s[e]) || entropy(s[a:h.start]) <= 3 {
			continue
		}
		sc.emit(a, e, a, e)
	}
}

// ---- Slack tokens ----

// detectSlackToken reads xox?-DIGITS-…-RANDOM at each hit, by hand: one or
// more digit groups each ended by '-', then a run of 8+ letters and
// digits (with both) that ends the token. A digit run holds no hit, so
// each byte is read by one hit.
func detectSlackToken(sc *scan, hits []ruleHit) {
	s := sc.s
	for _, h := range hits {
		if h.start > 0 && isWordByte(s[h.start-1]) {
			continue
		}
		i, groups := h.end, 0
		for {
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j == i || j >= len(s) || s[j] != '-' {
				break
			}
			i, groups = j+1, groups+1
		}
		e := i
		for e < len(s) && isAlnum(s[e]) {
			e++
		}
		sc.charge(e - h.start)
		tail := s[i:e]
		if groups == 0 || len(tail) < 8 || e < len(s) && s[e] == '-' || !hasDigit(tail) || !(hasLower(tail) || hasUpper(tail)) ||
			entropy(s[h.start:e]) <= 3 {
			continue
		}
		sc.emit(h.start, e, h.start, e)
	}
}

// ---- Discord bot tokens ----

// detectDiscordToken finds ID.TIMESTAMP.HMAC tokens: the first part is the
// unpadded base64 of the bot's numeric user id (18 or 19 digits: 24 to 26
// characters), so it starts with M, N or O (the base64 of a first digit
// 1-9) or decodes to digits; the middle is 6 base64url characters, the last
// 27 to 38. It has no keyword, so it walks
// the dots of the text once: each costs a constant.
func detectDiscordToken(sc *scan, _ []ruleHit) {
	s := sc.s
	next := 0
	for off := 0; off < len(s) && !sc.over; {
		k := strings.IndexByte(s[off:], '.')
		if k < 0 {
			break
		}
		p := off + k
		off = p + 1
		if p < next || p+8 >= len(s) || s[p+7] != '.' {
			continue
		}
		sc.charge(8)
		mid := true
		for i := p + 1; i < p+7; i++ {
			mid = mid && isB64URL(s[i])
		}
		if !mid {
			continue
		}
		a := p
		for a > 0 && p-a <= 26 && isB64URL(s[a-1]) {
			a--
		}
		e := p + 8
		for e < len(s) && e-(p+8) <= 38 && isB64URL(s[e]) {
			e++
		}
		sc.charge(p - a + e - p)
		id, hmac := s[a:p], s[p+8:e]
		if len(id) < 24 || len(id) > 26 || len(hmac) < 27 || len(hmac) > 38 ||
			a > 0 && s[a-1] == '.' || e < len(s) && s[e] == '.' {
			continue
		}
		if c := id[0]; c != 'M' && c != 'N' && c != 'O' && !decodesToDigits(id) {
			continue
		}
		if !looksRandomToken(hmac, 27, 3.5) || isMasked(s[a:e]) {
			continue
		}
		sc.emit(a, e, a, e)
		next = e
	}
}

func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// decodesToDigits reports whether base64 (standard or URL, unpadded) s
// decodes to ASCII digits only.
func decodesToDigits(s string) bool {
	d := decodeB64Prefix(strings.NewReplacer("-", "+", "_", "/").Replace(s), len(s))
	if d == "" {
		return false
	}
	for i := 0; i < len(d); i++ {
		if !isDigit(d[i]) {
			return false
		}
	}
	return true
}

// ---- Kubernetes Secret manifests ----

// k8sBlockMax bounds how far a data: block is read (bytes and lines).
const (
	k8sBlockMax = 64 << 10
	k8sLinesMax = 256
)

// detectK8sSecretData removes the values of the data: (and stringData:)
// block of a Kubernetes Secret manifest, in YAML or JSON as kubectl prints
// it: base64 (data) or plain (stringData) values of any key, whatever it is
// named. It applies only when the text declares kind: Secret (not
// ExternalSecret, SopsSecret …: those hold references or ciphertext).
func detectK8sSecretData(sc *scan, hits []ruleHit) {
	s := sc.s
	var docs [][2]int
	docsDone := false
	next := 0
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < next {
			continue
		}
		la, lb := sc.line(h.start)
		ks, plain := h.start, false
		if ks-6 >= la && strings.EqualFold(s[ks-6:ks], "string") {
			ks, plain = ks-6, true // stringData: plain values
		}
		json := s[h.end-2] == '"'
		if json && (ks == 0 || s[ks-1] != '"') || !json && ks > 0 && isIdentChar(s[ks-1]) {
			continue // metadata:, "metadata":
		}
		i := skipBlanks(s, h.end)
		isJSON := json && i < len(s) && s[i] == '{' // "data": { "k": "v", … }
		isYAML := !json && (i == lb || s[i] == '\r' && i+1 == lb) && blanksBack(s, la, ks) == la
		if !isJSON && !isYAML {
			continue
		}
		if !docsDone { // found once, when a data block is first seen
			docs, docsDone = sc.k8sSecretDocs(), true
		}
		if !inSpans(docs, h.start) {
			continue
		}
		if isJSON {
			next = sc.k8sJSONData(i+1, plain)
		} else {
			next = sc.k8sYAMLData(la, ks, lb, plain)
		}
	}
}

// blanksBack walks back from k over blanks, not before la.
func blanksBack(s string, la, k int) int {
	for k > la && isBlank(s[k-1]) {
		k--
	}
	return k
}

// k8sSecretDocs returns the spans of the YAML documents of s (split at
// lines starting with ---) that declare kind: Secret, in order.
func (sc *scan) k8sSecretDocs() [][2]int {
	s := sc.s
	var docs [][2]int
	for a := 0; a < len(s); {
		b := len(s)
		for k := a; k < len(s); {
			i := strings.Index(s[k:], "---")
			if i < 0 {
				break
			}
			i += k
			if i == 0 || s[i-1] == '\n' {
				b = i
				break
			}
			k = i + 3
		}
		sc.charge(b - a)
		if declaresK8sSecret(s[a:b]) {
			docs = append(docs, [2]int{a, b})
		}
		a = b + 3
	}
	return docs
}

// inSpans reports whether i falls in one of spans (sorted, disjoint).
func inSpans(spans [][2]int, i int) bool {
	k, _ := slices.BinarySearchFunc(spans, i, func(sp [2]int, i int) int { return cmp.Compare(sp[1], i+1) })
	return k < len(spans) && spans[k][0] <= i && i < spans[k][1]
}

// declaresK8sSecret reports whether s has a line "kind: Secret" (YAML,
// quoted or not) or a "kind": "Secret" pair (JSON).
func declaresK8sSecret(s string) bool {
	for k := 0; k < len(s); {
		i := indexFold(s[k:], "kind")
		if i < 0 {
			return false
		}
		i += k + 4
		k = i
		j := i
		if j < len(s) && s[j] == '"' {
			j++
		}
		j = skipBlanks(s, j)
		if j >= len(s) || s[j] != ':' {
			continue
		}
		j = skipBlanks(s, j+1)
		if j < len(s) && isQuote(s[j]) {
			j++
		}
		if j+6 <= len(s) && strings.EqualFold(s[j:j+6], "secret") && (j+6 == len(s) || !isIdentChar(s[j+6])) &&
			(i-4 == 0 || !isIdentChar(s[i-5])) {
			return true
		}
	}
	return false
}

// k8sYAMLData reads the block under a "data:" line (its key starts at ks,
// the line is [la, lb)): each more-indented "key: value" line, a value on
// the next lines after | or >, comments skipped. It returns where it stopped.
func (sc *scan) k8sYAMLData(la, ks, lb int, plain bool) int {
	s := sc.s
	indent := ks - la
	i := lb + 1
	for n := 0; i < len(s) && n < k8sLinesMax && i-lb < k8sBlockMax && !sc.over; n++ {
		e := strings.IndexByte(s[i:], '\n')
		if e < 0 {
			e = len(s)
		} else {
			e += i
		}
		sc.charge(e - i + 1)
		k := i
		for k < e && isBlank(s[k]) {
			k++
		}
		if k == e || s[k] == '#' {
			i = e + 1
			continue
		}
		if k-i <= indent {
			break
		}
		c := strings.IndexByte(s[k:e], ':')
		if c < 0 {
			i = e + 1
			continue
		}
		v := skipBlanks(s, k+c+1)
		if v < e && (s[v] == '|' || s[v] == '>') {
			// The value is the next, more indented line(s): take the first.
			ne := strings.IndexByte(s[min(e+1, len(s)):], '\n')
			if e+1 >= len(s) {
				break
			}
			if ne < 0 {
				ne = len(s)
			} else {
				ne += e + 1
			}
			vs := skipBlanks(s, e+1)
			if vs-(e+1) > k-i {
				sc.k8sEmit(vs, strings.TrimRight(s[vs:ne], " \t\r"), plain, k)
				i = ne + 1
				continue
			}
			i = e + 1
			continue
		}
		val := strings.TrimRight(s[v:e], " \t\r")
		if len(val) >= 2 && isQuote(val[0]) && val[len(val)-1] == val[0] {
			v++
			val = val[1 : len(val)-1]
		}
		sc.k8sEmit(v, val, plain, k)
		i = e + 1
	}
	return i
}

// k8sJSONData reads "key": "value" pairs from just after the { of a JSON
// data object up to its }.
func (sc *scan) k8sJSONData(i int, plain bool) int {
	s := sc.s
	lim := min(len(s), i+k8sBlockMax)
	for n := 0; i < lim && n < k8sLinesMax && !sc.over; n++ {
		for i < lim && (isSpace(s[i]) || s[i] == ',') {
			i++
		}
		if i >= lim || s[i] != '"' {
			return i
		}
		ke := strings.IndexByte(s[i+1:lim], '"')
		if ke < 0 {
			return lim
		}
		j := skipBlanks(s, i+1+ke+1)
		if j >= lim || s[j] != ':' {
			return j
		}
		j = skipBlanks(s, j+1)
		if j >= lim || s[j] != '"' {
			return j
		}
		ve := strings.IndexByte(s[j+1:lim], '"')
		if ve < 0 {
			return lim
		}
		sc.charge(j + 1 + ve - i)
		sc.k8sEmit(j+1, s[j+1:j+1+ve], plain, i)
		i = j + 1 + ve + 1
	}
	return i
}

// k8sEmit removes one data value: base64 that decodes to something other
// than a placeholder (data), or any non-placeholder (stringData).
func (sc *scan) k8sEmit(vs int, val string, plain bool, mstart int) {
	if val == "" || isMasked(val) {
		return
	}
	if plain {
		if !isPlaceholderValue(val) {
			sc.emit(vs, vs+len(val), mstart, vs+len(val))
		}
		return
	}
	for i := 0; i < len(val); i++ {
		if !isB64(val[i]) {
			return
		}
	}
	d := decodeB64Prefix(val, len(val))
	if len(d) < 6 || isPlaceholderValue(strings.TrimSpace(d)) {
		return
	}
	sc.emit(vs, vs+len(val), mstart, vs+len(val))
}

// ---- session cookies ----

// cookieKeywords are "cookie" (Cookie:, Set-Cookie:, --cookie,
// document.cookie) and the names of common session cookies, which mark a
// cookie pair wherever they stand (a log of Set-Cookie values, curl -b).
var cookieKeywords = []string{"cookie", "jsessionid=", "phpsessid=", "connect.sid=", "asp.net_sessionid=", "laravel_session=", "wordpress_logged_in_", "sessionid=", "session="}

// cookieNameWords mark a cookie that logs its holder in.
var cookieNameWords = []string{"sess", "sid", "auth", "token", "jwt", "login", "logged", "remember"}

// detectSessionCookies reads the name=value pairs of a cookie header (or
// the one pair at a session cookie's name) and removes the values of
// those named like a session or login whose value looks generated.
func detectSessionCookies(sc *scan, hits []ruleHit) {
	s := sc.s
	next := 0
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < next {
			continue
		}
		var p int
		all := true
		if h.end-h.start == len("cookie") {
			p = skipBlanks(s, h.end)
			if p < len(s) && (s[p] == ':' || s[p] == '=') {
				p = skipBlanks(s, p+1)
			} else if p == h.end {
				continue // cookies, cookie_consent: a word, not a header
			}
			if p < len(s) && isQuote(s[p]) {
				p++
			}
		} else {
			// A session cookie's name: back to the start of the name.
			p = h.start
			for p > 0 && h.start-p < 64 && isCookieNameChar(s[p-1]) {
				p--
			}
			all = false
		}
		next = sc.cookiePairs(p, all)
	}
}

func isCookieNameChar(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '$' || c == '%'
}

// cookiePairs reads name=value pairs from p (only the first unless all)
// and emits the values of session cookies; it returns where it stopped.
func (sc *scan) cookiePairs(p int, all bool) int {
	s := sc.s
	lim := min(len(s), p+4096)
	for n := 0; n < 32 && p < lim; n++ {
		ns := p
		for p < lim && p-ns < 128 && isCookieNameChar(s[p]) {
			p++
		}
		if p == ns || p >= lim || s[p] != '=' {
			break
		}
		ne := p
		p++
		vs := p
		for p < lim && p-vs < 1024 && !isSpace(s[p]) && strings.IndexByte(";\"',", s[p]) < 0 {
			p++
		}
		sc.charge(p - ns)
		if v := s[vs:p]; cookieNamesSession(s[ns:ne]) && looksRandomToken(v, 16, 3.5) && hasDigit(v) && !isPlaceholderValue(v) {
			sc.emit(vs, p, ns, p)
		}
		if !all || p >= lim || s[p] != ';' {
			break
		}
		p = skipBlanks(s, p+1)
	}
	return p
}

func cookieNamesSession(name string) bool {
	for _, w := range cookieNameWords {
		if containsFold(name, w) {
			return true
		}
	}
	return false
}

// ---- values split across string concatenation ----

// maxConcat bounds the literals of one concatenation that are read.
const maxConcat = 8

// concatValue reads the value assigned to the name at s[ns:ne] when it is
// string literals joined into one: by + (most languages), . (PHP), ..
// (Lua), || (SQL), by adjacency ("a" "b" in C, Python and shell, also
// across a backslash-continued or parenthesised line), or as a list
// joined with an empty separator (["a", "b"].join(""), "".join(["a",
// "b"]), strings.Join([]string{"a", "b"}, "")). It stores the literals in sc.concat and their spans in
// sc.concatAt and returns how many there are and where the value ends; a
// value of one literal, or of anything else, gives 0.
func (sc *scan) concatValue(ns, ne int, flag bool) (int, int) {
	s := sc.s
	i := skipNameEnd(s, ns, ne)
	j, ok := assignOp(s, i, flag)
	if !ok {
		// #define NAME "a" "b": the literals beside the name.
		j = i
		if j >= len(s) || !isBlank(s[j]) {
			return 0, 0
		}
	}
	p := skipBlanks(s, j)
	lim := min(len(s), p+2048)
	list, joined, closer := false, false, byte(0)
	switch {
	case p >= lim:
		return 0, 0
	case s[p] == '(':
		p, closer = concatBlank(s, p+1, lim), ')'
	case s[p] == '[':
		p, list, closer = concatBlank(s, p+1, lim), true, ']'
	case strings.HasPrefix(s[p:lim], `"".join([`) || strings.HasPrefix(s[p:lim], `''.join([`):
		p, list, joined, closer = concatBlank(s, p+9, lim), true, true, ']'
	case strings.HasPrefix(s[p:lim], `strings.Join([]string{`):
		p, list, joined, closer = concatBlank(s, p+22, lim), true, true, '}'
	}
	n := 0
	for n < maxConcat && p < lim && (s[p] == '"' || s[p] == '\'') {
		q := s[p]
		k := p + 1
		for k < lim && s[k] != q && s[k] != '\n' {
			if s[k] == '\\' && q == '"' {
				k++
			}
			k++
		}
		if k >= lim || s[k] != q {
			return 0, 0
		}
		if n == 0 {
			sc.concat, sc.concatAt = sc.concat[:0], sc.concatAt[:0]
		}
		sc.concat = append(sc.concat, s[p+1:k])
		sc.concatAt = append(sc.concatAt, [2]int{p + 1, k})
		n++
		p = concatBlank(s, k+1, lim)
		if p >= lim {
			break
		}
		switch {
		case list && s[p] == ',':
			p = concatBlank(s, p+1, lim)
		case list:
		case s[p] == '+' || s[p] == '.' && (p+1 >= lim || s[p+1] != '.' || p+2 < lim && s[p+2] != '.'):
			if s[p] == '.' && p+1 < lim && s[p+1] == '.' {
				p++ // Lua's ..
			}
			p = concatBlank(s, p+1, lim)
		case s[p] == '|' && p+1 < lim && s[p+1] == '|':
			p = concatBlank(s, p+2, lim)
		}
	}
	sc.charge(p - ns)
	if n < 2 {
		return 0, 0
	}
	if closer != 0 {
		if p >= lim || s[p] != closer {
			return 0, 0
		}
		p++
		rest := s[p:lim]
		if list && !(joined && (closer == ']' && strings.HasPrefix(rest, ")") || closer == '}' && strings.HasPrefix(rest, `, "")`)) || !joined && (strings.HasPrefix(rest, `.join("")`) || strings.HasPrefix(rest, ".join('')"))) {
			return 0, 0 // a list that is not joined into one string
		}
	}
	return n, p
}

// concatBlank skips the blanks, newlines and line continuations between
// the parts of a concatenation, at most 128 bytes and two lines.
func concatBlank(s string, p, lim int) int {
	lines := 0
	for k := p; k < lim && k-p < 128; k++ {
		switch c := s[k]; {
		case c == ' ' || c == '\t' || c == '\r':
		case c == '\n':
			if lines++; lines > 2 {
				return k
			}
		case c == '\\' && k+1 < lim && (s[k+1] == '\n' || s[k+1] == '\r'):
		default:
			return k
		}
	}
	return min(lim, p+128)
}

// ---- JSON Web Keys ----

// jwkPrivate are the members of a JWK that hold its private key.
var jwkPrivate = map[string]bool{"d": true, "p": true, "q": true, "dp": true, "dq": true, "qi": true, "k": true}

// detectJWKPrivate finds the object around each "kty" member (its braces,
// at most 8 KB either way, no object nested in it) and removes the values
// of its private members.
func detectJWKPrivate(sc *scan, hits []ruleHit) {
	s := sc.s
	next := 0
	for _, h := range hits {
		if sc.over {
			return
		}
		if h.start < next {
			continue
		}
		a := strings.LastIndexAny(s[max(0, h.start-8192):h.start], "{}")
		if a < 0 {
			continue
		}
		a += max(0, h.start-8192)
		if s[a] != '{' {
			continue
		}
		b := strings.IndexAny(s[h.end:min(len(s), h.end+8192)], "{}")
		if b < 0 || s[h.end+b] != '}' {
			continue
		}
		b += h.end
		sc.charge(b - a)
		next = b
		for i := a + 1; i < b; {
			q := strings.IndexByte(s[i:b], '"')
			if q < 0 {
				break
			}
			ks := i + q + 1
			ke := strings.IndexByte(s[ks:b], '"')
			if ke < 0 {
				break
			}
			ke += ks
			j := skipBlanks(s, ke+1)
			if j >= b || s[j] != ':' {
				i = ke + 1
				continue
			}
			j = skipBlanks(s, j+1)
			if j >= b || s[j] != '"' {
				i = j
				continue
			}
			vs := j + 1
			ve := strings.IndexByte(s[vs:b], '"')
			if ve < 0 {
				break
			}
			ve += vs
			if v := s[vs:ve]; jwkPrivate[s[ks:ke]] && len(v) >= 16 && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=") == "" && !isPlaceholderValue(v) {
				sc.emit(vs, ve, ks, ve)
			}
			i = ve + 1
		}
	}
}
