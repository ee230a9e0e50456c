package shell

import (
	"path"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// interpreters maps a program to the language its inline code is in and the
// flags that introduce inline code.
var interpreters = map[string]struct {
	lang  string
	flags []string
}{
	"python":     {"python", []string{"-c"}},
	"perl":       {"perl", []string{"-e", "-E"}},
	"ruby":       {"ruby", []string{"-e"}},
	"node":       {"js", []string{"-e", "--eval", "-p", "--print"}},
	"deno":       {"js", []string{"eval"}},
	"bun":        {"js", []string{"-e", "--eval"}},
	"php":        {"php", []string{"-r"}},
	"lua":        {"lua", []string{"-e"}},
	"luajit":     {"lua", []string{"-e"}},
	"julia":      {"julia", []string{"-e", "--eval"}},
	"rscript":    {"r", []string{"-e"}},
	"ghc":        {"haskell", []string{"-e"}},
	"jrunscript": {"js", []string{"-e"}},
	"octave":     {"octave", []string{"--eval"}},
	"octave-cli": {"octave", []string{"--eval"}},
	"emacs":      {"lisp", []string{"--eval"}},
	"osascript":  {"applescript", []string{"-e"}},
	"expect":     {"expect", []string{"-c"}},
	"tclsh":      {"tcl", []string{}},
	"groovy":     {"groovy", []string{"-e"}},
	"scala":      {"scala", []string{"-e"}},
	"pwsh":       {"powershell", []string{"-c", "-command", "-Command"}},
}

// execute runs what cmd turns into code: shells, eval, source, interpreters,
// remote and container execution, find -exec, git and tar hooks.
func (w *walker) execute(c *command) {
	if c.helpOnly {
		return
	}
	name := c.name
	if name == "" {
		if c.glob {
			w.globCommand(c)
			return
		}
		w.dynamicCommand(c)
		return
	}
	if c.win {
		w.windowsExec(c)
		return
	}
	w.tempExec(c, c.path)
	w.execFlags(c)
	if shells[name] && name != "pwsh" && name != "powershell" {
		w.shell(c)
		return
	}
	if lang, code, ok := consoleCode(c); ok {
		w.analyzeCode(lang, code, c, c.name+" console")
	}
	if _, ok := interpreters[name]; ok {
		w.interpreter(c)
		return
	}
	switch name {
	case "awk":
		w.awk(c)
	case "eval":
		code := strings.Join(c.args, " ")
		w.flowExec(c, c.argFlags(), "eval")
		if evalsLocalOutput(c) {
			// eval "$(pyenv init -)", eval "$(ssh-agent -s)": what a local
			// program prints, unknown here; the program itself is judged
			// where it runs, inside the substitution
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: rulePipeToInterpreter, Level: events.RiskMedium,
				Detail: "eval runs what a local command prints", Span: c.span, Command: c.name})
			return
		}
		w.reparse(code, "eval", nil, c.stdin, false)
	case "source", ".":
		w.sourceFile(c)
	case "alias":
		for _, a := range c.args {
			if eq := strings.IndexByte(a, '='); eq > 0 {
				w.shadowing("alias", a[:eq], aliasWraps(a[:eq], a[eq+1:]), c.span)
				w.aliases[a[:eq]] = a[eq+1:]
				w.reparse(a[eq+1:], "alias "+a[:eq], nil, nil, false)
			}
		}
	case "trap":
		if len(c.args) > 0 && c.args[0] != "-p" && c.args[0] != "-l" && c.args[0] != "-" {
			w.reparse(c.args[0], "trap", nil, nil, false)
		}
	case "cd", "pushd":
		ops := operands(c.args)
		switch {
		case len(ops) == 0:
			w.sc.cwd = "~"
		case ops[0] == "-":
			w.sc.cwd = ""
		default:
			if dyn(c, ops[0]) {
				w.sc.cwd = ""
			} else if strings.HasPrefix(ops[0], "/") || strings.HasPrefix(ops[0], "~") {
				w.sc.cwd = path.Clean(ops[0])
			} else if w.sc.cwd != "" {
				w.sc.cwd = path.Clean(w.sc.cwd + "/" + ops[0])
			} else {
				w.sc.cwd = path.Clean(ops[0]) // relative to the workspace
			}
		}
	case "ssh":
		w.ssh(c)
	case "scp", "sftp", "rsync":
		for i, a := range c.args {
			if (a == "-o" && i+1 < len(c.args)) || strings.HasPrefix(a, "-o") {
				v := strings.TrimPrefix(a, "-o")
				if v == "" && i+1 < len(c.args) {
					v = c.args[i+1]
				}
				w.sshOption(v)
			}
			if name == "rsync" && (a == "-e" || a == "--rsh") && i+1 < len(c.args) {
				w.reparse(c.args[i+1], "rsync -e", nil, nil, false)
			}
		}
	case "docker", "kubectl", "oc":
		w.container_(c)
	case "find":
		w.findExec(c)
	case "git":
		w.gitCode(c)
		w.gitShellOptions(c)
	case "ansible", "salt", "pdsh", "pssh", "parallel-ssh", "clush":
		w.remoteRunner(c)
	case "tar":
		for i, a := range c.args {
			for _, p := range []string{"--checkpoint-action=exec=", "--to-command=", "--use-compress-program=", "--info-script=", "--new-volume-script="} {
				if strings.HasPrefix(a, p) {
					w.reparse(a[len(p):], "tar "+strings.TrimSuffix(p, "="), nil, nil, false)
				}
			}
			if (a == "-I" || a == "--use-compress-program" || a == "-F" || a == "--to-command") && i+1 < len(c.args) {
				w.reparse(c.args[i+1], "tar "+a, nil, nil, false)
			}
		}
	case "vim", "vi", "nvim", "ex", "view", "rvim", "gvim", "vimdiff":
		for i, a := range c.args {
			var ex string
			switch {
			case (a == "-c" || a == "--cmd") && i+1 < len(c.args):
				ex = c.args[i+1]
			case strings.HasPrefix(a, "+") && len(a) > 1:
				ex = a[1:]
			}
			w.vimEx(ex)
		}
	case "make", "gmake":
		w.makeCode(c)
	case "rpm":
		for i, a := range c.args {
			if (a == "--eval" || a == "-E") && i+1 < len(c.args) {
				w.percentParens(c.args[i+1], "rpm --eval")
			}
		}
	case "hg":
		for i, a := range c.args {
			if a == "--config" && i+1 < len(c.args) {
				if eq := strings.IndexByte(c.args[i+1], '='); eq > 0 {
					v := c.args[i+1][eq+1:]
					if strings.HasPrefix(v, "!") {
						w.reparse(v[1:], "hg alias", nil, nil, false)
					}
				}
			}
		}
	case "pip":
		if v, ok := optValue(c.args, "", "--editor"); ok {
			w.reparse(v, "pip --editor", nil, nil, false)
		}
	case "yt-dlp", "youtube-dl":
		if v, ok := optValue(c.args, "", "--exec"); ok {
			w.reparse(v, c.name+" --exec", nil, nil, false)
		}
	case "crontab":
		ops := operands(c.args)
		if hasArg(c.args, "-l", "-e", "-r") {
			return
		}
		if (len(ops) == 0 || ops[0] == "-") && c.stdin != nil {
			w.cronContent(c.stdin, "crontab")
		} else if len(ops) > 0 {
			if d, ok := w.files[w.normFile(ops[0])]; ok {
				w.cronContent(d, "crontab")
			}
		}
	case "at", "batch":
		if c.stdin != nil && c.stdin.text != "" {
			w.reparse(c.stdin.text, c.name, nil, nil, false)
		}
	case "tmux":
		w.tmux(c)
	case "gdb":
		w.gdb(c)
	case "zip":
		if v, ok := optValue(c.args, "", "-TT", "--unzip-command"); ok {
			w.reparse(v, "zip -TT", nil, nil, false)
		}
	case "tcpdump":
		if v, ok := optValue(c.args, "-z", ""); ok {
			w.reparse(v, "tcpdump -z", nil, nil, false)
		}
	case "curl", "wget", "aria2c", "lwp-download", "nscurl", "fetch":
		if c.name != "curl" || hasArgPrefix(c.args, "-o", "--output", "-O", "--remote-name") || flagSet(c.args, 'O') || flagSet(c.args, 'o') {
			if c.name != "wget" || !hasArg(c.args, "--spider") {
				w.recordDownload(c)
			}
		}
	case "psql", "mysql", "sqlite3", "clickhouse-client", "cockroach", "sqlcmd", "duckdb", "mongo", "redis-cli":
		// judged by the SQL rules, which read the statement and stdin
	default:
		// A file written or downloaded earlier in this script, now run.
		w.runFile(c, c.path, "run")
	}
}

func dyn(c *command, arg string) bool {
	for i, a := range c.args {
		if a == arg && i < len(c.argDyn) {
			return c.argDyn[i]
		}
	}
	return false
}

// argFlags is the union of the data flags of c's arguments.
func (c *command) argFlags() flow {
	var f flow
	for _, d := range c.argData {
		if d != nil {
			f |= d.flags
		}
	}
	return f
}

// flowExec judges code whose text arrives from a data flow (stdin, $(…)).
func (w *walker) flowExec(c *command, f flow, how string) {
	switch {
	case f&flowNetwork != 0:
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleRemoteCodeExec, Level: events.RiskHigh,
			Detail: how + " runs code fetched from the network", Span: c.span, Command: c.name})
	case f&(flowDecoded|flowUnknownXf) != 0:
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleDecodeExec, Level: events.RiskHigh,
			Detail: how + " runs code that is decoded or transformed at run time", Span: c.span, Command: c.name})
	}
}

// shell handles sh/bash/…: -c code, a script file, or code on stdin.
func (w *walker) shell(c *command) {
	var code string
	hasCode, noexec, readStdin := false, false, false
	script := ""
	var pos []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "--" {
			if i+1 < len(c.args) && !hasCode {
				script = c.args[i+1]
				pos = c.args[i+1:]
			}
			break
		}
		if (strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+")) && len(a) > 1 && !hasCode {
			if a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file" {
				i++
				continue
			}
			if strings.HasPrefix(a, "--") {
				continue
			}
			if strings.ContainsRune(a[1:], 'c') && a[0] == '-' {
				if i+1 < len(c.args) {
					code = c.args[i+1]
					hasCode = true
					w.flowExec(c, flowOf(c, i+1), c.name+" -c")
					pos = c.args[i+2:]
					i++
				}
				continue
			}
			if strings.ContainsRune(a[1:], 'n') && a[0] == '-' {
				noexec = true
			}
			if strings.ContainsRune(a[1:], 's') && a[0] == '-' {
				readStdin = true
			}
			continue
		}
		if hasCode {
			break
		}
		script = a
		pos = c.args[i:]
		break
	}
	if noexec {
		return
	}
	if hasCode {
		w.reparse(code, c.name+" -c", pos, c.stdin, false)
		return
	}
	if script != "" && !readStdin {
		w.runFile(c, script, c.name)
		return
	}
	if c.stdin != nil {
		w.stdinCode(c, "shell", c.name)
	}
}

func flowOf(c *command, i int) flow {
	if i < len(c.argData) && c.argData[i] != nil {
		return c.argData[i].flags
	}
	return 0
}

// stdinCode judges code piped into an interpreter.
func (w *walker) stdinCode(c *command, lang, how string) {
	in := c.stdin
	if in.has(flowNetwork) {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleRemoteCodeExec, Level: events.RiskHigh,
			Detail: "content fetched from the network is piped into " + how, Span: c.span, Command: c.name})
	} else if in.has(flowDecoded | flowUnknownXf) {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleDecodeExec, Level: events.RiskHigh,
			Detail: "decoded or transformed content is piped into " + how, Span: c.span, Command: c.name})
	} else if in.flags != 0 || in.text != "" {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: rulePipeToInterpreter, Level: events.RiskMedium,
			Detail: "generated content is piped into " + how, Span: c.span, Command: c.name})
	}
	if in.text != "" {
		if lang == "shell" {
			w.reparse(in.text, how+" <stdin>", nil, nil, false)
		} else {
			w.analyzeCode(lang, in.text, c, how+" <stdin>")
		}
	}
}

// runFile judges running a file the script wrote or downloaded.
func (w *walker) runFile(c *command, p, how string) {
	if p == "" {
		return
	}
	if strings.HasPrefix(p, "/dev/fd/") || p == "/dev/stdin" || p == "-" {
		d := c.stdin
		for _, ad := range c.argData {
			if ad != nil {
				d = ad
			}
		}
		if d != nil {
			saved := c.stdin
			c.stdin = d
			w.stdinCode(c, "shell", how)
			c.stdin = saved
		}
		return
	}
	key := w.normFile(p)
	if p != c.path {
		w.tempExec(c, p)
	}
	if w.dl[key] || w.dl[path.Base(key)] {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleDownloadExec, Level: events.RiskHigh,
			Detail: p + " was downloaded earlier in this command and is now run", Span: c.span, Command: c.name})
		return
	}
	if d, ok := w.files[key]; ok {
		if d.has(flowNetwork | flowDecoded | flowUnknownXf) {
			w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleWriteThenExec, Level: events.RiskHigh,
				Detail: p + " was written from downloaded or decoded content and is now run", Span: c.span, Command: c.name})
		}
		if d.text != "" {
			w.reparse(d.text, how+" "+p, nil, nil, false)
		}
	}
}

func (w *walker) sourceFile(c *command) {
	ops := operands(c.args)
	if len(ops) == 0 {
		if c.stdin != nil {
			// fish's `source` with no file reads the code from stdin
			w.stdinCode(c, "shell", c.name)
		}
		return
	}
	for i, a := range c.args {
		if a == ops[0] && i < len(c.argData) && c.argData[i] != nil {
			saved := c.stdin
			c.stdin = c.argData[i]
			w.stdinCode(c, "shell", c.name)
			c.stdin = saved
			return
		}
	}
	w.runFile(c, ops[0], c.name)
}

func (w *walker) interpreter(c *command) {
	it := interpreters[c.name]
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		for _, f := range it.flags {
			isFlag := a == f
			// perl -ne, -pe, -lane …: a cluster ending in e
			if !isFlag && len(f) == 2 && f[0] == '-' && len(a) > 2 && a[0] == '-' && a[1] != '-' && a[len(a)-1] == f[1] {
				isFlag = true
			}
			if isFlag && i+1 < len(c.args) {
				code := c.args[i+1]
				w.flowExec(c, flowOf(c, i+1), c.name+" "+a)
				if c.name == "osascript" {
					w.appleScript(code)
					if loginItemRe.MatchString(code) {
						// a login item starts the program at every login
						w.hit(c, ruleLaunchdPersistence, high, "osascript adds a login item, which starts a program at every login")
					}
				}
				w.analyzeCode(it.lang, code, c, c.name+" "+a)
				return
			}
		}
		if a == "-m" && c.name == "python" {
			return
		}
		if !strings.HasPrefix(a, "-") {
			w.runFile(c, a, c.name)
			return
		}
		if a == "-" {
			break
		}
	}
	if c.stdin != nil && c.name != "osascript" {
		w.stdinCode(c, it.lang, c.name)
	}
}

func (w *walker) awk(c *command) {
	prog := ""
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "-f" {
			return
		}
		if a == "-F" || a == "-v" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		prog = a
		break
	}
	if prog != "" {
		w.analyzeCode("awk", prog, c, "awk")
	}
}

var loginItemRe = core.LazyRE(`(?i)\bmake\s+(?:new\s+)?login\s+item\b`)

var doShellScript = core.LazyRE(`do shell script\s+"((?:[^"\\]|\\.)*)"`)

func (w *walker) appleScript(code string) {
	for _, m := range doShellScript.FindAllStringSubmatch(code, 8) {
		inner := strings.ReplaceAll(m[1], `\"`, `"`)
		inner = strings.ReplaceAll(inner, `\\`, `\`)
		sudo := strings.Contains(code[strings.Index(code, m[0]):], "administrator privileges")
		w.reparse(inner, "osascript do shell script", nil, nil, sudo)
	}
}

func (w *walker) vimEx(ex string) {
	ex = strings.TrimSpace(ex)
	ex = strings.TrimPrefix(ex, ":")
	ex = strings.TrimSpace(ex)
	switch {
	case strings.HasPrefix(ex, "!"):
		w.reparse(ex[1:], "vim :!", nil, nil, false)
	case strings.HasPrefix(ex, "sh") || strings.HasPrefix(ex, "terminal"):
		w.reparse("sh", "vim :"+ex, nil, nil, false)
	case strings.HasPrefix(ex, "py") || strings.HasPrefix(ex, "lua"):
		w.analyzeCode("python", ex, nil, "vim :"+ex)
	}
}

var makeShell = core.LazyRE(`\$\((?:shell|file)\s+([^)]*)\)`)

func (w *walker) makeCode(c *command) {
	for i, a := range c.args {
		v := ""
		if strings.HasPrefix(a, "--eval=") {
			v = a[7:]
		} else if a == "--eval" && i+1 < len(c.args) {
			v = c.args[i+1]
		}
		if v != "" {
			for _, m := range makeShell.FindAllStringSubmatch(v, 8) {
				if strings.HasPrefix(strings.TrimSpace(v[strings.Index(v, m[0])+2:]), "file") {
					spec := strings.TrimSpace(m[1])
					text := ""
					if i := strings.IndexByte(spec, ','); i >= 0 {
						spec, text = spec[:i], spec[i+1:]
					}
					w.reparse("echo "+Quote(text)+" "+spec, "make $(file)", nil, nil, false)
				} else {
					w.reparse(m[1], "make $(shell)", nil, nil, false)
				}
			}
		}
		if (a == "-f" || a == "--file") && i+1 < len(c.args) {
			var text string
			if c.args[i+1] == "/dev/stdin" || c.args[i+1] == "-" {
				if c.stdin != nil {
					text = c.stdin.text
				}
			} else if d, ok := w.files[w.normFile(c.args[i+1])]; ok {
				text = d.text
			}
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "\t") {
					w.reparse(strings.TrimLeft(strings.TrimSpace(line), "@-+"), "make recipe", nil, nil, false)
				}
			}
		}
	}
}

func (w *walker) percentParens(s, how string) {
	for {
		i := strings.Index(s, "%(")
		if i < 0 {
			return
		}
		j := strings.IndexByte(s[i:], ')')
		if j < 0 {
			return
		}
		w.reparse(s[i+2:i+j], how, nil, nil, false)
		s = s[i+j:]
	}
}

// cronContent judges a crontab being installed: each line's command part.
func (w *walker) cronContent(d *data, how string) {
	for _, line := range strings.Split(d.text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		n := 5
		if strings.HasPrefix(line, "@") {
			n = 1
		}
		if len(f) > n {
			w.reparse(strings.Join(f[n:], " "), how+" entry", nil, nil, false)
		}
	}
}

// ssh: the remote command is code; -o ProxyCommand runs locally.
func (w *walker) ssh(c *command) {
	const withArg = " -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B "
	i := 0
	for i < len(c.args) {
		a := c.args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			break
		}
		if a == "-o" && i+1 < len(c.args) {
			w.sshOption(c.args[i+1])
		} else if strings.HasPrefix(a, "-o") && len(a) > 2 {
			w.sshOption(a[2:])
		}
		if strings.Contains(withArg, " "+a+" ") {
			i += 2
			continue
		}
		i++
	}
	if i >= len(c.args) {
		return
	}
	host := c.args[i]
	w.hosts = append(w.hosts, hostOfSSH(host))
	if i+1 >= len(c.args) {
		return
	}
	w.reparseRemote(strings.Join(c.args[i+1:], " "), "ssh "+host, c.stdin)
}

// reparseRemote judges code another host runs (ssh's remote command, a
// fleet tool's): as a shell there would, in a container-like remote
// context.
func (w *walker) reparseRemote(code, how string, stdin *data) {
	savedC, savedR := w.container, w.remote
	w.container, w.remote = true, true
	w.reparse(code, how, nil, stdin, false)
	w.container, w.remote = savedC, savedR
}

func hostOfSSH(h string) string {
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		h = h[at+1:]
	}
	if colon := strings.IndexByte(h, ':'); colon >= 0 {
		h = h[:colon]
	}
	return h
}

func (w *walker) sshOption(opt string) {
	low := strings.ToLower(opt)
	for _, k := range []string{"proxycommand", "localcommand", "knownhostscommand"} {
		if strings.HasPrefix(low, k) {
			v := strings.TrimLeft(opt[len(k):], " =;")
			w.reparse(v, "ssh -o "+k, nil, nil, false)
		}
	}
}

// container_ handles docker/podman/kubectl exec and run.
func (w *walker) container_(c *command) {
	if len(c.args) == 0 {
		return
	}
	sub := c.args[0]
	args := c.args[1:]
	var withArg string
	var needTarget bool
	switch {
	case c.name == "docker" && (sub == "exec"):
		withArg = " -e --env --env-file -u --user -w --workdir --detach-keys "
		needTarget = true
	case c.name == "docker" && (sub == "run" || sub == "create"):
		withArg = " -v --volume -e --env --env-file -p --publish --name -w --workdir --network --net --entrypoint -u --user --mount -l --label --cpus -m --memory --platform --restart -h --hostname --add-host --device --cap-add --cap-drop --security-opt --pid --ipc --runtime --log-driver --log-opt --gpus --shm-size --ulimit --tmpfs --dns --link --volumes-from --cidfile --health-cmd --stop-signal --userns --uts --group-add --label-file -a --attach --expose --pull "
		needTarget = true
	case c.name == "docker" && sub == "container" && len(args) > 0 && args[0] == "exec":
		c2 := *c
		c2.args = args
		w.container_(&c2)
		return
	case (c.name == "kubectl" || c.name == "oc") && sub == "exec":
		withArg = " -c --container -n --namespace --context --kubeconfig -f --filename --cluster --user --pod-running-timeout "
		needTarget = true
	case (c.name == "kubectl" || c.name == "oc") && (sub == "run" || sub == "debug"):
		// kubectl run NAME --image=X -- cmd
		for i, a := range args {
			if a == "--" && i+1 < len(args) {
				w.runSynthetic(&command{via: []string{c.name + " " + sub}, container: true}, toFields(args[i+1:]), stmtCtx{})
			}
		}
		return
	case (c.name == "kubectl" || c.name == "oc"):
		for i, a := range c.args {
			if a == "exec" {
				c2 := *c
				c2.args = c.args[i:]
				if i > 0 {
					w.container_(&c2)
				}
				return
			}
		}
		return
	default:
		return
	}
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			break
		}
		if strings.Contains(a, "=") {
			i++
			continue
		}
		if strings.Contains(withArg, " "+a+" ") {
			i += 2
			continue
		}
		i++
	}
	if needTarget {
		i++ // container, image or pod
	}
	for i < len(args) && args[i] == "--" {
		i++
	}
	if i >= len(args) {
		return
	}
	base := &command{via: []string{c.name + " " + sub}, container: true, sudo: false}
	w.runSynthetic(base, toFields(args[i:]), stmtCtx{stdin: c.stdin})
}

func toFields(ss []string) []field {
	out := make([]field, len(ss))
	for i, s := range ss {
		out[i] = field{s: s}
	}
	return out
}

// findExec builds the commands find -exec would run, with {} standing for
// what find would pass (its roots, narrowed by -name).
func (w *walker) findExec(c *command) {
	roots, name := findRoots(c.args)
	item := roots[0]
	if name != "" {
		item = strings.TrimSuffix(roots[0], "/") + "/**/" + name
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a != "-exec" && a != "-execdir" && a != "-ok" && a != "-okdir" {
			continue
		}
		var sub, raw []string
		j := i + 1
		for ; j < len(c.args); j++ {
			if c.args[j] == ";" || c.args[j] == "+" || c.args[j] == `\;` {
				break
			}
			if strings.HasSuffix(c.args[j], ";") || strings.HasSuffix(c.args[j], "+") && strings.HasSuffix(c.args[j], "}+") {
				sub = append(sub, strings.ReplaceAll(strings.TrimRight(c.args[j], ";+"), "{}", item))
				break
			}
			sub = append(sub, strings.ReplaceAll(c.args[j], "{}", item))
			raw = append(raw, c.args[j])
		}
		i = j
		if templateInCode(raw, "{}") {
			w.templateExec(c, "find "+a, raw)
		}
		if len(sub) > 1 && !findFiltered(c.args) {
			switch CanonicalName(sub[0]) {
			case "rm", "unlink", "srm", "shred":
				// every file under the root, one by one: a recursive delete
				sub = append([]string{sub[0], "-r"}, sub[1:]...)
			}
		}
		if len(sub) > 0 {
			w.runSynthetic(&command{via: []string{"find " + a}, sudo: c.sudo}, toFields(sub), stmtCtx{})
		}
	}
}

// findRoots returns find's starting points and the first -name pattern.
func findRoots(args []string) ([]string, string) {
	var roots []string
	name := ""
	i := 0
	for i < len(args) && (args[i] == "-H" || args[i] == "-L" || args[i] == "-P" || strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == `\(` || a == `\!` {
			break
		}
		roots = append(roots, a)
	}
	for j := i; j < len(args)-1; j++ {
		if args[j] == "-name" || args[j] == "-iname" {
			name = args[j+1]
			break
		}
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	return roots, name
}

// gitCode handles git settings whose values are programs.
func (w *walker) gitCode(c *command) {
	w.gitExecPath(c)
	judge := func(k, v string) {
		w.gitExecConfig(c, k, v)
		if !gitKeyCmd(k) {
			return
		}
		if strings.HasPrefix(strings.ToLower(k), "alias.") {
			if !strings.HasPrefix(v, "!") {
				return
			}
			v = v[1:]
		}
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "credential.") && strings.HasSuffix(lk, ".helper") && !strings.HasPrefix(v, "!") {
			return
		}
		if lk := strings.ToLower(k); lk == "core.fsmonitor" && (strings.EqualFold(v, "true") || strings.EqualFold(v, "false")) {
			return // the built-in daemon, or off
		}
		var in *data
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "credential.") && strings.HasSuffix(lk, ".helper") {
			// git hands a credential helper the host, user and password on stdin
			in = &data{flags: flowSecret, paths: []string{"git credentials"}}
			if helperCaptureRe.MatchString(v) {
				w.hit(c, ruleCredentialExfiltration, high, "git "+k+" is a shell helper that copies the credentials git hands it to a file or the network")
			}
		}
		w.reparse(strings.TrimPrefix(v, "!"), "git "+k, nil, in, false)
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "-c" && i+1 < len(c.args) {
			kv := c.args[i+1]
			if eq := strings.IndexByte(kv, '='); eq > 0 {
				judge(kv[:eq], kv[eq+1:])
			}
			i++
			continue
		}
		if a == "config" {
			rest := operands(c.args[i+1:])
			if len(rest) >= 2 {
				judge(rest[0], rest[1])
			}
			return
		}
		if !strings.HasPrefix(a, "-") {
			return
		}
	}
}

// gitShellOptions runs what git subcommands take as shell code: rebase's
// -x/--exec (run after each commit), filter-branch's filters (evaluated
// for every commit), and bisect run's command.
func (w *walker) gitShellOptions(c *command) {
	sub := -1
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" {
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			sub = i
			break
		}
	}
	if sub < 0 {
		return
	}
	rest := c.args[sub+1:]
	switch c.args[sub] {
	case "rebase":
		for i, a := range rest {
			v, ok := "", false
			switch {
			case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
				if eq := strings.IndexByte(a, '='); longOpt(a[:eq], "--exec") {
					v, ok = a[eq+1:], true
				}
			case (a == "-x" || longOpt(a, "--exec")) && i+1 < len(rest):
				v, ok = rest[i+1], true
			case strings.HasPrefix(a, "-x") && len(a) > 2:
				v, ok = a[2:], true
			}
			if ok && v != "" {
				w.reparse(v, "git rebase --exec", nil, nil, false)
			}
		}
	case "filter-branch":
		for i, a := range rest {
			for _, f := range []string{"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter", "--setup"} {
				if a == f && i+1 < len(rest) {
					w.reparse(rest[i+1], "git filter-branch "+f, nil, nil, false)
				} else if v, ok := strings.CutPrefix(a, f+"="); ok {
					w.reparse(v, "git filter-branch "+f, nil, nil, false)
				}
			}
		}
	case "bisect":
		if len(rest) > 1 && rest[0] == "run" {
			w.runSynthetic(&command{via: []string{"git bisect run"}, sudo: c.sudo}, toFields(rest[1:]), stmtCtx{})
		}
	}
}

// fleetOptsWithArg are the options of pdsh, pssh and clush that take a
// value.
var fleetOptsWithArg = map[string]bool{"-w": true, "-x": true, "-g": true, "-X": true, "-l": true, "-R": true, "-f": true, "-t": true,
	"-u": true, "-h": true, "-H": true, "-p": true, "-o": true, "-e": true, "-O": true, "-P": true, "-N": true, "--hosts": true, "--group": true}

// remoteRunner judges the command a fleet tool runs on other hosts as
// ssh's remote command is judged: ansible's -a with the command, shell or
// raw module (command by default), salt's cmd.run/cmd.shell/cmd.script
// argument, and the command words of pdsh, pssh and clush.
func (w *walker) remoteRunner(c *command) {
	remote, how := "", c.name
	switch c.name {
	case "ansible":
		mod, _ := optValue(c.args, "-m", "--module-name")
		switch strings.TrimPrefix(mod, "ansible.builtin.") {
		case "", "command", "shell", "raw", "script":
		default:
			return
		}
		remote, _ = optValue(c.args, "-a", "--args")
		how = "ansible -a"
	case "salt":
		for i, a := range c.args {
			if (a == "cmd.run" || a == "cmd.shell" || a == "cmd.run_all" || a == "cmd.exec_code") && i+1 < len(c.args) {
				remote = strings.Join(c.args[i+1:], " ")
				how = "salt " + a
				break
			}
		}
	default:
		// pdsh/pssh/clush [options] COMMAND…: options with a value, then
		// the command words.
		i := 0
		for i < len(c.args) {
			a := c.args[i]
			if a == "--" {
				i++
				break
			}
			if !strings.HasPrefix(a, "-") || len(a) < 2 {
				break
			}
			if fleetOptsWithArg[a] {
				i++
			}
			i++
		}
		if i < len(c.args) {
			remote = strings.Join(c.args[i:], " ")
		}
	}
	if strings.TrimSpace(remote) == "" {
		return
	}
	w.reparseRemote(remote, how, c.stdin)
}

// tempExec flags running a program or script from a world-writable
// temporary directory (/tmp, /var/tmp, /dev/shm) whose content this command
// did not write: anyone on the machine may have put it there, and nothing
// says what it does. What the command wrote itself is judged by its content
// (runFile), what it downloaded is download-exec.
func (w *walker) tempExec(c *command, p string) {
	if !strings.Contains(p, "/") || dyn(c, p) && p != c.path {
		return
	}
	key := w.normFile(p)
	if classify(key, "", "") != pcTemp {
		return
	}
	if d, ok := w.files[key]; ok && d.text != "" || w.dl[key] || w.dl[path.Base(key)] {
		return
	}
	w.hit(c, ruleRunFromTemp, med, "runs "+key+" from a world-writable temporary directory; what it holds is unknown")
}

// RunsScript reports whether the program name runs the script its first
// operand names: a shell, an interpreter, source or ".".
func RunsScript(name string) bool {
	return shells[name] || interpreters[name].lang != "" || name == "source" || name == "."
}

// evalsLocalOutput reports whether every argument of eval c is the
// unknown output of a local command (a substitution that neither fetches
// nor decodes), so that re-parsing it finds nothing but an unresolved
// program.
func evalsLocalOutput(c *command) bool {
	if len(c.args) == 0 {
		return false
	}
	for i := range c.args {
		if i >= len(c.argDyn) || !c.argDyn[i] || i >= len(c.argData) || c.argData[i] == nil {
			return false
		}
		d := c.argData[i]
		if d.known || d.text != "" || d.flags&flowCmdOut == 0 || d.flags&^(flowCmdOut|flowStatic|flowFile|flowEnv) != 0 {
			return false
		}
	}
	return true
}

// consoleCode returns the code a framework's console or runner is given to
// run in the application (`rails runner CODE`, `gitlab-rails runner CODE`,
// `python manage.py shell -c CODE`, `php artisan tinker --execute=CODE`),
// with the application's database and credentials loaded.
func consoleCode(c *command) (lang, code string, ok bool) {
	ops := operands(c.args)
	switch {
	case (c.name == "rails" || c.name == "gitlab-rails" || c.name == "rake") && len(ops) >= 2 && (ops[0] == "runner" || ops[0] == "r"):
		return "ruby", ops[1], true
	case c.name == "python" || c.name == "python3":
		if len(ops) >= 2 && strings.HasSuffix(ops[0], "manage.py") && ops[1] == "shell" {
			if v, ok := optValue(c.args, "-c", "--command"); ok {
				return "python", v, true
			}
		}
	case c.name == "php":
		if len(ops) >= 2 && ops[0] == "artisan" && ops[1] == "tinker" {
			if v, ok := optValue(c.args, "", "--execute"); ok {
				return "php", v, true
			}
		}
	}
	return "", "", false
}

// helperCaptureRe finds, in a shell credential helper, a copy of its input
// to a file, another program over the network, or the clipboard.
var helperCaptureRe = core.LazyRE(`>>?\s*[^&\s|]|\btee\b|\bcurl\b|\bwget\b|\bnc\b|\bncat\b|\bsocat\b|/dev/tcp/|\bssh\b|\bscp\b|\bmail\b|\bpbcopy\b|\bxclip\b`)
