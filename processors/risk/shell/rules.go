package shell

import (
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

const (
	low  = events.RiskLow
	med  = events.RiskMedium
	high = events.RiskHigh
)

// hit reports rule on command c, under the analyzer its declaration
// names.
func (w *walker) hit(c *command, rule *ShellRule, level events.Risk, detail string) {
	w.add(core.Finding{Analyzer: rule.Analyzer, Rule: rule, Level: level, Detail: detail, Span: c.span, Command: c.name})
}

// mention commands only print or search text: what their arguments say is
// not what they do.
var mentionCmds = core.LazySet("echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "man", "help", "whatis", "apropos",
	"tldr", "info", "type", "which", "whereis", "command", "hash", "history", "true", "false", ":", "test", "[", "[[",
	"print", "say", "cowsay", "figlet", "git-commit", "shellcheck", "bash-n", "ls", "stat", "file", "readlink", "realpath",
	"basename", "dirname", "du", "df", "wc", "md5sum", "sha1sum", "sha256sum", "sha512sum", "shasum", "cksum", "b2sum",
	"touch", "mkdir", "getfacl", "lsattr", "locate", "mlocate", "fd", "tree", "exa", "eza", "lsof", "fuser", "ssh-keygen",
	"ssh-add", "ssh-copy-id", "test", "jq", "yq", "diff", "cmp", "comm", "sort", "uniq", "nl", "column", "cut", "fold", "tr")

// readers read the contents of the files they are given.
var readers = core.LazySet("cat", "tac", "less", "more", "head", "tail", "nl", "cp", "scp", "rsync", "tar", "zip", "7z", "ditto",
	"base64", "base32", "xxd", "od", "hexdump", "strings", "sqlite3", "openssl", "gpg", "curl", "wget", "nc", "lp", "lpr",
	"restic", "ab", "smbclient", "ftp", "lftp", "mail", "mutt", "sendmail", "vim", "vi", "nano", "emacs", "code", "python",
	"node", "perl", "ruby", "awk", "sed", "source", ".", "mv", "bat", "view", "dd", "split", "cpio", "pax", "rclone", "aws",
	"gsutil", "az", "s3cmd", "socat", "telnet", "getent", "grep", "egrep", "fgrep", "rg", "ag", "pr", "fmt", "iconv")

// passThrough programs only move or reshape their input.
var passThrough = core.LazySet("cat", "tee", "sort", "uniq", "head", "tail", "sed", "awk", "tr", "base64", "xxd", "grep", "egrep", "fgrep", "wc", "less", "more", "xargs", "cut", "rev", "tac", "gzip", "jq", "column", "fold", "nl", "od", "hexdump", "strings", "iconv", "dos2unix")

var shellPathRe = core.LazyRE(`(?:^|[^\w./-])(?:/usr)?(?:/local)?/bin/(?:ba|da|z|k|c|tc|mk|a|fi|y)?sh\b|/usr/bin/env\s+(?:ba|z)?sh\b`)

var metadataHosts = []string{"169.254.169.254", "metadata.google.internal", "100.100.100.200", "fd00:ec2::254", "169.254.170.2", "metadata.azure.com"}

var urlRe = core.LazyRE(`(?i)\b(?:https?|ftp|ftps|gopher|tftp|ws|wss|sftp|scp|dict|telnet|ldap|smb)://([^/\s:'"?#]+)`)

// offensive tools: running them is the point of an attack.
var offensiveTools = []string{"mimikatz", "mimipenguin", "lazagne", "linpeas", "winpeas", "linenum", "linux-exploit-suggester",
	"psexec", "wmiexec", "smbexec", "atexec", "dcomexec", "secretsdump", "crackmapexec", "netexec", "evil-winrm", "responder",
	"bloodhound", "sharphound", "rubeus", "kerbrute", "chisel", "ligolo", "sliver", "msfconsole", "msfvenom", "meterpreter",
	"xmrig", "minerd", "cpuminer", "hydra", "keylogger", "logkeys", "pupy", "impacket", "pwncat", "gsocket", "ngrok-stealer"}

// securityServices are defences whose stopping is itself an attack step.
var securityServices = []string{"firewall", "ufw", "iptables", "nftables", "ip6tables", "apparmor", "selinux", "auditd", "audit",
	"rsyslog", "syslog", "journald", "falcon", "crowdstrike", "carbonblack", "cbagent", "cbdaemon", "sentinel", "osquery",
	"wazuh", "ossec", "clamav", "clamd", "freshclam", "sophos", "eset", "mdatp", "wdav", "littlesnitch", "lulu", "elastic-agent",
	"filebeat", "auditbeat", "packetbeat", "fluentd", "td-agent", "splunk", "datadog", "sysmon", "falco", "tripwire", "aide",
	"fail2ban", "snort", "suricata", "zeek", "cylance", "tanium", "xagt", "qualys", "rapid7", "ir_agent", "pf", "santa", "xprotect"}

func isSecurityService(s string) bool {
	l := strings.ToLower(s)
	l = strings.TrimSuffix(l, ".service")
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		l = l[i+1:]
	}
	for _, n := range securityServices {
		if n == "pf" || n == "audit" || n == "aide" || n == "eset" {
			if l == n || strings.HasPrefix(l, n+".") || l == n+"d" {
				return true
			}
			continue
		}
		if strings.Contains(l, n) {
			return true
		}
	}
	return false
}

// judgeAll applies the command rules to every command found, then the rules
// that look at the script as a whole.
func (w *walker) judgeAll() {
	for i := 0; i < len(w.cmds); i++ {
		w.judge(w.cmds[i])
	}
	w.scriptRules()
}

func (w *walker) judge(c *command) {
	w.judgeRedirs(c)
	for _, a := range c.args {
		for _, h := range metadataHosts {
			if strings.Contains(a, h) {
				w.hit(c, ruleCloudMetadata, high, "contacts the cloud metadata service ("+h+"), which hands out instance credentials")
			}
		}
		for _, m := range urlRe.FindAllStringSubmatch(a, 4) {
			w.hosts = append(w.hosts, strings.ToLower(m[1]))
			if mh, ok := metadataAddr(m[1]); ok && !strings.Contains(a, mh) {
				w.hit(c, ruleCloudMetadata, high, "contacts the cloud metadata service ("+m[1]+" is "+mh+"), which hands out instance credentials")
			}
		}
	}
	if c.helpOnly {
		return
	}
	w.wideCommand(c)
	if c.sudo && c.name != "" && c.name != "sudo" {
		// An agent that runs a program as root (or as another user) has
		// left the account every other rule assumes it is confined to:
		// whatever the program does, it can now change the system. Root
		// inside a container is the container's, not the host's.
		if c.container && !c.remote {
			w.hit(c, ruleSudo, med, "runs with root privileges inside a container")
		} else if c.sudoUser != "" && !shells[c.name] && !c.sudoPass {
			// another account's powers, not root's: what the program does
			// with them is judged by the rules on what it runs
			w.hit(c, ruleSudo, med, "runs "+c.name+" as the user "+c.sudoUser+" (through "+viaOf(c)+"), not as root")
		} else if sudoReadOnly(c) {
			// root's reach without root's power to change anything: what it
			// reads is judged by the read rules (/etc/shadow is HIGH)
			w.hit(c, ruleSudo, med, "runs the read-only program "+c.name+" as root (through "+viaOf(c)+")")
		} else {
			w.hit(c, ruleSudo, high, "runs with root privileges (privilege escalation through "+viaOf(c)+")")
		}
	}
	w.offensive(c)
	if c.win {
		w.windowsRules(c)
		return
	}
	w.shellEscape(c)
	w.credentialArgs(c)
	w.commandRules(c)
	w.writeFlags(c)
	w.openWorld(c)
	w.grants(c)
	w.unreviewedApply(c)
	if c.name == "" && c.inPipe && c.pipeOut {
		// an unresolved program in the middle of a pipeline: judged by what it feeds
		return
	}
}

// judgeRedirs judges file writes and reads made with redirections.
func (w *walker) judgeRedirs(c *command) {
	for _, r := range c.redirs {
		if r.isRead() {
			w.judgeRead(c, r.target, "reads")
			if strings.HasPrefix(r.target, "/dev/tcp/") || strings.HasPrefix(r.target, "/dev/udp/") {
				w.netSocket(c, r)
			}
			continue
		}
		if r.isWrite() && r.dyn && pyStartupHook(r.target) {
			// `> "$(python3 -m site --user-site)/x.pth"`: the directory is
			// computed, the file's kind is not
			content := c.written
			if content == nil {
				content = c.out
			}
			if content != nil && pyHookRunsRe.MatchString(content.text) {
				w.hit(c, ruleInterpreterHookPersistence, high, "redirect to "+r.target+": code that runs programs or fetches from the network at every Python start")
			} else {
				w.hit(c, ruleInterpreterHookPersistence, med, "redirect to "+r.target+": code that runs at every Python start")
			}
			continue
		}
		if !r.isWrite() || r.dyn {
			continue
		}
		t := r.target
		if strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/") {
			w.netSocket(c, r)
			continue
		}
		content := c.written
		if content == nil {
			content = c.out
		}
		w.judgeWrite(c, t, r.op == ">>" || r.op == "&>>", content, "redirect")
	}
}

func (w *walker) netSocket(c *command, r redir) {
	parts := strings.Split(strings.TrimPrefix(strings.TrimPrefix(r.target, "/dev/tcp/"), "/dev/udp/"), "/")
	if len(parts) > 0 {
		w.hosts = append(w.hosts, parts[0])
	}
	switch {
	case shells[c.name] || c.name == "exec" && false:
		w.hit(c, ruleReverseShell, high, "connects a shell's input and output to "+r.target)
	case c.written.has(flowFile|flowSecret|flowEnv|flowArchive) || c.out.has(flowFile|flowSecret|flowEnv|flowArchive) || c.argFlags()&(flowFile|flowSecret|flowEnv) != 0:
		w.hit(c, ruleNetworkExfiltration, high, "sends file or environment contents to "+r.target)
	default:
		w.hit(c, ruleRawSocket, med, "opens a raw network connection to "+r.target)
	}
}

// judgeRead judges reading a file's contents.
func (w *walker) judgeRead(c *command, p, verb string) {
	if p == "" || strings.HasPrefix(p, "/dev/") {
		return
	}
	rp := resolvePath(p, c.cwd)
	if k := credentialKind(rp); k != "" {
		w.hit(c, ruleCredentialRead, high, verb+" "+p+" ("+k+")")
		return
	}
	if k := secretFileKind(rp); k != "" {
		lvl := med
		if k == "key file" && classify(p, c.cwd, w.env.Workspace) != pcWorkspace {
			lvl = high
		}
		w.hit(c, RuleSecretFileRead, lvl, verb+" "+p+" ("+k+")")
		return
	}
	if historyFile(rp) {
		w.hit(c, ruleHistoryRead, med, verb+" "+p+", which often holds typed secrets")
	}
}

// judgeWrite judges writing content to path p.
func (w *walker) judgeWrite(c *command, p string, appendMode bool, content *data, how string) {
	if p == "" {
		return
	}
	rp := resolvePath(p, c.cwd)
	cls := classify(p, c.cwd, w.env.Workspace)
	if cls == pcNull {
		return
	}
	if cls == pcDevice {
		w.hit(c, ruleDiskOverwrite, high, "writes directly to the device "+rp)
		return
	}
	if rule, why := sensitiveTarget(rp); rule != nil {
		lvl := high
		switch {
		case rule == ruleKernelTunableWrite && !strings.Contains(rp, "randomize_va_space") && !strings.Contains(rp, "sysrq") && !strings.Contains(rp, "kptr") && !strings.Contains(rp, "yama") && !strings.Contains(rp, "modules") && !strings.Contains(rp, "suid_dumpable") && !strings.Contains(rp, "dmesg"):
			lvl = med
		}
		w.hit(c, rule, lvl, how+" to "+rp+": "+why)
		if content != nil && content.text != "" && (rule == ruleCronPersistence || rule == ruleSystemProfileWrite || rule == ruleServicePersistence) {
			w.reparse(content.text, "content of "+rp, nil, nil, false)
		}
		return
	}
	if strings.HasPrefix(rp, "/proc/sys/") {
		w.hit(c, ruleKernelTunableWrite, med, how+" to "+rp+": changes a kernel setting")
		return
	}
	switch agentConfigKind(rp) {
	case "settings":
		w.hit(c, ruleAgentConfigWrite, high, how+" to "+rp+": changes a coding agent's settings (what it may do without asking, its hooks, MCP servers or keys) for every later session")
		return
	case "instructions":
		w.hit(c, ruleAgentInstructionsWrite, med, how+" to "+rp+": changes the instructions every later agent session follows")
		return
	}
	if k := credentialKind(rp); k != "" {
		if appendMode {
			w.hit(c, ruleCredentialWrite, med, how+" appends to "+rp+" ("+k+")")
		} else {
			w.hit(c, ruleCredentialOverwrite, high, how+" overwrites "+rp+" ("+k+"): the credential is lost or replaced")
		}
		return
	}
	if secretFileKind(rp) == ".env file" {
		w.hit(c, ruleEnvFileWrite, med, how+" to "+rp+": a secrets file programs load as their configuration")
		return
	}
	if historyFile(rp) {
		if !appendMode {
			w.hit(c, ruleHistoryTampering, high, how+" overwrites "+rp+", erasing command history")
		}
		return
	}
	if rcFile(rp) {
		switch {
		case cls == pcTemp:
			return // nobody's start-up file
		case strings.HasPrefix(rp, "/") && (cls == pcHome || cls == pcHomeData) || strings.HasPrefix(rp, "~") && !strings.HasPrefix(rp, "~/"):
			w.hit(c, ruleRcPersistence, high, how+" to "+rp+": runs code in another user's shell")
		case content.has(flowNetwork | flowDecoded):
			w.hit(c, ruleRcPersistence, high, how+" to "+rp+": downloaded or decoded code runs at every new shell")
		default:
			w.hit(c, ruleShellRcWrite, med, how+" to "+rp+": runs at every new shell")
		}
		if content != nil && content.text != "" {
			w.reparse(content.text, "content of "+rp, nil, nil, false)
		}
		return
	}
	switch cls {
	case pcLog:
		if appendMode {
			w.hit(c, ruleLogWrite, med, how+" appends to the log "+rp)
		} else {
			w.hit(c, ruleLogTampering, high, how+" overwrites the log "+rp)
		}
	case pcSystem, pcRoot:
		w.hit(c, ruleSystemWrite, med, how+" to the system path "+rp)
	case pcHome, pcHomeData:
		base := rp[strings.LastIndexByte(rp, '/')+1:]
		if strings.Contains(rp, "/.ssh/") {
			w.hit(c, ruleSshConfigWrite, med, how+" to "+rp)
		} else if strings.HasPrefix(base, ".") || strings.Contains(rp, "/.config/") || strings.Contains(rp, "/.local/") {
			if fetchesAndRuns(content) {
				// an editor's or a tool's start-up file (~/.vimrc, ~/.gitconfig …)
				// told to download and run code each time the program starts
				w.hit(c, ruleRcPersistence, high, how+" to "+rp+": downloaded code runs each time the program that reads it starts")
			} else {
				w.hit(c, ruleDotfileWrite, med, how+" to the configuration file "+rp)
			}
		}
	case pcWorkspace:
		if strings.Contains(rp, ".git/hooks/") {
			if content.has(flowNetwork|flowDecoded) || fetchesAndRuns(content) {
				w.hit(c, ruleGitHookWrite, high, how+" to "+rp+": downloaded or decoded code runs on every git operation")
			} else {
				w.hit(c, ruleGitHookWrite, med, how+" to "+rp+": runs on every git operation")
			}
			if content != nil && content.text != "" {
				w.reparse(content.text, "content of "+rp, nil, nil, false)
			}
		}
	}
	if kind := ExecConfigKind(rp); kind != "" && kind != "rc" && kind != "hook" && cls != pcTemp && content != nil && content.text != "" && w.depth < maxDepth && !w.fileTool {
		// a file a tool runs or takes what to run from (.envrc, a Makefile,
		// package.json, .git/config, a CI workflow): written by the shell,
		// its content is judged as a file-write action's is
		fs, _ := (&Analyzer{parsers: w.parsers}).execConfigFindings(rp, content.text, w.env, how)
		for _, f := range fs {
			if f.Span == [2]int{} {
				f.Span = c.span
			}
			if f.Command == "" {
				f.Command = c.name
			}
			w.add(f)
		}
	}
	if pyStartupHook(rp) {
		if content != nil && pyHookRunsRe.MatchString(content.text) {
			w.hit(c, ruleInterpreterHookPersistence, high, how+" to "+rp+": code that runs programs or fetches from the network at every Python start")
		} else {
			w.hit(c, ruleInterpreterHookPersistence, med, how+" to "+rp+": code that runs at every Python start")
		}
	}
}

// fetchRunRe finds, in text written to a start-up file, a download piped
// or handed to an interpreter (`curl -s URL | sh`, `wget -qO- URL | bash`,
// `iex (iwr URL)`, `source <(curl …)`).
var fetchRunRe = core.LazyRE(`(?i)(?:curl|wget|fetch|iwr|invoke-webrequest|irm|invoke-restmethod)\b[^\n|;]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|(?:curl|wget)\b[^\n|;]*\|\s*(?:source|python3?|perl|ruby|node|iex)\b|\biex\s*\(?\s*(?:\(|\$\()?\s*(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object\s+net\.webclient)|(?:source|\.)\s+<\(\s*(?:curl|wget)`)

// fetchesAndRuns reports whether written content downloads code and runs it.
func fetchesAndRuns(d *data) bool {
	return d != nil && d.text != "" && fetchRunRe.MatchString(d.text)
}

// pyHookRunsRe finds, in a .pth file or sitecustomize, code that runs
// programs or reaches the network.
var pyHookRunsRe = core.LazyRE(`\bimport\b[^\n]*(?:os\.system|subprocess|urllib|requests|socket|exec\(|eval\(|__import__|base64)|os\.system|subprocess|exec\(|urlopen`)

// pyStartupHook reports whether path p is a file Python runs at every
// start: a .pth file (its import lines run), sitecustomize.py or
// usercustomize.py.
func pyStartupHook(p string) bool {
	base := p[strings.LastIndexByte(p, '/')+1:]
	return strings.HasSuffix(base, ".pth") && !strings.HasSuffix(base, ".pth.bak") ||
		(base == "sitecustomize.py" || base == "usercustomize.py") && (strings.Contains(p, "site-packages") || strings.Contains(p, "dist-packages") || strings.Contains(p, "$") || strings.Contains(p, "python"))
}

// offensive flags well-known attack tools by name.
func (w *walker) offensive(c *command) {
	cands := []string{c.path}
	if shells[c.name] || c.name == "python" || c.name == "perl" || c.name == "ruby" || c.name == "sh" {
		for _, a := range c.args {
			if !strings.HasPrefix(a, "-") {
				cands = append(cands, a)
				break
			}
		}
	}
	for _, s := range cands {
		l := strings.ToLower(s)
		if i := strings.LastIndexByte(l, '/'); i >= 0 {
			l = l[i+1:]
		}
		for _, t := range offensiveTools {
			if strings.Contains(l, t) {
				w.hit(c, ruleOffensiveTool, high, "runs "+t+", an attack tool")
				return
			}
		}
	}
}

// shellEscape: a program that is not a shell, handed a shell to start.
func (w *walker) shellEscape(c *command) {
	if shells[c.name] || mentionCmds()[c.name] || c.container || c.name == "" {
		return
	}
	if c.sudo && (c.name == "screen" || c.name == "tmux" || c.name == "byobu") && len(operands(c.args)) == 0 {
		w.hit(c, ruleRootShell, high, "opens a root shell through "+c.name)
		return
	}
	if c.stdin != nil && c.stdin.text != "" && shellPathRe.MatchString(c.stdin.text) && !passThrough()[c.name] && !readers()[c.name] {
		w.hit(c, ruleShellEscape, high, c.name+" is fed input that starts a shell")
		return
	}
	switch c.name {
	case "chmod", "chown", "chgrp", "chattr", "setfacl", "rm", "mv", "touch", "du", "diff", "cmp", "chsh", "useradd", "adduser", "usermod", "ln", "cp", "install", "docker", "kubectl", "ssh", "env", "cat", "ls", "file",
		"readlink", "which", "stat", "grep", "sed", "script", "tmux", "screen", "git", "tar", "rsync", "scp", "find", "xargs", "sudo", "su", "sg", "systemd-run", "watch", "chroot", "nsenter", "firejail":
		return
	}
	for i, a := range c.args {
		if shellPathRe.MatchString(a) {
			lvl := high
			w.hit(c, ruleShellEscape, lvl, c.name+" is made to start a shell ("+core.TrimArg(c.args[i])+")")
			return
		}
	}
	if c.sudo && (c.name == "screen" || c.name == "tmux" || c.name == "byobu") && len(operands(c.args)) == 0 {
		w.hit(c, ruleRootShell, high, "opens a root shell through "+c.name)
	}
}

// sudoReadOnlyCmds print what they read and change nothing, have no
// option that runs a program, and start no pager or editor (less, man, vim
// and git log open a shell as root with a keystroke).
var sudoReadOnlyCmds = core.LazySet("ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "id", "whoami", "pwd",
	"uname", "stat", "file", "du", "df", "tree", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum",
	"cksum", "ps", "free", "uptime", "nproc", "lscpu", "lsblk", "lsof", "ss", "netstat", "dmesg", "tac", "nl",
	"strings", "od", "hexdump", "readlink", "realpath", "ls", "getfacl", "lsattr", "blkid", "lsmod", "lspci", "lsusb",
	"ip", "true", "groups", "test", "[", "printenv", "sort", "uniq", "cut", "jq", "find", "systemctl", "journalctl",
	"docker", "podman", "kubectl", "oc", "apt", "apt-cache", "dpkg", "rpm", "iptables", "ip6tables", "nft", "ufw", "fdisk",
	"lshw", "dmidecode", "smartctl", "crontab", "lsns", "findmnt", "mount", "getent", "last", "lastlog", "who", "w")

// sudoReadOnlySubs are the subcommands (or query options) with which a
// program of sudoReadOnlyCmds that can also change things only reads.
var sudoReadOnlySubs = map[string][]string{
	"docker":    {"ps", "logs", "images", "inspect", "info", "version", "stats", "top", "port", "diff", "history", "events", "image ls", "container ls", "volume ls", "network ls", "system df", "compose ps", "compose logs", "compose config", "compose ls", "compose images", "compose top"},
	"podman":    {"ps", "logs", "images", "inspect", "info", "version", "stats", "top", "port", "diff", "history", "events"},
	"kubectl":   {"get", "describe", "logs", "top", "version", "api-resources", "api-versions", "explain", "auth"},
	"oc":        {"get", "describe", "logs", "top", "version", "api-resources", "explain", "whoami", "status"},
	"apt":       {"list", "show", "search", "policy"},
	"apt-cache": {"policy", "show", "search", "depends", "rdepends", "showpkg", "madison"},
	"ufw":       {"status"},
	"nft":       {"list"},
}

// sudoReadOnly reports whether c, run as root, only reads: a program of
// sudoReadOnlyCmds with every argument resolved, no option that runs or
// writes (find -exec, sort -o, ip … add, dmesg -c), and no root shell
// around it.
func sudoReadOnly(c *command) bool {
	if c.sudoPass || c.stdin != nil && !c.inPipe || c.dynName || c.glob || c.remote || c.win {
		return false
	}
	for _, d := range c.argDyn {
		if d {
			return false
		}
	}
	if !sudoReadOnlyCmds()[c.name] {
		return readOnlyInvocation(c)
	}
	a := c.args
	switch c.name {
	case "find":
		for _, x := range a {
			switch x {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			}
		}
	case "sort":
		if _, ok := optValue(a, "-o", "--output"); ok || hasArg(a, "--compress-program") {
			return false
		}
	case "ip":
		ops := operands(a)
		return len(ops) >= 1 && (len(ops) == 1 || ops[len(ops)-1] == "show" || ops[1] == "show" || ops[1] == "list")
	case "dmesg":
		return !flagSet(a, 'c', "--clear", "--read-clear") && !flagSet(a, 'C', "--console-off", "--console-on", "--console-level") && !flagSet(a, 'n', "--console-level") && !flagSet(a, 'D', "--console-off") && !flagSet(a, 'E', "--console-on")
	case "ss", "netstat":
		return !flagSet(a, 'K', "--kill")
	case "docker", "podman", "kubectl", "oc", "apt", "apt-cache", "ufw", "nft":
		ops := operands(a)
		if len(ops) == 0 || hasArgPrefix(a, "--output-directory") {
			return false
		}
		sub := ops[0]
		if len(ops) > 1 {
			sub2 := ops[0] + " " + ops[1]
			for _, s := range sudoReadOnlySubs[c.name] {
				if s == sub2 {
					return true
				}
			}
		}
		for _, s := range sudoReadOnlySubs[c.name] {
			if s == sub && !strings.Contains(s, " ") {
				return true
			}
		}
		return false
	case "dpkg", "rpm":
		// queries only: -l, -L, -s, -S, -q…
		for _, x := range a {
			if strings.HasPrefix(x, "-") && !strings.HasPrefix(x, "--") && len(x) >= 2 && !strings.ContainsAny(x[1:2], "lLsSqp") {
				return false
			}
			if strings.HasPrefix(x, "--") && x != "--list" && x != "--listfiles" && x != "--status" && x != "--search" && x != "--query" && x != "--get-selections" {
				return false
			}
		}
		return len(a) > 0 && strings.HasPrefix(a[0], "-")
	case "iptables", "ip6tables":
		for _, x := range a {
			if x == "-L" || x == "--list" || x == "-S" || x == "--list-rules" || x == "-nL" || x == "-vnL" || x == "-nvL" || x == "-Ln" {
				continue
			}
			if x == "-n" || x == "-v" || x == "--line-numbers" || x == "-t" || x == "nat" || x == "filter" || x == "mangle" || x == "raw" || x == "INPUT" || x == "OUTPUT" || x == "FORWARD" {
				continue
			}
			return false
		}
		return hasArg(a, "-L", "--list", "-S", "--list-rules", "-nL", "-vnL", "-nvL", "-Ln")
	case "fdisk":
		return flagSet(a, 'l', "--list")
	case "smartctl":
		for _, x := range a {
			if x == "-t" || x == "--test" || x == "-s" || x == "--smart" || strings.HasPrefix(x, "--set") || x == "-X" {
				return false
			}
		}
	case "crontab":
		return len(a) == 1 && a[0] == "-l" || len(a) == 3 && a[0] == "-u" && a[2] == "-l"
	case "mount":
		return len(operands(a)) == 0 && !hasArg(a, "-a", "--all")
	case "systemctl":
		ops := operands(a)
		if len(ops) == 0 {
			return true // lists units
		}
		switch ops[0] {
		case "status", "is-active", "is-enabled", "is-failed", "is-system-running", "list-units", "list-unit-files",
			"list-timers", "list-sockets", "list-dependencies", "list-jobs", "show", "cat", "get-default":
			return true
		}
		return false
	case "journalctl":
		for _, x := range a {
			if strings.HasPrefix(x, "--vacuum") || x == "--rotate" || x == "--flush" || x == "--sync" || x == "--relinquish-var" ||
				x == "--setup-keys" || x == "--update-catalog" {
				return false
			}
		}
	}
	return true
}

// viaOf names the wrappers that raised c's privileges, "sudo" when none is
// recorded.
func viaOf(c *command) string {
	for _, v := range c.via {
		for _, p := range []string{"sudo", "doas", "pkexec", "run0", "su", "runuser", "osascript"} {
			if strings.HasPrefix(v, p) {
				return v
			}
		}
	}
	return "sudo"
}

// credentialArgs flags credential stores named as arguments of programs that
// read them.
func (w *walker) credentialArgs(c *command) {
	if c.name == "" || mentionCmds()[c.name] || c.name == "find" || c.name == "rm" || c.name == "shred" || c.name == "chmod" ||
		c.name == "chown" || c.name == "unlink" || c.name == "ssh" || c.name == "git" || c.name == "docker" || c.name == "kubectl" {
		if c.name == "find" {
			_, name := findRoots(c.args)
			if name != "" && (credentialKind(name) != "" || credentialKind("/x/"+strings.Trim(name, "'\"")) != "") {
				w.hit(c, RuleCredentialSearch, med, "looks for credential files named "+name)
			}
		}
		return
	}
	skipNext := false
	listCode := ""
	if _, code, ok := inlineCode(c); ok && listingOnly(code) {
		// the code analyzer judges it: listing names reads no credential
		listCode = code
	}
	for i, a := range c.args {
		if skipNext {
			skipNext = false
			continue
		}
		if listCode != "" && a == listCode {
			continue
		}
		if (a == "-i" && (c.name == "scp" || c.name == "sftp" || c.name == "rsync")) || a == "--env-file" || a == "--key" || a == "--cert" || a == "--cacert" || a == "-E" && c.name == "curl" {
			skipNext = true
			continue
		}
		if i < len(c.argData) && c.argData[i] != nil && c.argData[i].has(flowSecret) {
			w.hit(c, ruleCredentialRead, high, "passes the contents of a credential file to "+c.name)
			continue
		}
		for _, tok := range pathTokens(a) {
			rp := resolvePath(tok, c.cwd)
			if k := credentialKind(rp); k != "" {
				w.hit(c, ruleCredentialRead, high, c.name+" reads "+tok+" ("+k+")")
				break
			}
			if k := secretFileKind(rp); k != "" && (readers()[c.name] || !knownCommand(c.name)) {
				lvl := med
				if k == "key file" && classify(tok, c.cwd, w.env.Workspace) != pcWorkspace {
					lvl = high
				}
				w.hit(c, RuleSecretFileRead, lvl, c.name+" reads "+tok+" ("+k+")")
				break
			}
			if historyFile(rp) && readers()[c.name] && c.name != "grep" {
				w.hit(c, ruleHistoryRead, med, c.name+" reads "+tok)
			}
		}
	}
}

// pathTokens splits an argument into the paths it may name: "f=@x", "--o=x",
// "put /a /b", "file:x?y".
func pathTokens(a string) []string {
	var out []string
	fields := strings.Fields(a)
	if len(fields) > 1 {
		fields = append([]string{a}, fields...)
	}
	for _, f := range fields {
		f = strings.Trim(f, `"'(),;{}`)
		f = strings.TrimPrefix(f, "file:")
		if i := strings.IndexByte(f, '?'); i > 0 {
			f = f[:i]
		}
		if i := strings.LastIndex(f, "=@"); i >= 0 {
			f = f[i+2:]
		} else if i := strings.LastIndexByte(f, '='); i >= 0 && !strings.HasPrefix(f, "/") {
			f = f[i+1:]
		}
		f = strings.TrimPrefix(f, "@")
		f = strings.TrimPrefix(f, "<")
		f = strings.TrimPrefix(f, "file:")
		if i := strings.IndexByte(f, '?'); i > 0 {
			f = f[:i]
		}
		if f != "" && !strings.Contains(f, "://") {
			out = append(out, f)
		}
	}
	return out
}

func knownCommand(n string) bool {
	return ruledCmds()[n] || mentionCmds()[n] || readers()[n] || shells[n]
}

// scriptRules look at the script as a whole.
func (w *walker) scriptRules() {
	credRead, secretRead := -1, -1
	egress := -1
	for i, f := range w.finds {
		switch f.Rule {
		case ruleCredentialRead:
			if credRead < 0 {
				credRead = i
			}
		case RuleSecretFileRead, ruleHistoryRead:
			if secretRead < 0 {
				secretRead = i
			}
		}
	}
	var netCmd *command
	for _, c := range w.cmds {
		if isEgress(c) {
			egress = 1
			netCmd = c
			break
		}
	}
	if egress > 0 && credRead >= 0 {
		w.add(core.Finding{Analyzer: core.AnalyzerNetwork, Rule: ruleCredentialExfiltration, Level: high,
			Detail: "reads credentials and talks to the network in the same command", Span: w.finds[credRead].Span, Command: netCmd.name})
	} else if egress > 0 && secretRead >= 0 {
		w.add(core.Finding{Analyzer: core.AnalyzerNetwork, Rule: ruleSecretExfiltration, Level: high,
			Detail: "reads a secret file and talks to the network in the same command", Span: w.finds[secretRead].Span, Command: netCmd.name})
	}
	// Reverse shells built from a pipeline: a network client and a shell
	// reading its stdin in the same pipeline.
	pipes := map[int][]*command{}
	for _, c := range w.cmds {
		if c.pipeID > 0 {
			pipes[c.pipeID] = append(pipes[c.pipeID], c)
		}
	}
	netConn := false
	var dupShell *command
	for _, c := range w.cmds {
		if c.name == "ztcp" || c.name == "zsocket" || (c.name == "exec" && hasNetRedir(c)) {
			netConn = true
		}
		if shells[c.name] && interactiveShell(c) {
			for _, r := range c.redirs {
				if (r.op == ">&" || r.op == "<&" || r.op == "&>") && isFD(r.target) && r.target != "1" && r.target != "2" && r.target != "0" && r.target != "-" {
					dupShell = c
				}
			}
		}
	}
	if netConn && dupShell != nil {
		w.hit(dupShell, ruleReverseShell, high, "connects a shell to a network socket")
	}
	ids := make([]int, 0, len(pipes))
	for id := range pipes {
		ids = append(ids, id)
	}
	sortInts(ids)
	for _, id := range ids {
		stages := pipes[id]
		var sh, net *command
		for _, c := range stages {
			if shells[c.name] && interactiveShell(c) && c.stdin != nil {
				sh = c
			}
			if c.name == "nc" || c.name == "telnet" || c.name == "socat" || (c.name == "openssl" && hasArg(c.args, "s_client")) {
				net = c
			}
		}
		if sh != nil && net != nil {
			w.hit(sh, ruleReverseShell, high, "a shell reads commands from and writes results to a network connection ("+net.name+")")
		}
	}
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func hasNetRedir(c *command) bool {
	for _, r := range c.redirs {
		if strings.HasPrefix(r.target, "/dev/tcp/") || strings.HasPrefix(r.target, "/dev/udp/") {
			return true
		}
	}
	return false
}

// interactiveShell reports whether a shell command runs no -c code and no
// script: it reads commands from its stdin or a terminal.
func interactiveShell(c *command) bool {
	for i, a := range c.args {
		if a == "--" {
			return i+1 >= len(c.args)
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--") {
			if strings.ContainsAny(a[1:], "cn") {
				return false
			}
			continue
		}
		if strings.HasPrefix(a, "--") || strings.HasPrefix(a, "+") {
			continue
		}
		return false
	}
	return true
}

// isEgress reports whether c sends anything to another host.
func isEgress(c *command) bool {
	switch c.name {
	case "curl", "wget", "nc", "socat", "telnet", "scp", "sftp", "ftp", "lftp", "smbclient", "mail", "sendmail", "mutt", "ab", "restic", "rclone", "gsutil", "s3cmd", "http", "xh", "lp":
		return true
	case "ssh":
		return true
	case "rsync":
		for _, a := range operands(c.args) {
			if remoteSpec(a) {
				return true
			}
		}
	case "aws":
		return hasArg(c.args, "s3")
	case "git":
		return hasArg(c.args, "push")
	}
	return hasNetRedir(c)
}

// remoteSpec reports whether an scp/rsync operand names a remote host.
func remoteSpec(a string) bool {
	if strings.Contains(a, "://") {
		return true
	}
	i := strings.IndexByte(a, ':')
	if i <= 0 {
		return false
	}
	host := a[:i]
	return !strings.Contains(host, "/") && !strings.HasPrefix(a, "./")
}

// sudoNeverReadOnly are programs that run code, open a pager or an editor
// (a root shell one keystroke away) or write whatever they are given,
// whatever their subcommand says.
var sudoNeverReadOnly = core.LazySet("git", "less", "more", "most", "man", "vim", "vi", "view", "nvim", "nano", "emacs", "ed", "ex",
	"psql", "mysql", "sqlite3", "mongosh", "redis-cli", "python", "python3", "perl", "ruby", "node", "php", "lua", "awk",
	"gawk", "sed", "tee", "dd", "cp", "mv", "rm", "env", "xargs", "find", "tar", "zip", "unzip", "rsync", "scp", "ssh",
	"make", "npm", "pip", "pip3", "apt-get", "yum", "dnf", "pacman", "script", "watch", "nsenter", "chroot", "busybox",
	"systemd-run", "unshare", "setpriv", "strace", "ltrace", "gdb", "tmux", "screen", "expect", "passwd", "usermod", "useradd",
	"userdel", "chpasswd", "chown", "chmod", "chattr", "kill", "pkill", "killall", "shutdown", "reboot", "halt", "poweroff",
	"init", "telinit", "modprobe", "insmod", "rmmod", "mount", "umount", "swapoff", "swapon", "crontab", "at", "install", "ln",
	"ebtables", "arptables", "iptables-restore", "ip6tables-restore", "tc", "route", "ifconfig", "sysctl", "hostnamectl", "timedatectl")

// readOnlyVerbs, as a subcommand, only report on what a tool manages.
var readOnlyVerbs = core.LazySet("list", "ls", "show", "status", "info", "get", "describe", "print", "query", "stat", "stats",
	"inspect", "version", "check", "health", "usage", "df", "du", "detail", "details", "lookup", "search", "find-mnt", "dump-config",
	"tree", "ps", "top", "logs", "configtest", "certificates", "smart-log", "id-ctrl", "list-subsys", "lvs", "vgs", "pvs",
	"lvdisplay", "vgdisplay", "pvdisplay", "dump", "summary", "history", "verify", "diff", "cat", "watch-status")

// readOnlyOpts are options that make a tool only report.
var readOnlyOpts = core.LazySet("--list", "--print", "--show", "--status", "--info", "--query", "--version", "--dry-run", "--noop", "--check",
	"--detail", "--examine", "--test", "-t", "-l", "-L", "-Ln", "-nL", "-v", "-vv", "--verbose", "-I")

// readOnlyProgs print what they gather and change nothing.
var readOnlyProgs = core.LazySet("smbstatus", "showmount", "arp", "iostat", "vmstat", "mpstat", "sar", "pidstat", "sestatus",
	"getsebool", "aa-status", "apparmor_status", "ausearch", "aureport", "lsinitramfs", "lsinitrd", "biosdecode", "lslogins",
	"lsipc", "lslocks", "lsmem", "lscpu", "numastat", "turbostat", "powertop", "iftop", "nethogs", "iotop", "lvs", "vgs", "pvs",
	"lvdisplay", "vgdisplay", "pvdisplay", "dumpe2fs", "xfs_info")

// readOnlyInvocation reports whether c, a program with no read-only table
// of its own, is invoked only to report: a read-only subcommand among its
// first two words (`nvme list`, `btrfs subvolume list /`, `zpool status`),
// a read-only option and no other (`sgdisk --print /dev/sda`), or a disk
// tool's listing form (`wipefs /dev/sdb` without -a). Programs that run
// code, page or edit are never read-only (sudoNeverReadOnly).
func readOnlyInvocation(c *command) bool {
	if c.name == "" || shells[c.name] || sudoNeverReadOnly()[c.name] || len(c.redirs) > 0 && c.written != nil {
		return false
	}
	a := c.args
	if c.name == "wipefs" {
		return !flagSet(a, 'a', "--all") && !flagSet(a, 'o', "--offset") && !hasArgPrefix(a, "--offset=", "-t", "--types", "-f", "--force")
	}
	ops := operands(a)
	if readOnlyProgs()[c.name] {
		return true
	}
	for i, o := range ops {
		if i >= 2 {
			break
		}
		if readOnlyVerbs()[strings.ToLower(o)] {
			for _, x := range a {
				if v, k := verbOf(x); k != 0 && v != "" && strings.HasPrefix(x, "-") {
					return false // a destructive option alongside
				}
			}
			return true
		}
	}
	// only report options, and nothing named but devices (`mdadm --detail
	// /dev/md0`, `hdparm -I /dev/sda`): an operand may be what an option
	// acts on (`modprobe -v MODULE` loads it)
	ro := false
	for _, x := range a {
		if strings.HasPrefix(x, "-") {
			lx := strings.ToLower(x)
			if !readOnlyOpts()[x] && !readOnlyOpts()[lx] && !strings.HasPrefix(lx, "--get") && !strings.HasPrefix(lx, "--show") && !strings.HasPrefix(lx, "--list") && !strings.HasPrefix(lx, "--print") {
				return false
			}
			ro = true
		}
	}
	for _, o := range ops {
		if !strings.HasPrefix(o, "/dev/") {
			return false
		}
	}
	return ro
}
