package shell

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// String folding for the code analyzer: what code spells in pieces is put
// back together before the patterns look at it, so `os.system("r""m -rf /")`,
// `getattr(os, "sys"+"tem")("…")`, `shutil.rmtree(chr(47))` and Perl's
// `system qw(rm -rf /)`, `importlib.import_module("o"+"s").system(…)` and
// `f = os.system; f(…)` read as the calls they are. Folding only rewrites
// literal expressions into the literal they evaluate to; what stays
// computed (a call name built from a variable, getattr with a non-literal
// name, __import__ of a computed module) is computed-call, HIGH: the
// analyzer cannot tell what is called.

var (
	// "a" "b" (adjacent literals: Python, C) and "a" + "b" / "a" . "b" (Perl, PHP).
	adjLitRe = core.LazyRE(`"((?:[^"\\\n]|\\.)*)"\s*(?:[+.]\s*)?"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'\s*(?:[+.]\s*)?'((?:[^'\\\n]|\\.)*)'`)
	chrRe    = core.LazyRE(`\b(?:chr|String\.fromCharCode|unichr)\(\s*(0[xX][0-9a-fA-F]+|\d{1,7})\s*\)`)
	qwRe     = core.LazyRE(`\bqw\s*(?:\(([^)]*)\)|\[([^\]]*)\]|\{([^}]*)\}|/([^/]*)/|\|([^|]*)\||!([^!]*)!)`)
	// spawn("prog", ["a", "b"]), execFile(…), os.execvp("prog", ["prog", …]): the program then its arguments.
	progArgsCall = core.LazyRE(`\b(spawn|spawnSync|execFile|execFileSync|os\.execvp?e?|os\.spawnvp?e?)\s*\(\s*(?:os\.P_\w+\s*,\s*)?("[^"\n]*"|'[^'\n]*')\s*,\s*\[([^\]]*)\]`)
	// import subprocess as sp; from os import system as run_it: the
	// alias is the module (or function) it names.
	importAsRe   = core.LazyRE(`\bimport\s+(os|subprocess|shutil|pty|commands|socket|urllib\.request|requests)\s+as\s+([A-Za-z_]\w*)`)
	fromImportRe = core.LazyRE(`\bfrom\s+(os|subprocess|shutil|pty|commands)\s+import\s+([\w\s,()]+?)(?:;|\n|$)`)
	listCall     = core.LazyRE(`\b(system|exec|spawn|execFileSync|spawnSync)\s*\(?\s*((?:"[^"\n]*"|'[^'\n]*')(?:\s*,\s*(?:"[^"\n]*"|'[^'\n]*'))+)`)
	getattrRe    = core.LazyRE(`\bgetattr\(\s*([A-Za-z_][\w.]*)\s*,\s*("[A-Za-z_]\w*"|'[A-Za-z_]\w*')\s*\)`)
	importRe     = core.LazyRE(`(?:__import__|\bimportlib\.import_module)\(\s*("[\w.]+"|'[\w.]+')\s*\)`)
	// f = os.system; f("…"): a name bound to a function of a module that
	// runs or deletes is that function where it is called.
	aliasRe = core.LazyRE(`(?m)(?:^|[;\s])([A-Za-z_]\w*)\s*=\s*((?:os|posix|subprocess|shutil|pty|commands)\.[A-Za-z_]\w*)\s*(?:;|$)`)
	// What stays computed after folding.
	computedRe = core.LazyRE(`\bgetattr\(\s*[\w.()]+\s*,\s*[^"'\s)][^)]*\)|__import__\(\s*[^"'\s)]|importlib\.import_module\(\s*[^"'\s)]|\b(?:globals|locals|vars)\(\)\s*\[|__builtins__(?:\.__dict__)?\s*\[|\bwindow\s*\[\s*[^"'\s\]]|\bprocess\s*\[\s*[^"'\s\]]|\brequire\(\s*[^"'\s)]|&\{\s*["$]|&\$\w+\s*\(|\bsend\(\s*:?[a-z_]+\s*\+|\bmethod\(\s*[^:"'\s)]`)
	// Browser code that reads what a page keeps secret and sends it away.
	pageSecretRe = core.LazyRE(`document\.cookie|localStorage|sessionStorage|indexedDB|\.value\b[^;\n]{0,40}password|document\.forms`)
	pageSendRe   = core.LazyRE(`fetch\(|XMLHttpRequest|sendBeacon|new\s+Image\b|\.src\s*=|location(?:\.href)?\s*=|WebSocket\(|\.submit\(\)|window\.open\(`)
)

// foldCode returns code with literal string expressions folded, and
// whether anything changed.
func foldCode(code string) (string, bool) {
	orig := code
	for range 8 {
		next := chrRe.ReplaceAllStringFunc(code, func(m string) string {
			sm := chrRe.FindStringSubmatch(m)
			n, err := strconv.ParseInt(sm[1], 0, 32)
			if err != nil || n < 0x20 || n > 0x7e || n == '"' || n == '\\' {
				return m
			}
			return `"` + string(rune(n)) + `"`
		})
		next = adjLitRe.ReplaceAllStringFunc(next, func(m string) string {
			sm := adjLitRe.FindStringSubmatch(m)
			if sm[1] != "" || sm[2] != "" || strings.HasPrefix(m, `"`) {
				return `"` + sm[1] + sm[2] + `"`
			}
			return `'` + sm[3] + sm[4] + `'`
		})
		if next == code {
			break
		}
		code = next
	}
	code = qwRe.ReplaceAllStringFunc(code, func(m string) string {
		sm := qwRe.FindStringSubmatch(m)
		var parts []string
		for _, f := range strings.Fields(strings.Join(sm[1:], "")) {
			parts = append(parts, `"`+strings.ReplaceAll(f, `"`, `\"`)+`"`)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	})
	code = foldImports(code)
	code = progArgsCall.ReplaceAllStringFunc(code, func(m string) string {
		sm := progArgsCall.FindStringSubmatch(m)
		args := sm[3]
		if strings.HasPrefix(sm[1], "os.") {
			// os.execvp and os.spawnv take argv with argv[0]: the program is the first
			return sm[1] + "([" + args + "]"
		}
		if strings.TrimSpace(args) == "" {
			return sm[1] + "([" + sm[2] + "]"
		}
		return sm[1] + "([" + sm[2] + ", " + args + "]"
	})
	code = listCall.ReplaceAllString(code, "$1 [$2]")
	code = getattrRe.ReplaceAllStringFunc(code, func(m string) string {
		sm := getattrRe.FindStringSubmatch(m)
		return sm[1] + "." + strings.Trim(sm[2], `"'`)
	})
	code = importRe.ReplaceAllStringFunc(code, func(m string) string {
		sm := importRe.FindStringSubmatch(m)
		return strings.Trim(sm[1], `"'`)
	})
	code = foldAliases(code)
	return code, code != orig
}

// foldAliases writes a call through a name bound to a module's function
// (`f = os.system; f("…")`, after getattr and import folding) as a call of
// that function.
func foldAliases(code string) string {
	for _, m := range aliasRe.FindAllStringSubmatch(code, 8) {
		name, fn := m[1], m[2]
		re, err := regexp.Compile(`(^|[^\w.])` + regexp.QuoteMeta(name) + `\s*\(`)
		if err == nil {
			code = re.ReplaceAllString(code, "${1}"+fn+"(")
		}
	}
	return code
}

// foldImports writes the names an import binds as the module's own:
// `import subprocess as s; s.call([…])` reads subprocess.call([…]), and
// `from os import system` makes system(…) os.system(…).
func foldImports(code string) string {
	if !strings.Contains(code, "import") {
		return code
	}
	for _, m := range importAsRe.FindAllStringSubmatch(code, 8) {
		mod, alias := m[1], m[2]
		if alias == mod {
			continue
		}
		re, err := regexp.Compile(`(^|[^\w.])` + regexp.QuoteMeta(alias) + `\.`)
		if err == nil {
			code = re.ReplaceAllString(code, "${1}"+mod+".")
		}
	}
	for _, m := range fromImportRe.FindAllStringSubmatch(code, 8) {
		mod := m[1]
		for _, part := range strings.Split(strings.Trim(m[2], " ()"), ",") {
			f := strings.Fields(part)
			if len(f) == 0 {
				continue
			}
			name, bound := f[0], f[0]
			if len(f) == 3 && f[1] == "as" {
				bound = f[2]
			}
			re, err := regexp.Compile(`(^|[^\w.])` + regexp.QuoteMeta(bound) + `\s*\(`)
			if err == nil {
				code = re.ReplaceAllString(code, "${1}"+mod+"."+name+"(")
			}
		}
	}
	return code
}

// foldFindings judges what stays computed in code after folding, and
// browser code that sends a page's secrets away.
func (w *walker) foldFindings(lang, code string, span [2]int, name, how string) {
	if m := computedRe.FindString(code); m != "" {
		w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: ruleComputedCall, Level: events.RiskHigh, Span: span, Command: name,
			Detail: how + ": the name of what is called is computed at run time (" + core.TrimArg(m) + "); what it calls could not be judged"})
	}
	if (lang == "js" || lang == "node" || lang == "javascript") && pageSecretRe.MatchString(code) && pageSendRe.MatchString(code) {
		w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: ruleBrowserExfiltration, Level: events.RiskHigh, Span: span, Command: name,
			Detail: how + ": reads the page's cookies, storage or passwords and sends them away"})
	}
}
