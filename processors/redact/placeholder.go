package redact

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Placeholder policy (docs/redaction.md): a value that only stands for a
// secret is not one. There are two levels.
//
// isMasked applies to every finding of every built-in rule: a span with a
// mask (****, xxxxxx, "..."), a template or variable reference, an
// angle-bracket slot, a redaction marker, or an AWS-documentation style
// "EXAMPLE" cannot be a live credential, whatever rule matched it. These
// shapes have negligible probability inside a random key.
//
// isPlaceholderValue is stricter and applies only to values that Vigil's
// context rules (assignments, URLs, headers, .netrc, CLI flags) pick out by
// their name rather than their format: there, words such as "password" or
// "changeme", constant-like names (YOUR_API_KEY), and code expressions are
// also not secrets.

// isMasked reports whether a candidate secret is a mask, template or
// placeholder rather than a credential.
func isMasked(s string) bool {
	if s == "" {
		return true
	}
	if isMarker(s) {
		return true
	}
	if strings.Contains(s, "EXAMPLE") ||
		strings.Contains(s, "...") || strings.Contains(s, "…") || hasTemplateRef(s) {
		return true
	}
	if runOf(s, '*') >= 3 || runOf(s, '•') >= 3 || runOfFold(s, 'x') >= 6 || runOf(s, '#') >= 6 || runOf(s, '0') >= 12 ||
		ascendingRun(s) >= 10 || // klmnopqrstuvwx: a typed alphabet
		isTypedSequence(s) { // abc123def456
		return true
	}
	switch s[0] {
	case '$', '<':
		// $VAR, ${VAR}, $(cmd), <token>
		return true
	case '%':
		// %VAR% (Windows), %(name)s and %s (format strings)
		return len(s) < 3 || s[len(s)-1] == '%' || s[1] == '('
	}
	if last := s[len(s)-1]; last == '>' && strings.Contains(s, "<") {
		return true
	}
	return hasPlaceholderWord(s)
}

// hasTemplateRef reports whether s holds a template or variable reference:
// {{ … }} (Jinja, Go templates, Handlebars, GitHub Actions ${{ }}), with no
// lone brace inside, or its tail cut at the start (… }}); or ${NAME…}
// (shell, Terraform, JavaScript template literals): ${, an optional ! or #,
// an identifier, then the end of s or what follows a name in those
// languages (} : - = ? + # % / ^ , . [ ( @). Braces and dollars strewn
// through a random value (m{{h}o)p${e]n…}}) are not a reference.
func hasTemplateRef(s string) bool {
	if i := strings.Index(s, "{{"); i >= 0 {
		rest := s[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			j = len(rest)
		}
		if !strings.ContainsAny(rest[:j], "{}") {
			return true
		}
	} else if j := strings.Index(s, "}}"); j >= 0 && !strings.ContainsAny(s[:j], "{}") {
		return true
	}
	for k := 0; k < len(s); {
		i := strings.Index(s[k:], "${")
		if i < 0 {
			break
		}
		k += i + 2
		if isVarRef(s[k:]) {
			return true
		}
	}
	return false
}

// isVarRef reports whether t, the text after "${", starts a variable
// reference (see hasTemplateRef).
func isVarRef(t string) bool {
	if t != "" && (t[0] == '!' || t[0] == '#') {
		t = t[1:]
	}
	if t == "" || !(isAlnum(t[0]) && !isDigit(t[0]) || t[0] == '_') {
		return false
	}
	i := 1
	for i < len(t) && (isAlnum(t[i]) || t[i] == '_') {
		i++
	}
	if i == len(t) {
		return true
	}
	return strings.IndexByte("}:-=?+#%/^,.[(@", t[i]) >= 0
}

// placeholderWords are words that mark a value as a template when they
// stand as a whole word (delimited by non-alphanumerics) inside it.
var placeholderWords = map[string]bool{
	"your": true, "yours": true, "example": true, "examples": true,
	"sample": true, "placeholder": true, "dummy": true, "fake": true,
	"changeme": true, "changeit": true, "replaceme": true, "redacted": true,
	"todo": true, "tbd": true, "fixme": true, "insert": true, "paste": true,
	"xxx": true, "xxxx": true, "xxxxx": true, "notreal": true,
}

// hasPlaceholderWord splits s into alphanumeric words and looks for one of
// placeholderWords, or for "replace me"/"put here" style pairs.
func hasPlaceholderWord(s string) bool {
	// prev is the word before, as far as the pairs care: "replace",
	// "change", "not", another word, or none yet.
	const (
		none = iota
		other
		replace
		change
		not
	)
	var buf [16]byte
	prev := none
	for w := range words(s) {
		if len(w) > len(buf) {
			prev = other // no placeholder word is this long
			continue
		}
		b := buf[:0]
		for i := 0; i < len(w); i++ {
			b = append(b, lowerASCII(w[i]))
		}
		if placeholderWords[string(b)] {
			return true
		}
		lw := b
		switch {
		case prev == replace && (string(lw) == "me" || string(lw) == "this" || string(lw) == "with"),
			prev == change && string(lw) == "me",
			prev == not && (string(lw) == "real" || string(lw) == "a"),
			string(lw) == "here" && prev != none:
			return true
		}
		switch string(lw) {
		case "replace":
			prev = replace
		case "change":
			prev = change
		case "not":
			prev = not
		default:
			prev = other
		}
	}
	return false
}

// words yields the maximal runs of ASCII letters and digits in s.
func words(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i := 0; i <= len(s); i++ {
			alnum := i < len(s) && isAlnum(s[i])
			if alnum && start < 0 {
				start = i
			} else if !alnum && start >= 0 {
				if !yield(s[start:i]) {
					return
				}
				start = -1
			}
		}
	}
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// runOf returns the longest run of the rune r in s.
func runOf(s string, r rune) int {
	best, n := 0, 0
	for _, c := range s {
		if c == r {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// runOfFold is runOf for an ASCII letter, ignoring case.
func runOfFold(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// placeholderValues are whole values (ignoring case and surrounding
// brackets) that stand for a secret in documentation and templates.
var placeholderValues = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true,
	"token": true, "apikey": true, "api_key": true, "api-key": true, "key": true,
	"changeme": true, "changeit": true, "change_me": true, "change-me": true,
	"test": true, "testing": true, "example": true, "sample": true,
	"placeholder": true, "dummy": true, "fake": true, "foo": true, "bar": true,
	"foobar": true, "none": true, "null": true, "nil": true, "undefined": true,
	"true": true, "false": true, "redacted": true, "hidden": true, "masked": true,
	"secretpassword": true, "mypassword": true, "yourpassword": true,
	"mysecret": true, "yoursecret": true, "mytoken": true, "yourtoken": true,
	"username": true, "user": true, "admin": true, "root": true,
	"required": true, "optional": true, "string": true, "str": true,
	"empty": true, "unset": true, "default": true,
}

// isPlaceholderValue reports whether a value picked out by its name (not its
// format) is a placeholder, reference or code rather than a credential.
func isPlaceholderValue(v string) bool {
	if isMasked(v) {
		return true
	}
	t := strings.Trim(v, "<>[]{}()'\"` ")
	if t == "" {
		return true
	}
	if placeholderValues[strings.ToLower(t)] {
		return true
	}
	if isWordPath(t) || isJOSEHeader(t) || isPublicKeyDER(t) {
		return true
	}
	switch t[0] {
	case '$':
		return true // $VAR, ${VAR}, $(cmd), $1
	case '@', '!', '&', '*':
		// @VAR@, YAML tags (!vault, !Ref) and anchors/aliases (&a, *a).
		rest := strings.TrimSuffix(t[1:], "@")
		if t[0] == '!' {
			rest = strings.TrimPrefix(rest, "!") // YAML core tags: !!binary, !!str
		}
		if isIdentifier(strings.ReplaceAll(rest, "-", "_")) && isWordySnake(strings.ReplaceAll(rest, "-", "_")) {
			return true
		}
	}
	if isConstantName(t) {
		return true
	}
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") && !isBracedBlob(t) {
		return true
	}
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") && !isBracedBlob(v) {
		return true // {token} in f-strings and format strings
	}
	lv := strings.ToLower(v)
	for _, ref := range references {
		if strings.Contains(lv, ref) {
			return true
		}
	}
	for _, w := range placeholderInfixes {
		if strings.Contains(lv, w) {
			return true // somefakekey, mydummytoken
		}
	}
	return isSynthetic(t)
}

// isWordPath reports whether v is a relative path of two or more
// slashes whose every segment is a lower-case word or name
// (projects/acme-prod/secrets/db-password/versions/latest,
// secret/data/prod/db): the name of a secret in a manager or a store, or
// a route, not its value. A random value's segments mix case and digits.
func isWordPath(v string) bool {
	if strings.Count(v, "/") < 2 || strings.Contains(v, "//") {
		return false
	}
	for seg := range strings.SplitSeq(strings.Trim(v, "/"), "/") {
		if seg == "" || hasUpper(seg) {
			return false
		}
		for w := range strings.FieldsFuncSeq(seg, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
			if !isWordy(w) {
				return false
			}
		}
	}
	return true
}

// joseHeaderFields are the members a JOSE (JWT, JWS, JWE) header holds.
var joseHeaderFields = map[string]bool{
	"alg": true, "typ": true, "kid": true, "cty": true, "enc": true, "zip": true,
	"jku": true, "x5t": true, "x5u": true, "crit": true,
}

// isJOSEHeader reports whether v is the base64url of a JOSE header alone
// (eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 is {"alg":"HS256","typ":"JWT"}),
// with no payload or signature after it: the same for every token of an
// algorithm, so no secret.
func isJOSEHeader(v string) bool {
	if !strings.HasPrefix(v, "eyJ") || strings.Contains(v, ".") || len(v) > 200 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil {
		return false
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return false
	}
	for k := range m {
		if !joseHeaderFields[k] {
			return false
		}
	}
	return true
}

// isBracedBlob reports whether {…} wraps a base64 blob rather than a
// name: Jenkins stores each credential encrypted as {AQAAABAAAAAQ…=},
// which a format string's {token} never resembles.
func isBracedBlob(v string) bool {
	in := v[1 : len(v)-1]
	if len(in) < 24 {
		return false
	}
	for i := 0; i < len(in); i++ {
		if !isB64(in[i]) {
			return false
		}
	}
	return looksRandomToken(in, 24, 3.5)
}

// placeholderInfixes mark a value picked by its name as a stand-in even
// inside a longer word. Each is at least four letters: inside a random
// key its chance is below one in a million.
var placeholderInfixes = []string{"fake", "dummy", "placeholder", "changeme"}

// isSynthetic reports whether a value picked by its name has no letter or
// digit at all (",.:-@*?!"): a separator or a format, not a credential.
func isSynthetic(v string) bool {
	for i := 0; i < len(v); i++ {
		if isAlnum(v[i]) {
			return false
		}
	}
	return true
}

// ascendingRun returns the longest run of letters or digits in s that each
// follow the one before in the alphabet or in 0-9 (ignoring case).
func ascendingRun(s string) int {
	best, n := 1, 1
	for i := 1; i < len(s); i++ {
		a, b := lowerASCII(s[i-1]), lowerASCII(s[i])
		if isAlnum(a) && isAlnum(b) && b == a+1 {
			n++
			best = max(best, n)
		} else {
			n = 1
		}
	}
	return best
}

// references are substrings of code that reads a secret from elsewhere.
var references = []string{
	"os.environ", "os.getenv", "process.env", "getenv(", "env[", "env.",
	"secrets.", "vault(", "keyring.", "secretkeyref", "valuefrom",
	"import.meta.env", "system.getenv", "environment.getenvironmentvariable",
	"config.get(", "settings.", "credentials.", "request.", "input(", "getpass",
}

// isConstantName reports whether s looks like a constant or environment
// variable name (YOUR_API_KEY, DB_PASSWORD, PASSWORD): upper-case letters,
// digits and underscores, with at least one underscore or no digit, and
// some letters.
func isConstantName(s string) bool {
	if len(s) < 3 {
		return false
	}
	letters, digits, unders := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isUpper(c):
			letters++
		case isDigit(c):
			digits++
		case c == '_':
			unders++
		default:
			return false
		}
	}
	if letters < 3 || !isUpper(s[0]) {
		return false
	}
	if unders > 0 {
		return digits <= letters/3
	}
	return digits == 0 && len(s) <= 16
}

// publicPrefixes start keys that are public by design: Stripe publishable
// keys (pk_live_, pk_test_) ship in web pages. Only name-based rules (an
// assignment to STRIPE_PUBLISHABLE_KEY) would flag them; format rules
// never do.
var publicPrefixes = []string{"pk_live_", "pk_test_"}

func isPublicByDesign(s string) bool {
	for _, p := range publicPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return isAgeRecipient(s)
}

// isAgeRecipient reports whether s is an age public key (age1 and 58
// bech32 characters): what a file is encrypted to, published on purpose.
// Its secret key is AGE-SECRET-KEY-1….
func isAgeRecipient(s string) bool {
	if len(s) != 62 || !strings.HasPrefix(s, "age1") {
		return false
	}
	return strings.Trim(s[4:], "qpzry9x8gf2tvdw0s3jn54khce6mua7l") == ""
}

// isCiphertext reports whether v is a value encrypted for a key the text
// does not hold, as config tools store them: Jasypt's ENC(…), and an AWS
// KMS ciphertext blob in base64 (AQICAH…, AQIDAH…: the blob's version
// and key-id header).
func isCiphertext(v string) bool {
	if strings.HasPrefix(v, "ENC(") && strings.HasSuffix(v, ")") && len(v) > 12 {
		return true
	}
	return len(v) >= 64 && (strings.HasPrefix(v, "AQICAH") || strings.HasPrefix(v, "AQIDAH")) && countB64(v) == len(v)
}

// namesPublic reports whether the name part of an assignment says the value
// is public (public key, pubkey, publishable key).
func namesPublic(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "public") || strings.Contains(n, "publishable") ||
		strings.Contains(n, "pubkey") || strings.Contains(n, "pub_key") || strings.Contains(n, "pub-key")
}

// isMarker reports whether s is exactly a redaction marker, [REDACTED] or
// [REDACTED:rule] (also quoted), as Vigil and other tools write them.
func isMarker(s string) bool {
	s = strings.Trim(s, "'\"`")
	rest, ok := strings.CutPrefix(s, "[REDACTED")
	if !ok || !strings.HasSuffix(rest, "]") {
		return false
	}
	rest = strings.TrimSuffix(rest, "]")
	if rest == "" {
		return true
	}
	name, ok := strings.CutPrefix(rest, ":")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isRuleNameChar(name[i]) {
			return false
		}
	}
	return true
}

// shortBody reports whether v is a lower-case word prefix or two, each
// followed by _ or - (sk_live_, key-), before fewer than eight characters
// (sk_live_12345, glpat-short): a vendor's prefix on a value too short to
// be its key. No vendor issues a key whose random part is that short.
func shortBody(v string) bool {
	body, stripped := v, false
	for {
		i := strings.IndexAny(body, "_-")
		if i <= 0 || i > 8 {
			break
		}
		p := body[:i]
		for j := 0; j < len(p); j++ {
			if !isLower(p[j]) {
				return stripped && len(body) < 8
			}
		}
		body, stripped = body[i+1:], true
	}
	return stripped && len(body) < 8
}

// publicKeyOIDs are the DER bodies of the algorithm identifiers a
// SubjectPublicKeyInfo names: rsaEncryption, id-ecPublicKey, id-dsa,
// Ed25519, X25519, Ed448, X448.
var publicKeyOIDs = []string{
	"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01", "\x2a\x86\x48\xce\x3d\x02\x01",
	"\x2a\x86\x48\xce\x38\x04\x01", "\x2b\x65\x70", "\x2b\x65\x6e", "\x2b\x65\x71", "\x2b\x65\x6f",
}

// isPublicKeyDER reports whether v is the base64 of a DER public key
// (SubjectPublicKeyInfo: SEQUENCE { SEQUENCE { OID of a public-key
// algorithm … } BIT STRING }, as PEM's PUBLIC KEY blocks and JWKS x5c
// hold) or of an X.509 certificate (SEQUENCE { SEQUENCE { [0] version …):
// both are public by design. A private key's DER starts with an INTEGER
// version, an encrypted one's with a PBES OID, so neither passes.
func isPublicKeyDER(v string) bool {
	if len(v) < 40 || v[0] != 'M' {
		return false
	}
	head := v[:40]
	raw, err := base64.StdEncoding.DecodeString(head)
	if err != nil {
		return false
	}
	i, ok := derSkipHeader(raw, 0, 0x30)
	if !ok {
		return false
	}
	if i, ok = derSkipHeader(raw, i, 0x30); !ok {
		return false
	}
	if i+5 <= len(raw) && raw[i] == 0xa0 && raw[i+1] == 0x03 && raw[i+2] == 0x02 && raw[i+3] == 0x01 {
		return true // a certificate's TBSCertificate: [0] EXPLICIT version
	}
	if i+2 > len(raw) || raw[i] != 0x06 {
		return false
	}
	n := int(raw[i+1])
	if i+2+n > len(raw) {
		return false
	}
	oid := string(raw[i+2 : i+2+n])
	for _, o := range publicKeyOIDs {
		if oid == o {
			return true
		}
	}
	return false
}

// derSkipHeader checks that raw[i] is the tag and returns the index after
// its DER length octets.
func derSkipHeader(raw []byte, i int, tag byte) (int, bool) {
	if i+2 > len(raw) || raw[i] != tag {
		return 0, false
	}
	l := raw[i+1]
	if l < 0x80 {
		return i + 2, true
	}
	n := int(l & 0x7f)
	if n == 0 || n > 2 || i+2+n > len(raw) {
		return 0, false
	}
	return i + 2 + n, true
}

// isTypedSequence reports whether v is typed along the keyboard's rows of
// the alphabet and digits: every letter and digit in a run of three or
// more that each follow the one before (abc123def456, 123456abcdef), as
// examples write a key. A random value of twelve characters or more holds
// such runs over all its length with negligible probability.
func isTypedSequence(v string) bool {
	n, covered, run := 0, 0, 0
	var prev byte
	flush := func() {
		if run >= 3 {
			covered += run
		}
	}
	for i := 0; i < len(v); i++ {
		c := lowerASCII(v[i])
		if !isAlnum(c) {
			flush()
			run = 0
			continue
		}
		n++
		if run > 0 && c == prev+1 {
			run++
		} else {
			flush()
			run = 1
		}
		prev = c
	}
	flush()
	return n >= 12 && covered == n
}

// digestNameWords are the last words of a name whose value is a digest of
// something, not a secret (token_sha256, password_hash, file_checksum,
// etag, integrity).
var digestNameWords = map[string]bool{
	"sha": true, "sha1": true, "sha224": true, "sha256": true, "sha384": true, "sha512": true,
	"md5": true, "hash": true, "digest": true, "checksum": true, "fingerprint": true,
	"etag": true, "integrity": true, "crc32": true, "revision": true,
}

// namesDigest reports whether the identifier that ends the text before a
// value (its name, with quotes, operators and spaces after it) ends with
// one of digestNameWords.
func namesDigest(before string) bool {
	e := len(before)
	for e > 0 && strings.IndexByte("\"' \t:=>", before[e-1]) >= 0 {
		e--
	}
	a := e
	for a > 0 && (isIdentChar(before[a-1]) || before[a-1] == '-') {
		a--
	}
	if a == e {
		return false
	}
	var buf [16]string
	toks := splitName(before[a:e], buf[:0])
	return len(toks) > 0 && digestNameWords[toks[len(toks)-1]]
}
