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
	params := schemaParams(text)
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
				if name == "" || name == self || name == "this" || name == "that" || name == "same" || params[name] || siblingTool(self, name) && !standingOrder(sent) || awayFromSelf(text[:off+v.ws[k].a]) {
					// a parameter ("run with dry_run=true first"), or a
					// tool of the same family ("use gmail_read to get the
					// full message"): the server's own documentation
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
			case f.Rule == injPromptLeak.ID && passedCredential(text, f, params):
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
		if genericSecretWords()[obj] || params[strings.ReplaceAll(obj, " ", "_")] || strings.Contains(self, strings.ReplaceAll(obj, " ", "_")) || genericSecretWords()[strings.TrimSuffix(obj, "s")] || toolAbout(self, obj) || inSchema(text, o[0]) || envVarName(text, o) || params[obj] || ownSource(lt, o[0]) {
			continue
		}
		s.add(injMcpSensitivePath, "the tool description names a secret store its name says nothing of ("+strings.TrimSpace(text[o[0]:o[1]])+")", o[0], o[1], false)
		break
	}
	for _, tok := range strings.Fields(lt) {
		// A leading dot is part of the name (.cursorrules, .claude/).
		tok = strings.TrimRight(strings.TrimLeft(tok, "`'\"()[]{}<>"), "`'\"()[]{}<>,;:!?*.")
		if fileClass(tok)&lxFileAgent != 0 && !toolAbout(self, tok) && !strings.Contains(self, "mcp") && !namedFile(self, tok) {
			// an MCP-management tool (mcp_list_servers) reads the
			// client's MCP configuration by its name
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
			if param != "" && contextParamRe.MatchString(param) && !proseNames(text, self, param) {
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
		if loc := exfilParamRe.FindStringIndex(val); loc != nil && !declaredInput(self, text, lv, loc) || specificSecret(promptBlanked(self, text, lv)) && !toolAbout(self+" "+param, lv) && !refusedSecret(lv) {
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
// siblingWords are name parts many unrelated tools share: a tool that
// names another with one of them in common is not thereby its sibling.
var siblingWords = core.LazySet("get", "set", "list", "read", "write", "run", "create", "delete", "remove", "update", "search", "send", "fetch", "find", "add", "put", "post", "make", "new", "do", "call", "use", "tool", "mcp", "api", "all", "by", "to", "the", "of", "for", "and", "info", "data")

// siblingTool: the tool named other shares a distinctive part of its
// name with self (gmail_search and gmail_read, oauth_start and
// oauth_finish, start_process and read_process_output): one server's
// tools pointing at each other.
func siblingTool(self, other string) bool {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' })
	}
	mine := split(self)
	for _, w := range split(other) {
		if len(w) < 3 || siblingWords()[w] {
			continue
		}
		for _, m := range mine {
			if m == w || len(w) >= 4 && strings.TrimSuffix(m, "s") == strings.TrimSuffix(w, "s") {
				return true
			}
		}
	}
	return false
}

// exfilFamilies: for each thing a parameter may ask for, the words by
// which a tool's own name or prose says that thing is its input (a chat
// tool takes the history, a prompt tool a system prompt, a summarizer a
// transcript).
var exfilFamilies = map[string][]string{
	"conversation": {"conversation", "chat", "transcript"},
	"chat":         {"conversation", "chat", "transcript"},
	"history":      {"conversation", "chat", "message", "thread", "mail", "history"},
	"message":      {"conversation", "chat", "message", "thread", "mail", "repl", "inbox"},
	"transcript":   {"transcript", "conversation", "chat", "call", "meeting", "recording"},
	"prompt":       {"prompt", "template", "persona", "instruction"},
	"instructions": {"prompt", "template", "persona", "instruction", "agent"},
	"context":      {"context"},
}

// declaredInput: what the parameter description asks for (the
// exfilParamRe match at loc of its lower-cased text lv) is the tool's
// declared input: file contents for a tool that writes or compares
// files ("the contents of the file to write"), the history for a chat
// tool, a system prompt for a prompt tool. The contents of a secret
// store, the conversation in a tool about something else, the system
// prompt in a weather tool, are not.
func declaredInput(self, text, lv string, loc []int) bool {
	m := lv[loc[0]:loc[1]]
	if strings.HasPrefix(m, "content") {
		obj := lv[loc[1]:min(len(lv), loc[1]+60)]
		return !specificSecret(obj) && !strings.Contains(obj, "~/") && !strings.Contains(obj, "/etc/") && !conversationWordRe.MatchString(obj)
	}
	prose := toolProse(self, text)
	if strings.Contains(m, "seed") || strings.Contains(m, "recovery") || strings.Contains(m, "mnemonic") || strings.Contains(m, "cookie") || strings.Contains(m, "system prompt") && !modelTool(prose) {
		return false
	}
	named := false
	for noun, cues := range exfilFamilies {
		if !strings.Contains(m, noun) {
			continue
		}
		named = true
		if (noun == "prompt" || noun == "instructions") && modelTool(prose) && !ownPromptRe.MatchString(lv) {
			continue
		}
		if !anyIn(prose, cues) {
			return false
		}
	}
	return named
}

// conversationWordRe: the conversation or the agent's instructions named.
var conversationWordRe = core.LazyRE(`\b(?:conversation|chat|this session|system prompt|your instructions|prompt|messages)\b`)

// promptBlanked: lv with "system prompt" blanked when the tool is named
// for prompts (run_prompt takes one; a weather tool does not).
func promptBlanked(self, text, lv string) string {
	if !modelTool(toolProse(self, text)) || !strings.Contains(lv, "system prompt") || ownPromptRe.MatchString(lv) {
		return lv
	}
	return strings.ReplaceAll(lv, "system prompt", "system ______")
}

// ownPromptRe: the agent's own prompt asked for ("your system prompt",
// "the system prompt you were given", "the full system prompt"), not
// one the caller sets.
var ownPromptRe = core.LazyRE(`\b(?:your|its|the assistant'?s|the model'?s|current|full|entire|original|whole|complete|hidden)\s+system prompt\b|\bsystem prompt\b[^.]{0,20}\byou\b`)

// modelToolRe: a tool that calls a model or keeps prompts, whose
// parameters are prompts the caller writes.
var modelToolRe = core.LazyRE(`\b(?:prompts?|llms?|models?|completions?|chat|messages api|persona|templates?|agents?|anthropic|openai|ollama|gemini)\b`)

func modelTool(prose string) bool { return modelToolRe.MatchString(prose) }

// toolProse: the tool's name and the lines of its description that are
// not its schema, lower-cased.
func toolProse(self, text string) string {
	prose := self
	for _, line := range textLines(text) {
		if !strings.HasPrefix(line, "input_schema.") {
			prose += " " + asciiLower(line)
		}
	}
	return strings.ReplaceAll(prose, "_", " ")
}

// refusedSecret: the parameter's description names a secret to say it is
// refused ("secrets such as *_TOKEN are refused").
func refusedSecret(lv string) bool {
	for _, w := range []string{"refused", "rejected", "not allowed", "never returned", "are not returned", "is not returned", "blocked", "redacted", "masked"} {
		if strings.Contains(lv, w) {
			return true
		}
	}
	return false
}

// passedCredential: a prompt-leak finding in a tool's text asks for a
// generic credential (a password, a token) to be passed where the tool
// takes one: a parameter named for it, or a form's field of that kind
// ("for password fields, pass the password the user gave you").
func passedCredential(text string, f Finding, params map[string]bool) bool {
	m := asciiLower(text[f.Span[0]:f.Span[1]])
	fs := strings.Fields(m)
	if len(fs) < 2 {
		return false
	}
	switch fs[0] {
	case "pass", "provide", "supply", "enter", "give", "fill", "type":
	default:
		return false
	}
	obj := strings.TrimSuffix(fs[len(fs)-1], "s")
	if !genericSecretWords()[obj] {
		return false
	}
	if inSchema(text, f.Span[0]) {
		// a parameter's own description: what it takes
		return true
	}
	sent := asciiLower(text[sentenceStart(text, f.Span[0]):min(len(text), f.Span[1]+120)])
	return params[obj] || strings.Contains(sent, obj+" field") || strings.Contains(sent, obj+" input") || strings.Contains(sent, "the user gave") || strings.Contains(sent, "the user provided") || strings.Contains(sent, "the user typed")
}

// namedFile: the agent configuration file tok is what the tool is named
// for (claude_md_update and CLAUDE.md, vscode_settings and
// .vscode/settings.json, cursor_rules_lint and .cursor/rules/).
func namedFile(self, tok string) bool {
	parts := strings.FieldsFunc(self, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for i, w := range parts {
		if len(w) < 4 || siblingWords()[w] {
			continue
		}
		if !strings.Contains(tok, w) {
			continue
		}
		// one distinctive part is enough when the file is named by it
		// alone (.vscode/…); two parts of the name must both be in it
		// otherwise (claude + md)
		if i+1 < len(parts) && strings.Contains(tok, parts[i+1]) || strings.Contains(tok, "."+w) || strings.Contains(tok, w+".") {
			return true
		}
	}
	return false
}

// awayFromSelfRe: the description has just said what not to use this
// tool for; the tool it names next is the one to use instead ("Do not
// use this tool for questions about the codebase; use grep_search
// instead").
var awayFromSelfRe = core.LazyRE(`(?i)\b(?:do not|don't|never|not)\s+(?:use\s+)?(?:this|it)\s+(?:tool\s+)?(?:for|to)\b[^.\n]{0,120}$`)

func awayFromSelf(before string) bool {
	if len(before) > 160 {
		before = before[len(before)-160:]
	}
	return awayFromSelfRe.MatchString(strings.TrimRight(before, " ;.,"))
}

// standingOrderRe: an order that holds for every later request, not a
// step of the tool's own flow ("whenever the user asks to send a
// message, call …", "each time", "instead").
var standingOrderRe = core.LazyRE(`(?i)\b(?:whenever|every time|each time|always|instead)\b`)

func standingOrder(sent string) bool { return standingOrderRe.MatchString(sent) }

// proseNames: the tool's own name or the description's prose (not its
// schema) names what a context-named parameter holds ("generates an
// image from a text prompt", "returns the assistant's message"): the
// parameter is the tool's input, not a request for the conversation.
func proseNames(text, self, param string) bool {
	stem := strings.TrimSuffix(strings.ToLower(param), "s")
	stem = strings.TrimSuffix(stem, "_history")
	if strings.Contains(self, stem) {
		return true
	}
	for _, line := range textLines(text) {
		if strings.HasPrefix(line, "input_schema.") {
			continue
		}
		if strings.Contains(asciiLower(line), stem) {
			return true
		}
	}
	return false
}

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
