package shell

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Analyzer runs the action analyzers (shell, code, files, network, tool
// arguments, self-protection) with a pool of shell parsers; it is safe
// for concurrent use.
type Analyzer struct {
	parsers *parserPool
}

// New returns an analyzer with its own parser pool.
func New() *Analyzer { return &Analyzer{parsers: newParserPool()} }

// Command returns the findings and the view of a shell command line.
func (s *Analyzer) Command(cmd string, env core.Env) ([]core.Finding, core.View) {
	return shellFindingsWith(s.parsers, cmd, env)
}

// Findings returns the findings and the view of a shell command line,
// parsed with a fresh parser (Analyzer.Command reuses a pool).
func Findings(cmd string, env core.Env) ([]core.Finding, core.View) {
	return shellFindingsWith(nil, cmd, env)
}

// shellFindingsWith is Findings parsing with pp's parsers.
func shellFindingsWith(pp *parserPool, cmd string, env core.Env) ([]core.Finding, core.View) {
	return shellFindingsSelf(pp, cmd, env, nil)
}

// shellFindingsSelf is shellFindingsWith judging paths against sc, the
// action's hook's view of Vigil's installation (nil: names only).
func shellFindingsSelf(pp *parserPool, cmd string, env core.Env, sc *selfCtx) ([]core.Finding, core.View) {
	w := newWalker(env)
	w.parsers = pp
	if sc != nil && sc.home != "" {
		w.self = sc
		if ws := homeRel(sc.home, env.Workspace); ws != env.Workspace && strings.HasPrefix(env.Workspace, "/") {
			w.env.Workspace = ws
		}
	}
	w.run(cmd)
	w.judgeAll()
	w.self = sc
	w.selfProtect()
	w.knownSafeCheck()
	v := core.View{Command: cmd, ParseError: w.parseErr}
	seenPath := map[string]bool{}
	for _, c := range w.cmds {
		if c.name == "" && !c.dynName {
			continue
		}
		name := c.name
		if c.dynName {
			name = "$?"
		}
		if c.name == ":" || c.name == "{}" {
			name = c.name
		}
		v.Commands = append(v.Commands, core.CommandView{Name: name, Argv: c.args, Via: c.via, Depth: c.depth, Sudo: c.sudo, Span: c.span})
		for _, a := range operands(c.args) {
			if looksLikePath(a) && !seenPath[a] && len(v.Paths) < 64 {
				seenPath[a] = true
				v.Paths = append(v.Paths, a)
			}
		}
		for _, r := range c.redirs {
			if r.target != "" && !isFD(r.target) && !seenPath[r.target] && len(v.Paths) < 64 {
				seenPath[r.target] = true
				v.Paths = append(v.Paths, r.target)
			}
		}
	}
	v.Hosts = UniqSorted(w.hosts)
	return w.finds, v
}

func looksLikePath(a string) bool {
	return strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || a == "." || a == ".." ||
		(strings.Contains(a, "/") && !strings.Contains(a, "://") && !strings.Contains(a, " "))
}

// UniqSorted returns the distinct non-blank strings of in, trimmed and
// sorted (nil for none).
func UniqSorted(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	m := map[string]bool{}
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || m[s] {
			continue
		}
		m[s] = true
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Tool families Action dispatches on (lower-cased tool names).
var (
	shellTools  = core.LazySet("bash", "shell", "execute_bash", "terminal", "sh", "zsh", "run_shell_command", "run_command", "execute_command", "exec", "command", "cmd", "run_terminal_cmd", "local_shell", "container.exec")
	pythonTools = core.LazySet("python", "ipython", "execute_ipython_cell", "python_repl", "jupyter", "run_python", "code_interpreter", "execute_python")
	writeTools  = core.LazySet("file_write", "file_edit", "str_replace_editor", "write", "edit", "multiedit", "create_file", "write_file", "edit_file", "apply_patch", "replace", "str_replace_based_edit_tool", "notebookedit", "write_to_file", "insert_edit_into_file")
	readTools   = core.LazySet("read", "read_file", "file_read", "view", "open_file", "cat", "view_file", "glob", "grep", "ls", "list_dir", "list_directory", "search_files", "find_files")
	netTools    = core.LazySet("browse", "web_fetch", "webfetch", "fetch", "browser", "browse_url", "http_request", "http", "curl", "open_url", "navigate", "browser_navigate", "web_browser", "playwright")
	benignTools = core.LazySet("think", "finish", "agent_finish", "task_tracker", "todo_write", "todowrite", "message", "ask_user", "send_message", "web_search", "websearch", "search", "plan", "exit_plan_mode", "exitplanmode", "recall", "condensation")
)

// Action returns the findings and the view of an action event, dispatched
// on data.tool (see the package documentation); env is complete (the
// scorer fills what the event says).
func (s *Analyzer) Action(ev *events.Event, env core.Env) ([]core.Finding, core.View) {
	tool := ev.Tool()
	args := ev.Args()
	lt := strings.ToLower(tool)
	self := newSelfCtx(ev)
	var finds []core.Finding
	var v core.View
	switch {
	case shellTools()[lt]:
		cmd := firstString(args, "command", "cmd", "script", "commands", "input", "code")
		if cmd == "" {
			v = core.View{}
			finds = []core.Finding{{Analyzer: core.AnalyzerTool, Rule: ruleNoCommand, Level: events.RiskUnknown, Detail: tool + " action without a command"}}
			break
		}
		finds, v = shellFindingsSelf(s.parsers, cmd, env, self)
		finds = s.withArgs(finds, &v, tool, args, env, cmd)
	case pythonTools()[lt]:
		code := firstString(args, "code", "source", "cell", "command", "script", "input")
		finds = analyzeCodeRun("python", code, env, self)
		v = core.View{Command: code}
		finds = s.withArgs(finds, &v, tool, args, env, code)
	case writeTools()[lt]:
		finds, v = s.fileAction(lt, self.homeArgs(args), ev, env)
	case readTools()[lt]:
		p := firstString(self.homeArgs(args), "path", "file_path", "filename", "target_file", "file", "pattern")
		v = core.View{Paths: nonEmpty(p)}
		finds = readFindings(p, env)
	case netTools()[lt]:
		finds, v = networkAction(args, env)
	case strings.HasPrefix(lt, "mcp:") || strings.HasPrefix(lt, "mcp__"):
		finds, v = mcpAction(tool, args, env)
		finds = s.withArgs(finds, &v, tool, args, env, "")
	case benignTools()[lt]:
		v = core.View{}
	default:
		v = core.View{}
		finds = []core.Finding{{Analyzer: core.AnalyzerTool, Rule: ruleUnknownTool, Level: events.RiskUnknown, Detail: "no analyzer knows the tool " + fmt.Sprintf("%.64q", tool)}}
		finds = s.withArgs(finds, &v, tool, args, env, "")
	}
	if !shellTools()[lt] {
		finds = append(finds, selfToolFindings(self, lt, args)...)
	}
	v.Tool = tool
	if f, ok := redactionHid(ev); ok {
		finds = append(finds, f)
	}
	if len(ev.Redactions) > 0 {
		rules := map[string]bool{}
		var names []string
		for _, r := range ev.Redactions {
			if !rules[r.Rule] {
				rules[r.Rule] = true
				names = append(names, r.Rule)
			}
		}
		sort.Strings(names)
		if writeTools()[lt] {
			finds = append(finds, core.Finding{Analyzer: core.AnalyzerRedaction, Rule: ruleSecretWrittenToFile, Level: events.RiskHigh,
				Detail: "the content written holds secrets (" + strings.Join(names, ", ") + ")"})
		} else {
			finds = append(finds, core.Finding{Analyzer: core.AnalyzerRedaction, Rule: ruleSecretInAction, Level: events.RiskMedium,
				Detail: "the action's arguments held secrets (" + strings.Join(names, ", ") + "), redacted before storage"})
		}
	}
	return finds, v
}

// withArgs adds the findings of the tool call's other arguments (see
// argFindings) to finds and their commands, hosts and paths to v.
func (s *Analyzer) withArgs(finds []core.Finding, v *core.View, tool string, args map[string]any, env core.Env, skip string) []core.Finding {
	af, av := s.argFindings(tool, args, env, skip)
	v.Commands = append(v.Commands, av.Commands...)
	v.Hosts = UniqSorted(append(v.Hosts, av.Hosts...))
	for _, p := range av.Paths {
		if len(v.Paths) < 64 && !slices.Contains(v.Paths, p) {
			v.Paths = append(v.Paths, p)
		}
	}
	return append(finds, af...)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch x := m[k].(type) {
		case string:
			if x != "" {
				return x
			}
		case []any:
			var parts []string
			for _, e := range x {
				if s, ok := e.(string); ok {
					parts = append(parts, s)
				}
			}
			if len(parts) > 0 {
				return strings.Join(parts, "\n")
			}
		}
	}
	return ""
}

// IsWriteTool reports whether the tool (lower-cased) writes or edits a
// file: Action judges it with the files analyzer.
func IsWriteTool(tool string) bool { return writeTools()[tool] }

// IsShell reports whether the program name is a shell: its code is judged
// as shell.
func IsShell(name string) bool { return shells[name] }

// Ruled reports whether a rule judges the program name by name.
func Ruled(name string) bool { return ruledCmds()[name] }
