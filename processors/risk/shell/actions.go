package shell

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// fileAction judges file_write / file_edit style tools by the path written
// and, for code and scripts, by the content.
func (s *Analyzer) fileAction(tool string, args map[string]any, ev *events.Event, env core.Env) ([]core.Finding, core.View) {
	p := firstString(args, "path", "file_path", "filename", "target_file", "file", "notebook_path", "target")
	content := firstString(args, "content", "file_text", "new_str", "new_string", "text", "contents", "code", "patch", "input", "new_source")
	if sub, _ := args["command"].(string); sub == "view" {
		return readFindings(p, env), core.View{Paths: nonEmpty(p)}
	}
	v := core.View{Paths: nonEmpty(p)}
	var finds []core.Finding
	add := func(rule *ShellRule, lvl events.Risk, detail string) {
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerFiles, Rule: rule, Level: lvl, Detail: detail, Command: tool})
	}
	if p == "" {
		if strings.Contains(content, "*** Begin Patch") || strings.Contains(content, "+++ ") {
			for _, line := range strings.Split(content, "\n") {
				for _, pre := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/", "+++ "} {
					if strings.HasPrefix(line, pre) {
						f, v2 := s.fileAction(tool, map[string]any{"path": strings.TrimSpace(line[len(pre):])}, ev, env)
						finds = append(finds, f...)
						v.Paths = append(v.Paths, v2.Paths...)
					}
				}
			}
			return finds, v
		}
		add(ruleNoPath, events.RiskMedium, "file change without a path")
		return finds, v
	}
	w := newWalker(env)
	w.outer = [2]int{0, len(content)}
	w.fileTool = true
	c := &command{name: tool, path: tool}
	w.cmds = append(w.cmds, c)
	rp := resolvePath(p, "")
	cls := classify(p, "", env.Workspace)
	low := strings.ToLower(rp)
	base := path.Base(low)
	switch {
	case cls == pcNull:
	case strings.Contains(low, "/.git/hooks/") || strings.HasPrefix(low, ".git/hooks/"):
		add(ruleGitHookWrite, events.RiskHigh, "writes a git hook ("+p+"), which runs on every git operation")
	case strings.Contains(low, ".github/workflows/") || strings.HasSuffix(low, ".gitlab-ci.yml") || strings.Contains(low, ".circleci/") || base == "jenkinsfile" || strings.Contains(low, ".buildkite/") || base == "azure-pipelines.yml" || strings.Contains(low, ".travis.yml"):
		add(ruleCIConfigWrite, events.RiskMedium, "changes CI configuration ("+p+"), which runs with CI secrets")
	case credentialKind(rp) != "":
		add(ruleCredentialWrite, events.RiskHigh, "writes the credential store "+p)
	}
	if cls != pcNull {
		w.judgeWrite(c, p, false, &data{text: content, known: true, flags: flowStatic}, tool)
		switch cls {
		case pcWorkspace, pcTemp:
			if secretFileKind(rp) == ".env file" {
				add(ruleEnvFileWrite, events.RiskMedium, "writes the secrets file "+p)
			}
		case pcParent, pcOther, pcHomeData, pcHome, pcCache:
			if len(w.finds) == 0 {
				add(ruleOutsideWorkspace, events.RiskMedium, "writes "+p+", outside the workspace")
			}
		case pcSystem, pcRoot, pcDevice:
			if len(w.finds) == 0 {
				add(ruleSystemWrite, events.RiskHigh, "writes the system path "+p)
			}
		}
		if env.Workspace == "" && strings.HasPrefix(rp, "/") && cls == pcOther {
			// absolute paths cannot be placed without a workspace
		}
	}
	finds = append(finds, w.finds...)
	// Content: files that tools execute or configure execution from are
	// judged as if they ran; other code as code, scripts as shell.
	_, edit := args["old_string"]
	if _, ok := args["old_str"]; ok {
		edit = true
	}
	if _, ok := args["insert_line"]; ok {
		edit = true
	}
	if f, ok := s.execConfigChange(p, content, edit, env, tool); ok {
		return append(finds, f...), v
	}
	switch ext := path.Ext(low); {
	case ext == ".py" || ext == ".pyw":
		finds = append(finds, CodeFindings("python", content, env)...)
	case ext == ".sh" || ext == ".bash" || ext == ".zsh" || base == "makefile" || strings.HasSuffix(low, "/hooks/pre-commit"):
		f, _ := Findings(content, env)
		for i := range f {
			f[i].Detail = "in " + p + ": " + f[i].Detail
			if f[i].Rule != ruleNotKnownSafe {
				v.RunRisk = events.Max(v.RunRisk, f[i].Level)
			}
		}
		finds = append(finds, capLevel(f, events.RiskMedium, "written, not run")...)
	case ext == ".js" || ext == ".ts" || ext == ".mjs" || ext == ".cjs" || ext == ".rb" || ext == ".pl" || ext == ".php" || ext == ".lua":
		finds = append(finds, capLevel(CodeFindings(strings.TrimPrefix(ext, "."), content, env), events.RiskHigh, "")...)
	case base == "package.json":
		if strings.Contains(content, "\"postinstall\"") || strings.Contains(content, "\"preinstall\"") || strings.Contains(content, "\"install\"") {
			for _, line := range strings.Split(content, "\n") {
				if strings.Contains(line, "install\"") {
					if i := strings.Index(line, ":"); i > 0 {
						cmd := strings.Trim(strings.TrimSpace(line[i+1:]), `",`)
						f, _ := Findings(cmd, env)
						finds = append(finds, f...)
						finds = append(finds, core.Finding{Analyzer: core.AnalyzerFiles, Rule: ruleInstallScript, Level: events.RiskMedium,
							Detail: "package.json install script runs on every npm install: " + cmd, Command: tool})
					}
				}
			}
		}
	}
	return finds, v
}

// capLevel lowers findings above max to max: a dangerous script that is only
// written is not yet run.
func capLevel(fs []core.Finding, max events.Risk, why string) []core.Finding {
	for i := range fs {
		if fs[i].Level.Rank() > max.Rank() {
			fs[i].Level = max
			if why != "" {
				fs[i].Detail += " (" + why + ")"
			}
		}
	}
	return fs
}

func readFindings(p string, env core.Env) []core.Finding {
	if p == "" {
		return nil
	}
	w := newWalker(env)
	c := &command{name: "read", path: "read"}
	w.judgeRead(c, p, "reads")
	return w.finds
}

// networkAction judges browse/fetch tools by destination.
func networkAction(args map[string]any, env core.Env) ([]core.Finding, core.View) {
	raw := firstString(args, "url", "uri", "href", "link", "address", "target")
	method := strings.ToUpper(firstString(args, "method"))
	body := firstString(args, "body", "data", "json", "form", "payload")
	v := core.View{}
	var finds []core.Finding
	add := func(rule *ShellRule, lvl events.Risk, detail string) {
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerNetwork, Rule: rule, Level: lvl, Detail: detail, Command: "fetch"})
	}
	if raw == "" {
		return finds, v
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err == nil && u.Scheme == "file" && u.Path != "" {
		err = nil // file:///path: no host
	} else if err != nil || u.Host == "" {
		if !strings.Contains(raw, "://") {
			u, err = url.Parse("https://" + strings.TrimSpace(raw))
		}
		if err != nil || u == nil || u.Host == "" {
			add(ruleBadURL, events.RiskMedium, "the destination is not a URL")
			return finds, v
		}
	}
	host := canonicalHost(u.Hostname())
	v.Hosts = []string{host}
	if _, ok := metadataAddr(host); ok && u.Scheme != "file" {
		add(ruleCloudMetadata, events.RiskHigh, "fetches the cloud metadata service, which hands out credentials")
		return finds, v
	}
	upload := body != "" || method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE"
	switch {
	case u.Scheme == "file":
		add(ruleLocalFileURL, events.RiskMedium, "opens a local file through a file:// URL")
		if k := credentialKind(u.Path); k != "" {
			add(ruleCredentialRead, events.RiskHigh, "opens "+u.Path+" ("+k+")")
		}
	case isLocalHost(host):
		add(ruleLocalService, events.RiskLow, "talks to a service on this machine")
	case isPrivateHost(host):
		add(rulePrivateNetwork, events.RiskMedium, "talks to a private network address ("+host+")")
	case isRawIP(host):
		add(ruleRawIP, events.RiskMedium, "talks to a bare IP address ("+host+")")
	}
	if upload {
		switch {
		case u.Scheme != "https" && !isLocalHost(host):
			add(ruleInsecureUpload, events.RiskHigh, "sends data over unencrypted "+u.Scheme)
		default:
			add(ruleNetworkWrite, events.RiskMedium, "sends data to "+host)
		}
	}
	if kind, ok := secretInURL(raw); ok && u.Scheme != "file" && !isLocalHost(host) {
		if vendorHost(kind, host) {
			add(ruleUrlExfiltration, events.RiskMedium, "the URL carries a secret ("+kind+", redacted) to "+host+", which looks like its own service")
		} else {
			add(ruleUrlExfiltration, events.RiskHigh, "the URL carries a secret ("+kind+", redacted) to "+host)
		}
	}
	if strings.Contains(u.RawQuery, "$(") || len(u.RawQuery) > 512 {
		add(ruleUrlExfiltration, events.RiskMedium, "the URL carries a large or computed query")
	}
	return finds, v
}

// mcpAction judges a call to an MCP tool: its name and string arguments.
func mcpAction(tool string, args map[string]any, env core.Env) ([]core.Finding, core.View) {
	var finds []core.Finding
	v := core.View{}
	name := strings.ToLower(tool)
	if !mcpToolName(tool) {
		// MCP names tools with 1-128 letters, digits, _ - . (and the
		// client adds the server as mcp__server__tool or mcp:server/tool):
		// anything else is not a tool a server offered, and its name is
		// not shown whole.
		shown := tool
		if len(shown) > 64 {
			shown = strings.ToValidUTF8(shown[:64], "") + "…"
		}
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerTool, Rule: ruleMCPOddName, Level: events.RiskMedium,
			Detail: fmt.Sprintf("the tool name %q (%d bytes) is not an MCP tool name", shown, len(tool)), Command: shown})
		tool = shown
	}
	add := func(rule *ShellRule, lvl events.Risk, detail string) {
		finds = append(finds, core.Finding{Analyzer: core.AnalyzerTool, Rule: rule, Level: lvl, Detail: detail, Command: tool})
	}
	mut := false
	for _, verb := range []string{"delete", "drop", "remove", "destroy", "kill", "exec", "shell", "run", "write", "push", "deploy", "send", "pay", "transfer", "merge", "update", "create", "post", "upload", "terminate"} {
		if strings.Contains(name, verb) {
			mut = true
		}
	}
	if mut {
		add(ruleMCPMutatingTool, events.RiskMedium, tool+" changes something outside the agent")
	} else {
		add(ruleMCPTool, events.RiskLow, tool+" judged by its name and arguments only")
	}
	var walk func(x any)
	walk = func(x any) {
		switch t := x.(type) {
		case string:
			for _, tok := range pathTokens(t) {
				if k := credentialKind(tok); k != "" {
					add(ruleCredentialRead, events.RiskHigh, tool+" is given "+tok+" ("+k+")")
				}
			}
			for _, h := range metadataHosts {
				if strings.Contains(t, h) {
					add(ruleCloudMetadata, events.RiskHigh, tool+" is pointed at the metadata service")
				}
			}
			for _, m := range urlRe.FindAllStringSubmatch(t, 4) {
				v.Hosts = append(v.Hosts, strings.ToLower(m[1]))
				if mh, ok := metadataAddr(m[1]); ok && !strings.Contains(t, mh) {
					add(ruleCloudMetadata, events.RiskHigh, tool+" is pointed at the metadata service ("+m[1]+")")
				}
			}
		case map[string]any:
			ks := make([]string, 0, len(t))
			for k := range t {
				ks = append(ks, k)
			}
			slices.Sort(ks) // an agent may send many keys: never quadratic
			for _, k := range ks {
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(args)
	v.Hosts = UniqSorted(v.Hosts)
	return finds, v
}

// mcpToolName reports whether name is a tool name an MCP client can show:
// at most 160 bytes (128 for the tool, the rest for the server prefix) of
// letters, digits and _ - . : / (the server separators clients use).
func mcpToolName(name string) bool {
	if name == "" || len(name) > 160 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == '.', c == ':', c == '/':
		default:
			return false
		}
	}
	return true
}

// secretInURL finds a redaction marker in a URL (the ingest service
// replaced a secret there) and returns the rule that found it.
func secretInURL(raw string) (string, bool) {
	const marker = "[REDACTED:"
	i := strings.Index(raw, marker)
	if i < 0 {
		// percent-encoded by the client: %5BREDACTED:…%5D
		if j := strings.Index(strings.ToUpper(raw), "%5BREDACTED%3A"); j >= 0 {
			rest := raw[j+len("%5BREDACTED%3A"):]
			if k := strings.Index(strings.ToUpper(rest), "%5D"); k > 0 {
				return rest[:k], true
			}
			return "secret", true
		}
		return "", false
	}
	rest := raw[i+len(marker):]
	if k := strings.IndexByte(rest, ']'); k > 0 {
		return rest[:k], true
	}
	return "secret", true
}

// vendorHost reports whether host looks like the service a secret of the
// redaction rule named kind belongs to: a word of the rule's name (github-pat,
// stripe-secret-key, slack-bot-token) is a label of the host. A token
// sent to its own API is ordinary use; sent anywhere else, it is a leak.
func vendorHost(kind, host string) bool {
	labels := strings.FieldsFunc(strings.ToLower(host), func(r rune) bool { return r == '.' || r == '-' })
	for _, w := range strings.FieldsFunc(strings.ToLower(kind), func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if len(w) < 3 || genericSecretWord()[w] {
			continue
		}
		for _, l := range labels {
			if l == w || strings.HasPrefix(l, w) && len(w) >= 5 {
				return true
			}
		}
	}
	return false
}

var genericSecretWord = core.LazySet("api", "key", "keys", "token", "tokens", "secret", "secrets", "access", "private", "generic", "password",
	"pat", "bot", "user", "app", "auth", "oauth", "bearer", "basic", "header", "credential", "credentials", "client", "refresh", "session",
	"webhook", "url", "live", "test", "classic", "fine", "grained", "legacy", "high", "entropy", "assignment", "value")
