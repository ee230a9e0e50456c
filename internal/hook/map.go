package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/events"
)

// Clients Vigil has hook adapters for.
const (
	ClaudeCode = "claude-code"
	Gemini     = "gemini"
	Cursor     = "cursor"
	OpenHands  = "openhands"
)

// Clients lists the supported clients.
var Clients = []string{ClaudeCode, Gemini, Cursor, OpenHands}

// Phase is where in the tool call's life a hook fires.
type Phase int

// Phases.
const (
	// PhaseOther: an event the adapter records nothing for; it answers
	// the client's no-op.
	PhaseOther Phase = iota
	// PhaseBefore: before a tool runs; the hook gates it.
	PhaseBefore
	// PhaseAfter: after a tool ran; the hook records its output (the ingest
	// service redacts it) as an observation.
	PhaseAfter
	// PhaseStart: a session starts; the hook records conversation.started.
	PhaseStart
	// PhaseEnd: the client finished a turn or the session (Claude Code's
	// Stop, SessionEnd; Cursor's stop, sessionEnd): every action the hook
	// handed off to the client's prompt that did not run was refused or
	// abandoned, and is withdrawn.
	PhaseEnd
)

// Call is one hook invocation mapped to a Vigil event.
type Call struct {
	Client string
	// EventName is the hook event as the client spells it (PreToolUse,
	// BeforeTool, beforeShellExecution …).
	EventName string
	Phase     Phase
	// ToolName is the tool as the client names it (Bash, run_shell_command …).
	ToolName     string
	Conversation string
	// Event is the Vigil event to append: an action (PhaseBefore), an
	// observation (PhaseAfter) or a conversation.started (PhaseStart).
	Event events.Event
	// Digest identifies the tool call's name and input, to link an after
	// hook to its before hook for clients that give calls no id.
	Digest string
	// Linked is true when the action id comes from the client's own call
	// id, so an after hook names its action without local state.
	Linked bool
	// NoAsk: the client said it will not ask a person (see WillNotAsk);
	// Mode is the permission or approval mode it named.
	NoAsk bool
	Mode  string
}

// Env holds what Parse needs from outside the payload.
type Env struct {
	Now   time.Time
	NewID func() string
}

// UnlinkedPrefix starts the action id of an observation whose action could
// not be found (a client that gives tool calls no id, and no local record
// of the call): the digest of the tool's name and input follows.
const UnlinkedPrefix = "unlinked:"

// ErrPayload wraps every payload the adapters cannot read.
var ErrPayload = errors.New("hook: unreadable payload")

// Parse maps a client's hook payload to a Vigil event.
func Parse(client string, payload []byte, env Env) (Call, error) {
	v, err := events.DecodeJSONValue(payload)
	if err != nil {
		return Call{}, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Call{}, fmt.Errorf("%w: not a JSON object", ErrPayload)
	}
	var c Call
	switch client {
	case ClaudeCode:
		c, err = parseClaude(m, env)
	case Gemini:
		c, err = parseGemini(m, env)
	case Cursor:
		c, err = parseCursor(m, env)
	case OpenHands:
		c, err = parseOpenHands(m, env)
	default:
		return Call{}, fmt.Errorf("hook: unknown client %q: use one of %s", client, strings.Join(Clients, ", "))
	}
	if err != nil {
		return Call{}, err
	}
	c.Client = client
	if c.Phase == PhaseAfter && c.Event.Data["action_id"] == "" {
		// Run links it to the action when it can (see state.go).
		c.Event.Data["action_id"] = UnlinkedPrefix + c.Digest
	}
	if c.Phase != PhaseOther && c.Phase != PhaseEnd {
		c.Event.V = events.CurrentVersion
		c.Event.Conversation = c.Conversation
		c.Event.Time = env.Now.UTC()
		if c.Event.Agent == "" {
			c.Event.Agent = client
		}
		if err := c.Event.Validate(); err != nil {
			return Call{}, fmt.Errorf("%w: %v", ErrPayload, err)
		}
	}
	return c, nil
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func obj(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case string:
		// Some clients send tool input as a JSON string (Cursor's MCP hooks).
		if dv, err := events.DecodeJSONValue([]byte(x)); err == nil {
			if m, ok := dv.(map[string]any); ok {
				return m
			}
		}
		if x != "" {
			return map[string]any{"raw": x}
		}
	}
	return map[string]any{}
}

// pick copies the named keys of src that are present, renamed as to[i]
// when to is given.
func pick(src map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		from, to, ok := strings.Cut(k, "=")
		if !ok {
			to = from
		}
		if v, present := src[from]; present && v != nil {
			if _, set := out[to]; !set {
				out[to] = v
			}
		}
	}
	return out
}

// conversationToken makes a client's session id usable as a conversation
// (a NATS subject token): kept when valid, else a digest of it.
func conversationToken(client, session string) string {
	if events.ValidToken(session) {
		return session
	}
	if session == "" {
		session = "no-session"
	}
	sum := sha256.Sum256([]byte(client + "\x00" + session))
	return client + "-" + hex.EncodeToString(sum[:12])
}

// callID makes a client's tool call id usable as an event id.
func callID(prefix, id string) string {
	s := prefix + id
	if events.ValidID(s) {
		return s
	}
	sum := sha256.Sum256([]byte(id))
	return prefix + "sha256:" + hex.EncodeToString(sum[:16])
}

// digest identifies a tool call by name and canonical input.
func digest(tool string, input any) string {
	b, _ := json.Marshal(canonical(input))
	sum := sha256.Sum256(append([]byte(tool+"\x00"), b...))
	return hex.EncodeToString(sum[:16])
}

// canonical sorts map keys all the way down (encoding/json already sorts
// map keys; this only makes the intent explicit for nested []any).
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(x))
		for _, k := range keys {
			out[k] = canonical(x[k])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = canonical(x[i])
		}
		return out
	}
	return v
}

// mcpTool names an MCP tool "mcp:<server>/<tool>" from the
// mcp__<server>__<tool> spelling Claude Code and Gemini CLI use.
func mcpTool(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", false
	}
	server, tool, ok := strings.Cut(rest, "__")
	if !ok {
		return "mcp:" + rest, true
	}
	return "mcp:" + server + "/" + tool, true
}

// mapped is a tool call in Vigil's vocabulary.
type mapped struct {
	tool string
	args map[string]any
	cwd  string
}

// ---- Claude Code ----------------------------------------------------------

func parseClaude(m map[string]any, env Env) (Call, error) {
	name := str(m, "hook_event_name")
	c := Call{EventName: name, ToolName: str(m, "tool_name"),
		Conversation: conversationToken(ClaudeCode, str(m, "session_id"))}
	meta := pick(m, "session_id", "transcript_path", "permission_mode", "tool_use_id", "agent_id", "agent_type", "prompt_id", "source")
	meta["client"] = ClaudeCode
	meta["event"] = name
	if c.ToolName != "" {
		meta["tool"] = c.ToolName
	}
	input := obj(m["tool_input"])
	cwd := str(m, "cwd")
	c.Mode = str(m, "permission_mode")
	c.NoAsk = c.Mode == "bypassPermissions" || c.Mode == "dontAsk"
	useID := str(m, "tool_use_id")
	actionID := ""
	if useID != "" {
		actionID = callID("cc-", useID)
		c.Linked = true
	}
	c.Digest = digest(c.ToolName, input)
	switch name {
	case "PreToolUse":
		c.Phase = PhaseBefore
		mp := mapClaudeTool(c.ToolName, input)
		if actionID == "" {
			actionID = env.NewID()
		}
		c.Event = action(actionID, mp, cwd, meta)
	case "PostToolUse", "PostToolUseFailure":
		c.Phase = PhaseAfter
		content := m["tool_response"]
		if name == "PostToolUseFailure" {
			content = m["error"]
		}
		c.Event = observation(env.NewID(), actionID, content, meta)
	case "PermissionDenied":
		// Claude Code's auto-mode classifier refused the call (the only
		// refusal this event reports: not a "No" in the prompt, not a -p
		// refusal): the gate records it.
		c.Phase = PhaseAfter
		c.Event = observation(env.NewID(), actionID, "Claude Code refused it (auto-mode classifier)", meta)
		c.Event.Data["status"] = "denied-in-client"
		c.Event.Data["client"] = ClaudeCode
	case "SessionStart":
		c.Phase = PhaseStart
		c.Event = started(env.NewID(), cwd, meta)
	case "Stop", "SessionEnd":
		c.Phase = PhaseEnd
	default:
		c.Phase = PhaseOther
	}
	return c, nil
}

func mapClaudeTool(name string, in map[string]any) mapped {
	if t, ok := mcpTool(name); ok {
		return mapped{tool: t, args: in}
	}
	switch name {
	case "Bash":
		return mapped{tool: "bash", args: pick(in, "command", "description", "timeout", "run_in_background")}
	case "BashOutput", "KillShell", "KillBash":
		return mapped{tool: "bash_control", args: in}
	case "Write":
		return mapped{tool: "file_write", args: pick(in, "file_path=path", "content")}
	case "Edit":
		return mapped{tool: "file_edit", args: pick(in, "file_path=path", "old_string", "new_string", "replace_all")}
	case "MultiEdit":
		return mapped{tool: "file_edit", args: pick(in, "file_path=path", "edits")}
	case "NotebookEdit":
		return mapped{tool: "file_edit", args: pick(in, "notebook_path=path", "cell_id", "new_source", "cell_type", "edit_mode")}
	case "Read":
		return mapped{tool: "file_read", args: pick(in, "file_path=path", "offset", "limit")}
	case "Glob", "Grep":
		return mapped{tool: "file_search", args: in}
	case "LS":
		return mapped{tool: "file_list", args: pick(in, "path", "ignore")}
	case "WebFetch":
		return mapped{tool: "browse", args: pick(in, "url", "prompt")}
	case "WebSearch":
		return mapped{tool: "web_search", args: in}
	}
	return mapped{tool: strings.ToLower(name), args: in}
}

// ---- Gemini CLI -----------------------------------------------------------

func parseGemini(m map[string]any, env Env) (Call, error) {
	name := str(m, "hook_event_name")
	c := Call{EventName: name, ToolName: str(m, "tool_name"),
		Conversation: conversationToken(Gemini, str(m, "session_id"))}
	meta := pick(m, "session_id", "transcript_path", "timestamp", "mcp_context", "source")
	meta["client"] = Gemini
	meta["event"] = name
	if c.ToolName != "" {
		meta["tool"] = c.ToolName
	}
	input := obj(m["tool_input"])
	cwd := str(m, "cwd")
	c.Mode = str(m, "approval_mode", "approvalMode")
	c.NoAsk = strings.EqualFold(c.Mode, "yolo")
	if c.Mode != "" {
		meta["approval_mode"] = c.Mode
	}
	c.Digest = digest(c.ToolName, input)
	switch name {
	case "BeforeTool":
		c.Phase = PhaseBefore
		mp := mapGeminiTool(c.ToolName, input)
		c.Event = action(env.NewID(), mp, cwd, meta)
	case "AfterTool":
		c.Phase = PhaseAfter
		c.Event = observation(env.NewID(), "", m["tool_response"], meta)
	case "SessionStart":
		c.Phase = PhaseStart
		c.Event = started(env.NewID(), cwd, meta)
	default:
		c.Phase = PhaseOther
	}
	return c, nil
}

func mapGeminiTool(name string, in map[string]any) mapped {
	if t, ok := mcpTool(name); ok {
		return mapped{tool: t, args: in}
	}
	switch name {
	case "run_shell_command":
		return mapped{tool: "bash", args: pick(in, "command", "description", "is_background"), cwd: str(in, "dir_path", "directory")}
	case "write_file":
		return mapped{tool: "file_write", args: pick(in, "file_path=path", "absolute_path=path", "content")}
	case "replace", "edit":
		return mapped{tool: "file_edit", args: pick(in, "file_path=path", "absolute_path=path", "old_string", "new_string", "expected_replacements", "instruction")}
	case "read_file":
		return mapped{tool: "file_read", args: pick(in, "file_path=path", "absolute_path=path", "offset", "limit")}
	case "read_many_files":
		return mapped{tool: "file_read", args: pick(in, "paths", "include", "exclude")}
	case "list_directory":
		return mapped{tool: "file_list", args: pick(in, "dir_path=path", "path")}
	case "glob", "search_file_content", "grep_search":
		return mapped{tool: "file_search", args: in}
	case "web_fetch":
		return mapped{tool: "browse", args: pick(in, "url", "prompt")}
	case "google_web_search", "web_search":
		return mapped{tool: "web_search", args: in}
	case "save_memory":
		return mapped{tool: "memory", args: in}
	}
	return mapped{tool: strings.ToLower(name), args: in}
}

// ---- Cursor ---------------------------------------------------------------

func parseCursor(m map[string]any, env Env) (Call, error) {
	name := str(m, "hook_event_name")
	c := Call{EventName: name, Conversation: conversationToken(Cursor, str(m, "conversation_id"))}
	meta := pick(m, "conversation_id", "generation_id", "workspace_roots", "model", "cursor_version", "user_email")
	meta["client"] = Cursor
	meta["event"] = name
	cwd := str(m, "cwd")
	if cwd == "" {
		if roots, ok := m["workspace_roots"].([]any); ok && len(roots) > 0 {
			cwd, _ = roots[0].(string)
		}
	}
	switch name {
	case "beforeShellExecution", "afterShellExecution":
		c.ToolName = "shell"
		cmd := str(m, "command")
		c.Digest = digest(c.ToolName, cmd)
		if name == "beforeShellExecution" {
			c.Phase = PhaseBefore
			c.Event = action(env.NewID(), mapped{tool: "bash", args: map[string]any{"command": cmd}}, cwd, meta)
		} else {
			c.Phase = PhaseAfter
			content := map[string]any{"output": m["output"]}
			if d, ok := m["duration"]; ok {
				content["duration_ms"] = d
			}
			c.Event = observation(env.NewID(), "", content, meta)
		}
	case "beforeMCPExecution", "afterMCPExecution":
		c.ToolName = str(m, "tool_name")
		input := obj(m["tool_input"])
		c.Digest = digest("mcp:"+c.ToolName, input)
		if name == "beforeMCPExecution" {
			c.Phase = PhaseBefore
			server := pick(m, "url", "command")
			if len(server) > 0 {
				meta["mcp_server"] = server
			}
			c.Event = action(env.NewID(), mapped{tool: "mcp:" + c.ToolName, args: input}, cwd, meta)
		} else {
			c.Phase = PhaseAfter
			c.Event = observation(env.NewID(), "", m["result_json"], meta)
		}
	case "preToolUse", "postToolUse":
		// Newer Cursor versions also send Claude-style tool hooks.
		c.ToolName = str(m, "tool_name")
		input := obj(m["tool_input"])
		mp := mapCursorTool(c.ToolName, input)
		c.Digest = digest(mp.tool, mp.args)
		if id := str(m, "tool_use_id", "tool_call_id"); id != "" {
			c.Linked = true
			meta["tool_use_id"] = id
		}
		if name == "preToolUse" {
			c.Phase = PhaseBefore
			id := env.NewID()
			if c.Linked {
				id = callID("cur-", meta["tool_use_id"].(string))
			}
			c.Event = action(id, mp, cwd, meta)
		} else {
			c.Phase = PhaseAfter
			actionID := ""
			if c.Linked {
				actionID = callID("cur-", meta["tool_use_id"].(string))
			}
			c.Event = observation(env.NewID(), actionID, firstOf(m, "tool_output", "tool_response", "result_json"), meta)
		}
	case "beforeReadFile":
		c.ToolName = "read"
		c.Phase = PhaseBefore
		path := str(m, "file_path")
		c.Digest = digest(c.ToolName, path)
		args := map[string]any{"path": path}
		if s, ok := m["content"].(string); ok {
			// The content is not stored with the action (the agent has
			// not read it yet); its size tells what is at stake.
			args["size"] = int64(len(s))
		}
		c.Event = action(env.NewID(), mapped{tool: "file_read", args: args}, cwd, meta)
	case "stop", "sessionEnd":
		// The agent loop ended: what the hook handed off to Cursor's own
		// prompt and did not see run was refused there (see PhaseEnd).
		c.Phase = PhaseEnd
	default:
		c.Phase = PhaseOther
	}
	return c, nil
}

func mapCursorTool(name string, in map[string]any) mapped {
	switch name {
	case "Shell", "Terminal", "run_terminal_cmd":
		return mapped{tool: "bash", args: pick(in, "command", "is_background"), cwd: str(in, "cwd")}
	case "Write":
		return mapped{tool: "file_write", args: pick(in, "file_path=path", "path", "contents=content", "content")}
	case "StrReplace", "Edit", "MultiEdit", "TabWrite":
		return mapped{tool: "file_edit", args: pick(in, "file_path=path", "path", "old_string", "new_string", "edits")}
	case "Read":
		return mapped{tool: "file_read", args: pick(in, "file_path=path", "path", "offset", "limit")}
	case "Delete":
		return mapped{tool: "file_delete", args: pick(in, "file_path=path", "path")}
	}
	if t, ok := mcpTool(name); ok {
		return mapped{tool: t, args: in}
	}
	return mapped{tool: strings.ToLower(name), args: in}
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

// ---- OpenHands SDK --------------------------------------------------------

// The OpenHands SDK's hooks (openhands/sdk/hooks) send a HookEvent:
// event_type, tool_name, tool_input (the action's model_dump), tool_output,
// message, session_id, working_dir, metadata; and read {"decision":
// "allow"|"deny", "reason"} back, exit code 2 also blocking. No tool call
// id reaches the hook.
func parseOpenHands(m map[string]any, env Env) (Call, error) {
	name := str(m, "event_type", "hook_event_name")
	session := str(m, "session_id")
	if session == "" {
		session = "wd:" + str(m, "working_dir")
	}
	c := Call{EventName: name, ToolName: str(m, "tool_name"), Conversation: conversationToken(OpenHands, session)}
	meta := pick(m, "session_id", "working_dir", "metadata")
	meta["client"] = OpenHands
	meta["event"] = name
	if c.ToolName != "" {
		meta["tool"] = c.ToolName
	}
	input := obj(m["tool_input"])
	cwd := str(m, "working_dir")
	c.Digest = digest(c.ToolName, input)
	switch name {
	case "PreToolUse":
		c.Phase = PhaseBefore
		c.Event = action(env.NewID(), mapOpenHandsTool(c.ToolName, input), cwd, meta)
	case "PostToolUse":
		// Released SDKs send the observation's model_dump as
		// tool_response; tool_output is the earlier spelling.
		c.Phase = PhaseAfter
		c.Event = observation(env.NewID(), "", firstOf(m, "tool_response", "tool_output"), meta)
	case "SessionStart":
		c.Phase = PhaseStart
		c.Event = started(env.NewID(), cwd, meta)
	default:
		c.Phase = PhaseOther
	}
	return c, nil
}

func mapOpenHandsTool(name string, in map[string]any) mapped {
	switch name {
	case "terminal", "execute_bash", "bash", "BashTool", "TerminalTool":
		args := pick(in, "command", "is_input", "timeout", "security_risk")
		return mapped{tool: "bash", args: args}
	case "file_editor", "str_replace_editor", "FileEditorTool":
		path := str(in, "path")
		switch str(in, "command") {
		case "view":
			return mapped{tool: "file_read", args: pick(in, "path", "view_range", "security_risk")}
		case "create":
			return mapped{tool: "file_write", args: pick(in, "path", "file_text=content", "security_risk")}
		default:
			a := pick(in, "command", "path", "old_str=old_string", "new_str=new_string", "insert_line", "security_risk")
			a["path"] = path
			return mapped{tool: "file_edit", args: a}
		}
	}
	if strings.HasPrefix(name, "browser") {
		return mapped{tool: "browse", args: in}
	}
	return mapped{tool: strings.ToLower(name), args: in}
}

// ---- events ---------------------------------------------------------------

func action(id string, mp mapped, cwd string, meta map[string]any) events.Event {
	data := map[string]any{"tool": mp.tool, "args": mp.args, "hook": meta}
	if mp.args == nil {
		data["args"] = map[string]any{}
	}
	if mp.cwd != "" {
		cwd = mp.cwd
	}
	if cwd != "" {
		data["cwd"] = cwd
	}
	return events.Event{ID: id, Kind: events.KindAction, Data: data}
}

func observation(id, actionID string, content any, meta map[string]any) events.Event {
	data := map[string]any{"action_id": actionID, "hook": meta}
	if content != nil {
		data["content"] = content
	}
	return events.Event{ID: id, Kind: events.KindObservation, Data: data}
}

func started(id, cwd string, meta map[string]any) events.Event {
	data := map[string]any{"backend": "local", "hook": meta}
	if cwd != "" {
		data["workspace"] = cwd
	}
	return events.Event{ID: id, Kind: events.KindConversationStarted, Data: data}
}
