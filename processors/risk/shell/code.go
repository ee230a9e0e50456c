package shell

import (
	"strconv"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// The code analyzer is deliberately small: it reads Python (and, with the
// same patterns, Perl, Ruby, Node, PHP, Lua, awk one-liners) with regular
// expressions, not a parser. It recognises
//   - calls that run shell commands with a literal (os.system, subprocess.*,
//     child_process.exec*, system(), backticks …): the literal is handed to
//     the shell analyzer, so os.system('rm -rf /') scores like rm -rf /;
//   - recursive deletion APIs with a literal path (shutil.rmtree, rm_rf,
//     rmtree, fs.rmSync);
//   - exec/eval of network or base64-decoded data, pickle loads;
//   - sockets combined with process execution (reverse shells), fork loops;
//   - credential paths, persistence paths and metadata endpoints in strings;
//   - data read locally and sent with an HTTP client.
// Obfuscated code (string building, getattr tricks) defeats it; that is
// documented in docs/risk.md.

// maxCode bounds the code one analysis reads (see analyzeCode).
const maxCode = 256 << 10

var (
	// call(…"literal"…) forms that run a shell command.
	shellCallRe = core.LazyRE(`(?s)(?:os\.system|os\.popen|subprocess\.(?:run|call|Popen|check_output|check_call|getoutput|getstatusoutput)|commands\.getoutput|pty\.spawn|os\.exec[lv]p?e?|execSync|spawnSync|execFileSync|exec|spawn|execFile|system|shell_exec|passthru|popen|proc_open|os\.execute|io\.popen|IO\.popen|Open3\.\w+|callCommand|runCommand|Runtime\.getRuntime\(\)\.exec|run)\s*\(?\s*(\[[^\]]*\]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`" + `)`)
	backtickRe  = core.LazyRE("`([^`]{2,})`")
	qxRe        = core.LazyRE(`%x\{([^}]*)\}|qx\{([^}]*)\}|qx\(([^)]*)\)`)
	strLitRe    = core.LazyRE(`"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'`)
	rmtreeRe    = core.LazyRE(`(?:shutil\.rmtree|rmtree|remove_tree|rm_rf|rm_r|FileUtils\.rm_rf|FileUtils\.remove_dir|rmSync|rmdirSync|fs\.rm|fs\.promises\.rm|deleteRecursively|os\.RemoveAll|unlink|os\.remove|os\.removedirs)\s*\(\s*((?:[^,()]|\([^()]*\))+)`)
	forkLoopRe  = core.LazyRE(`(?s)(?:while\s*\(?\s*(?:True|1|true)\s*\)?\s*:?\s*\{?[^\n]{0,60}fork\s*\(|fork\s+while\s+fork|fork\s*\(\)\s*while|loop\s*\{\s*fork|for\s*\(\s*;\s*;\s*\)\s*\{?\s*fork|while\s+true;\s*do[^\n]*&)`)
	socketRe    = core.LazyRE(`socket\.socket|\.connect\(\s*[(\[\d]|\.connect\(\s*(?:addr|address|target)\s*\)|TCPSocket|fsockopen|IO::Socket|socket\(\s*\w+\s*,\s*PF_INET|net\.Socket|net\.connect|require\(['"]net['"]\)|Sockets|connect\(\s*"|/dev/tcp/|socket\.create_connection|new Socket\(`)
	execRe      = core.LazyRE(`dup2|subprocess|pty\.spawn|\bexec\s*\(|\bsystem\s*\(|popen|\bspawn\s*\(|/bin/(?:ba)?sh|cmd\.exe|run\(pipeline|run\(` + "`" + `|IO\.popen|exec\s*\{|Process\.Start|os\.execute\(`)
	netFetchRe  = core.LazyRE(`urlopen|urllib|requests\.(?:get|post|put|request)|http\.client|httplib|Net::HTTP|open-uri|LWP::|file_get_contents\(\s*['"]https?|fetch\(|http\.get|https\.get|axios|HTTParty|curl_exec|wget|curl\s|Invoke-WebRequest|WebClient`)
	evalRe      = core.LazyRE(`\b(?:exec|eval|compile|Function|instance_eval|class_eval|load|loadstring|dostring)\s*\(`)
	decodeRe    = core.LazyRE(`b64decode|decode_base64|decode_hex|base64\.decode|decodebytes|a2b_base64|atob\(|Buffer\.from\([^)]*base64|unpack\(\s*['"]m|base64_decode|decode\(\s*['"]base64|Base64\.decode|fromhex|codecs\.decode|zlib\.decompress|marshal\.loads`)
	pickleRe    = core.LazyRE(`pickle\.loads?|cPickle\.loads?|marshal\.loads|yaml\.load\(|dill\.loads?|jsonpickle\.decode|shelve\.open`)
	uploadRe    = core.LazyRE(`requests\.(?:post|put|patch)|urlopen\([^)]*data=|\.send\(|sendall\(|smtplib|ftplib|storbinary|method:\s*['"](?:POST|PUT)|\.post\(|http\.request\(|scp|paramiko|sock\.send|s\.send|\.write\(\s*sock`)
	localDataRe = core.LazyRE(`open\([^)]*\)\.read|\.read\(\)|os\.environ|getenv|getpass|getuser|platform\.|pyperclip|clipboard|pbpaste|xsel|xclip|screenshot|screencapture|ImageGrab|pyautogui|geocoder|pkg_resources|check_output|readFileSync|File\.read|file_get_contents|process\.env|socket\.gethostname|Image\.open|nvidia-smi|netstat`)
	writeModeRe = core.LazyRE(`open\([^)]*,\s*['"][wa]b?\+?['"]|file_put_contents|io\.open\([^)]*['"][wa]b?['"]|writeFileSync|appendFileSync|File\.write|File\.open\([^)]*['"][wa]|write_text|write_bytes|>>\s*['"]?/|print\s*>|fopen\([^)]*['"][wa]|\.write\(|open\(\s*my\s*\$\w+\s*,\s*['"]>`)
	// changeFileRe: calls that change a file other than by writing to it
	// (mode, owner, name, removal, truncation, links, copies over it).
	changeFileRe  = core.LazyRE(`\bos\.(?:chmod|lchmod|chown|lchown|remove|unlink|rename|renames|replace|truncate|symlink|link|rmdir|removedirs)\(|\bshutil\.(?:rmtree|move|copy\w*|chown)\(|\.(?:unlink|rename|replace|chmod|lchmod|touch|symlink_to|hardlink_to)\(|(?:unlink|rm|rename|chmod|chown|lchown|copyFile|truncate|symlink|link|rmdir|cp)(?:Sync)?\(|\bFile(?:Utils)?\.(?:chmod|chown|delete|unlink|rename|rm\w*|mv|cp|ln\w*|truncate|symlink|link|install)\b|\b(?:chmod|chown|unlink|rename|truncate|symlink|link)\s*\(?\s*(?:0|[0-9]|\$|q\(|['"])`)
	surveilRe     = core.LazyRE(`pynput|keyboard\.on_press|keylogger|GetAsyncKeyState|screenshot|screencapture|ImageGrab|pyautogui|snippingtool|gnome-screenshot|ffmpeg[^\n]*x11grab|-f\s*avfoundation|pyperclip|clipboard|pbpaste|xsel|GetClipboardData`)
	floodRe       = core.LazyRE(`(?s)while\s*\(?\s*(?:True|1|true)\s*\)?\s*:?.{0,200}(?:requests\.|send\(|connect\(|ping|curl|Popen|os\.system|multiprocessing|Process\(|Tk\(|append\()`)
	killAllRe     = core.LazyRE(`psutil\.[\s\S]{0,80}(?:terminate|kill)\(|os\.kill\(\s*-1|killall|\.Disable\(\)|ipconfig\s*/release|ifconfig\s+\w+\s+down`)
	cryptoRe      = core.LazyRE(`Fernet|AES\.new|Cipher\(|algorithms\.AES|encrypt\(`)
	codeURLRe     = core.LazyRE(`['"](?:https?|ftp)://[^'"\s]+['"]`)
	endlessLoopRe = core.LazyRE(`while\s+(?:True|1)\s*:\s*\n\s+\w+\(`)
	awkPipeRe     = core.LazyRE(`"([^"]+)"\s*\|\s*getline|print[^|]*\|\s*"([^"]+)"`)
	procRe        = core.LazyRE(`subprocess|os\.system|popen|system\(`)
	b64LitRe      = core.LazyRE(`b64decode\(\s*['"]([A-Za-z0-9+/=]{16,})['"]`)
	shellTrueRe   = core.LazyRE(`shell\s*=\s*True`)
	tunnelRe      = core.LazyRE(`ssh\s+-[LRD]\s|\.bind\(\(|start_server|listen\(|TCP4ServerEndpoint|createServer`)
	// HTTP calls that delete or overwrite a resource, in any of the
	// languages the analyzer reads
	httpRemoveRe = core.LazyRE(`(?i)\b(?:requests|httpx|session|client|axios|s|http)\.(?:delete|put|patch)\s*\(|\.(?:delete|put|patch)\(\s*['"\x60]https?://|CURLOPT_CUSTOMREQUEST\s*,\s*['"](?:DELETE|PUT|PATCH)|requests\.request\(\s*['"](?:DELETE|PUT|PATCH)|method\s*[:=]\s*['"](?:DELETE|PUT|PATCH)['"]|Net::HTTP::(?:Delete|Put|Patch)|-Method\s+['"]?(?:Delete|Put|Patch)\b|\bDELETE\b['"]?\s*,\s*['"]?https?://|HttpMethod\.(?:Delete|Put|Patch)`)
	// ORM and driver calls that delete a whole table or collection
	ormBulkDeleteRe = core.LazyRE(`\.(?:destroy_all|delete_all)\b(?:\s*\(\s*\))?|\.objects(?:\.all\(\))?\.delete\(\)|\.deleteMany\(\s*\{\s*\}\s*\)|\.remove\(\s*\{\s*\}\s*\)|\.(?:dropDatabase|drop_database|drop_collection)\(|\bdrop_all\(|\.truncate!?\(\s*\)`)
	// an API key or token read from the environment to authenticate a
	// request: os.environ["OPENAI_API_KEY"], process.env.GH_TOKEN
	credEnvRe    = core.LazyRE(`os\.environ(?:\.get)?\s*[\[(]\s*['"][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PAT|AUTH)['"]\s*[\])]|os\.getenv\(\s*['"][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PAT|AUTH)['"]\s*\)|process\.env\.[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PAT|AUTH)\b|process\.env\[\s*['"][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PAT|AUTH)['"]\s*\]`)
	authHeaderRe = core.LazyRE(`(?i)['"]?(?:authorization|x-api-key|api-key|private-token)['"]?\s*[:=]|\bauth\s*=|Bearer\s`)
	// a URL literal with a credential-named environment variable or a
	// credential file's contents appended to it
	urlSecretConcatRe = core.LazyRE(`['"]https?://[^'"\s]*[?=&/]['"]\s*(?:\+|\.|,)\s*(?:process\.env\.[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|CRED)[A-Z0-9_]*|os\.environ\s*\[\s*['"][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|CRED)|os\.getenv\(\s*['"][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|CRED)|ENV\[['"][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|CRED))`)
	// credentials an HTTP call in code sends
	codeCredRe = core.LazyRE(`(?i)authorization|bearer|\btoken\b|api[_-]?key|private-token|x-auth|\bauth\s*=|_TOKEN|_API_KEY|_SECRET|SSWS`)
)

// analyzeCode judges a code snippet. c is the command that runs it (nil when
// the code comes from a python action or a file write).
func (w *walker) analyzeCode(lang, code string, c *command, how string) {
	span := w.outer
	name := how
	if c != nil {
		span = c.span
		name = c.name
	}
	if len(code) > maxCode {
		// Its regular expressions cost about 3 s of CPU a MiB, and the
		// driver folds one record at a time: past maxCode, the rest is
		// not read, and a person judges what was not.
		w.add(core.Finding{Analyzer: core.AnalyzerParser, Rule: ruleInputTooLarge, Level: events.RiskHigh, Span: span, Command: name,
			Detail: how + ": only the first 256 KiB of the code was analysed (it has " + strconv.Itoa(len(code)>>10) + " KiB); what follows could not be judged"})
		code = code[:maxCode]
	}
	add := func(rule *ShellRule, lvl events.Risk, detail string) {
		w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: rule, Level: lvl, Detail: how + ": " + detail, Span: span, Command: name})
	}
	if folded, ok := foldCode(code); ok {
		code = folded
	}
	w.foldFindings(lang, code, span, name, how)
	if lang == "expect" || lang == "tcl" {
		w.tclCode(code, how)
	}
	// 1. Shell commands run from code: analyse them as shell.
	for _, m := range shellCallRe.FindAllStringSubmatch(code, 16) {
		arg := m[1]
		var cmd string
		if strings.HasPrefix(arg, "[") {
			var parts []string
			for _, s := range strLitRe.FindAllStringSubmatch(arg, -1) {
				parts = append(parts, Quote(unquoteLit(s)))
			}
			cmd = strings.Join(parts, " ")
		} else {
			cmd = unquoteCodeString(arg)
		}
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		// "run" and "exec" are common words; only treat exec("…") as a
		// shell call when its literal looks like a command line.
		fn := m[0][:strings.IndexAny(m[0], "( \t\"'`[")]
		if (fn == "run" || fn == "exec" || fn == "spawn") && lang == "python" && !strings.HasPrefix(arg, "[") && !strings.Contains(m[0], "subprocess") {
			if fn == "exec" {
				continue
			}
		}
		w.reparse(cmd, lang+" "+fn, nil, nil, false)
	}
	for _, m := range backtickRe.FindAllStringSubmatch(code, 8) {
		if lang == "perl" || lang == "ruby" || lang == "php" {
			w.reparse(m[1], lang+" backticks", nil, nil, false)
		}
	}
	for _, m := range qxRe.FindAllStringSubmatch(code, 8) {
		w.reparse(m[1]+m[2]+m[3], lang+" qx", nil, nil, false)
	}
	if lang == "awk" {
		for _, m := range awkPipeRe.FindAllStringSubmatch(code, 8) {
			w.reparse(m[1]+m[2], "awk pipe", nil, nil, false)
		}
	}
	// 2. Recursive deletion with a literal path.
	for _, m := range rmtreeRe.FindAllStringSubmatch(code, 8) {
		p := codePath(m[1])
		if p == "" {
			continue
		}
		w.runSynthetic(&command{via: []string{how}}, toFields([]string{"rm", "-rf", p}), stmtCtx{})
	}
	// 2b. Client-library calls, judged as the commands they amount to.
	w.sdkCalls(lang, code, how, span, name)
	// 3. Fork loops.
	if forkLoopRe.MatchString(code) {
		add(ruleForkBomb, events.RiskHigh, "creates processes in an endless loop")
	}
	hasSocket := socketRe.MatchString(code)
	hasExec := execRe.MatchString(code)
	hasFetch := netFetchRe.MatchString(code)
	hasEval := evalRe.MatchString(code)
	hasDecode := decodeRe.MatchString(code)
	// 4. Reverse shells.
	if hasSocket && hasExec {
		add(ruleReverseShell, events.RiskHigh, "connects a socket to a process or shell")
	}
	// 4c. A secret from the environment or a file put into a URL the code
	// requests: sent to that host in the request line.
	if m := urlSecretConcatRe.FindString(code); m != "" && !codeTalksOnlyLocally(code) {
		add(ruleUrlExfiltration, events.RiskHigh, "puts a secret into the URL it requests ("+core.TrimArg(m)+")")
	}
	// 4a. An ORM or driver call that deletes every record it reaches.
	if m := ormBulkDeleteRe.FindString(code); m != "" {
		add(ruleSqlDeleteAll, events.RiskHigh, "deletes every record it reaches ("+core.TrimArg(m)+")")
	}
	// 4b. An HTTP delete or overwrite sent with the user's credentials to a
	// host that is not this machine: as curl -X DELETE -H Authorization.
	if httpRemoveRe.MatchString(code) && codeCredRe.MatchString(code) && !codeTalksOnlyLocally(code) {
		add(ruleAuthenticatedApiWrite, events.RiskHigh, "sends an authenticated HTTP delete or overwrite that removes or replaces a resource with the user's credentials")
	}
	// 5. Running fetched or decoded code.
	if hasEval && hasFetch {
		add(ruleRemoteCodeExec, events.RiskHigh, "evaluates code fetched from the network")
	} else if (hasEval || procRe.MatchString(code)) && hasDecode {
		add(ruleDecodeExec, events.RiskHigh, "runs code or commands decoded at run time")
	}
	if hasDecode {
		for _, m := range b64LitRe.FindAllStringSubmatch(code, 4) {
			if dec, ok := core.DecodeBase64(m[1]); ok && w.depth < maxDepth {
				w.depth++
				w.analyzeCode(lang, dec, c, how+" (decoded)")
				w.depth--
			}
		}
	}
	if pickleRe.MatchString(code) {
		if hasFetch {
			add(ruleUnsafeDeserialization, events.RiskHigh, "unpickles data from the network")
		} else {
			add(ruleUnsafeDeserialization, events.RiskMedium, "unpickles data (code execution if the data is hostile)")
		}
	}
	// 6. Strings: credentials, persistence paths, metadata, attack tools.
	writes := writeModeRe.MatchString(code) || changeFileRe.MatchString(code)
	listOnly := listingOnly(code)
	seen := map[string]bool{}
	for _, m := range strLitRe.FindAllStringSubmatch(code, 256) {
		s := unquoteLit(m)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		ls := strings.ToLower(s)
		metaHit := false
		for _, h := range metadataHosts {
			if strings.Contains(ls, h) {
				metaHit = true
				add(ruleCloudMetadata, events.RiskHigh, "contacts the cloud metadata service ("+h+")")
			}
		}
		for _, m := range urlRe.FindAllStringSubmatch(s, 4) {
			if mh, ok := metadataAddr(m[1]); ok && !metaHit {
				add(ruleCloudMetadata, events.RiskHigh, "contacts the cloud metadata service ("+m[1]+" is "+mh+")")
			}
		}
		for _, t := range offensiveTools {
			if strings.Contains(ls, t) {
				add(ruleOffensiveTool, events.RiskHigh, "references the attack tool "+t)
			}
		}
		w.codeLits = append(w.codeLits, codeLit{s: s, span: span, name: name, how: how, writes: writes, listOnly: listOnly})
		for _, tok := range pathTokens(s) {
			p := codePathString(tok)
			if k := credentialKind(p); k != "" && listOnly {
				add(ruleCredentialList, events.RiskMedium, "lists the names in "+p+" ("+k+"), reads none of them")
			} else if k != "" {
				add(ruleCredentialRead, events.RiskHigh, "opens "+p+" ("+k+")")
			} else if k := secretFileKind(p); k != "" && k == ".env file" {
				add(RuleSecretFileRead, events.RiskMedium, "opens "+p)
			}
			if rule, why := sensitiveTarget(p); rule != nil && rule != ruleSystemConfigWrite || strings.HasPrefix(p, "/etc/") && writes {
				if rule == nil {
					rule, why = ruleSystemConfigWrite, "changes system configuration"
				}
				lvl := events.RiskMedium
				if writes {
					lvl = events.RiskHigh
				}
				add(rule, lvl, "uses "+p+": "+why)
			}
			if strings.HasSuffix(p, "authorized_keys") && writes {
				add(ruleAuthorizedKeysWrite, events.RiskHigh, "writes authorized_keys")
			}
		}
	}
	// 7. Data leaving the machine.
	if uploadRe.MatchString(code) && (hasFetch || hasSocket || strings.Contains(code, "scp") || strings.Contains(code, "smtplib")) {
		if localDataRe.MatchString(authEnvOnly(code)) {
			add(ruleDataExfiltration, events.RiskHigh, "reads local data and sends it over the network")
		} else {
			add(ruleNetworkWrite, events.RiskMedium, "sends data over the network")
		}
	} else if hasFetch || hasSocket || codeURLRe.MatchString(code) {
		add(ruleNetworkFetch, events.RiskMedium, "talks to the network")
	}
	if surveilRe.MatchString(code) {
		lvl := events.RiskMedium
		if hasFetch || hasSocket || uploadRe.MatchString(code) {
			lvl = events.RiskHigh
		}
		add(ruleSurveillance, lvl, "captures the screen, keyboard or clipboard")
	}
	if floodRe.MatchString(code) || (lang == "python" && endlessLoopRe.MatchString(code) && !strings.Contains(code, "break") && !strings.Contains(code, "sleep") && !strings.Contains(code, "return")) {
		add(ruleResourceExhaustion, events.RiskMedium, "repeats network or process work in an endless loop")
	}
	if killAllRe.MatchString(code) {
		add(ruleDisruptSystem, events.RiskMedium, "kills processes or takes network interfaces down")
	}
	if cryptoRe.MatchString(code) && hasFetch && writes {
		add(ruleRansomwarePattern, events.RiskHigh, "encrypts files with a key fetched from the network")
	}
	if tunnelRe.MatchString(code) {
		add(ruleNetworkTunnel, events.RiskMedium, "opens a listener or tunnel")
	}
	if lang == "python" && shellTrueRe.MatchString(code) {
		add(ruleShellTrue, events.RiskMedium, "runs a command through the shell (shell=True)")
	}
}

func unquoteLit(m []string) string {
	if len(m) < 3 {
		return ""
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	return unescapeCode(s)
}

func unescapeCode(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return DecodeANSIC(s)
}

func unquoteCodeString(s string) string {
	if len(s) >= 2 {
		q := s[0]
		if (q == '"' || q == '\'' || q == '`') && s[len(s)-1] == q {
			return unescapeCode(s[1 : len(s)-1])
		}
	}
	return s
}

// codePath evaluates a path expression from code: a literal, or the home
// directory spelled in one of the usual ways.
// expandUserRe is a home-relative literal expanded by the language
// (os.path.expanduser("~/x"), File.expand_path("~")), closing parenthesis
// or not (the deletion patterns stop their capture at the first ")").
var expandUserRe = core.LazyRE(`^(?:os\.path\.)?(?:expanduser|expand_path|File\.expand_path)\(\s*["'](~[^"']*)["']`)

func codePath(expr string) string {
	e := strings.TrimSpace(expr)
	if m := expandUserRe.FindStringSubmatch(e); m != nil {
		return m[1]
	}
	switch {
	case strings.Contains(e, "process.env.HOME") || strings.Contains(e, "expanduser(\"~\")") || strings.Contains(e, "expanduser('~')") ||
		strings.Contains(e, "Path.home()") || strings.Contains(e, "os.environ[\"HOME\"]") || strings.Contains(e, "os.environ['HOME']") ||
		strings.Contains(e, "Dir.home") || strings.Contains(e, "$ENV{HOME}") || strings.Contains(e, "homedir()") || strings.Contains(e, "getenv(\"HOME\")") || strings.Contains(e, "ENV['HOME']"):
		return "~"
	}
	if len(e) >= 2 && (e[0] == '"' || e[0] == '\'') && e[len(e)-1] == e[0] {
		return codePathString(e[1 : len(e)-1])
	}
	return ""
}

func codePathString(s string) string {
	if strings.HasPrefix(s, "$HOME") {
		return "~" + s[5:]
	}
	return s
}

// analyzeCodeRun judges code that runs now without a shell command around
// it (a python action, a code argument of a tool call): analyzeCodeText,
// then the self-protection rules over the commands it runs and the paths
// it names (sc: the action's hook's view of Vigil's installation, nil for
// names only), then, when no rule raised it to MEDIUM, code-not-known-safe
// unless the code is known to be harmless (safecode.go).
func analyzeCodeRun(lang, code string, env core.Env, sc *selfCtx) []core.Finding {
	w := newWalker(env)
	w.top = false
	w.outer = [2]int{0, len(code)}
	w.self = sc
	if strings.TrimSpace(code) == "" {
		return nil
	}
	w.analyzeCode(lang, code, nil, lang)
	w.judgeAll()
	w.selfProtect()
	for _, f := range w.finds {
		if f.Level.Rank() >= events.RiskMedium.Rank() {
			return w.finds
		}
	}
	if !codeKnownSafe(lang, code) {
		w.add(core.Finding{Analyzer: core.AnalyzerCode, Rule: ruleCodeNotKnownSafe, Level: events.RiskMedium, Span: w.outer, Command: lang,
			Detail: lang + " code that uses names outside the known-harmless vocabulary (printing, lengths, JSON of literals, arithmetic, string methods); the client's own prompt decides"})
	}
	return w.finds
}

// CodeFindings is the entry point for code that does not come from a
// shell command and does not run now (.py file writes, code in documents).
func CodeFindings(lang, code string, env core.Env) []core.Finding {
	w := newWalker(env)
	w.top = false
	w.outer = [2]int{0, len(code)}
	w.analyzeCode(lang, code, nil, lang)
	w.judgeAll()
	return w.finds
}

// codeTalksOnlyLocally reports whether every URL literal in code names this
// machine (and there is at least one).
func codeTalksOnlyLocally(code string) bool {
	ms := codeURLRe.FindAllString(code, 16)
	if len(ms) == 0 {
		return false
	}
	for _, m := range ms {
		if !isLocalURL(strings.Trim(m, `'"`)) {
			return false
		}
	}
	return true
}

// authEnvOnly returns code without the reads of credential-named
// environment variables when the code sends them as an authentication
// header (the caller's own API key, sent to authenticate), so that they do
// not count as local data leaving the machine.
func authEnvOnly(code string) string {
	if !authHeaderRe.MatchString(code) {
		return code
	}
	return credEnvRe.ReplaceAllString(code, "K")
}
