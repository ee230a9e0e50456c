package shell

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Self-protection: the rules that keep an agent from switching Vigil off
// or speaking for a person through its own tools. An agent on the same
// machine as Vigil can run Vigil's own person-side commands, read a
// person's credentials, edit the hook settings that make its client ask
// Vigil, or stop the node; each of these is HIGH under analyzer
// AnalyzerSelfProtect, and the gate treats every such finding as a rule no
// session, allowlist, sandbox or policy can lower (a person decides each
// one). Findings of this analyzer are kept when the config turns the
// built-in rules off.
//
// Paths are judged against what the hook that recorded the action knows
// about its own installation (data.hook.vigil: binary, data directory,
// credentials directories outside it, settings files, HTTP address, the
// node's pid; data.hook.home: the client's $HOME; data.cwd), and against the names every installation
// shares (DATA/creds/*.token, .claude/settings*.json, …). Those fields are
// the agent's claim like the rest of the action, so they only ever add
// paths to protect; the home is used only where it cannot move a system
// path into the user's.

// selfCtx is what the action's hook said about Vigil's installation, with
// every path in the form the walker compares (see norm).
type selfCtx struct {
	home     string // absolute, "" when unknown or unusable
	cwd      string
	binaries []string
	dataDirs []string
	credDirs []string // credentials directories outside the data directory
	settings []string
	apis     []string // host:port of Vigil's HTTP API
	pids     []string
}

// defaultAPIs are the HTTP API's default listen addresses.
var defaultAPIs = []string{"127.0.0.1:7411", "localhost:7411", "[::1]:7411", "0.0.0.0:7411"}

// newSelfCtx reads data.hook of ev (nil ev: names only).
func newSelfCtx(ev *events.Event) *selfCtx {
	sc := &selfCtx{apis: append([]string(nil), defaultAPIs...)}
	sc.dataDirs = []string{"~/.local/share/vigil"}
	sc.binaries = []string{"/usr/local/bin/vigil", "/usr/bin/vigil", "/bin/vigil", "/usr/local/sbin/vigil", "~/.local/bin/vigil", "~/go/bin/vigil", "~/bin/vigil"}
	if ev == nil {
		return sc
	}
	sc.cwd = ev.StringField("cwd")
	hook, _ := ev.Data["hook"].(map[string]any)
	if hook == nil {
		return sc
	}
	if h, ok := hook["home"].(string); ok && usableHome(h) {
		sc.home = path.Clean(h)
	}
	v, _ := hook["vigil"].(map[string]any)
	strs := func(x any) []string {
		switch y := x.(type) {
		case string:
			if y != "" {
				return []string{y}
			}
		case []any:
			var out []string
			for _, e := range y {
				if s, ok := e.(string); ok && s != "" && len(out) < 32 {
					out = append(out, s)
				}
			}
			return out
		}
		return nil
	}
	for _, b := range strs(v["binary"]) {
		sc.binaries = append(sc.binaries, sc.norm(b))
	}
	for _, d := range strs(v["data"]) {
		sc.dataDirs = append(sc.dataDirs, sc.norm(d))
	}
	for _, d := range strs(v["creds"]) {
		sc.credDirs = append(sc.credDirs, sc.norm(d))
	}
	for _, s := range strs(v["settings"]) {
		sc.settings = append(sc.settings, sc.norm(s))
	}
	for _, a := range strs(v["http"]) {
		sc.apis = append(sc.apis, strings.ToLower(a))
	}
	switch p := v["pid"].(type) {
	case int64:
		sc.pids = append(sc.pids, strconv.FormatInt(p, 10))
	case uint64:
		sc.pids = append(sc.pids, strconv.FormatUint(p, 10))
	case float64:
		sc.pids = append(sc.pids, strconv.FormatInt(int64(p), 10))
	case string:
		sc.pids = append(sc.pids, p)
	}
	return sc
}

// usableHome reports whether h may stand for "~": an absolute directory
// that is not /, a system directory or a device, so that mapping it to ~
// never makes a system path look like the user's.
func usableHome(h string) bool {
	if !strings.HasPrefix(h, "/") {
		return false
	}
	switch classify(path.Clean(h), "", "") {
	case pcOther, pcHomeData, pcHome, pcTemp:
		return path.Clean(h) != "/"
	}
	return false
}

// homeRel writes p under the home as ~/…; other paths are unchanged.
func homeRel(home, p string) string {
	if home == "" || !strings.HasPrefix(p, home) {
		return p
	}
	switch {
	case p == home:
		return "~"
	case p[len(home)] == '/':
		return "~" + p[len(home):]
	}
	return p
}

// norm resolves p against the action's cwd and writes it under ~ where
// it lies in the home.
func (sc *selfCtx) norm(p string) string {
	if p == "" {
		return p
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && sc.cwd != "" && strings.HasPrefix(sc.cwd, "/") {
		p = sc.cwd + "/" + p
	}
	p = cleanKeepGlob(p)
	return homeRel(sc.home, p)
}

// under reports whether p is d or lies below it.
func under(p, d string) bool {
	return d != "" && (p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/"))
}

// settingsNames are the hook settings files of every supported client, by
// the path's ending (project, user and system scope).
var settingsNames = []string{".claude/settings.json", ".claude/settings.local.json", "/etc/claude-code/managed-settings.json",
	"/etc/claude-code/managed-settings.d", "ClaudeCode/managed-settings.json", ".gemini/settings.json", "/etc/gemini-cli/settings.json",
	"/etc/gemini-cli/system-defaults.json", "GeminiCli/settings.json", ".cursor/hooks.json", "/etc/cursor/hooks.json",
	"Cursor/hooks.json", ".openhands/hooks.json"}

// settingsDirs are the directories that hold them.
var settingsDirs = []string{".claude", ".gemini", ".cursor", ".openhands", "/etc/claude-code", "/etc/gemini-cli", "/etc/cursor"}

// personCreds are the files of DATA/creds and DATA/audit that speak for a
// person or the node (the agent's own credential is not among them).
var personCreds = []string{"creds/approver.creds", "creds/admin.creds", "creds/runtime.creds", "creds/approver.token",
	"creds/admin.token", "creds/runtime.token", "creds/pairing.key", "audit/signer.key", "creds/operator.creds", "creds/sys.creds",
	"creds/approver.nk", "creds/admin.nk", "creds/runtime.nk", "creds/service.nk", "creds/fleet-ca.key"}

// credPath says whether p is (or holds) a credential of Vigil's that is not
// the agent's.
func (sc *selfCtx) credPath(p string) (string, bool) {
	l := strings.TrimSuffix(p, "/")
	for _, c := range personCreds {
		if strings.HasSuffix(l, "/"+c) || l == c {
			return c, true
		}
	}
	for _, d := range sc.dataDirs {
		for _, sub := range []string{"creds", "audit"} {
			dd := d + "/" + sub
			if under(l, dd) || l == d {
				if b := path.Base(l); under(l, dd) && (b == "agent.creds" || b == "agent.token") {
					continue
				}
				return sub + "/ of the data directory", true
			}
		}
	}
	for _, d := range sc.credDirs {
		if under(l, d) {
			if b := path.Base(l); l != d && (b == "agent.creds" || b == "agent.token") {
				continue
			}
			return "Vigil's credentials directory", true
		}
	}
	if strings.HasSuffix(l, "/creds") && strings.Contains(l, "vigil") {
		return "a Vigil creds directory", true
	}
	return "", false
}

// protectedPath says what of Vigil's p is when writing it would disarm
// Vigil: its binary, its data directory, or a client's hook settings
// (the files, their directories, and any directory holding the exact
// files the hook named).
func (sc *selfCtx) protectedPath(p string, destructive bool) (string, bool) {
	l := strings.TrimSuffix(p, "/")
	if l == "" {
		return "", false
	}
	for _, b := range sc.binaries {
		if l == b || destructive && under(b, l) && path.Dir(b) == l && !strings.HasPrefix(b, "/usr") && !strings.HasPrefix(b, "/bin") {
			return "Vigil's binary " + b, true
		}
	}
	for _, d := range sc.dataDirs {
		if under(l, d) || destructive && under(d, l) && l != "~" && l != "/" && path.Dir(d) == l {
			return "Vigil's data directory", true
		}
	}
	for _, d := range sc.credDirs {
		if under(l, d) || destructive && under(d, l) && l != "~" && l != "/" && path.Dir(d) == l {
			return "Vigil's credentials directory", true
		}
	}
	for _, s := range sc.settings {
		if l == s || destructive && under(s, l) && path.Dir(s) == l {
			return "the hook settings " + s, true
		}
	}
	for _, n := range settingsNames {
		if strings.HasSuffix(l, n) && (len(l) == len(n) || n[0] == '/' || l[len(l)-len(n)-1] == '/') || !strings.HasPrefix(n, ".") && strings.HasSuffix(l, "/"+n) {
			return "a client's hook settings (" + n + ")", true
		}
	}
	if destructive {
		for _, d := range settingsDirs {
			if l == d || strings.HasSuffix(l, "/"+strings.TrimPrefix(d, "/")) && (d[0] != '/' || l == d) {
				return "a client's settings directory (" + d + ")", true
			}
		}
	}
	return "", false
}

// ---- shell ------------------------------------------------------------------

// vigilGlobalValueFlags are vigil's persistent flags that take a value.
var vigilGlobalValueFlags = map[string]bool{"--data": true, "--nats": true, "--creds": true, "--log-level": true,
	"--token-file": true, "--url": true, "--pairing-key": true, "--conversation": true}

// personSubcommand returns the person-side subcommand that argv (a vigil
// command's arguments) runs, if any.
func personSubcommand(argv []string) (string, bool) {
	var words []string
	for i := 0; i < len(argv) && len(words) < 2; i++ {
		a := argv[i]
		if a == "--" {
			continue
		}
		if strings.HasPrefix(a, "-") {
			if !strings.Contains(a, "=") && vigilGlobalValueFlags[a] {
				i++
			}
			continue
		}
		words = append(words, strings.ToLower(a))
	}
	if len(words) == 0 {
		return "", false
	}
	s1 := ""
	if len(words) > 1 {
		s1 = words[1]
	}
	switch words[0] {
	case "approve", "deny", "allowlist", "token", "tokens", "creds":
		return words[0], true
	case "config":
		if s1 == "set" {
			return "config set", true
		}
	case "pairing":
		switch s1 {
		case "approve", "deny", "revoke", "clear-pending":
			return "pairing " + s1, true
		}
	case "audit":
		if s1 == "key" {
			return "audit key", true
		}
	case "hook":
		if s1 == "install" || s1 == "uninstall" {
			return "hook " + s1, true
		}
	}
	return "", false
}

// vigilArgv returns the arguments vigil gets when c runs Vigil: the vigil
// binary under any path or the hook's own name, or `go run` of Vigil's
// main package.
func (sc *selfCtx) vigilArgv(c *command) ([]string, bool) {
	if c.name == "vigil" {
		return c.args, true
	}
	p := sc.norm(c.path)
	for _, b := range sc.binaries {
		if p == b || c.name != "" && c.name == CanonicalName(path.Base(b)) {
			return c.args, true
		}
	}
	if c.name == "go" && len(c.args) > 1 && c.args[0] == "run" {
		for i := 1; i < len(c.args); i++ {
			a := c.args[i]
			if strings.HasPrefix(a, "-") {
				if a == "-tags" || a == "-C" || a == "-ldflags" || a == "-gcflags" || a == "-mod" || a == "-exec" || a == "-o" {
					i++
				}
				continue
			}
			pkg, _, _ := strings.Cut(a, "@")
			pkg = strings.TrimSuffix(path.Clean(pkg), "/main.go")
			if path.Base(pkg) == "vigil" || strings.HasSuffix(pkg, "cmd/vigil") {
				return c.args[i+1:], true
			}
			return nil, false
		}
	}
	return nil, false
}

// approvalGrammar reports whether argv reads like Vigil's approve or deny
// (a copy of the binary under another name): the subcommand then an id,
// with a --scope or a connection flag.
func approvalGrammar(argv []string) bool {
	ops := operands(argv)
	if len(ops) < 2 || ops[0] != "approve" && ops[0] != "deny" {
		return false
	}
	for _, a := range argv {
		f, _, _ := strings.Cut(a, "=")
		if f == "--scope" || f == "--data" || f == "--nats" || f == "--creds" {
			return true
		}
	}
	return false
}

// metaOnly commands look at a path without reading what it holds.
var metaOnly = core.LazySet("ls", "stat", "file", "du", "df", "test", "[", "[[", "realpath", "readlink", "basename", "dirname",
	"echo", "printf", "which", "type", "command", "whereis", "touch", "mkdir", "lsattr", "getfacl", "wc", "git", "man",
	"help", "true", "false", ":", "tree", "fd", "locate", "pwd", "cd", "pushd", "popd", "exa", "eza", "go", "make", "vigil")

// writesAll commands change every path they are given.
var writesAll = core.LazySet("rm", "rmdir", "unlink", "shred", "mv", "truncate", "chmod", "chown", "chgrp", "chattr", "setfacl",
	"tee", "sponge", "srm", "wipe", "mkfifo")

// writesLast commands write their last operand (the rest they read).
var writesLast = core.LazySet("cp", "install", "ln", "link", "rsync", "scp", "ditto", "cpio")

// destructiveCmds may take a whole directory with them.
var destructiveCmds = core.LazySet("rm", "rmdir", "shred", "mv", "chmod", "chown", "chgrp", "chattr", "setfacl", "srm", "wipe")

// selfProtect judges every command found against Vigil's installation.
func (w *walker) selfProtect() {
	sc := w.self
	if sc == nil {
		sc = newSelfCtx(nil)
	}
	for _, c := range w.cmds {
		if c.helpOnly {
			continue
		}
		w.selfCommand(sc, c)
		w.noteVigilCopy(sc, c)
	}
	w.selfCodeLits(sc)
}

// selfCodeLits judges the string literals of code the walk read: a path
// to a person's credential is read by the code (open, read_text,
// readFileSync … whatever the call), and a protected path in code that
// writes files is written. A credential's file name alone counts when the
// code also names the directory it lives in (os.path.join(d, "creds",
// "approver.token")).
func (w *walker) selfCodeLits(sc *selfCtx) {
	credDir := false
	for _, l := range w.codeLits {
		ll := strings.ToLower(l.s)
		if ll == "creds" || ll == "audit" || strings.Contains(ll, "vigil") {
			credDir = true
		}
	}
	seen := map[string]bool{}
	for _, l := range w.codeLits {
		if seen[l.s] || l.listOnly {
			// code that only lists names reads no credential
			continue
		}
		seen[l.s] = true
		hit := func(rule *SelfRule, detail string) {
			w.add(core.Finding{Analyzer: core.AnalyzerSelfProtect, Rule: rule, Level: events.RiskHigh, Span: l.span, Command: l.name,
				Detail: l.how + ": " + detail})
		}
		if credDir {
			for _, c := range personCreds {
				if l.s == path.Base(c) {
					hit(ruleSelfCreds, "names "+c+", a credential of Vigil's that speaks for a person")
				}
			}
		}
		for _, tok := range pathTokens(l.s) {
			p := sc.norm(w.homeRel(codePathString(tok)))
			if what, ok := sc.credPath(p); ok {
				hit(ruleSelfCreds, "opens "+what)
			} else if what, ok := sc.protectedPath(p, false); ok && l.writes {
				hit(ruleSelfTamper, "code that writes files names "+what)
			}
		}
	}
}

func (w *walker) selfHit(c *command, rule *SelfRule, detail string) {
	w.add(core.Finding{Analyzer: core.AnalyzerSelfProtect, Rule: rule, Level: events.RiskHigh, Detail: detail, Span: c.span, Command: c.name})
}

// noteVigilCopy records where c copies or links Vigil's binary (cp, ln,
// install, rsync … of a binary named vigil or the hook's): a command run
// from that path later in the same call is Vigil under another name.
func (w *walker) noteVigilCopy(sc *selfCtx, c *command) {
	if !writesLast()[c.name] {
		return
	}
	ops := operands(c.args)
	if len(ops) < 2 {
		return
	}
	for _, src := range ops[:len(ops)-1] {
		p := sc.norm(w.homeRel(resolvePath(src, c.cwd)))
		if path.Base(p) == "vigil" || slices.Contains(sc.binaries, p) {
			w.selfCopies = append(w.selfCopies, sc.norm(w.homeRel(resolvePath(ops[len(ops)-1], c.cwd))))
			return
		}
	}
}

// runsVigilCopy reports whether c runs a copy or link of Vigil's binary
// an earlier command of the walk made.
func (w *walker) runsVigilCopy(sc *selfCtx, c *command) bool {
	if len(w.selfCopies) == 0 || c.path == "" {
		return false
	}
	p := sc.norm(w.homeRel(resolvePath(c.path, c.cwd)))
	for _, d := range w.selfCopies {
		if p == d || path.Base(p) == "vigil" && strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

func (w *walker) selfCommand(sc *selfCtx, c *command) {
	argv, isVigil := sc.vigilArgv(c)
	if !isVigil && w.runsVigilCopy(sc, c) {
		argv, isVigil = c.args, true
	}
	if isVigil {
		if sub, ok := personSubcommand(argv); ok {
			w.selfHit(c, ruleSelfCommand, "runs Vigil's person-side command `"+sub+"`; only a person decides for a person")
		}
	} else if !mentionCmds()[c.name] && approvalGrammar(c.args) {
		w.selfHit(c, ruleSelfCommand, "runs "+core.TrimArg(c.path)+" with Vigil's approval grammar (a copy of the vigil binary?)")
	}
	// Redirections.
	for _, r := range c.redirs {
		if r.dyn || r.target == "" || isFD(r.target) {
			continue
		}
		p := sc.norm(w.homeRel(resolvePath(r.target, c.cwd)))
		switch {
		case r.isWrite():
			if what, ok := sc.protectedPath(p, false); ok {
				w.selfHit(c, ruleSelfTamper, "writes "+what+" with a redirection")
			}
		case r.isRead():
			if what, ok := sc.credPath(p); ok {
				w.selfHit(c, ruleSelfCreds, "reads "+what)
			}
		}
	}
	// Files written through options (curl -o, go build -o, gcc -o …).
	for _, t := range writeOptionTargets(c) {
		p := sc.norm(w.homeRel(resolvePath(t.path, c.cwd)))
		if what, ok := sc.protectedPath(p, false); ok {
			w.selfHit(c, ruleSelfTamper, c.name+" "+t.how+" writes "+what)
		}
	}
	w.selfStop(sc, c)
	w.selfAPI(sc, c, c.args)
	if c.name == "git" {
		w.selfGit(sc, c)
	}
	if metaOnly()[c.name] {
		return
	}
	// Path arguments: what the command does with each.
	ops := operands(c.args)
	var vals []string
	ddOut := ""
	for _, a := range c.args {
		if k, v, ok := strings.Cut(a, "="); ok && (strings.HasPrefix(k, "-") || k == "of" || k == "if") {
			vals = append(vals, v)
			if k == "of" {
				ddOut = v
			}
		}
	}
	inPlace := false
	if c.name == "sed" || c.name == "perl" || c.name == "ruby" {
		for _, a := range c.args {
			if strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "-pi") {
				inPlace = true
			}
		}
	}
	for i, a := range append(ops, vals...) {
		if a == "" {
			continue
		}
		p := sc.norm(w.homeRel(resolvePath(a, c.cwd)))
		write := writesAll()[c.name] || inPlace
		if writesLast()[c.name] && i == len(ops)-1 && len(ops) > 1 {
			write = true
		}
		if c.name == "dd" && i >= len(ops) && a == ddOut {
			write = true
		}
		if c.name == "find" && (slicesHas(c.args, "-delete")) {
			write = true
		}
		if write {
			if what, ok := sc.protectedPath(p, destructiveCmds()[c.name] || c.name == "find"); ok {
				w.selfHit(c, ruleSelfTamper, c.name+" changes "+what)
				continue
			}
		}
		if what, ok := sc.credPath(p); ok {
			verb := "reads"
			if c.name == "mv" || c.name == "rm" {
				verb = "moves or deletes"
			}
			w.selfHit(c, ruleSelfCreds, c.name+" "+verb+" "+what)
		}
	}
}

// gitValued are the options of git rm, mv, checkout and restore that take
// the next argument as their value (not a path).
var gitValued = core.LazySet("-b", "-B", "--orphan", "-s", "--source", "--pathspec-from-file", "--conflict", "-m")

// selfGit judges git subcommands that delete, move or put back files in
// the work tree (rm, mv, checkout and restore of paths) against Vigil's
// installation: `git rm .claude/settings.local.json` deletes the hook
// settings as surely as rm does. Index-only forms (rm --cached, restore
// --staged alone) change no file.
func (w *walker) selfGit(sc *selfCtx, c *command) {
	a, cwd := c.args, c.cwd
	i := 0
	for i < len(a) && strings.HasPrefix(a[i], "-") {
		switch {
		case a[i] == "-C" && i+1 < len(a):
			cwd = resolvePath(a[i+1], cwd)
			i += 2
		case a[i] == "-c" || a[i] == "--config-env" || a[i] == "--git-dir" || a[i] == "--work-tree" || a[i] == "--namespace":
			i += 2
		default:
			i++
		}
	}
	if i >= len(a) {
		return
	}
	sub, rest := a[i], a[i+1:]
	switch sub {
	case "rm":
		if slicesHas(rest, "--cached") {
			return
		}
	case "restore":
		if slicesHas(rest, "--staged") && !slicesHas(rest, "--worktree") && !slicesHas(rest, "-W") {
			return
		}
	case "mv", "checkout":
	default:
		return
	}
	for _, op := range operandsSkipping(rest, gitValued()) {
		p := sc.norm(w.homeRel(resolvePath(op, cwd)))
		if what, ok := sc.protectedPath(p, true); ok {
			w.selfHit(c, ruleSelfTamper, "git "+sub+" changes "+what)
			return
		}
	}
}

func slicesHas(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// homeRel maps a resolved path under the hook's home to ~.
func (w *walker) homeRel(p string) string {
	if w.self == nil {
		return p
	}
	return homeRel(w.self.home, p)
}

// serviceCmds manage services or containers by name.
var serviceCmds = core.LazySet("systemctl", "service", "launchctl", "rc-service", "sv", "initctl", "supervisorctl", "docker", "podman", "pm2")

// tracers attach to a running process.
var tracers = core.LazySet("gdb", "strace", "ltrace", "lldb", "perf", "gcore", "pstack", "eu-stack", "bpftrace", "ptrace", "pmap", "reptyr")

// mentionsVigil reports whether the whole action names Vigil's node.
func (w *walker) mentionsVigil(sc *selfCtx) bool {
	for _, c := range w.cmds {
		if c.name == "vigil" || c.name == "pgrep" && strings.Contains(strings.Join(c.args, " "), "vigil") {
			return true
		}
		for _, a := range c.args {
			if strings.Contains(a, "serve.json") || strings.Contains(a, "vigil") {
				return true
			}
		}
	}
	return false
}

var vigilServeLine = "vigil serve --data"

func (w *walker) selfStop(sc *selfCtx, c *command) {
	ops := operands(c.args)
	isPid := func(i int, a string) bool {
		for _, p := range sc.pids {
			if a == p || a == "-"+p {
				return true
			}
		}
		return i < len(c.argDyn) && c.argDyn[i] && w.mentionsVigil(sc)
	}
	switch {
	case c.name == "kill":
		for i, a := range c.args {
			if isPid(i, a) {
				w.selfHit(c, ruleSelfStop, "signals vigil serve (its pid)")
				return
			}
		}
	case c.name == "pkill" || c.name == "killall" || c.name == "skill" || c.name == "slay":
		for _, a := range ops {
			la := strings.ToLower(a)
			if strings.Contains(la, "vigil") {
				w.selfHit(c, ruleSelfStop, c.name+" signals vigil serve by name")
				return
			}
			if c.name == "pkill" && len(la) < 200 {
				if re, err := regexp.Compile(la); err == nil && re.MatchString(vigilServeLine) {
					w.selfHit(c, ruleSelfStop, "pkill's pattern "+core.TrimArg(a)+" matches vigil serve")
					return
				}
			}
		}
	case serviceCmds()[c.name]:
		stop := false
		for _, a := range ops {
			switch strings.ToLower(a) {
			case "stop", "kill", "disable", "mask", "restart", "reload", "unload", "bootout", "rm", "remove", "delete", "pause", "try-restart", "force-reload", "down", "exit":
				stop = true
			}
		}
		if stop {
			for _, a := range ops {
				if strings.Contains(strings.ToLower(a), "vigil") {
					w.selfHit(c, ruleSelfStop, c.name+" stops the vigil service")
					return
				}
			}
		}
	case tracers()[c.name]:
		attach := false
		for i, a := range c.args {
			if a == "-p" || a == "--pid" || a == "attach" || a == "--attach" || a == "-pid" {
				if i+1 < len(c.args) && isPid(i+1, c.args[i+1]) {
					attach = true
				}
			} else if strings.HasPrefix(a, "--pid=") || strings.HasPrefix(a, "-p") && len(a) > 2 {
				v := strings.TrimPrefix(strings.TrimPrefix(a, "--pid="), "-p")
				if isPid(i, v) {
					attach = true
				}
			}
		}
		if attach {
			w.selfHit(c, ruleSelfStop, c.name+" attaches to vigil serve")
		}
	}
}

// personRoutes are the HTTP API's routes that need a person's token.
var personRoutes = []string{"/v1/approvals", "/v1/pending", "/v1/allowlist", "/v1/config", "/v1/tokens", "/v1/stream",
	"/v1/conversations", "/v1/audit", "/v1/pairing", "/metrics", "/ui/session", "/ui/actions", "/ui/history"}

// apiURL reports whether s is a URL on Vigil's HTTP API that needs a
// person's token.
func (sc *selfCtx) apiURL(s string) (string, bool) {
	l := strings.ToLower(s)
	for {
		i := strings.Index(l, "://")
		if i < 0 {
			return "", false
		}
		rest := l[i+3:]
		l = rest
		hostport, p, _ := strings.Cut(rest, "/")
		hostport = strings.TrimSpace(hostport)
		for _, api := range sc.apis {
			if hostport != api {
				continue
			}
			p = "/" + p
			for _, r := range personRoutes {
				if strings.HasPrefix(p, r) {
					return r, true
				}
			}
		}
	}
}

func (w *walker) selfAPI(sc *selfCtx, c *command, args []string) {
	if mentionCmds()[c.name] && c.name != "curl" {
		return
	}
	for _, a := range args {
		if r, ok := sc.apiURL(a); ok {
			w.selfHit(c, ruleSelfCreds, c.name+" calls Vigil's "+r+", which only a person's token may")
			return
		}
	}
}

// ---- other tools ------------------------------------------------------------

// selfToolFindings judges a non-shell action's paths and URLs.
func selfToolFindings(sc *selfCtx, lt string, args map[string]any) []core.Finding {
	var out []core.Finding
	write := writeTools()[lt] || lt == "file_delete" || lt == "delete_file" || lt == "move_file" || lt == "rename_file"
	if strings.HasPrefix(lt, "mcp:") || strings.HasPrefix(lt, "mcp__") {
		name := lt[strings.LastIndexAny(lt, ":/_")+1:]
		for _, v := range []string{"write", "edit", "create", "move", "delete", "remove", "rename", "copy", "patch", "replace", "append", "chmod"} {
			if strings.Contains(lt, v) || strings.Contains(name, v) {
				write = true
			}
		}
	}
	var walk func(v any, depth int)
	seen := 0
	walk = func(v any, depth int) {
		if depth > 4 || seen > 64 {
			return
		}
		switch x := v.(type) {
		case string:
			seen++
			if len(x) > 4096 {
				return
			}
			if r, ok := sc.apiURL(x); ok {
				out = append(out, core.Finding{Analyzer: core.AnalyzerSelfProtect, Rule: ruleSelfCreds, Level: events.RiskHigh,
					Detail: "calls Vigil's " + r + ", which only a person's token may"})
				return
			}
			if !looksLikePath(x) || strings.ContainsAny(x, "\n") {
				return
			}
			p := sc.norm(x)
			if write {
				if what, ok := sc.protectedPath(p, lt == "file_delete" || lt == "delete_file" || lt == "move_file"); ok {
					out = append(out, core.Finding{Analyzer: core.AnalyzerSelfProtect, Rule: ruleSelfTamper, Level: events.RiskHigh, Detail: "writes " + what})
					return
				}
			}
			if what, ok := sc.credPath(p); ok {
				out = append(out, core.Finding{Analyzer: core.AnalyzerSelfProtect, Rule: ruleSelfCreds, Level: events.RiskHigh, Detail: "reads " + what})
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if k == "content" || k == "new_string" || k == "old_string" || k == "file_text" || k == "description" {
					continue
				}
				walk(x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(args, 0)
	return out
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// homeArgs returns args with path arguments under the hook's home written
// as ~/…, so that the files analyzer judges them as the user's.
func (sc *selfCtx) homeArgs(args map[string]any) map[string]any {
	if sc == nil || sc.home == "" {
		return args
	}
	var out map[string]any
	for _, k := range []string{"path", "file_path", "filename", "target_file", "file", "absolute_path", "notebook_path"} {
		s, ok := args[k].(string)
		if !ok {
			continue
		}
		if r := homeRel(sc.home, cleanKeepGlob(s)); r != s && strings.HasPrefix(s, "/") {
			if out == nil {
				out = make(map[string]any, len(args))
				for k2, v := range args {
					out[k2] = v
				}
			}
			out[k] = r
		}
	}
	if out == nil {
		return args
	}
	return out
}
