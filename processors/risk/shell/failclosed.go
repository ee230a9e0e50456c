package shell

import (
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Failing closed. Vigil's answer to "what does this do?" is one of three:
// known to be harmless (LOW), known to be risky (the rule that says why), or
// not known. What the analyzers could not see all of is HIGH, whatever the
// threshold, with a rule that says so:
//
//   - input over the size cap (input-too-large), an analysis bound reached
//     (analysis-budget), a shell payload that does not parse (unparsable,
//     unparsable-nested);
//   - a command name that is a glob pattern (glob-command; the pattern is
//     also expanded against the standard directories and every program it
//     can name is judged) or an unresolved expansion (unresolved-command);
//   - code that computes the name of what it calls (computed-call, in the
//     code analyzer);
//   - a redaction that spent its budget or had to cross a shell word,
//     operator or line (redaction-hid-content: the stored text is not what
//     runs).
//
// Everything else that no rule judged is LOW only when every command in it
// is on the known-safe list below, with arguments that keep it read-only or
// confined to the workspace; otherwise it is MEDIUM (not-known-safe), which
// leaves the decision to the client's own prompt.

// standardDirs are the directories a glob in a command name is expanded
// against: where the programs it can name live on any Unix system.
var standardDirs = []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}

// globProgramNames is every program name the analyzer knows, sorted: the
// names a glob in command position is matched against.
var globProgramNames = sync.OnceValue(func() []string {
	m := map[string]bool{}
	for _, s := range []map[string]bool{ruledCmds(), mentionCmds(), readers(), shells} {
		for k := range s {
			m[k] = true
		}
	}
	for k := range interpreters {
		m[k] = true
	}
	for k := range wrapperOptArgs {
		m[k] = true
	}
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" && !strings.ContainsAny(k, "/[]*?") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
})

// hasGlobMeta reports whether an unquoted literal holds a pattern character
// the shell expands: * or ?, or a bracket expression [..] (a lone [ is the
// test command). Backslash-escaped characters do not count.
func hasGlobMeta(s string) bool {
	open := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			open = true
		case ']':
			if open {
				return true
			}
		}
	}
	return false
}

// globMatches returns the programs in the standard directories that the
// pattern p (the command word) can name, at most 8, in sorted order.
func globMatches(p string) []string {
	var out []string
	seen := map[string]bool{}
	for _, name := range globProgramNames() {
		ok := false
		if strings.Contains(p, "/") {
			for _, d := range standardDirs {
				if m, err := path.Match(p, d+"/"+name); err == nil && m {
					ok = true
					break
				}
			}
		} else if m, err := path.Match(p, name); err == nil && m {
			ok = true
		}
		if ok && !seen[name] {
			seen[name] = true
			out = append(out, name)
			if len(out) == 8 {
				break
			}
		}
	}
	return out
}

// globCommand judges a command whose name is a glob pattern: HIGH, and each
// program the pattern can name in the standard directories is judged with
// the same arguments.
func (w *walker) globCommand(c *command) {
	ms := globMatches(c.path)
	detail := "the program to run is the glob " + core.TrimArg(c.path) + ", expanded by the shell at run time"
	if len(ms) > 0 {
		detail += " (it can name " + strings.Join(ms, ", ") + ")"
	} else {
		detail += "; what it names could not be told"
	}
	w.hit(c, ruleGlobCommand, high, detail)
	for _, m := range ms {
		fs := []field{{s: m}}
		for i, a := range c.args {
			f := field{s: a}
			if i < len(c.argDyn) {
				f.dyn = c.argDyn[i]
			}
			if i < len(c.argData) {
				f.d = c.argData[i]
			}
			fs = append(fs, f)
		}
		w.runSynthetic(&command{via: []string{"glob " + core.TrimArg(c.path) + " as " + m}, sudo: c.sudo}, fs, stmtCtx{stdin: c.stdin})
	}
}

// commandEnv are environment variables whose value a program runs as a
// command line (or, for the file-valued ones, sources as a script).
var commandEnv = map[string]string{
	"GIT_SSH_COMMAND": "cmd", "GIT_SSH": "cmd", "GIT_EDITOR": "cmd", "GIT_PAGER": "cmd", "GIT_ASKPASS": "cmd",
	"GIT_EXTERNAL_DIFF": "cmd", "GIT_SEQUENCE_EDITOR": "cmd", "GIT_PROXY_COMMAND": "cmd", "SSH_ASKPASS": "cmd",
	"SUDO_ASKPASS": "cmd", "PAGER": "cmd", "MANPAGER": "cmd", "SYSTEMD_PAGER": "cmd", "EDITOR": "cmd", "VISUAL": "cmd",
	"FCEDIT": "cmd", "BROWSER": "cmd", "PROMPT_COMMAND": "cmd", "LESSOPEN": "less", "LESSCLOSE": "less",
	"BASH_ENV": "file", "ENV": "file", "ZDOTDIR": "dir", "PS0": "prompt", "PS1": "prompt", "PS2": "prompt", "PS4": "prompt",
	"RSYNC_RSH": "cmd", "CVS_RSH": "cmd", "RSYNC_CONNECT_PROG": "cmd", "SVN_SSH": "cmd", "GIT_TRACE2_EVENT_TARGET": "",
}

// envCommand judges an environment variable set to a command line:
// programs will run it, so it is analysed as the command it is.
func (w *walker) envCommand(name, val string, dyn bool, span [2]int) {
	kind, ok := commandEnv[name]
	if !ok || kind == "" {
		return
	}
	add := func(lvl events.Risk, detail string) {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleEnvCommand, Level: lvl, Detail: detail, Span: span, Command: name})
	}
	if dyn {
		add(high, name+" is set to a value that could not be resolved, and programs run it as a command")
		return
	}
	code := strings.TrimSpace(val)
	switch kind {
	case "less":
		code = strings.TrimSpace(strings.TrimLeft(code, "|-"))
		code = strings.ReplaceAll(code, "%s", "FILE")
	case "file":
		if code == "" {
			return
		}
		// Every shell the command starts sources the file first, out of
		// sight of the command line: what it holds is not judged here.
		add(high, name+"="+core.TrimArg(code)+": every shell the command starts sources this file first; what it holds is not seen")
		code = ". " + Quote(code)
		w.reparse(code, name+"=", nil, nil, false)
		return
	case "dir":
		if code == "" {
			return
		}
		add(med, name+"="+core.TrimArg(code)+": zsh reads its start-up files from there")
		return
	case "prompt":
		if !strings.Contains(code, "$(") && !strings.Contains(code, "`") {
			return
		}
	}
	if code == "" {
		return
	}
	add(low, name+" is run as a command; its value is judged as one")
	w.reparse(code, name+"=", nil, nil, false)
}

// gitKeyCmd reports whether a git configuration key's value is a program
// git runs (an alias only with a leading "!").
func gitKeyCmd(k string) bool {
	k = strings.ToLower(k)
	switch k {
	case "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "sequence.editor", "core.gitproxy",
		"diff.external", "gpg.program", "credential.helper", "core.askpass", "uploadpack.packobjectshook",
		"sendemail.smtpserver", "sendemail.tocmd", "sendemail.cccmd", "web.browser", "mergetool.cmd", "difftool.cmd":
		return true
	}
	last := k[strings.LastIndexByte(k, '.')+1:]
	switch {
	case strings.HasPrefix(k, "alias."), strings.HasPrefix(k, "pager."):
		return true
	case strings.HasPrefix(k, "filter.") && (last == "clean" || last == "smudge" || last == "process"):
		return true
	case strings.HasPrefix(k, "diff.") && (last == "textconv" || last == "command"):
		return true
	case strings.HasPrefix(k, "merge.") && last == "driver":
		return true
	case strings.HasPrefix(k, "remote.") && (last == "uploadpack" || last == "receivepack" || last == "vcs"):
		return true
	case strings.HasPrefix(k, "gpg.") && last == "program":
		return true
	case (strings.HasPrefix(k, "mergetool.") || strings.HasPrefix(k, "difftool.")) && last == "cmd":
		return true
	case strings.HasPrefix(k, "credential.") && last == "helper":
		return true
	}
	return false
}

// gitKeyLoads reports whether a key names a file or directory git loads
// programs or configuration from.
func gitKeyLoads(k string) bool {
	k = strings.ToLower(k)
	return k == "core.hookspath" || k == "include.path" || k == "init.templatedir" ||
		strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path")
}

// gitExecConfig judges a git setting given on the command line (git -c
// K=V) or through git config that makes git run or load something.
func (w *walker) gitExecConfig(c *command, k, v string) {
	lk := strings.ToLower(k)
	switch {
	case gitKeyLoads(k):
		cls := classify(v, c.cwd, w.env.Workspace)
		lvl := med
		if v == "" || cls != pcWorkspace || strings.HasPrefix(v, "$") {
			lvl = high
		}
		if lk == "core.hookspath" && (v == "/dev/null" || cls == pcNull) {
			w.hit(c, ruleGitHooksDisabled, med, "git -c core.hooksPath="+v+" disables hooks")
			return
		}
		w.hit(c, ruleGitExecConfig, lvl, "git "+k+"="+core.TrimArg(v)+": git runs or loads what that path holds")
	case strings.HasPrefix(lk, "protocol.") && strings.HasSuffix(lk, ".allow") && strings.EqualFold(v, "always"):
		w.hit(c, ruleGitExecConfig, high, "git "+k+"=always enables a transport that runs commands (ext::)")
	}
}

// gitExecPath judges git --exec-path=DIR (git runs its subcommands from
// DIR) and git --config-env=KEY=VAR for a key whose value git runs or
// loads (the value is read from VAR at run time, out of sight).
func (w *walker) gitExecPath(c *command) {
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !strings.HasPrefix(a, "-") {
			return
		}
		if strings.HasPrefix(a, "--exec-path=") {
			d := strings.TrimPrefix(a, "--exec-path=")
			if strings.HasPrefix(path.Clean(d), "/usr/lib/git-core") || strings.HasPrefix(path.Clean(d), "/usr/libexec/git-core") {
				continue
			}
			w.hit(c, ruleGitExecConfig, high, "git --exec-path="+core.TrimArg(d)+" runs git's own programs from that directory")
		}
		if kv, ok := strings.CutPrefix(a, "--config-env="); ok || a == "--config-env" && i+1 < len(c.args) {
			if !ok {
				i++
				kv = c.args[i]
			}
			// The value comes from an environment variable at run time:
			// what a program-valued or loading key would run is not seen.
			if k, env, _ := strings.Cut(kv, "="); gitKeyCmd(k) || gitKeyLoads(k) {
				w.hit(c, ruleGitExecConfig, high, "git --config-env "+core.TrimArg(k)+"="+core.TrimArg(env)+": git runs or loads what that environment variable holds, which is not seen")
			}
			continue
		}
		if (a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace") && i+1 < len(c.args) {
			i++
		}
	}
}

// templateInCode reports whether the template placeholder ph lands in a
// position that is code: the program name, or the code argument of a
// shell, eval or an interpreter. Items filled in at run time then decide
// what runs.
func templateInCode(sub []string, ph string) bool {
	if ph == "" || len(sub) == 0 {
		return false
	}
	if strings.Contains(sub[0], ph) {
		return true
	}
	n := CanonicalName(sub[0])
	if n == "eval" {
		for _, a := range sub[1:] {
			if strings.Contains(a, ph) {
				return true
			}
		}
	}
	var codeFlags []string
	if shells[n] {
		codeFlags = []string{"-c"}
	} else if it, ok := interpreters[n]; ok {
		codeFlags = it.flags
	} else {
		return false
	}
	for i, a := range sub[1:] {
		for _, f := range codeFlags {
			if (a == f || len(a) > 1 && a[0] == '-' && a[1] != '-' && f == "-c" && strings.HasSuffix(a, "c")) && i+2 < len(sub) && strings.Contains(sub[i+2], ph) {
				return true
			}
		}
	}
	return false
}

// templateExec reports a template whose items become code.
func (w *walker) templateExec(c *command, how string, sub []string) {
	w.hit(c, ruleTemplateExec, high, how+" fills "+core.TrimArg(strings.Join(sub, " "))+" from its input at run time: the input decides what runs")
}

// knownSafe reports whether c is a program with arguments the analyzer
// knows to be read-only or confined to the workspace.
func (w *walker) knownSafe(c *command) bool {
	if c.sudo || c.dynName || c.glob || c.remote || c.win {
		return false
	}
	for _, r := range c.redirs {
		if !r.isWrite() {
			continue
		}
		if r.dyn {
			return false
		}
		switch classify(r.target, c.cwd, w.env.Workspace) {
		case pcWorkspace, pcNull, pcTemp:
			if strings.Contains(r.target, "..") || strings.HasPrefix(r.target, "~") {
				return false
			}
		default:
			return false
		}
	}
	if c.name == ":" || c.name == "{}" {
		return true
	}
	if c.helpOnly && knownCommand(c.name) {
		return true
	}
	a := c.args
	switch c.name {
	case "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "ack", "echo", "printf", "pwd", "whoami", "id",
		"date", "uname", "hostname", "true", "false", "test", "[", "which", "type", "file", "stat", "du", "df", "tree",
		"diff", "cmp", "comm", "uniq", "cut", "tr", "nl", "column", "basename", "dirname", "realpath", "readlink",
		"printenv", "jq", "sha256sum", "sha1sum", "md5sum", "sha512sum", "shasum", "cksum", "seq", "sleep", "cd", "pushd",
		"popd", "man", "help", "ps", "free", "uptime", "nproc", "whereis", "tac", "rev", "fold", "expr", "wait", "clear",
		"exit", "return", "locale", "groups", "arch", "lscpu", "getconf", "tty", "cal", "numfmt", "paste", "join", "od",
		"hexdump", "strings", "less", "more", "bat", "fd", "exa", "eza", "look", "pgrep", "command", "hash", "export",
		"local", "declare", "typeset", "readonly", "shift", "set", "unset", "read", "break", "continue", "lsb_release", "sw_vers":
		if c.name == "command" && !hasArg(a, "-v", "-V") {
			return false
		}
		return true
	case "sort":
		if o, ok := optValue(a, "-o", "--output"); ok {
			return w.inWorkspace(c, o)
		}
		return true
	case "alias":
		return true // the body is judged where the alias is used
	case "base64", "base32", "xxd":
		return true // print only; what they feed is judged where it goes
	case "sh", "bash", "zsh", "dash":
		// sh -c CODE: the code's commands are walked and checked on their own
		for i, x := range a {
			if len(x) > 1 && x[0] == '-' && x[1] != '-' {
				if strings.ContainsRune(x[1:], 'c') {
					return i+1 < len(a) && !dynArg(c, i+1)
				}
				if strings.Trim(x[1:], "le") != "" {
					return false
				}
				continue
			}
			return false
		}
		return false
	case "sudo":
		return len(a) == 1 && (a[0] == "-l" || a[0] == "-v" || a[0] == "-k" || a[0] == "-K")
	case "ip":
		ops := operands(a)
		return len(ops) >= 1 && (len(ops) == 1 || ops[len(ops)-1] == "show" || ops[1] == "show" || ops[1] == "list")
	case "ifconfig":
		return len(a) == 0 || len(a) == 1 && a[0] == "-a"
	case "cp", "mv", "ln":
		ops := operands(a)
		if len(ops) < 2 {
			return false
		}
		for _, o := range ops {
			if !w.inWorkspace(c, o) {
				return false
			}
		}
		return true
	case "sed":
		if flagSet(a, 'i', "--in-place") || hasArgPrefix(a, "--in-place") {
			return false
		}
		for _, x := range a {
			if sedRunsOrWrites(x) {
				return false
			}
		}
		return true
	case "find":
		for _, x := range a {
			switch x {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			}
		}
		return true
	case "yq":
		return !flagSet(a, 'i', "--inplace")
	case "mkdir", "touch":
		for _, o := range operands(a) {
			if !w.inWorkspace(c, o) {
				return false
			}
		}
		return true
	case "tee":
		// Files in the workspace that no tool runs or takes its
		// configuration from (those are judged by what is written).
		for _, o := range operands(a) {
			if !w.inWorkspace(c, o) || ExecConfigKind(o) != "" {
				return false
			}
		}
		return true
	case "git":
		return gitReadOnly(a)
	case "go":
		return goSafe(a)
	case "cargo":
		ops := operands(a)
		return len(ops) > 0 && (ops[0] == "check" || ops[0] == "build" || ops[0] == "test" || ops[0] == "clippy" && !hasArg(a, "--fix") ||
			ops[0] == "tree" || ops[0] == "metadata" || ops[0] == "fmt" || ops[0] == "doc")
	case "npm", "pnpm", "yarn":
		ops := operands(a)
		return len(ops) > 0 && (ops[0] == "ls" || ops[0] == "list" || ops[0] == "view" || ops[0] == "outdated" || ops[0] == "why" || ops[0] == "explain")
	case "pytest":
		return true
	case "python", "node", "ruby", "perl", "lua", "bun":
		lang, code, ok := inlineCode(c)
		return ok && codeKnownSafe(lang, code)
	}
	return false
}

// interpreterQuietFlags are options of interpreters that change nothing
// of what inline code may do.
var interpreterQuietFlags = core.LazySet("-u", "-B", "-E", "-I", "-S", "-s", "-q", "-O", "-OO", "-b", "-w", "-l", "-W", "-X", "--no-warnings")

// inlineCode returns the inline code c runs (python -c CODE, node -e CODE,
// perl -e CODE …) when that is all c runs: only quiet options before the
// code flag, the code a literal, nothing read from stdin.
func inlineCode(c *command) (string, string, bool) {
	it, ok := interpreters[c.name]
	switch it.lang {
	case "python", "js", "ruby", "perl", "lua":
	default:
		return "", "", false
	}
	if !ok || c.stdin != nil && (c.stdin.text != "" || c.stdin.flags != 0) {
		return "", "", false
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		for _, f := range it.flags {
			if a == f && i+1 < len(c.args) && !dynArg(c, i+1) {
				return it.lang, c.args[i+1], true
			}
		}
		if !interpreterQuietFlags()[a] {
			return "", "", false
		}
	}
	return "", "", false
}

func dynArg(c *command, i int) bool { return i < len(c.argDyn) && c.argDyn[i] }

// inWorkspace reports whether path p, as c sees it, is inside the
// workspace: relative without "..", or under the workspace directory.
func (w *walker) inWorkspace(c *command, p string) bool {
	if p == "" || strings.Contains(p, "..") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") {
		return false
	}
	if strings.HasPrefix(p, "/") && c.cwd == "" {
		return classify(p, c.cwd, w.env.Workspace) == pcWorkspace
	}
	return classify(p, c.cwd, w.env.Workspace) == pcWorkspace && !strings.HasPrefix(c.cwd, "/")
}

// sedRunsOrWrites reports whether a sed script argument holds a command
// that runs a program (e, or the e flag of s) or writes a file (w, W, or
// the w flag of s).
func sedRunsOrWrites(s string) bool {
	if strings.HasPrefix(s, "-") {
		return false
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	for _, part := range strings.FieldsFunc(t, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		p := strings.TrimSpace(part)
		p = strings.TrimLeft(p, "0123456789,$/!^.*[]\\ ")
		if p == "" {
			continue
		}
		switch p[0] {
		case 'e', 'w', 'W':
			return true
		case 's':
			if len(p) > 1 {
				d := p[1]
				// flags after the third delimiter
				if n := strings.Count(p, string(d)); n >= 3 {
					flags := p[strings.LastIndexByte(p, d)+1:]
					if strings.ContainsAny(flags, "ew") {
						return true
					}
				}
			}
		}
	}
	return false
}

// gitReadOnly: git subcommands that only read the repository, with no
// global option that makes git run or load something.
func gitReadOnly(a []string) bool {
	i := 0
	for i < len(a) && strings.HasPrefix(a[i], "-") {
		switch {
		case a[i] == "-C":
			i += 2
			continue
		case a[i] == "--no-pager", a[i] == "-P", a[i] == "--no-optional-locks", a[i] == "--literal-pathspecs":
			i++
			continue
		}
		return false // -c, --exec-path, --git-dir, --work-tree, --config-env …
	}
	if i >= len(a) {
		return true
	}
	sub, rest := a[i], a[i+1:]
	for _, x := range rest {
		if strings.HasPrefix(x, "--output") || strings.HasPrefix(x, "--ext-diff") || strings.HasPrefix(x, "--textconv") || x == "-o" || strings.HasPrefix(x, "--exec") || strings.HasPrefix(x, "--upload-pack") {
			return false
		}
	}
	switch sub {
	case "add", "commit", "init", "mv", "restore", "switch":
		// change the work tree and index only (hooks in .git/hooks are the
		// workspace's; writes to them are judged where they are written)
		if sub == "restore" || sub == "switch" {
			return !hasArg(rest, "--force", "-f", "--discard-changes")
		}
		return true
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog", "grep", "rev-list",
		"cat-file", "ls-tree", "merge-base", "name-rev", "whatchanged", "show-ref", "for-each-ref", "count-objects", "version", "help", "annotate":
		return true
	case "branch", "tag":
		for _, x := range rest {
			if !strings.HasPrefix(x, "-") {
				return false
			}
			switch x {
			case "-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes", "--verbose", "--merged", "--no-merged", "--contains":
			default:
				return false
			}
		}
		return true
	case "remote":
		return len(rest) == 0 || len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose") || len(rest) >= 1 && (rest[0] == "show" || rest[0] == "get-url")
	case "stash":
		return len(rest) >= 1 && (rest[0] == "list" || rest[0] == "show")
	case "config":
		for _, x := range rest {
			if x == "--get" || x == "--list" || x == "-l" || x == "--get-all" || x == "--get-regexp" {
				return true
			}
		}
		return false
	case "reflog":
		return len(rest) == 0 || rest[0] == "show"
	case "worktree":
		return len(rest) >= 1 && rest[0] == "list"
	}
	return false
}

// goSafe: go subcommands that build or test the workspace, or only read.
func goSafe(a []string) bool {
	ops := operands(a)
	if len(ops) == 0 {
		return false
	}
	for _, x := range a {
		if strings.HasPrefix(x, "-exec") || strings.HasPrefix(x, "-toolexec") || strings.HasPrefix(x, "-overlay") {
			return false
		}
	}
	switch ops[0] {
	case "test", "build", "vet", "list", "version", "doc", "fmt":
		if ops[0] == "build" {
			if o, ok := optValue(a, "-o", ""); ok && (strings.HasPrefix(o, "/") && !strings.HasPrefix(o, "/tmp/") || strings.Contains(o, "..") || strings.HasPrefix(o, "~")) {
				return false
			}
		}
		return true
	case "env":
		return !hasArg(a, "-w", "-u")
	case "mod":
		return len(ops) > 1 && (ops[1] == "tidy" || ops[1] == "graph" || ops[1] == "why" || ops[1] == "verify" || ops[1] == "download")
	}
	return false
}

// knownSafeCheck adds not-known-safe when no rule raised the input to
// MEDIUM or more and some command in it is not known to be harmless.
func (w *walker) knownSafeCheck() {
	for _, f := range w.finds {
		if f.Level.Rank() >= events.RiskMedium.Rank() {
			return
		}
	}
	for _, c := range w.cmds {
		if c.name == "" && !c.dynName && !c.glob {
			continue
		}
		if !w.knownSafe(c) {
			name := c.name
			if name == "" {
				name = c.path
			}
			if lang, _, ok := inlineCode(c); ok {
				w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: ruleCodeNotKnownSafe, Level: med, Span: c.span, Command: c.name,
					Detail: name + " runs " + lang + " code that uses names outside the known-harmless vocabulary (printing, lengths, JSON of literals, arithmetic, string methods); the client's own prompt decides"})
				return
			}
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleNotKnownSafe, Level: med, Span: c.span, Command: c.name,
				Detail: core.TrimArg(name) + " is not on the list of programs and arguments known to be harmless; the client's own prompt decides"})
			return
		}
	}
}

// hiddenRedactions are the redaction rules that mean the stored text is
// not all of what runs: a budget spent (the rest replaced whole), or a
// redaction that had to cross a shell word, operator or line.
var hiddenRedactions = map[string]string{
	"vigil.budget":      "the redaction budget was spent, so part of the action was replaced unread",
	"vigil.unsafe-span": "a redaction had to cross a shell word, operator or line, so the stored command is not what runs",
}

// redactionHid returns the finding for an event whose redactions hid part
// of what runs, if any.
func redactionHid(ev *events.Event) (core.Finding, bool) {
	var why []string
	seen := map[string]bool{}
	for _, r := range ev.Redactions {
		if d, ok := hiddenRedactions[r.Rule]; ok && !seen[r.Rule] {
			seen[r.Rule] = true
			why = append(why, d)
		}
	}
	if len(why) == 0 {
		return core.Finding{}, false
	}
	sort.Strings(why)
	return core.Finding{Analyzer: core.AnalyzerRedaction, Rule: ruleRedactionHidContent, Level: events.RiskHigh,
		Detail: strings.Join(why, "; ") + ": it could not be judged, so a person must"}, true
}
