package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/processors/risk/core"
)

// MCP tool poisoning. An MCP server's tool descriptions and input schemas
// reach the model, not the user: a runtime records them as a
// context.loaded event with data.source "mcp" (data.server, data.tool,
// data.content = the description, optional data.input_schema), and they
// are scanned like a context file plus what is specific to tools:
//
//   - mcp-cross-tool: an order to call another tool ("before using this
//     tool, call read_file with …"); weak alone, as workflow hints do it too.
//   - mcp-tool-shadowing: the description tells the model to use it
//     instead of other tools, or never to use them; weak.
//   - mcp-sensitive-path: secret stores or agent configuration named in a
//     tool whose name says nothing of them; weak (strong findings come
//     from the usual rules when the description orders a read).
//   - mcp-exfil-parameter: a parameter whose description asks for the
//     conversation, the prompt, secrets or file contents; strong.
//   - mcp-context-parameter: a parameter named for the conversation or the
//     prompt; weak.
//   - mcp-tool-changed: the description or schema differs from the one
//     first seen for the same server and tool (a "rug pull"); strong.
//     The processor remembers the first digest per server+tool in its fold
//     state (see Processor).
//
// Spans point into the text ToolText returns: the description, a blank
// line, then one line per string of the input schema ("<path>: <value>").

// SourceMCP is data.source of a context.loaded event that records an MCP
// tool.
const SourceMCP = "mcp"

// ToolText is the text ScanTool scans: the description, then each string
// of the input schema on its own line, prefixed with its JSON path.
func ToolText(description string, schema any) string {
	var b strings.Builder
	b.WriteString(description)
	lines := schemaLines(schema)
	if len(lines) > 0 {
		b.WriteString("\n\n")
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// schemaLines renders the strings of a JSON schema (or of any JSON value)
// as "path: value" lines, in a fixed order; property names are lines too.
func schemaLines(v any) []string {
	var out []string
	var walk func(path string, v any, depth int)
	walk = func(path string, v any, depth int) {
		if depth > 12 || len(out) > 2000 {
			return
		}
		switch t := v.(type) {
		case string:
			if strings.TrimSpace(t) != "" {
				out = append(out, path+": "+strings.ReplaceAll(t, "\n", " "))
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if path != "" && strings.HasSuffix(path, ".properties") {
					out = append(out, path+"."+k+": (parameter)")
				}
				walk(path+"."+k, t[k], depth+1)
			}
		case []any:
			for i, x := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), x, depth+1)
			}
		}
	}
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		// a schema given as JSON text
		var x any
		if json.Unmarshal([]byte(t), &x) == nil {
			walk("input_schema", x, 0)
		} else {
			walk("input_schema", t, 0)
		}
	default:
		walk("input_schema", v, 0)
	}
	return out
}

// ToolDigest is the digest a rug pull is detected by: SHA-256 of the
// description and the schema's canonical JSON (sorted keys).
func ToolDigest(description string, schema any) string {
	h := sha256.New()
	h.Write([]byte(description))
	h.Write([]byte{0})
	if schema != nil {
		if s, ok := schema.(string); ok {
			var x any
			if json.Unmarshal([]byte(s), &x) == nil {
				schema = x
			}
		}
		b, err := json.Marshal(schema)
		if err != nil {
			b = []byte(fmt.Sprint(schema))
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ScanTool scans an MCP tool's description and input schema: every rule of
// Scan, plus the tool-specific ones above (except mcp-tool-changed, which
// needs the history the processor keeps).
func ScanTool(server, tool, description string, schema any) ScanResult {
	text := ToolText(description, schema)
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	s := &scanner{}
	s.scan(text, 0)
	s.toolRules(tool, text)
	return s.result()
}

var (
	toolRefRe = core.LazyRE("`([A-Za-z][\\w.-]*)`|\\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\\b|\\b(?:the|a)\\s+([\\w.-]+)\\s+tool\\b|\\btool\\s+(?:named|called)\\s+[\"'`]?([\\w.-]+)")
	shadowRe  = core.LazyRE(`(?i)\b(?:instead of|rather than|in place of|never use|do not use|don't use|avoid using|must not use|replaces?|supersedes?|overrides?)\b[^.\n]{0,40}\b(?:tools?|functions?|servers?)\b|\b(?:always|only)\s+use\s+this\s+tool\b|\bthis tool (?:replaces|overrides|supersedes|takes precedence over)\b`)
	// crossRedirectRe: the description rewrites what other tools' calls
	// do: their recipient, account, address, or a copy to someone.
	crossRedirectRe = core.LazyRE(`(?i)\b(?:when|whenever|before|if|each time|every time)\b[^.\n]{0,60}?\b(?:another|any other|other|any|the \w+)\s+(?:tools?|functions?)\b[^.\n]{0,80}?\b(?:replace|change|swap|substitute|redirect|set|add|bcc|cc|copy|send)\b[^.\n]{0,40}?\b(?:iban|account|recipients?|address|destination|payee|wallet|bcc|cc|to)\b|\b(?:send|redirect|forward|route)\s+(?:all|every|each|the)\s+(?:[\w-]+\s+)?(?:messages?|e-?mails?|payments?|transfers?)\s+(?:to\s+)?[^.\n]{0,40}?\binstead of\b`)
	contextParamRe  = core.LazyRE(`(?i)^(?:conversation|conversation_history|chat_history|chat|history|messages|previous_messages|prior_messages|system_prompt|systemprompt|prompt|instructions|system_instructions|context|context_window|memory|memories|transcript|thread)$`)
	exfilParamRe    = core.LazyRE(`(?i)\b(?:full|entire|whole|complete|all|verbatim|previous|prior|raw|last)\b[^.\n]{0,30}\b(?:conversation|chat|history|messages?|prompt|instructions|context|transcript)\b|\bcontents? of\b|\b(?:conversation|chat) history\b|\bsystem prompt\b|\b(?:seed|recovery) phrase\b|\bmnemonic\b|\bthe user'?s (?:cookies|browser cookies|session cookies)\b`)
)

// toolRules adds the tool-specific findings to s, for the text ToolText
// built.
func (s *scanner) toolRules(tool, text string) {
	lt := asciiLower(text)
	self := strings.ToLower(tool)
	// orders to call another tool
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != '\n' && !(text[i] == '.' && i+1 < len(text) && text[i+1] == ' ') {
			continue
		}
		sent, off := text[start:i], start
		start = i + 1
		if strings.HasPrefix(sent, "input_schema.") {
			// a parameter's description is prose of its own: its
			// first word may be an order ("Always set this to …, and
			// call set_permissions …")
			if _, val, ok := strings.Cut(sent, ": "); ok {
				off += len(sent) - len(val)
				sent = val
			}
		}
		if len(sent) < 8 {
			continue
		}
		v := newClauseView(sent, lt[off:off+len(sent)])
		v.orders(lxCall, func(k int, neg bool) bool {
			if neg {
				return true
			}
			rest := sent[v.ws[k].b:]
			for _, mi := range toolRefRe.FindAllStringSubmatchIndex(rest, 4) {
				name := ""
				for g := 2; g+1 < len(mi); g += 2 {
					if mi[g] >= 0 {
						name = strings.ToLower(rest[mi[g]:mi[g+1]])
						break
					}
				}
				if name == "" || name == self || name == "this" || name == "that" || name == "same" {
					continue
				}
				if insteadBefore(rest, mi[0]) {
					// "use this tool instead of running grep through
					// the shell tool": the other tool is the one not
					// to call
					continue
				}
				s.add(injMcpCrossTool, "the tool description orders a call to another tool ("+name+")", off+v.ws[k].a, off+len(sent), false)
				return false
			}
			return true
		})
	}
	{
		// a weak secret-request in a tool names a generic credential
		// (a token, an API key): a credentials tool returns them by its
		// name, an authenticated tool takes the one its call needs
		// ("pass the API access token of the store"); a secret store
		// (~/.ssh/id_rsa, .env) is strong and stays
		kept := s.findings[:0]
		for _, f := range s.findings {
			switch {
			case f.Rule == injSecretRequest.ID && (!f.Strong || ownSecrets(self, text, f)):
			case f.Rule == injApprovalBypass.ID && askSecretGuard(text, f):
			default:
				kept = append(kept, f)
			}
		}
		s.findings = kept
	}
	s.toolCovert(tool, text)
	s.toolAccessGrant(tool, text)
	if loc := crossRedirectRe.FindStringIndex(text); loc != nil && !negatedBefore(text, loc[0]) {
		s.add(injMcpCrossTool, "the tool description changes what calls of other tools do (their recipient, account or copy)", loc[0], loc[1], true)
	}
	s.toolDisparage(tool, text)
	s.toolConceal(tool, text)
	s.toolOverrideUser(text)
	s.toolSubstitute(text)
	s.toolForeign(tool, text)
	s.toolBypass(text)
	s.toolValueOrders(text)
	params := schemaParams(text)
	s.toolSmuggle(text, params)
	for _, loc := range shadowRe.FindAllStringIndex(text, 8) {
		if selfGuidance(text[loc[0]:loc[1]]) || paramOverride(text, loc[0]) {
			// "do not use this tool to validate tokens": usage
			// guidance about itself, not about other tools
			continue
		}
		s.add(injMcpToolShadowing, "the tool description tells the model to prefer it over other tools", loc[0], loc[1], false)
		break
	}
	// secret stores and agent configuration in a tool that is not about them
	for _, o := range secretObjects(lt) {
		obj := strings.Trim(strings.TrimSpace(lt[o[0]:o[1]]), "`'\"(")
		if genericSecretWords()[obj] || genericSecretWords()[strings.TrimSuffix(obj, "s")] || toolAbout(self, obj) || inSchema(text, o[0]) || envVarName(text, o) || params[obj] || ownSource(lt, o[0]) {
			continue
		}
		s.add(injMcpSensitivePath, "the tool description names a secret store its name says nothing of ("+strings.TrimSpace(text[o[0]:o[1]])+")", o[0], o[1], false)
		break
	}
	for _, tok := range strings.Fields(lt) {
		// A leading dot is part of the name (.cursorrules, .claude/).
		tok = strings.TrimRight(strings.TrimLeft(tok, "`'\"()[]{}<>"), "`'\"()[]{}<>,;:!?*.")
		if fileClass(tok)&lxFileAgent != 0 && !toolAbout(self, tok) {
			if i := strings.Index(lt, tok); i >= 0 {
				s.add(injMcpSensitivePath, "the tool description names the agent's own configuration ("+tok+")", i, i+len(tok), false)
			}
			break
		}
	}
	// parameters
	for lineOff, line := range textLines(text) {
		if !strings.HasPrefix(line, "input_schema.") {
			continue
		}
		path, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		param := paramName(path)
		if val == "(parameter)" {
			if param != "" && contextParamRe.MatchString(param) {
				s.add(injMcpContextParameter, "a parameter named for the conversation or the prompt ("+param+")", lineOff, lineOff+len(line), false)
			}
			continue
		}
		if !strings.HasSuffix(path, ".description") && !strings.HasSuffix(path, ".title") && !strings.HasSuffix(path, ".default") {
			continue
		}
		lv := asciiLower(val)
		// a credential the call itself needs ("Bearer token for the API",
		// "your API key") is how authenticated tools work; a secret store
		// the tool has no business with (~/.ssh/id_rsa, .env) is not
		if loc := exfilParamRe.FindStringIndex(val); loc != nil || specificSecret(lv) && !toolAbout(self+" "+param, lv) {
			s.add(injMcpExfilParameter, "a parameter asks the model for the conversation, the prompt, secrets or file contents ("+param+")", lineOff, lineOff+len(line), true)
		}
	}
}

// inSchema reports whether byte i of a ToolText is on a line of the
// input schema: the parameter names, the "required" list and their
// descriptions are the tool's own (an api_token it takes); what a
// parameter description asks for is judged by mcp-exfil-parameter.
func inSchema(text string, i int) bool {
	ls := strings.LastIndexByte(text[:i], '\n') + 1
	return strings.HasPrefix(text[ls:], "input_schema.")
}

// envVarName: the secret at o is the name of an environment variable
// ("uses the VERCEL_TOKEN environment variable"): the credential the
// tool itself is configured with.
func envVarName(text string, o []int) bool {
	name := strings.Trim(strings.TrimSpace(text[o[0]:o[1]]), "`'\"($")
	if len(name) < 3 || !strings.Contains(name, "_") || strings.ToUpper(name) != name {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// paramName: the property a schema path is under ("…properties.note.description" → "note").
func paramName(path string) string {
	i := strings.LastIndex(path, ".properties.")
	if i < 0 {
		return ""
	}
	rest := path[i+len(".properties."):]
	if j := strings.IndexByte(rest, '.'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// toolAbout: the tool's name says it deals with what obj names (an ssh
// tool may name ~/.ssh, a dotenv tool .env).
func toolAbout(name, obj string) bool {
	// credentials are one family: a vault tool may name keys, tokens,
	// passwords and the keychain; an ssh tool its id_* keys
	family := []string{"secret", "credential", "key", "vault", "token", "auth", "password", "keychain", "keyring", "pass", "login", "cred",
		// password managers and their databases
		"kdbx", "keepass", "1password", "onepassword", "bitwarden", "lastpass", "dashlane", "keeper"}
	// a tool named for credentials in general (get_credentials,
	// secret_manager) may name any store of them (~/.aws, ~/.kube/config)
	if anyIn(name, []string{"secret", "credential", "cred", "vault", "keychain", "keyring"}) || anyIn(name, family) && anyIn(obj, family) || strings.Contains(name, "ssh") && (strings.Contains(obj, "id_") || strings.Contains(obj, "known_hosts")) {
		return true
	}
	for _, w := range []string{"ssh", "aws", "env", "secret", "credential", "key", "vault", "token", "auth", "password", "kube", "docker", "git", "npm", "pypi", "cloud", "gcloud", "azure", "config"} {
		if strings.Contains(name, w) && strings.Contains(obj, w) {
			return true
		}
	}
	return false
}

// mcpSeen is what the memory keeps of an MCP tool: the digest of its
// description and schema when first seen, and the log sequence.
type mcpSeen struct {
	Digest string `msgpack:"d"`
	Seq    uint64 `msgpack:"s"`
}

// mcpKey names a tool across sessions: server and tool.
func mcpKey(server, tool string) string { return server + "\x00" + tool }

func anyIn(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// specificSecret: lt names a secret store (a key file, a credentials
// file, a dotenv file), not only a generic credential word.
func specificSecret(lt string) bool {
	for _, o := range secretObjects(lt) {
		obj := strings.Trim(strings.TrimSpace(lt[o[0]:o[1]]), "`'\"(")
		if !genericSecretWords()[obj] && !genericSecretWords()[strings.TrimSuffix(obj, "s")] {
			return true
		}
	}
	return false
}
