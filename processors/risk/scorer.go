package risk

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/events"
)

// Env is what the fold knows about the action's context.
type Env struct {
	Workspace    string
	Backend      string
	Conversation string
	Agent        string
}

// Assessment is the result of scoring one action.
type Assessment struct {
	Level   events.Risk
	Reasons []events.Reason
	// View is the parsed action: what the analyzers saw, and the input of
	// policy rules.
	View View
}

// View is the parsed view of an action. Its fields are also the variables
// policy rules (CEL) are written against; see docs/risk.md.
type View struct {
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
	// Commands are every simple command found, in the order they appear,
	// including those inside bash -c, eval, $(…), ssh, find -exec, code.
	Commands     []CommandView `json:"commands,omitempty"`
	Paths        []string      `json:"paths,omitempty"`
	Hosts        []string      `json:"hosts,omitempty"`
	CodeFindings []string      `json:"code_findings,omitempty"`
	// Findings are the names of every rule that fired, sorted, unique.
	Findings     []string `json:"findings,omitempty"`
	Backend      string   `json:"backend,omitempty"`
	Agent        string   `json:"agent,omitempty"`
	Conversation string   `json:"conversation,omitempty"`
	Workspace    string   `json:"workspace,omitempty"`
	ParseError   string   `json:"parse_error,omitempty"`
	// TopCommand and TopRule name the command and the rule that decided the
	// level (the first highest-level reason); empty when no rule fired.
	TopCommand string `json:"top_command,omitempty"`
	TopRule    string `json:"top_rule,omitempty"`
	// RunRisk is, for a file write, the level of running what was written
	// when the write's own findings were capped ("written, not run").
	RunRisk events.Risk `json:"run_risk,omitempty"`
}

// CommandView is one command found in an action.
type CommandView struct {
	Name  string   `json:"name"`
	Argv  []string `json:"argv,omitempty"`
	Via   []string `json:"via,omitempty"`
	Depth int      `json:"depth,omitempty"`
	Sudo  bool     `json:"sudo,omitempty"`
	Span  [2]int   `json:"span"`
}

// Scorer scores actions under one configuration. Build one per config in
// force (policy rules are compiled once); it is safe for concurrent use.
type Scorer struct {
	cfg     events.Config
	policy  *RuleSet
	parsers *parserPool
}

// NewScorer compiles cfg's policy rules. The error names the rule and the
// position of a syntax error.
func NewScorer(cfg events.Config) (*Scorer, error) {
	rs, err := CompileRules(cfg.PolicyRules)
	if err != nil {
		return nil, fmt.Errorf("config v%d: %w", cfg.Version, err)
	}
	return &Scorer{cfg: cfg, policy: rs, parsers: newParserPool()}, nil
}

// Config returns the configuration the scorer was built for.
func (s *Scorer) Config() events.Config { return s.cfg }

// ScoreCommand scores a shell command line.
func (s *Scorer) ScoreCommand(cmd string, env Env) Assessment {
	f, v := shellFindingsWith(s.parsers, cmd, env)
	v.Tool = "bash"
	return s.finish(f, v, env, nil)
}

func shellFindings(cmd string, env Env) ([]finding, View) {
	return shellFindingsWith(nil, cmd, env)
}

// shellFindingsWith is shellFindings parsing with pp's parsers.
func shellFindingsWith(pp *parserPool, cmd string, env Env) ([]finding, View) {
	return shellFindingsSelf(pp, cmd, env, nil)
}

// shellFindingsSelf is shellFindingsWith judging paths against sc, the
// action's hook's view of Vigil's installation (nil: names only).
func shellFindingsSelf(pp *parserPool, cmd string, env Env, sc *selfCtx) ([]finding, View) {
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
	v := View{Command: cmd, ParseError: w.parseErr}
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
		v.Commands = append(v.Commands, CommandView{Name: name, Argv: c.args, Via: c.via, Depth: c.depth, Sudo: c.sudo, Span: c.span})
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
	v.Hosts = uniqSorted(w.hosts)
	return w.finds, v
}

func looksLikePath(a string) bool {
	return strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || a == "." || a == ".." ||
		(strings.Contains(a, "/") && !strings.Contains(a, "://") && !strings.Contains(a, " "))
}

func uniqSorted(in []string) []string {
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

// Tool families ScoreAction dispatches on (lower-cased tool names).
var (
	shellTools  = lazySet("bash", "shell", "execute_bash", "terminal", "sh", "zsh", "run_shell_command", "run_command", "execute_command", "exec", "command", "cmd", "run_terminal_cmd", "local_shell", "container.exec")
	pythonTools = lazySet("python", "ipython", "execute_ipython_cell", "python_repl", "jupyter", "run_python", "code_interpreter", "execute_python")
	writeTools  = lazySet("file_write", "file_edit", "str_replace_editor", "write", "edit", "multiedit", "create_file", "write_file", "edit_file", "apply_patch", "replace", "str_replace_based_edit_tool", "notebookedit", "write_to_file", "insert_edit_into_file")
	readTools   = lazySet("read", "read_file", "file_read", "view", "open_file", "cat", "view_file", "glob", "grep", "ls", "list_dir", "list_directory", "search_files", "find_files")
	netTools    = lazySet("browse", "web_fetch", "webfetch", "fetch", "browser", "browse_url", "http_request", "http", "curl", "open_url", "navigate", "browser_navigate", "web_browser", "playwright")
	benignTools = lazySet("think", "finish", "agent_finish", "task_tracker", "todo_write", "todowrite", "message", "ask_user", "send_message", "web_search", "websearch", "search", "plan", "exit_plan_mode", "exitplanmode", "recall", "condensation")
)

// ScoreAction scores an action event. See the package documentation for how
// tools are dispatched.
func (s *Scorer) ScoreAction(ev *events.Event, env Env) Assessment {
	if env.Agent == "" {
		env.Agent = ev.Agent
	}
	if env.Conversation == "" {
		env.Conversation = ev.Conversation
	}
	if env.Backend == "" {
		env.Backend = ev.StringField("backend")
	}
	tool := ev.Tool()
	args := ev.Args()
	lt := strings.ToLower(tool)
	self := newSelfCtx(ev)
	var finds []finding
	var v View
	switch {
	case shellTools()[lt]:
		cmd := firstString(args, "command", "cmd", "script", "commands", "input", "code")
		if cmd == "" {
			v = View{}
			finds = []finding{{analyzer: AnalyzerTool, rule: ruleNoCommand, level: events.RiskUnknown, detail: tool + " action without a command"}}
			break
		}
		finds, v = shellFindingsSelf(s.parsers, cmd, env, self)
		finds = s.withArgs(finds, &v, tool, args, env, cmd)
	case pythonTools()[lt]:
		code := firstString(args, "code", "source", "cell", "command", "script", "input")
		finds = analyzeCodeRun("python", code, env, self)
		v = View{Command: code}
		finds = s.withArgs(finds, &v, tool, args, env, code)
	case writeTools()[lt]:
		finds, v = s.fileAction(lt, self.homeArgs(args), ev, env)
	case readTools()[lt]:
		p := firstString(self.homeArgs(args), "path", "file_path", "filename", "target_file", "file", "pattern")
		v = View{Paths: nonEmpty(p)}
		finds = readFindings(p, env)
	case netTools()[lt]:
		finds, v = networkAction(args, env)
	case strings.HasPrefix(lt, "mcp:") || strings.HasPrefix(lt, "mcp__"):
		finds, v = mcpAction(tool, args, env)
		finds = s.withArgs(finds, &v, tool, args, env, "")
	case benignTools()[lt]:
		v = View{}
	default:
		v = View{}
		finds = []finding{{analyzer: AnalyzerTool, rule: ruleUnknownTool, level: events.RiskUnknown, detail: "no analyzer knows the tool " + fmt.Sprintf("%.64q", tool)}}
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
			finds = append(finds, finding{analyzer: AnalyzerRedaction, rule: ruleSecretWrittenToFile, level: events.RiskHigh,
				detail: "the content written holds secrets (" + strings.Join(names, ", ") + ")"})
		} else {
			finds = append(finds, finding{analyzer: AnalyzerRedaction, rule: ruleSecretInAction, level: events.RiskMedium,
				detail: "the action's arguments held secrets (" + strings.Join(names, ", ") + "), redacted before storage"})
		}
	}
	return s.finish(finds, v, env, ev)
}

// withArgs adds the findings of the tool call's other arguments (see
// argFindings) to finds and their commands, hosts and paths to v.
func (s *Scorer) withArgs(finds []finding, v *View, tool string, args map[string]any, env Env, skip string) []finding {
	af, av := s.argFindings(tool, args, env, skip)
	v.Commands = append(v.Commands, av.Commands...)
	v.Hosts = uniqSorted(append(v.Hosts, av.Hosts...))
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

// finish applies the analyzer switches, policy rules and the agent's hint,
// and builds the assessment.
func (s *Scorer) finish(finds []finding, v View, env Env, ev *events.Event) Assessment {
	v.Backend, v.Agent, v.Conversation, v.Workspace = env.Backend, env.Agent, env.Conversation, env.Workspace
	cfg := s.cfg
	var kept []finding
	for _, f := range finds {
		if !cfg.Analyzers.Rules && f.analyzer != AnalyzerTool && f.analyzer != AnalyzerSelfProtect {
			continue
		}
		kept = append(kept, f)
	}
	codeSet := map[string]bool{}
	ruleSet := map[string]bool{}
	for _, f := range kept {
		ruleSet[f.id()] = true
		if f.analyzer == AnalyzerCode {
			codeSet[f.id()] = true
		}
	}
	v.Findings = keys(ruleSet)
	v.CodeFindings = keys(codeSet)
	level := events.RiskUnknown
	analyzed := false
	for _, f := range kept {
		if f.analyzer != AnalyzerTool {
			analyzed = true
		}
		level = events.Max(level, f.level)
	}
	if cfg.Analyzers.Rules && level == events.RiskUnknown && !hasUnknownTool(kept) {
		level = events.RiskLow
		analyzed = true
	}
	if !cfg.Analyzers.Rules {
		kept = append(kept, finding{analyzer: AnalyzerRules, rule: ruleRulesDisabled, level: "", detail: "built-in rules are off in the config in force"})
	}
	_ = analyzed
	if cfg.Analyzers.Policy && s.policy.Len() > 0 {
		matched, errs := s.policy.Match(Activation(v, level))
		for _, r := range matched {
			lvl := r.Level
			if lvl == "" {
				lvl = events.RiskHigh
			}
			detail := r.Reason
			if detail == "" {
				detail = "matched " + r.Expr
			}
			kept = append(kept, finding{analyzer: AnalyzerPolicy, rule: policyRule(r.Name), level: lvl, detail: detail})
			level = events.Max(level, lvl)
			if level == events.RiskUnknown {
				level = lvl
			}
		}
		for _, e := range errs {
			kept = append(kept, finding{analyzer: AnalyzerPolicy, rule: rulePolicyError, detail: e.Error()})
		}
	}
	if ev != nil {
		if hint, raw, found := ev.SecurityRisk(); found {
			switch {
			case !cfg.Analyzers.LLMHint:
				kept = append(kept, finding{analyzer: AnalyzerLLMHint, rule: ruleHintIgnored,
					detail: fmt.Sprintf("agent said %v; the llm_hint analyzer is off in the config in force", raw)})
			case hint == events.RiskUnknown:
				kept = append(kept, finding{analyzer: AnalyzerLLMHint, rule: ruleHintUnrecognised,
					detail: fmt.Sprintf("agent said %v, which is not a level", raw)})
			case hint.Rank() > level.Rank():
				kept = append(kept, finding{analyzer: AnalyzerLLMHint, rule: ruleHintRaised, level: hint,
					detail: fmt.Sprintf("the agent rated its action %s, above the analyzers' %s", hint, level)})
				level = hint
			default:
				kept = append(kept, finding{analyzer: AnalyzerLLMHint, rule: ruleHintRating, level: hint,
					detail: fmt.Sprintf("the agent rated its action %s; it can only raise the level", hint)})
			}
		}
	}
	reasons, top := toReasons(kept, level)
	if top != nil {
		v.TopCommand, v.TopRule = top.command, top.id()
	}
	return Assessment{Level: level, Reasons: reasons, View: v}
}

func hasUnknownTool(fs []finding) bool {
	for _, f := range fs {
		if f.analyzer == AnalyzerTool && f.level == events.RiskUnknown {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// toReasons sorts and de-duplicates findings: highest level first, then by
// position, then by rule name. It returns the deciding finding.
func toReasons(fs []finding, level events.Risk) ([]events.Reason, *finding) {
	type keyT struct{ a, r, d string }
	seen := map[keyT]bool{}
	var uniq []finding
	for _, f := range fs {
		k := keyT{f.analyzer, f.id(), f.detail}
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, f)
	}
	sort.SliceStable(uniq, func(i, j int) bool {
		if uniq[i].level.Rank() != uniq[j].level.Rank() {
			return uniq[i].level.Rank() > uniq[j].level.Rank()
		}
		if uniq[i].span[0] != uniq[j].span[0] {
			return uniq[i].span[0] < uniq[j].span[0]
		}
		return uniq[i].id() < uniq[j].id()
	})
	if len(uniq) > 64 {
		uniq = uniq[:64]
	}
	out := make([]events.Reason, 0, len(uniq))
	var top *finding
	for i, f := range uniq {
		r := events.Reason{Analyzer: f.analyzer, Rule: f.id(), Detail: f.detail, Level: f.level}
		if f.span != [2]int{} {
			r.Span = []int{f.span[0], f.span[1]}
		}
		out = append(out, r)
		if top == nil && f.level == level && f.level != "" && f.analyzer != AnalyzerLLMHint {
			top = &uniq[i]
		}
	}
	return out, top
}

// Shape is the normalised shape of an action, used to scope "allow for this
// session" approvals: "<command>|<rule>", where <command> is the canonical
// name of the command the deciding rule fired on (the tool name for
// non-shell tools, "$?" for a command whose name could not be resolved) and
// <rule> is the name of that rule; "-" stands for no rule. Examples:
// "rm|destructive-delete-root", "git|git-force-push", "file_write|dotfile-write",
// "ls|-". The raw command line is never part of the shape, so approving
// "rm -rf ./build" for the session also approves "rm -rf ./dist" (same rule)
// but not "rm -rf ~" (a different rule).
func (s *Scorer) Shape(a Assessment) string {
	cmd := a.View.TopCommand
	rule := a.View.TopRule
	if rule == "" {
		rule = "-"
	}
	if cmd == "" {
		if len(a.View.Commands) > 0 {
			cmd = a.View.Commands[0].Name
		} else {
			cmd = strings.ToLower(a.View.Tool)
		}
	}
	if cmd == "" {
		cmd = "-"
	}
	return cmd + "|" + rule
}
