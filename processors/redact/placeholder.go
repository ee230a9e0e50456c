package redact

import (
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
		ascendingRun(s) >= 10 { // klmnopqrstuvwx: a typed alphabet
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
	return false
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
