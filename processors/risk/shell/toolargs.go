package shell

import (
	"maps"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Tool calls are judged by what they carry. Every string argument of a
// tool call (MCP included), in every field and in lists, that holds a
// command, code, SQL, a URL or a path is analysed by the analyzer for it,
// chosen by the field's name and, for other fields, by the value's shape:
//
//   - command, cmd, cli_command, script, shell, argv, args … and any value
//     whose first word is a program Vigil knows: the shell analyzer (a list
//     of strings is read both as one argv and, element by element, as
//     command lines). A tool named for a CLI (kubectl_generic, call_aws,
//     gcloud_run …) has its command read as that CLI's, so
//     {"command":"delete namespace prod"} is kubectl delete namespace prod;
//     a program in one field (command, program, executable …) with its
//     arguments in another (args, arguments, argv …) of the same object is
//     read as one command: {"command":"rm","args":["-rf","/"]};
//   - a path with its content inside the call ({"files": [{"path":
//     ".github/workflows/ci.yml", "content": …}]}): judged as a write of
//     that file when tools run from it (.git/config, hooks, CI workflows …);
//   - code, function, expression, javascript, python …: the code analyzer
//     (JavaScript for browser tools);
//   - query, sql, statement: the SQL rules;
//   - url, uri, href, endpoint: the network rules;
//   - path, file, file_path, directory …: the path rules of a read.
//
// The walk is bounded (depth, number of strings, bytes); past the bound
// the call is HIGH (tool-args-budget): what was not read was not judged.

const (
	maxArgStrings = 64
	maxArgBytes   = 1 << 20
	maxArgDepth   = 8
)

var (
	argShellKeys = core.LazySet("command", "cmd", "cli_command", "shell_command", "command_line", "commandline", "cmdline", "script",
		"commands", "bash", "shell", "sh", "argv", "args", "arguments", "run", "exec", "execute", "entrypoint", "startup_command", "shell_cmd", "terminal_command")
	argCodeKeys = core.LazySet("code", "source", "function", "expression", "js", "javascript", "python", "snippet", "eval", "script_code", "program", "cell")
	argSQLKeys  = core.LazySet("query", "sql", "statement", "sql_query", "statements")
	argURLKeys  = core.LazySet("url", "uri", "href", "link", "endpoint", "webhook", "webhook_url", "callback_url")
	argPathKeys = core.LazySet("path", "file", "file_path", "filepath", "filename", "directory", "dir", "target", "destination", "src", "dest", "source_path", "target_path", "paths", "files")
	// toolCLIs: a tool whose name holds one of these runs that CLI.
	toolCLIs = []string{"kubectl", "aws", "gcloud", "az", "helm", "terraform", "docker", "gh", "git", "npm", "psql", "mysql", "redis-cli", "systemctl", "oc", "flyctl", "heroku", "vercel", "doctl", "wrangler"}
)

// argItem is one string argument found in a tool call.
type argItem struct {
	key  string // the field name, lower-cased ("" inside a list of a list)
	path string // where it is, for reasons: command, args[2], env.X
	val  string
	list []string // set for a list of strings: the argv
}

// collectArgs lists the string arguments of a tool call, in sorted key
// order (an agent may send many keys: never quadratic), bounded.
func collectArgs(args map[string]any) (items []argItem, over bool) {
	bytes := 0
	var walk func(key, at string, x any, depth int)
	walk = func(key, at string, x any, depth int) {
		if over {
			return
		}
		if depth > maxArgDepth {
			over = true
			return
		}
		switch t := x.(type) {
		case string:
			if t == "" {
				return
			}
			bytes += len(t)
			if len(items) >= maxArgStrings || bytes > maxArgBytes {
				over = true
				return
			}
			items = append(items, argItem{key: key, path: at, val: t})
		case []any:
			var strs []string
			for i, e := range t {
				if s, ok := e.(string); ok {
					strs = append(strs, s)
				}
				walk(key, at+"["+itoa(i)+"]", e, depth+1)
			}
			if len(strs) > 1 && len(strs) == len(t) && !over {
				items = append(items, argItem{key: key, path: at, list: strs})
			}
		case map[string]any:
			ks := make([]string, 0, len(t))
			for k := range t {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			for _, k := range ks {
				p := k
				if at != "" {
					p = at + "." + k
				}
				walk(strings.ToLower(k), p, t[k], depth+1)
			}
		}
	}
	walk("", "", args, 0)
	return items, over
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// looksLikeCommand reports whether s has the shape of a command line: its
// first word is a program Vigil knows and more follows, or it holds a
// pipe or list into a known program.
func looksLikeCommand(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxInput || strings.Contains(s, "\n\n") {
		return false
	}
	f := strings.Fields(s)
	if len(f) < 2 {
		return false
	}
	n := CanonicalName(f[0])
	return knownCommand(n) && !mentionCmds()[n] || shells[n] || n == "sudo" || n == "env"
}

// toolCLI returns the CLI a tool's name says it runs, "" for none.
func toolCLI(tool string) string {
	// c names the tool when it is one of the name's parts split at its
	// separators (kubectl_generic, aws.s3, mcp__x__gh,
	// mcp:k8s/kubectl_generic), or the whole name.
	l := strings.ToLower(tool)
	parts := strings.FieldsFunc(l, func(r rune) bool { return strings.ContainsRune("_-.:/", r) })
	for _, c := range toolCLIs {
		if l == c {
			return c
		}
		if strings.ContainsAny(c, "_-.:/") {
			// A name with a separator in it is no single part.
			for _, sep := range []string{"_", "-", ".", ":", "/"} {
				if strings.HasPrefix(l, c+sep) || strings.Contains(l, sep+c+sep) || strings.HasSuffix(l, sep+c) {
					return c
				}
			}
			continue
		}
		if slices.Contains(parts, c) {
			return c
		}
	}
	for _, p := range parts {
		if c := storeCLIs[p]; c != "" {
			return c
		}
	}
	return ""
}

// storeCLIs maps a data store or platform named in a tool's name (an MCP
// server called redis, postgres, k8s) to the CLI whose commands its
// command arguments are.
var storeCLIs = map[string]string{"redis": "redis-cli", "valkey": "redis-cli", "postgres": "psql", "postgresql": "psql",
	"mysql": "mysql", "mariadb": "mysql", "k8s": "kubectl", "kubernetes": "kubectl", "mongo": "mongosh", "mongodb": "mongosh",
	"sqlite": "sqlite3", "openshift": "oc"}

// deleteTool reports whether a tool's own name (the part after its
// server) is a deletion (delete_directory, remove_file, rmdir, trash),
// and whether it deletes recursively: a directory, a tree or a folder in
// its name, or a recursive or force argument set.
func deleteTool(tool string, args map[string]any) (del, recursive bool) {
	l := strings.ToLower(tool)
	if i := strings.LastIndexAny(l, "/"); i >= 0 {
		l = l[i+1:]
	} else if i := strings.LastIndex(l, "__"); i >= 0 {
		l = l[i+2:]
	}
	for _, w := range verbWords(l) {
		switch {
		case destroyVerbs()[w] || w == "remove" || w == "rm" || w == "rmdir" || w == "unlink" || w == "del" || w == "trash":
			del = true
		case w == "directory" || w == "dir" || w == "folder" || w == "tree" || w == "recursive" || w == "rmdir":
			recursive = true
		}
	}
	for _, k := range []string{"recursive", "force", "recurse"} {
		if b, ok := args[k].(bool); ok && b {
			recursive = true
		}
	}
	return del, recursive
}

// argFindings judges the arguments of a tool call by what they carry.
// skip is a value already judged as the tool's main command.
func (s *Analyzer) argFindings(tool string, args map[string]any, env core.Env, skip string) ([]core.Finding, core.View) {
	items, over := collectArgs(args)
	var finds []core.Finding
	var v core.View
	lt := strings.ToLower(tool)
	browser := strings.Contains(lt, "browser") || strings.Contains(lt, "playwright") || strings.Contains(lt, "puppeteer") || strings.Contains(lt, "evaluate") || strings.Contains(lt, "chrome")
	cli := toolCLI(tool)
	tag := func(fs []core.Finding, at string) []core.Finding {
		for i := range fs {
			fs[i].Detail = "argument " + at + ": " + fs[i].Detail
			if fs[i].Command == "" {
				fs[i].Command = tool
			}
		}
		return fs
	}
	shell := func(cmd, at string) { s.argShell(&finds, &v, cli, cmd, at, env, tag, true) }
	sqlText := func(q, at string) { s.argShell(&finds, &v, "", "psql -c "+Quote(q), at, env, tag, false) }
	// a program in one field and its arguments in another run as one argv
	for _, pa := range programArgs(args, "", 0) {
		shell(pa.cmd, pa.at)
	}
	// a file given with its content inside a call (push_files' files[])
	// is judged as a write of it when tools run from that file
	for _, pc := range pathContents(args, "", 0) {
		if f, ok := s.execConfigFindings(pc.path, pc.content, env, tool); ok {
			finds = append(finds, tag(f, pc.at)...)
		}
	}
	// a deletion tool's path is judged as rm of that path
	del, recursive := deleteTool(tool, args)
	for _, it := range items {
		if it.list != nil {
			if argShellKeys()[it.key] {
				q := make([]string, len(it.list))
				for i, a := range it.list {
					q[i] = Quote(a)
				}
				shell(strings.Join(q, " "), it.path)
			}
			continue
		}
		if it.val == skip {
			continue
		}
		switch k := it.key; {
		case argShellKeys()[k]:
			if !strings.Contains(it.path, "[") || strings.ContainsAny(it.val, " \t;|&") {
				shell(it.val, it.path)
			}
		case argCodeKeys()[k]:
			lang := "python"
			if browser || k == "function" || k == "js" || k == "javascript" || k == "expression" {
				lang = "js"
			}
			finds = append(finds, tag(analyzeCodeRun(lang, it.val, env, nil), it.path)...)
		case argSQLKeys()[k]:
			sqlText(it.val, it.path)
		case argURLKeys()[k]:
			f, nv := networkAction(map[string]any{"url": it.val}, env)
			finds = append(finds, tag(f, it.path)...)
			v.Hosts = append(v.Hosts, nv.Hosts...)
		case argPathKeys()[k] && del:
			rm := "rm -f -- "
			if recursive {
				rm = "rm -rf -- "
			}
			s.argShell(&finds, &v, "", rm+Quote(it.val), it.path, env, tag, false)
		case argPathKeys()[k]:
			finds = append(finds, tag(readFindings(it.val, env), it.path)...)
			v.Paths = append(v.Paths, it.val)
		case looksLikeCommand(it.val):
			shell(it.val, it.path)
		case strings.HasPrefix(it.val, "http://") || strings.HasPrefix(it.val, "https://"):
			f, nv := networkAction(map[string]any{"url": it.val}, env)
			finds = append(finds, tag(f, it.path)...)
			v.Hosts = append(v.Hosts, nv.Hosts...)
		}
	}
	if over {
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerTool, Rule: ruleToolArgsBudget, Level: events.RiskHigh, Command: tool,
			Detail: "the call carries more arguments than Vigil reads (64 strings, 1 MiB, 8 levels); what was not read could not be judged"})
	}
	return finds, v
}

var (
	argProgramKeys = []string{"command", "cmd", "program", "executable", "exe", "bin", "binary"}
	argListKeys    = []string{"args", "arguments", "argv", "params", "parameters"}
)

// programArg is a command put together from a program field and an
// argument field of one object.
type programArg struct{ cmd, at string }

// programArgs finds, in args and the objects it holds (bounded by depth),
// a field naming one program (a single word: "rm") next to a field with
// its arguments (a list of strings, or one string): {"command": "rm",
// "args": ["-rf", "/"]} runs rm -rf /, which neither field says alone.
func programArgs(args map[string]any, at string, depth int) []programArg {
	if depth > maxArgDepth {
		return nil
	}
	var out []programArg
	lower := make(map[string]string, len(args))
	for k := range args {
		lower[strings.ToLower(k)] = k
	}
	for _, pk := range argProgramKeys {
		prog, ok := args[lower[pk]].(string)
		if !ok || prog == "" || strings.ContainsAny(strings.TrimSpace(prog), " \t\n") {
			continue
		}
		for _, ak := range argListKeys {
			k, ok := lower[ak]
			if !ok {
				continue
			}
			var words []string
			switch v := args[k].(type) {
			case []any:
				for _, e := range v {
					if s, ok := e.(string); ok {
						words = append(words, Quote(s))
					}
				}
			case string:
				words = append(words, v)
			}
			if len(words) == 0 {
				continue
			}
			where := lower[pk] + "+" + k
			if at != "" {
				where = at + "." + where
			}
			out = append(out, programArg{cmd: Quote(strings.TrimSpace(prog)) + " " + strings.Join(words, " "), at: where})
		}
		break
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if m, ok := args[k].(map[string]any); ok && len(out) < maxArgStrings {
			p := k
			if at != "" {
				p = at + "." + k
			}
			out = append(out, programArgs(m, p, depth+1)...)
		}
	}
	return out
}

// pathContent is a file path and the content given for it in one object
// of a tool call.
type pathContent struct{ path, content, at string }

var argContentKeys = []string{"content", "contents", "text", "body", "data"}

// pathContents finds, in the objects a tool call holds (not the call's own
// top level, which the write tools judge), a path field next to a content
// field: {"files": [{"path": ".github/workflows/x.yml", "content": …}]}.
func pathContents(x any, at string, depth int) []pathContent {
	if depth > maxArgDepth {
		return nil
	}
	var out []pathContent
	switch t := x.(type) {
	case []any:
		for i, e := range t {
			if len(out) >= maxArgStrings {
				break
			}
			out = append(out, pathContents(e, at+"["+itoa(i)+"]", depth+1)...)
		}
	case map[string]any:
		if depth > 0 {
			lower := make(map[string]string, len(t))
			for k := range t {
				lower[strings.ToLower(k)] = k
			}
			for _, pk := range []string{"path", "file_path", "filepath", "filename", "file", "name"} {
				p, ok := t[lower[pk]].(string)
				if !ok || p == "" {
					continue
				}
				for _, ck := range argContentKeys {
					if c, ok := t[lower[ck]].(string); ok && c != "" {
						out = append(out, pathContent{path: p, content: c, at: at + "." + lower[ck]})
						break
					}
				}
				break
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if len(out) >= maxArgStrings {
				break
			}
			p := k
			if at != "" {
				p = at + "." + k
			}
			out = append(out, pathContents(t[k], p, depth+1)...)
		}
	}
	return out
}

// argShell runs the shell analyzer on a command carried by a tool
// argument; known, when false, drops not-known-safe (a command Vigil built
// itself, such as psql -c for a query field).
func (s *Analyzer) argShell(finds *[]core.Finding, v *core.View, cli, cmd, at string, env core.Env, tag func([]core.Finding, string) []core.Finding, known bool) {
	if cli != "" {
		if f := strings.Fields(cmd); len(f) > 0 && CanonicalName(f[0]) != cli && !knownCommand(CanonicalName(f[0])) {
			cmd = cli + " " + cmd
		}
	}
	f, sv := shellFindingsWith(s.parsers, cmd, env)
	if !known {
		f = slices.DeleteFunc(f, func(x core.Finding) bool { return x.Rule == ruleNotKnownSafe })
	}
	*finds = append(*finds, tag(f, at)...)
	if len(v.Commands) < 64 {
		v.Commands = append(v.Commands, sv.Commands...)
	}
	v.Hosts = append(v.Hosts, sv.Hosts...)
	v.Paths = append(v.Paths, sv.Paths...)
}
