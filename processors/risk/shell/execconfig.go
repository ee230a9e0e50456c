package shell

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Files that tools execute or configure execution from. A write to one is
// judged by what it will run, at the level of running it, not capped as
// "written, not run": the command that runs it later (git status after a
// core.fsmonitor write, npm run build, make, direnv entering the directory,
// a CI push, opening the folder in an editor) looks harmless on its own.
//
//   - .git/config, .gitconfig, .gitmodules: program-valued keys
//     (core.fsmonitor, core.pager, alias.x = !…, filter.*, diff.*.textconv
//     …) and keys that load from a path (core.hooksPath, include.path);
//   - .git/hooks/*, node_modules/.bin/*, .envrc, .husky/*, shell start-up
//     files (.bashrc, .profile, .zshrc …): shell scripts;
//   - package.json: every script; Makefiles: every recipe line;
//   - .vscode/tasks.json, .devcontainer.json, devcontainer.json: every
//     command-carrying field (as tool arguments are read);
//   - editor settings (.vscode/settings.json, *.code-workspace): the
//     programs they name (a setting whose name ends in path, executable,
//     command, shell, interpreter …: the terminal's shell, a language
//     server, git's binary) and the environment they give the terminal;
//     only such a write is exec-config-write;
//   - CI workflows (.github/workflows, .gitlab-ci.yml …): every run: step;
//   - notebooks (.ipynb): every code cell, as Python (and ! lines as shell).
//
// Each such write also carries exec-config-write (MEDIUM; a start-up
// file's, shell-rc-write): it changes what a later, ordinary command runs.

// ExecConfigKind names what runs a file, "" when nothing does.
func ExecConfigKind(p string) string {
	low := strings.ToLower(p)
	base := path.Base(low)
	switch {
	case strings.HasSuffix(low, ".git/config") || base == ".gitconfig" || base == ".gitmodules":
		return "git"
	case strings.Contains(low, ".git/hooks/") || strings.HasPrefix(low, ".husky/") || strings.Contains(low, "/.husky/"):
		return "hook"
	case strings.Contains(low, "node_modules/.bin/"):
		return "bin"
	case base == ".envrc":
		return "envrc"
	case base == "package.json":
		return "npm"
	case base == "makefile" || base == "gnumakefile" || strings.HasSuffix(base, ".mk"):
		return "make"
	case strings.HasSuffix(low, ".vscode/tasks.json") || base == "devcontainer.json" || base == ".devcontainer.json" || strings.HasSuffix(low, ".vscode/launch.json"):
		return "tasks"
	case strings.HasSuffix(low, ".vscode/settings.json") || strings.HasSuffix(base, ".code-workspace"):
		return "editor"
	case strings.Contains(low, ".github/workflows/") || base == ".gitlab-ci.yml" || strings.Contains(low, ".circleci/") || base == "azure-pipelines.yml" || strings.Contains(low, ".buildkite/"):
		return "ci"
	case path.Ext(low) == ".ipynb":
		return "notebook"
	case shellStartupFiles()[base] || base == "config.fish" && strings.Contains(low, "fish/") || loginScripts()[low] ||
		strings.HasSuffix(low, "/.ssh/rc") || low == "~/.ssh/rc" || strings.HasPrefix(low, "/etc/profile.d/") && strings.HasSuffix(base, ".sh"):
		return "rc"
	}
	return ""
}

// loginScripts are the system's start-up scripts (every login shell, the
// boot) and the ones a user's X session or ssh login runs, by path.
var loginScripts = core.LazySet("/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshrc", "/etc/zsh/zshrc", "/etc/zshenv", "/etc/zsh/zshenv",
	"/etc/zprofile", "/etc/zsh/zprofile", "/etc/rc.local", "/etc/ssh/sshrc")

// shellStartupFiles are the start-up files a user's shells source.
var shellStartupFiles = core.LazySet(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
	".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".xinitrc", ".xprofile", ".xsessionrc", ".xsession")

var execKindWho = map[string]string{
	"git": "git runs on every git command", "hook": "git runs as a hook", "bin": "npm scripts run as a program",
	"envrc": "direnv runs on entering the directory", "npm": "npm run and npm install run", "make": "make runs",
	"tasks": "the editor runs", "ci": "CI runs with its secrets", "notebook": "the notebook's kernel runs",
	"rc": "every new shell of the user runs", "editor": "the editor runs when it opens the folder",
}

var runLineRe = core.LazyRE(`^(\s*)(?:-\s+)?(?:run|script|command|before_script|after_script)\s*:\s*(.*)$`)

// execConfigFindings judges content written to p when p is a file that
// tools execute or configure execution from; ok is false for other files.
func (s *Analyzer) execConfigFindings(p, content string, env core.Env, tool string) (finds []core.Finding, ok bool) {
	return s.execConfigChange(p, content, false, env, tool)
}

// execConfigChange is execConfigFindings for content that is either the
// whole file or, with fragment, the text an edit puts in it (a JSON
// member, part of an object): a fragment is read as JSON once its
// brackets are balanced, and its strings, whose place in the file is
// unknown, are judged as the commands they could be.
func (s *Analyzer) execConfigChange(p, content string, fragment bool, env core.Env, tool string) (finds []core.Finding, ok bool) {
	kind := ExecConfigKind(p)
	if kind == "" {
		return nil, false
	}
	if len(content) > maxInput {
		content = content[:maxInput]
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleInputTooLarge, Level: events.RiskHigh, Command: tool,
			Detail: "only the first 1 MiB of " + p + " was analysed; what follows could not be judged"})
	}
	who := execKindWho[kind]
	if kind == "editor" {
		return s.editorSettingsFindings(p, content, fragment, env, tool, who)
	}
	if kind != "rc" { // a start-up file's write is shell-rc-write already
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerFiles, Rule: ruleExecConfigWrite, Level: events.RiskMedium, Command: tool,
			Detail: "writes " + p + ", which " + who + ": its content is judged as if it ran"})
	}
	shell := func(code, where string) {
		if strings.TrimSpace(code) == "" {
			return
		}
		f, _ := shellFindingsWith(s.parsers, code, env)
		for i := range f {
			if f[i].Rule == ruleNotKnownSafe {
				continue
			}
			f[i].Detail = "in " + p + where + " (" + who + "): " + f[i].Detail
			finds = append(finds, f[i])
		}
	}
	switch kind {
	case "git":
		section := ""
		for _, line := range strings.Split(content, "\n") {
			l := strings.TrimSpace(line)
			if l == "" || l[0] == '#' || l[0] == ';' {
				continue
			}
			if l[0] == '[' {
				h := strings.Trim(l, "[] ")
				if i := strings.IndexByte(h, ' '); i > 0 {
					h = h[:i] + "." + strings.Trim(h[i+1:], `" `)
				}
				section = h
				continue
			}
			k, v, found := strings.Cut(l, "=")
			if !found {
				continue
			}
			key := section + "." + strings.TrimSpace(k)
			v = strings.Trim(strings.TrimSpace(v), `"`)
			if gitKeyCmd(key) || gitKeyLoads(key) || strings.HasPrefix(strings.ToLower(key), "protocol.") {
				shell("git -c "+Quote(key+"="+v)+" status", " ("+key+")")
			}
		}
	case "hook", "bin", "envrc", "rc":
		if strings.HasPrefix(content, "#!") && strings.Contains(strings.SplitN(content, "\n", 2)[0], "node") {
			finds = append(finds, CodeFindings("js", content, env)...)
		} else if strings.HasPrefix(content, "#!") && strings.Contains(strings.SplitN(content, "\n", 2)[0], "python") {
			finds = append(finds, CodeFindings("python", content, env)...)
		} else {
			shell(content, "")
		}
	case "npm":
		var pkg struct {
			Scripts map[string]any `json:"scripts"`
		}
		if err := unmarshalConfig(content, fragment, &pkg); err != nil {
			finds = append(finds, core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleUnparsable, Level: events.RiskHigh, Command: tool,
				Detail: p + " is not valid JSON (" + core.TrimArg(err.Error()) + "): the scripts npm would run could not be judged"})
			return finds, true
		}
		if fragment && pkg.Scripts == nil {
			// the edit's members may sit inside "scripts": each string is
			// judged as the script it could be
			var frag any
			_ = unmarshalConfig(content, true, &frag)
			pkg.Scripts = map[string]any{}
			stringLeaves(frag, "", 0, func(k, v string) {
				if _, dup := pkg.Scripts[k]; !dup {
					pkg.Scripts[k] = v
				} else {
					pkg.Scripts[k+" "+v] = v
				}
			})
		}
		for _, name := range sortedAnyKeys(pkg.Scripts) {
			if cmd, ok := pkg.Scripts[name].(string); ok {
				shell(cmd, " (script "+core.TrimArg(name)+")")
				if name == "install" || name == "preinstall" || name == "postinstall" || name == "prepare" {
					finds = append(finds, core.Finding{Analyzer: core.AnalyzerFiles, Rule: ruleInstallScript, Level: events.RiskMedium,
						Detail: "package.json install script runs on every npm install: " + core.TrimArg(cmd), Command: tool})
				}
			}
		}
	case "make":
		for _, line := range strings.Split(content, "\n") {
			if strings.HasPrefix(line, "\t") {
				shell(strings.TrimLeft(strings.TrimSpace(line), "@-+"), " (recipe)")
			}
		}
	case "tasks":
		var m map[string]any
		if err := unmarshalConfig(stripJSONComments(content), fragment, &m); err != nil {
			finds = append(finds, core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleUnparsable, Level: events.RiskHigh, Command: tool,
				Detail: p + " is not valid JSON (" + core.TrimArg(err.Error()) + "): the tasks it defines could not be judged"})
			return finds, true
		}
		f, _ := s.argFindings("tasks", m, env, "")
		for i := range f {
			if f[i].Rule != ruleNotKnownSafe {
				f[i].Detail = "in " + p + " (" + who + "): " + f[i].Detail
				finds = append(finds, f[i])
			}
		}
	case "ci":
		lines := strings.Split(content, "\n")
		for i := 0; i < len(lines); i++ {
			m := runLineRe.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			v := strings.TrimSpace(m[2])
			if v == "|" || v == ">" || v == "|-" || v == ">-" {
				var block []string
				ind := len(m[1])
				for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > ind) {
					i++
					block = append(block, strings.TrimSpace(lines[i]))
				}
				shell(strings.Join(block, "\n"), " (run step)")
				continue
			}
			shell(strings.Trim(v, `"'`), " (run step)")
		}
	case "notebook":
		var nb struct {
			Cells []struct {
				Type   string `json:"cell_type"`
				Source any    `json:"source"`
			} `json:"cells"`
		}
		if err := json.Unmarshal([]byte(content), &nb); err != nil {
			finds = append(finds, core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleUnparsable, Level: events.RiskHigh, Command: tool,
				Detail: p + " is not a valid notebook (" + core.TrimArg(err.Error()) + "): its cells could not be judged"})
			return finds, true
		}
		for _, c := range nb.Cells {
			if c.Type != "code" {
				continue
			}
			src := ""
			switch x := c.Source.(type) {
			case string:
				src = x
			case []any:
				for _, l := range x {
					if s, ok := l.(string); ok {
						src += s
					}
				}
			}
			var py []string
			for _, l := range strings.Split(src, "\n") {
				if t := strings.TrimSpace(l); strings.HasPrefix(t, "!") {
					shell(strings.TrimPrefix(t, "!"), " (notebook shell line)")
					continue
				}
				py = append(py, l)
			}
			finds = append(finds, CodeFindings("python", strings.Join(py, "\n"), env)...)
		}
	}
	return finds, true
}

func sortedAnyKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// stripJSONComments removes // line comments outside strings (VS Code's
// JSON with comments).
func stripJSONComments(s string) string {
	var b strings.Builder
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			b.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
		}
		if c == '/' && i+1 < len(s) && s[i+1] == '/' {
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func sortStrings(s []string) { slices.Sort(s) }

// editorProgramKey reports whether a settings key names a program the
// editor runs (its last segment ends so: terminal.integrated.shell.linux,
// python.defaultInterpreterPath, git.path, rust-analyzer.server.path …).
func editorProgramKey(k string) bool {
	low := strings.ToLower(k)
	if i := strings.LastIndexByte(low, '.'); i >= 0 {
		low = low[i+1:]
	}
	for _, suf := range []string{"path", "executable", "command", "cmd", "shell", "interpreter", "binary", "runtime"} {
		if strings.HasSuffix(low, suf) {
			return true
		}
	}
	return false
}

// editorSettingsFindings judges editor settings written to p: each program
// a setting names is judged as the command the editor runs, each variable
// of a terminal environment (terminal.integrated.env.*) as set for a
// command, and the write is exec-config-write when it names either.
func (s *Analyzer) editorSettingsFindings(p, content string, fragment bool, env core.Env, tool, who string) ([]core.Finding, bool) {
	var m map[string]any
	if err := unmarshalConfig(stripJSONComments(content), fragment, &m); err != nil {
		return []core.Finding{{Analyzer: core.AnalyzerParser, Rule: ruleUnparsable, Level: events.RiskHigh, Command: tool,
			Detail: p + " is not valid JSON (" + core.TrimArg(err.Error()) + "): the programs it may name could not be judged"}}, true
	}
	if ws, ok := m["settings"].(map[string]any); ok && strings.HasSuffix(strings.ToLower(p), ".code-workspace") {
		m = ws
	}
	var finds []core.Finding
	named := []string{}
	judge := func(cmd, where string) {
		named = append(named, where)
		f, _ := shellFindingsWith(s.parsers, cmd, env)
		for i := range f {
			if f[i].Rule == ruleNotKnownSafe {
				continue
			}
			f[i].Detail = "in " + p + " (" + where + ", " + who + "): " + f[i].Detail
			finds = append(finds, f[i])
		}
	}
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		if depth > 8 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			lowPrefix := strings.ToLower(prefix)
			for _, k := range sortedAnyKeys(x) {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				if strings.HasPrefix(lowPrefix, "terminal.integrated.env.") {
					if val, ok := x[k].(string); ok {
						judge(k+"="+Quote(val)+" true", key)
						continue
					}
				}
				walk(key, x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(prefix, e, depth+1)
			}
		case string:
			if editorProgramKey(prefix) && strings.TrimSpace(x) != "" {
				judge(x, prefix)
			}
		}
	}
	walk("", m, 0)
	if len(named) > 0 {
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerFiles, Rule: ruleExecConfigWrite, Level: events.RiskMedium, Command: tool,
			Detail: "writes " + p + ", which names programs or a terminal environment (" + core.TrimArg(strings.Join(named, ", ")) + ") " + who + ": they are judged as if they ran"})
	}
	return finds, true
}

// unmarshalConfig decodes JSON content into v; with fragment (the text an
// edit puts into a JSON file), content that is not a JSON document is
// tried again with its brackets balanced and, if it is a list of members,
// inside braces. The first error is returned when nothing decodes.
func unmarshalConfig(content string, fragment bool, v any) error {
	err := json.Unmarshal([]byte(content), v)
	if err == nil || !fragment {
		return err
	}
	b := balanceJSON(content)
	for _, cand := range []string{b, "{" + b + "}"} {
		if json.Unmarshal([]byte(cand), v) == nil {
			return nil
		}
	}
	return err
}

// balanceJSON closes what a JSON fragment leaves open and opens what it
// closes, outside strings, and drops the commas an edit leaves at either
// end or before a closing bracket: `"a": 1}, "b": [2,` becomes
// `{"a": 1}, "b": [2]` (still not a document: unmarshalConfig fails).
func balanceJSON(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimPrefix(s, ","))
	var open []byte // openers still open
	var pre []byte  // openers a leading closer needs
	var b strings.Builder
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			if c == '\\' && i+1 < len(s) {
				b.WriteByte(c)
				i++
				b.WriteByte(s[i])
				continue
			}
			if c == '"' {
				inStr = false
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			open = append(open, c)
		case '}', ']':
			want := byte('{')
			if c == ']' {
				want = '['
			}
			if n := len(open); n > 0 && open[n-1] == want {
				open = open[:n-1]
			} else if n == 0 {
				pre = append(pre, want)
			}
			// a comma right before a closer
			cur := strings.TrimRight(b.String(), " \t\r\n")
			if strings.HasSuffix(cur, ",") {
				b.Reset()
				b.WriteString(cur[:len(cur)-1])
			}
		}
		b.WriteByte(c)
	}
	out := strings.TrimRight(b.String(), " \t\r\n")
	out = strings.TrimSuffix(out, ",")
	if inStr {
		out += `"`
	}
	var head strings.Builder
	for i := len(pre) - 1; i >= 0; i-- {
		head.WriteByte(pre[i])
	}
	var tail strings.Builder
	for i := len(open) - 1; i >= 0; i-- {
		if open[i] == '{' {
			tail.WriteByte('}')
		} else {
			tail.WriteByte(']')
		}
	}
	return head.String() + out + tail.String()
}

// stringLeaves calls fn with each string of a decoded JSON value and the
// key it is under (the last one, or "" in a list at the top).
func stringLeaves(v any, key string, depth int, fn func(k, v string)) {
	if depth > 8 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedAnyKeys(x) {
			stringLeaves(x[k], k, depth+1, fn)
		}
	case []any:
		for _, e := range x {
			stringLeaves(e, key, depth+1, fn)
		}
	case string:
		fn(key, x)
	}
}
