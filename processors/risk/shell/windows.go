package shell

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Windows commands. Agents on Windows hosts (or asked to produce Windows
// commands) send cmd.exe and PowerShell command lines; some reach a bash
// tool verbatim (`format c:`, `del /s /q C:\`), some arrive as `cmd /c …` or
// `powershell -Command …`. They are judged by their own semantics: a
// command is Windows when its program exists only there (del, format,
// icacls, reg, Remove-Item …) or when it is the body of cmd or PowerShell.
// The code of cmd /c and powershell -Command is split into statements
// (on ; & && || | and newlines outside quotes) and each is judged; PowerShell
// aliases (rm, ri, del, rd, iwr, iex, curl, wget) mean the cmdlets they
// stand for, and -EncodedCommand is decoded (UTF-16LE base64) and judged
// too. Paths are classed like POSIX ones (winClass): a drive root is the
// root, C:\Windows and C:\Program Files are system, C:\Users\u is a home.
// When a bash tool received the line, its backslashes are already gone
// (C:\Windows\System32 reads C:WindowsSystem32); winClass reads both.

// winOnly lists programs that exist on Windows and not on POSIX systems
// (or whose POSIX namesake is rare): their arguments follow Windows rules.
var winOnly = core.LazySet("cmd", "powershell", "pwsh", "format", "del", "erase", "rd", "cipher", "takeown", "icacls", "cacls", "runas", "reg",
	"schtasks", "wmic", "vssadmin", "wbadmin", "bcdedit", "certutil", "bitsadmin", "taskkill", "setx", "diskpart", "wevtutil", "netsh",
	"choco", "winget", "scoop", "mountvol", "fsutil", "attrib", "xcopy", "robocopy", "mklink", "sfc", "dism", "auditpol", "regsvr32",
	"rundll32", "mshta", "cscript", "wscript", "msiexec", "sc.exe", "net1", "reagentc")

// psAliases maps PowerShell aliases to the cmdlets they stand for.
var psAliases = map[string]string{
	"rm": "remove-item", "ri": "remove-item", "del": "remove-item", "erase": "remove-item", "rd": "remove-item", "rmdir": "remove-item",
	"iex": "invoke-expression", "iwr": "invoke-webrequest", "curl": "invoke-webrequest", "wget": "invoke-webrequest",
	"irm": "invoke-restmethod", "saps": "start-process", "start": "start-process", "spsv": "stop-service", "kill": "stop-process",
	"spps": "stop-process", "sc": "set-content", "ac": "add-content", "mv": "move-item", "move": "move-item", "cp": "copy-item",
	"copy": "copy-item", "cpi": "copy-item", "mi": "move-item", "ni": "new-item", "sp": "set-itemproperty",
}

// isWindowsCommand reports whether a command parsed from a POSIX line is a
// Windows one.
func isWindowsCommand(name string, args []string) bool {
	if winOnly()[name] {
		return true
	}
	if strings.Count(name, "-") == 1 && psVerb(name) {
		return true // Verb-Noun: a PowerShell cmdlet
	}
	switch name {
	case "rmdir", "copy", "move", "ren", "net", "sc":
		for _, a := range args {
			if winSwitchRe.MatchString(a) && len(a) <= 3 || winDrive(a) {
				return true
			}
		}
		return name == "net" && len(args) > 0 && hasArg([]string{strings.ToLower(args[0])}, "user", "localgroup", "stop", "start", "share", "use")
	}
	return false
}

// winSwitchRe matches a cmd.exe switch: /s, /q, /grant:r, /w:C:.
var winSwitchRe = core.LazyRE(`^/[A-Za-z?]+(?::\S*)?$`)

func psVerb(name string) bool {
	v := name[:strings.IndexByte(name, '-')]
	switch v {
	case "remove", "invoke", "set", "new", "add", "start", "stop", "restart", "clear", "disable", "enable", "format", "get",
		"copy", "move", "import", "export", "install", "uninstall", "register", "unregister", "test", "write", "out", "convertto", "convertfrom":
		return true
	}
	return false
}

func winDrive(a string) bool {
	return len(a) >= 2 && a[1] == ':' && (a[0]|0x20) >= 'a' && (a[0]|0x20) <= 'z' && (len(a) == 2 || a[2] == '\\' || a[2] == '/' || isAlnum(a[2]))
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

var winEnvPaths = []struct{ v, p string }{
	{"%systemroot%", "c:/windows"}, {"%windir%", "c:/windows"}, {"$env:systemroot", "c:/windows"}, {"$env:windir", "c:/windows"},
	{"%programfiles%", "c:/program files"}, {"%programfiles(x86)%", "c:/program files"}, {"$env:programfiles", "c:/program files"},
	{"%programdata%", "c:/programdata"}, {"$env:programdata", "c:/programdata"}, {"%systemdrive%", "c:"}, {"$env:systemdrive", "c:"},
	{"%userprofile%", "~"}, {"$env:userprofile", "~"}, {"$home", "~"}, {"%homepath%", "~"}, {"%appdata%", "~/appdata/roaming"},
	{"$env:appdata", "~/appdata/roaming"}, {"%localappdata%", "~/appdata/local"}, {"$env:localappdata", "~/appdata/local"},
	{"%temp%", "/tmp"}, {"%tmp%", "/tmp"}, {"$env:temp", "/tmp"}, {"$env:tmp", "/tmp"},
}

// winClass classes a Windows path like classify does a POSIX one.
func winClass(p string) pathClass {
	l := strings.ToLower(strings.Trim(p, `"'`))
	l = strings.ReplaceAll(l, `\`, "/")
	for _, e := range winEnvPaths {
		if strings.HasPrefix(l, e.v) {
			l = e.p + l[len(e.v):]
			break
		}
	}
	switch {
	case l == "":
		return pcDynamic
	case strings.HasPrefix(l, "//"):
		return pcOther // a network share
	case strings.HasPrefix(l, "/") || strings.HasPrefix(l, "~"):
		return classify(l, "", "")
	case strings.HasPrefix(l, "$") || strings.HasPrefix(l, "%"):
		return pcDynamic
	case !winDrive(l):
		if l == ".." || strings.HasPrefix(l, "../") {
			return pcParent
		}
		return pcWorkspace
	}
	rest := strings.TrimLeft(l[2:], "/")
	switch {
	case rest == "" || isGlobOnly(rest):
		return pcRoot
	case strings.HasPrefix(rest, "windows/temp") || strings.Contains(rest, "/appdata/local/temp"):
		return pcTemp
	case strings.HasPrefix(rest, "windows") || strings.HasPrefix(rest, "program") || strings.HasPrefix(rest, "system32") ||
		strings.HasPrefix(rest, "boot") || strings.HasPrefix(rest, "recovery") || strings.HasPrefix(rest, "$recycle.bin"):
		return pcSystem
	case rest == "users" || strings.HasPrefix(rest, "users/"):
		parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
		if len(parts) <= 2 || len(parts) == 3 && isGlobOnly(parts[2]) {
			return pcHome
		}
		return pcHomeData
	case strings.HasPrefix(rest, "users"):
		return pcHomeData // backslashes lost: C:\Users\x\y read as C:Usersxy
	}
	return pcOther
}

// winStatements splits cmd.exe or PowerShell code into statements of words,
// quotes removed, backslashes kept.
func winStatements(code string) [][]string {
	var out [][]string
	var cur []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	flush := func() {
		flushWord()
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	for i := 0; i < len(code) && len(out) < 256; i++ {
		c := code[i]
		switch {
		case c == '"' || c == '\'':
			inWord = true
			j := i + 1
			for j < len(code) && code[j] != c {
				word.WriteByte(code[j])
				j++
			}
			i = j
		case c == ' ' || c == '\t' || c == '\r':
			flushWord()
		case c == '\n' || c == ';' || c == '&' || c == '|':
			flush()
		case c == '(' || c == ')' || c == '{' || c == '}':
			flushWord()
			if c == '(' || c == '{' {
				flush() // a sub-expression starts a statement of its own
			}
		default:
			inWord = true
			word.WriteByte(c)
		}
	}
	flush()
	return out
}

// runWindows records one Windows statement as a command, judged by the
// Windows rules.
func (w *walker) runWindows(parent *command, words []string, ps bool, how string) {
	if len(words) == 0 || w.exhausted {
		return
	}
	if f := words[0]; strings.Contains(f, "://") || strings.HasPrefix(f, ".") && len(f) > 1 && f[1] != '\\' && f[1] != '/' || strings.HasPrefix(f, "[") {
		return // a method call, a URL or a type literal of an expression, not a command
	}
	saved := w.top
	w.top = false
	name := winName(words[0])
	cmd := &command{name: name, path: words[0], args: words[1:], win: true, ps: ps, synthetic: true,
		via: []string{how}, sudo: parent.sudo, stdin: nil}
	cmd.argDyn = make([]bool, len(cmd.args))
	cmd.argData = make([]*data, len(cmd.args))
	w.finish(cmd, stmtCtx{}, nil)
	w.top = saved
}

// winName is the canonical name of a Windows program or cmdlet.
func winName(s string) string {
	n := strings.ToLower(s)
	if i := strings.LastIndexAny(n, `\/`); i >= 0 && i < len(n)-1 {
		n = n[i+1:]
	}
	for _, ext := range []string{".exe", ".com"} {
		n = strings.TrimSuffix(n, ext)
	}
	return n
}

var (
	psDownloadRe = core.LazyRE(`(?i)downloadstring|downloadfile|downloaddata|invoke-webrequest|\biwr\b|invoke-restmethod|\birm\b|net\.webclient|start-bitstransfer|\bcurl\b|\bwget\b`)
	psExecRe     = core.LazyRE(`(?i)\biex\b|invoke-expression|invoke-command|\.invoke\(|scriptblock\]::create|&\s*\(`)
	psDecodeRe   = core.LazyRE(`(?i)frombase64string|\[convert\]::from|-encodedcommand|\bgzipstream\b|deflatestream`)
	psEncFlagRe  = core.LazyRE(`(?i)^-(?:e|ec|en|enc|enco|encod|encode|encoded|encodedc\w*)$`)
)

// windowsExec handles what a Windows command runs: cmd /c code, PowerShell
// code (-Command, -EncodedCommand, or the rest of the line).
func (w *walker) windowsExec(c *command) {
	switch c.name {
	case "cmd":
		for i, a := range c.args {
			if la := strings.ToLower(a); la == "/c" || la == "/k" || la == "/r" {
				w.windowsCode(c, strings.Join(c.args[i+1:], " "), false, "cmd "+la)
				return
			}
		}
	case "powershell", "pwsh":
		w.powershellArgs(c)
	case "runas":
		for _, a := range operands(c.args) {
			if !strings.HasPrefix(a, "/") {
				w.windowsCode(c, a, false, "runas")
				return
			}
		}
	case "invoke-expression", "iex":
		w.windowsCode(c, strings.Join(c.args, " "), true, "Invoke-Expression")
	}
}

// powershellArgs finds the code a powershell/pwsh command line runs.
func (w *walker) powershellArgs(c *command) {
	a := c.args
	for i := 0; i < len(a); i++ {
		x := a[i]
		lx := strings.ToLower(x)
		switch {
		case psEncFlagRe.MatchString(lx) && i+1 < len(a):
			w.hit(c, ruleDecodeExec, high, c.name+" "+x+" runs a base64-encoded command, hidden from the person reviewing it")
			if code, ok := decodePSEncoded(a[i+1]); ok {
				w.windowsCode(c, code, true, c.name+" -EncodedCommand")
			}
			return
		case lx == "-c" || lx == "-command" || lx == "/c" || lx == "-com" || lx == "-comm" || lx == "-comma" || lx == "-comman":
			w.windowsCode(c, strings.Join(a[i+1:], " "), true, c.name+" -Command")
			return
		case lx == "-f" || lx == "-file":
			return // a script file
		case lx == "-executionpolicy" || lx == "-ep" || lx == "-exec":
			if i+1 < len(a) && (strings.EqualFold(a[i+1], "bypass") || strings.EqualFold(a[i+1], "unrestricted")) {
				w.hit(c, ruleExecutionPolicyBypass, med, c.name+" runs with the execution policy switched off")
			}
			i++
		case lx == "-windowstyle" || lx == "-w":
			if i+1 < len(a) && strings.EqualFold(a[i+1], "hidden") {
				w.hit(c, ruleHiddenWindow, med, c.name+" runs in a hidden window")
			}
			i++
		case strings.HasPrefix(x, "-"):
		default:
			// powershell Remove-Item …: the rest of the line is the command
			if !strings.HasSuffix(lx, ".ps1") {
				w.windowsCode(c, strings.Join(a[i:], " "), true, c.name)
			}
			return
		}
	}
}

func decodePSEncoded(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) < 2 {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}

// windowsCode judges cmd or PowerShell code.
func (w *walker) windowsCode(c *command, code string, ps bool, how string) {
	if w.depth+1 > maxDepth {
		w.add(core.Finding{Analyzer: core.AnalyzerShell, Rule: ruleNestingLimit, Level: high,
			Detail: "code nested more than 8 levels deep (" + how + ")", Span: c.span})
		return
	}
	if len(code) > maxInput {
		code = code[:maxInput]
	}
	if ps {
		switch {
		case psExecRe.MatchString(code) && psDownloadRe.MatchString(code):
			w.hit(c, ruleRemoteCodeExec, high, how+" runs code downloaded from the network (Invoke-Expression of a download)")
		case psExecRe.MatchString(code) && psDecodeRe.MatchString(code):
			w.hit(c, ruleDecodeExec, high, how+" runs code it decodes at run time")
		}
	}
	w.depth++
	for _, st := range winStatements(code) {
		w.runWindows(c, st, ps, how)
	}
	w.depth--
}

// windowsRules judges a Windows command by what it does.
func (w *walker) windowsRules(c *command) {
	name := c.name
	if c.ps {
		if n, ok := psAliases[name]; ok {
			name = n
		}
	}
	a := c.args
	lower := make([]string, len(a))
	for i, x := range a {
		lower[i] = strings.ToLower(x)
	}
	has := func(vals ...string) bool { return hasArg(lower, vals...) }
	switchSet := func(s string) bool { // /s, -s, /S
		for _, x := range lower {
			if x == "/"+s || x == "-"+s {
				return true
			}
		}
		return false
	}
	paths := func() []string {
		var out []string
		for _, x := range a {
			if strings.HasPrefix(x, "-") || !c.ps && winSwitchRe.MatchString(x) {
				continue
			}
			out = append(out, x)
		}
		return out
	}
	switch name {
	case "del", "erase", "rd", "rmdir", "remove-item":
		rec := switchSet("s") || hasArgPrefix(lower, "-r")
		w.winDelete(c, rec, paths())
	case "format", "format-volume", "clear-disk", "initialize-disk", "remove-partition", "diskpart":
		w.hit(c, ruleDiskFormat, high, c.path+" formats or repartitions a disk")
	case "cipher":
		if hasArgPrefix(lower, "/w") {
			w.hit(c, ruleDiskWipe, high, "cipher /w overwrites all deleted data on the volume")
		}
	case "takeown":
		w.winOwnership(c, paths(), "takeown takes ownership of")
	case "icacls", "cacls":
		world := false
		for i, x := range lower {
			if (x == "/grant" || x == "/grant:r" || x == "/e" || x == "/g") && i+1 < len(lower) {
				g := lower[i+1]
				if strings.HasPrefix(g, "everyone:") || strings.HasPrefix(g, "*s-1-1-0") || strings.HasPrefix(g, "users:") || strings.HasPrefix(g, "authenticated users:") || strings.HasPrefix(g, "guest") {
					world = true
				}
			}
		}
		if world {
			w.hit(c, rulePermissionsSystem, high, c.name+" grants everyone access to "+strings.Join(paths(), " "))
			return
		}
		if has("/reset", "/setowner", "/grant", "/grant:r", "/deny", "/remove", "/inheritance:r", "/inheritance:d") {
			w.winOwnership(c, paths(), c.name+" changes permissions of")
		}
	case "runas", "start-process":
		if name == "runas" || has("-verb") && has("runas") {
			w.hit(c, ruleSudo, high, c.path+" runs a program as another user or as administrator (privilege escalation)")
		}
	case "net", "net1":
		switch {
		case has("user") && (has("/add") || has("/delete") || len(operands(lower)) >= 3), has("localgroup") && (has("/add") || has("/delete")):
			w.hit(c, ruleAccountChange, high, "net creates, deletes or changes a user account or group membership")
		case has("stop"):
			w.winService(c, "stop")
		}
	case "new-localuser", "remove-localuser", "set-localuser", "add-localgroupmember", "enable-localuser":
		w.hit(c, ruleAccountChange, high, c.path+" changes local accounts")
	case "reg":
		w.winRegistry(c, lower)
	case "set-itemproperty", "new-itemproperty", "remove-itemproperty":
		w.winRegistry(c, lower)
	case "sc", "sc.exe", "new-service", "stop-service", "set-service", "remove-service":
		switch {
		case name == "new-service" || has("create") || has("config") && hasArgPrefix(lower, "binpath"):
			w.hit(c, ruleServicePersistence, high, c.path+" installs or reconfigures a service (runs at boot as SYSTEM)")
		case has("stop", "delete") || name == "stop-service" || name == "remove-service" || name == "set-service" && has("disabled"):
			w.winService(c, "stop")
		}
	case "schtasks", "register-scheduledtask", "new-scheduledtask":
		if has("/create") || name != "schtasks" {
			w.hit(c, ruleCronPersistence, high, c.path+" creates a scheduled task")
		} else if has("/delete", "/change") {
			w.hit(c, ruleServiceChange, med, "schtasks changes scheduled tasks")
		}
	case "vssadmin", "wbadmin":
		if has("delete", "resize") {
			w.hit(c, ruleBackupDestruction, high, c.name+" deletes shadow copies or backups (what ransomware does first)")
		}
	case "wmic":
		switch {
		case has("shadowcopy") && has("delete"):
			w.hit(c, ruleBackupDestruction, high, "wmic deletes shadow copies")
		case has("process") && has("create"), has("call"):
			w.hit(c, ruleRemoteExec, med, "wmic starts a process")
		}
	case "bcdedit":
		if has("/set", "/delete", "/deletevalue") {
			w.hit(c, ruleBootTampering, high, "bcdedit changes how the machine boots (recovery, safe mode, signing)")
		}
	case "reagentc":
		if has("/disable") {
			w.hit(c, ruleBackupDestruction, high, "reagentc disables the recovery environment")
		}
	case "wevtutil", "clear-eventlog", "remove-eventlog", "limit-eventlog":
		if name != "wevtutil" || has("cl", "clear-log", "sl", "set-log") {
			w.hit(c, ruleLogTampering, high, c.path+" clears or shrinks the event logs")
		}
	case "auditpol":
		if has("/clear", "/remove") || has("/set") && has("/success:disable", "/failure:disable") {
			w.hit(c, ruleDefenseEvasion, high, "auditpol turns auditing off")
		}
	case "set-mppreference", "add-mppreference":
		if hasArgPrefix(lower, "-disable", "-exclusion") {
			w.hit(c, ruleDefenseEvasion, high, c.path+" turns Defender protection off or excludes paths from scanning")
		}
	case "netsh":
		switch {
		case has("firewall", "advfirewall") && (has("off", "disable") || has("reset")):
			w.hit(c, ruleFirewallDisable, high, "netsh turns the firewall off")
		case has("portproxy"), has("interface") && has("disable", "disabled"):
			w.hit(c, ruleFirewallChange, med, "netsh changes network settings")
		case has("firewall", "advfirewall") && has("add", "set", "delete"):
			w.hit(c, ruleFirewallChange, med, "netsh changes firewall rules")
		}
	case "set-netfirewallprofile", "disable-netfirewallrule", "remove-netfirewallrule":
		if name != "set-netfirewallprofile" || has("false") || hasArgPrefix(lower, "-enabled:$false", "-enabled:false") {
			w.hit(c, ruleFirewallDisable, high, c.path+" turns the firewall off")
		}
	case "disable-netadapter", "remove-netroute", "disable-computerrestore":
		w.hit(c, ruleRemoteAccessLoss, high, c.path+" cuts the machine off the network or removes its recovery")
	case "stop-computer", "restart-computer":
		w.hit(c, ruleShutdown, high, c.path+" stops or restarts the machine")
	case "taskkill", "stop-process":
		for _, x := range lower {
			if isSecurityService(x) || strings.Contains(x, "msmpeng") || strings.Contains(x, "sense") {
				w.hit(c, ruleDefenseEvasion, high, c.path+" stops the security process "+x)
				return
			}
		}
		w.hit(c, ruleProcessKill, med, c.path+" stops processes")
	case "setx", "set-executionpolicy":
		if name == "set-executionpolicy" {
			if has("bypass", "unrestricted") {
				w.hit(c, ruleExecutionPolicyBypass, med, "Set-ExecutionPolicy switches script signing checks off")
			}
			return
		}
		w.hit(c, ruleEnvPersistence, med, "setx stores an environment variable for every future process of the user")
	case "certutil":
		if hasArgPrefix(lower, "-urlcache", "/urlcache", "-verifyctl", "-decode", "/decode", "-decodehex") {
			w.hit(c, ruleNetworkDownload, med, "certutil downloads or decodes a file (a well-known download tool of attackers)")
		}
	case "bitsadmin":
		if has("/transfer", "/addfile", "/create") {
			w.hit(c, ruleNetworkDownload, med, "bitsadmin downloads a file")
		}
	case "invoke-webrequest", "invoke-restmethod", "start-bitstransfer":
		joined := strings.Join(lower, " ")
		if f, ok := optValue(lower, "-infile"); ok {
			// -InFile sends the file as the request body
			if k := credentialKind(resolvePath(winHomePath(f), c.cwd)); k != "" {
				w.hit(c, ruleCredentialExfiltration, high, c.path+" -InFile sends "+f+" ("+k+")")
				return
			}
		}
		if m, ok := optValue(lower, "-method"); ok && (m == "delete" || m == "put" || m == "patch") && (codeCredRe.MatchString(joined) || has("-headers", "-credential", "-token", "-authentication")) && !codeTalksOnlyLocallyWords(lower) {
			w.hit(c, ruleAuthenticatedApiWrite, high, c.path+" sends an authenticated "+strings.ToUpper(m)+" that removes or overwrites a resource with the user's credentials")
			return
		}
		w.hit(c, ruleNetworkFetch, med, c.path+" fetches from the network")
	case "choco", "winget", "scoop", "install-package", "install-module", "msiexec":
		if has("install", "upgrade", "uninstall", "add", "/i", "/x", "/package") || name == "install-package" || name == "install-module" {
			w.hit(c, rulePackageInstall, med, c.path+" installs or removes software")
		}
	case "mshta", "regsvr32", "rundll32", "cscript", "wscript":
		w.hit(c, ruleRemoteExec, med, c.name+" runs script or library code (a common way to run a payload)")
	case "fsutil":
		if has("setzerodata", "deletejournal") || has("usn") && has("deletejournal") {
			w.hit(c, ruleLogTampering, high, "fsutil erases file data or the change journal")
		}
	case "mountvol":
		if has("/d", "/p") {
			w.hit(c, ruleDiskFormat, high, "mountvol removes a volume mount point")
		}
	case "copy", "xcopy", "robocopy", "copy-item", "move", "move-item", "set-content", "add-content", "out-file", "new-item":
		for _, p := range paths() {
			if cls := winClass(p); cls == pcSystem || cls == pcRoot {
				w.hit(c, ruleSystemWrite, high, c.path+" writes into the system path "+p)
				return
			}
		}
		if name == "robocopy" && has("/mir", "/purge") {
			w.hit(c, ruleDeleteOutsideWorkspace, med, "robocopy /MIR deletes files in the destination")
		}
	}
}

// winDelete judges a Windows deletion by its targets.
func (w *walker) winDelete(c *command, recursive bool, targets []string) {
	verb := c.path
	if recursive {
		verb += " (recursive)"
	}
	best := false
	for _, t := range targets {
		switch cls := winClass(t); {
		case cls == pcRoot:
			w.hit(c, ruleDestructiveDeleteRoot, high, verb+" deletes the drive "+t)
			return
		case cls == pcSystem:
			w.hit(c, ruleDestructiveDeleteSystem, high, verb+" deletes the system path "+t)
			return
		case cls == pcHome:
			w.hit(c, ruleDestructiveDeleteHome, high, verb+" deletes the home directory "+t)
			return
		case (cls == pcHomeData || cls == pcOther || cls == pcParent) && recursive:
			w.hit(c, ruleDestructiveDeleteOutsideWorkspace, high, verb+" deletes "+t+", outside the workspace")
			return
		case !best:
			best = true
			rule := ruleDeleteWorkspace
			switch cls {
			case pcTemp:
				rule = ruleDeleteTemp
			case pcHomeData, pcOther, pcParent:
				rule = ruleDeleteOutsideWorkspace
			case pcDynamic:
				rule = ruleDeleteUnresolved
			}
			w.hit(c, rule, med, verb+" deletes "+t)
		}
	}
}

func (w *walker) winOwnership(c *command, targets []string, verb string) {
	for _, t := range targets {
		if cls := winClass(t); cls == pcRoot || cls == pcSystem || cls == pcHome {
			w.hit(c, ruleOwnershipSystem, high, verb+" "+t)
			return
		}
	}
	w.hit(c, ruleOwnershipChange, med, verb+" "+strings.Join(targets, " "))
}

func (w *walker) winService(c *command, verb string) {
	for _, x := range c.args {
		if isSecurityService(x) || strings.EqualFold(x, "windefend") || strings.EqualFold(x, "sense") || strings.EqualFold(x, "eventlog") || strings.EqualFold(x, "mpssvc") {
			w.hit(c, ruleDefenseEvasion, high, c.path+" "+verb+"s the security or logging service "+x)
			return
		}
		if reachService(x) || strings.EqualFold(x, "termservice") || strings.EqualFold(x, "winrm") {
			w.hit(c, ruleRemoteAccessLoss, high, c.path+" "+verb+"s "+x+", which keeps the machine reachable")
			return
		}
	}
	w.hit(c, ruleServiceStop, med, c.path+" "+verb+"s a service")
}

var winPersistKeys = []string{`\currentversion\run`, `\currentversion\policies\explorer\run`, `\winlogon`, `image file execution options`,
	`\currentversion\explorer\shell folders`, `\services\`, `\environment`, `appinit_dlls`, `\lsa`, `\terminal server`, `\windows defender`,
	`/currentversion/run`, `/winlogon`, `currentversionrun`, `currentversionpolicies`}

// winRegistry judges reg.exe and the registry cmdlets.
func (w *walker) winRegistry(c *command, lower []string) {
	key := strings.Join(lower, " ")
	switch {
	case hasArg(lower, "save", "export") && (strings.Contains(key, `hklm\sam`) || strings.Contains(key, `hklm\security`) || strings.Contains(key, `hklm\system`) || strings.Contains(key, "hklmsam") || strings.Contains(key, "hklmsystem")):
		w.hit(c, ruleCredentialRead, high, "reg save copies the SAM/SYSTEM hives, which hold password hashes")
		return
	case hasArg(lower, "query", "export", "save") || c.name == "reg" && len(lower) == 0:
		return
	}
	for _, k := range winPersistKeys {
		if strings.Contains(key, k) {
			w.hit(c, ruleRegistryPersistence, high, c.path+" changes a registry key that runs programs at logon or weakens security ("+k+")")
			return
		}
	}
	if strings.Contains(key, "hklm") || strings.Contains(key, "hkey_local_machine") {
		w.hit(c, ruleRegistryChange, med, c.path+" changes machine-wide registry settings")
		return
	}
	w.hit(c, ruleRegistryChange, med, c.path+" changes registry settings")
}

// codeTalksOnlyLocallyWords reports whether every URL among words names
// this machine (and there is at least one).
func codeTalksOnlyLocallyWords(words []string) bool {
	n := 0
	for _, x := range words {
		if strings.Contains(x, "://") {
			n++
			if !isLocalURL(x) {
				return false
			}
		}
	}
	return n > 0
}

// winHomePath rewrites a PowerShell path under the user's profile
// ($env:USERPROFILE\.aws\credentials, $HOME/.ssh/id_rsa) as ~/…, with
// forward slashes, so that the credential paths are recognised.
func winHomePath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	for _, pre := range []string{"$env:userprofile", "$env:home", "$home", "${env:userprofile}"} {
		if len(p) >= len(pre) && strings.EqualFold(p[:len(pre)], pre) {
			return "~" + p[len(pre):]
		}
	}
	return p
}
