package shell

import (
	"strings"
	"sync"
	"unicode"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Known-safe code. The code analyzer reads patterns; a pattern reader
// finds what it knows and says nothing of the rest, so "no finding" does
// not mean "harmless". Code counts as known to be harmless only when every
// name it uses is in a small vocabulary of pure functions and values
// (printing, lengths, JSON of literals, arithmetic, string methods, the
// interpreter's version), with no name starting with an underscore, no
// subscripted module, no command substitution and no interpolation that is
// not itself in the vocabulary. Anything else is MEDIUM (code-not-known-safe)
// when no rule judged it: the client's own prompt decides.

// maxSafeCode bounds the code the known-safe reader accepts.
const maxSafeCode = 4096

// safeVocab is one language's vocabulary.
type safeVocab struct {
	names   map[string]bool            // keywords and pure builtins
	modules map[string]map[string]bool // module (or global object) → its pure attributes
	imports bool                       // Python's import statements
}

// pureMethods may be called on any value the vocabulary can produce
// (literals, numbers, JSON values, strings): none reaches a file, a
// process, the network or the interpreter's internals.
var pureMethods = core.LazySet("upper", "lower", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "join", "replace",
	"startswith", "endswith", "format", "count", "find", "rfind", "index", "rindex", "items", "keys", "values", "get",
	"append", "extend", "pop", "sort", "copy", "encode", "decode", "title", "capitalize", "isdigit", "isalpha",
	"isalnum", "isspace", "isupper", "islower", "zfill", "rjust", "ljust", "center", "casefold", "partition",
	"rpartition", "swapcase", "expandtabs", "write", "flush", "real", "imag", "hex", "bit_length", "is_integer",
	"isoformat", "strftime", "year", "month", "day", "hour", "minute", "second", "timestamp", "total_seconds",
	"length", "toUpperCase", "toLowerCase", "trim", "trimStart", "trimEnd", "slice", "substring", "includes",
	"indexOf", "lastIndexOf", "padStart", "padEnd", "repeat", "map", "filter", "reduce", "forEach", "concat",
	"reverse", "toString", "toFixed", "toISOString", "getTime", "getFullYear", "startsWith", "endsWith", "charAt",
	"charCodeAt", "at", "flat", "some", "every", "size", "upcase", "downcase", "to_s", "to_i", "to_f", "to_a",
	"to_json", "inspect", "reverse", "sum", "first", "last", "each", "times", "uniq", "sort_by", "group", "groups",
	"span", "start", "end", "string", "days", "seconds", "microseconds")

var pyVocab = sync.OnceValue(func() safeVocab {
	return safeVocab{
		names: core.SetOf("print", "len", "str", "int", "float", "bool", "list", "dict", "set", "tuple", "sorted",
			"reversed", "sum", "min", "max", "abs", "round", "range", "enumerate", "zip", "repr", "format", "hex",
			"oct", "bin", "ord", "chr", "divmod", "pow", "any", "all", "isinstance", "map", "filter", "frozenset",
			"bytes", "complex", "True", "False", "None", "and", "or", "not", "in", "is", "if", "else", "elif", "for",
			"lambda", "pass", "import", "from", "as", "end", "sep"),
		modules: map[string]map[string]bool{
			"json":     core.SetOf("dumps", "loads", "indent", "sort_keys", "ensure_ascii", "separators"),
			"math":     core.SetOf("sqrt", "pi", "e", "tau", "inf", "nan", "floor", "ceil", "log", "log2", "log10", "exp", "sin", "cos", "tan", "pow", "fabs", "factorial", "gcd", "isqrt", "comb", "perm", "hypot", "trunc", "isclose", "isnan", "isinf", "prod", "fsum", "degrees", "radians"),
			"sys":      core.SetOf("version", "version_info", "platform", "maxsize", "byteorder", "executable", "implementation", "stdout", "stderr", "exit", "major", "minor", "micro", "name", "float_info", "maxunicode"),
			"re":       core.SetOf("match", "search", "fullmatch", "findall", "sub", "subn", "split", "compile", "escape", "IGNORECASE", "MULTILINE", "DOTALL", "I", "M", "S", "group", "groups"),
			"datetime": core.SetOf("datetime", "date", "time", "timedelta", "timezone", "now", "today", "utcnow", "fromisoformat", "isoformat", "strftime", "utc", "fromtimestamp"),
			"string":   core.SetOf("ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "punctuation", "printable", "whitespace"),
		},
		imports: true,
	}
})

var jsVocab = sync.OnceValue(func() safeVocab {
	return safeVocab{
		names: core.SetOf("const", "let", "var", "for", "of", "in", "if", "else", "true", "false", "null", "undefined",
			"typeof", "new", "Number", "String", "Boolean", "Array", "parseInt", "parseFloat", "isNaN", "Date",
			"Map", "Set", "Infinity", "NaN"),
		modules: map[string]map[string]bool{
			"console": core.SetOf("log", "error", "info", "warn", "dir", "table"),
			"JSON":    core.SetOf("stringify", "parse"),
			"Math":    core.SetOf("abs", "ceil", "floor", "round", "max", "min", "pow", "sqrt", "PI", "E", "trunc", "sign", "log", "log2", "log10", "exp", "sin", "cos", "tan", "random", "hypot", "cbrt"),
			"process": core.SetOf("version", "versions", "platform", "arch", "node", "v8", "exit"),
			"Object":  core.SetOf("keys", "values", "entries", "assign", "freeze", "fromEntries"),
			"Date":    core.SetOf("now"),
			"Array":   core.SetOf("isArray", "from", "of"),
			"Number":  core.SetOf("isInteger", "isFinite", "parseInt", "parseFloat", "MAX_SAFE_INTEGER"),
		},
	}
})

var rubyVocab = sync.OnceValue(func() safeVocab {
	return safeVocab{
		names: core.SetOf("puts", "p", "print", "pp", "require", "true", "false", "nil", "if", "else", "end", "do",
			"RUBY_VERSION", "RUBY_PLATFORM", "Integer", "Float", "String", "Array", "Hash"),
		modules: map[string]map[string]bool{
			"JSON": core.SetOf("generate", "pretty_generate", "parse", "dump"),
			"Math": core.SetOf("sqrt", "log", "log2", "log10", "sin", "cos", "PI", "E", "exp", "hypot", "cbrt"),
			"Time": core.SetOf("now"),
		},
	}
})

var perlVocab = sync.OnceValue(func() safeVocab {
	return safeVocab{names: core.SetOf("print", "say", "length", "uc", "lc", "ucfirst", "lcfirst", "join", "sprintf", "printf", "abs", "int", "sqrt", "reverse")}
})

var luaVocab = sync.OnceValue(func() safeVocab {
	return safeVocab{
		names: core.SetOf("print", "tostring", "tonumber", "true", "false", "nil", "local", "for", "do", "end", "in", "if", "then", "else", "and", "or", "not", "ipairs", "pairs"),
		modules: map[string]map[string]bool{
			"string": core.SetOf("format", "upper", "lower", "rep", "len", "sub", "reverse"),
			"math":   core.SetOf("floor", "ceil", "sqrt", "abs", "max", "min", "pi", "huge"),
			"table":  core.SetOf("concat"),
		},
	}
})

// codeKnownSafe reports whether code in lang uses only the vocabulary of
// known-harmless code (see above).
func codeKnownSafe(lang, code string) bool {
	if len(code) > maxSafeCode || strings.TrimSpace(code) == "" {
		return false
	}
	var v safeVocab
	switch lang {
	case "python":
		v = pyVocab()
	case "js", "node", "javascript":
		v = jsVocab()
	case "ruby":
		v = rubyVocab()
	case "perl":
		v = perlVocab()
	case "lua":
		v = luaVocab()
	default:
		return false
	}
	toks, ok := safeTokens(lang, code)
	if !ok {
		return false
	}
	return vocabOK(lang, v, toks, 0)
}

// sTok is one token of code: an identifier, a string literal's
// interpolated expressions (kind 's'), or punctuation.
type sTok struct {
	kind byte // 'i' identifier, 'n' number, 's' string, 'p' punctuation
	text string
	subs []string // interpolated expressions of a string
}

// safeTokens splits code into tokens; false when it holds something the
// known-safe reader refuses outright (backticks, sigils, dunders, a
// command-substitution literal, an unterminated string).
func safeTokens(lang, code string) ([]sTok, bool) {
	var out []sTok
	rs := []rune(code)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case r == '\n' || r == ';':
			out = append(out, sTok{kind: 'p', text: ";"})
			i++
		case unicode.IsSpace(r) || r == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++
		case r == '#' && (lang == "python" || lang == "ruby" || lang == "perl"):
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '/' && i+1 < len(rs) && rs[i+1] == '/' && lang == "js":
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '-' && i+1 < len(rs) && rs[i+1] == '-' && lang == "lua":
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '"' || r == '\'' || r == '`' && lang == "js":
			prefix := ""
			if n := len(out); n > 0 && out[n-1].kind == 'i' && len(out[n-1].text) <= 2 && lang == "python" && i > 0 && !unicode.IsSpace(rs[i-1]) {
				prefix = strings.ToLower(out[n-1].text)
				if strings.Trim(prefix, "rbfu") != "" {
					return nil, false
				}
				out = out[:n-1]
			}
			end, subs, ok := scanSafeString(lang, rs, i, strings.Contains(prefix, "f"))
			if !ok {
				return nil, false
			}
			out = append(out, sTok{kind: 's', subs: subs})
			i = end
		case r == '_' || unicode.IsLetter(r):
			j := i
			for j < len(rs) && (rs[j] == '_' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			id := string(rs[i:j])
			if strings.HasPrefix(id, "_") || lang == "ruby" && (id == "x" || id == "X") && j < len(rs) && rs[j] == '{' && i > 0 && rs[i-1] == '%' {
				return nil, false
			}
			out = append(out, sTok{kind: 'i', text: id})
			i = j
		case unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || rs[j] == '_' || rs[j] == 'e' || rs[j] == 'x' || unicode.Is(unicode.ASCII_Hex_Digit, rs[j])) {
				j++
			}
			out = append(out, sTok{kind: 'n'})
			i = j
		case strings.ContainsRune("()[]{},:.+-*/%=<>!?&|^~", r):
			if r == '%' && lang == "ruby" || r == '&' && lang == "perl" {
				return nil, false
			}
			out = append(out, sTok{kind: 'p', text: string(r)})
			i++
		default:
			// $ @ ` and anything else: sigils, globals, command substitution
			return nil, false
		}
	}
	return out, true
}

// scanSafeString reads a string literal starting at rs[i] and returns the
// index after it and its interpolated expressions.
func scanSafeString(lang string, rs []rune, i int, fstr bool) (int, []string, bool) {
	q := rs[i]
	triple := lang == "python" && i+2 < len(rs) && rs[i+1] == q && rs[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	interp := fstr || lang == "js" && q == '`' || lang == "ruby" && q == '"' || lang == "perl" && q == '"'
	var subs []string
	for j < len(rs) {
		c := rs[j]
		switch {
		case c == '\\':
			j += 2
			continue
		case c == q && (!triple || j+2 < len(rs) && rs[j+1] == q && rs[j+2] == q):
			if triple {
				return j + 3, subs, true
			}
			return j + 1, subs, true
		case c == '\n' && !triple && q != '`':
			return 0, nil, false
		case interp && lang == "perl" && (c == '$' || c == '@'):
			return 0, nil, false
		case interp && fstr && c == '{' && j+1 < len(rs) && rs[j+1] == '{':
			j += 2
			continue
		case interp && (fstr && c == '{' || (lang == "js" && c == '$' || lang == "ruby" && c == '#') && j+1 < len(rs) && rs[j+1] == '{'):
			from := j + 1
			if !fstr {
				from = j + 2
			}
			k := from
			for k < len(rs) && rs[k] != '}' {
				k++
			}
			if k >= len(rs) {
				return 0, nil, false
			}
			subs = append(subs, string(rs[from:k]))
			j = k + 1
			continue
		}
		j++
	}
	return 0, nil, false
}

// vocabOK checks every identifier of toks against v: keywords and pure
// builtins, names the code itself assigns or imports, attributes of
// known modules, pure methods after a dot; and each interpolated
// expression the same way.
func vocabOK(lang string, v safeVocab, toks []sTok, depth int) bool {
	if depth > 2 {
		return false
	}
	local := map[string]bool{}
	mods := map[string]string{} // a name bound to a module (import json as j)
	for name := range v.modules {
		if lang != "python" {
			mods[name] = name
		}
	}
	// Loop variables, wherever the loop is (comprehensions too).
	for i, t := range toks {
		if t.kind == 'i' && t.text == "for" {
			for k := i + 1; k < len(toks) && k < i+8; k++ {
				x := toks[k]
				if x.kind == 'i' && (x.text == "in" || x.text == "of") {
					break
				}
				if x.kind == 'i' && x.text != "const" && x.text != "let" && x.text != "var" {
					local[x.text] = true
				}
			}
		}
	}
	// First pass: imports and assignments.
	stmtStart := true
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'p' && t.text == ";" {
			stmtStart = true
			continue
		}
		if !stmtStart {
			continue
		}
		stmtStart = false
		if t.kind != 'i' {
			continue
		}
		switch {
		case lang == "python" && t.text == "import":
			for i++; i < len(toks) && !(toks[i].kind == 'p' && toks[i].text == ";"); i++ {
				x := toks[i]
				if x.kind == 'p' && x.text == "," {
					continue
				}
				if x.kind != 'i' {
					return false
				}
				if _, ok := v.modules[x.text]; !ok {
					return false
				}
				name := x.text
				if i+2 < len(toks) && toks[i+1].kind == 'i' && toks[i+1].text == "as" && toks[i+2].kind == 'i' {
					mods[toks[i+2].text] = name
					i += 2
				} else {
					mods[name] = name
				}
			}
			stmtStart = true
		case lang == "python" && t.text == "from":
			if i+2 >= len(toks) || toks[i+1].kind != 'i' || toks[i+2].text != "import" {
				return false
			}
			attrs, ok := v.modules[toks[i+1].text]
			if !ok {
				return false
			}
			for i += 3; i < len(toks) && !(toks[i].kind == 'p' && toks[i].text == ";"); i++ {
				x := toks[i]
				if x.kind == 'p' && (x.text == "," || x.text == "(" || x.text == ")") {
					continue
				}
				if x.kind != 'i' || !attrs[x.text] {
					return false
				}
				local[x.text] = true
			}
			stmtStart = true
		case lang == "ruby" && t.text == "require":
			// require "json" only
			if i+1 >= len(toks) || toks[i+1].kind != 's' {
				return false
			}
		case lang == "js" && (t.text == "const" || t.text == "let" || t.text == "var") && i+1 < len(toks) && toks[i+1].kind == 'i':
			local[toks[i+1].text] = true
		case lang == "lua" && t.text == "local" && i+1 < len(toks) && toks[i+1].kind == 'i':
			local[toks[i+1].text] = true
		default:
			// NAME = … or NAME, NAME = …
			k := i
			for k < len(toks) && (toks[k].kind == 'i' || toks[k].kind == 'p' && toks[k].text == ",") {
				k++
			}
			if k < len(toks) && toks[k].kind == 'p' && toks[k].text == "=" && (k+1 >= len(toks) || toks[k+1].text != "=") {
				for x := i; x < k; x++ {
					if toks[x].kind == 'i' {
						if _, isMod := mods[toks[x].text]; isMod || v.names[toks[x].text] {
							return false // rebinding a vocabulary name
						}
						local[toks[x].text] = true
					}
				}
			}
		}
	}
	// Second pass: every identifier is known.
	inImport := false
	mod := ""
	for i, t := range toks {
		switch t.kind {
		case 's':
			for _, s := range t.subs {
				sub, ok := safeTokens(lang, s)
				if !ok || !vocabOK(lang, v, sub, depth+1) {
					return false
				}
			}
			mod = ""
			continue
		case 'p':
			if t.text == ";" {
				inImport = false
			}
			if t.text != "." {
				mod = ""
			}
			continue
		case 'n':
			mod = ""
			continue
		}
		if inImport {
			continue
		}
		id := t.text
		afterDot := i > 0 && toks[i-1].kind == 'p' && toks[i-1].text == "."
		switch {
		case lang == "python" && (id == "import" || id == "from"):
			inImport = true
		case afterDot && mod != "" && v.modules[mod][id]:
			// json.dumps, datetime.datetime.now: stay in the module
		case afterDot && pureMethods()[id]:
			mod = ""
		case afterDot:
			return false
		case mods[id] != "":
			mod = mods[id]
			continue
		case v.names[id] || local[id]:
			mod = ""
		default:
			// keyword arguments (print(x, end="")) and keys ({a: 1})
			if i+1 < len(toks) && toks[i+1].kind == 'p' && i > 0 && toks[i-1].kind == 'p' &&
				(toks[i+1].text == "=" && (toks[i-1].text == "," || toks[i-1].text == "(") && (i+2 >= len(toks) || toks[i+2].text != "=") ||
					toks[i+1].text == ":" && (toks[i-1].text == "," || toks[i-1].text == "{")) {
				continue
			}
			return false
		}
	}
	return true
}
