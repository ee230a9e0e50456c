package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-dev/vigil/events"
)

// Offline MCP checks. A user who wants to know what a server would put in
// front of the model before installing it has one of two files: the
// server's answer to tools/list (a JSON-RPC response {"result":{"tools":
// […]}} or the bare {"tools":[…]}), or a client's MCP configuration (the
// "mcpServers" object of Claude Code's .mcp.json / ~/.claude.json, with
// per-project "projects.<dir>.mcpServers", Gemini CLI's settings.json, or
// VS Code's "servers"). ParseMCPFile reads either; ScanMCP scans every
// tool through the same fold the risk processor runs on a context.loaded
// event of source "mcp" (MCPMemory.StepContext), so the findings are the
// ones the processor would record. A configuration names servers and the
// commands that start them; it holds tool descriptions only where a client
// keeps them inline (a server's "tools" list or its "description"), and
// only those are scanned: ParseMCPFile never starts a server.

// ErrMCPFile is wrapped by every error ParseMCPFile returns.
var ErrMCPFile = errors.New("risk: not an MCP tools/list answer or MCP client configuration")

// MCP file kinds (MCPFile.Kind).
const (
	MCPFileToolsList = "tools/list"
	MCPFileConfig    = "config"
)

// Bounds on what ParseMCPFile keeps: a file may be written by the server
// being checked.
const (
	maxMCPFileTools = 4096
	maxMCPServers   = 1024
)

// MCPTool is one tool of an MCP file.
type MCPTool struct {
	Server      string `json:"server,omitempty"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the tool's inputSchema as decoded JSON, or nil.
	InputSchema any `json:"input_schema,omitempty"`
}

// MCPServer is one server entry of a client configuration. Env and
// headers are not kept: they hold credentials, and what a server is told
// is not what it tells the model.
type MCPServer struct {
	Name    string   `json:"name"`
	Scope   string   `json:"scope,omitempty"` // the project directory for a per-project entry
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	URL     string   `json:"url,omitempty"`
	// Tools counts the tools the entry describes inline.
	Tools int `json:"tools"`
}

// MCPFile is what ParseMCPFile found.
type MCPFile struct {
	Kind    string      `json:"kind"`
	Servers []MCPServer `json:"servers"`
	Tools   []MCPTool   `json:"-"`
}

// ParseMCPFile reads a tools/list answer or a client MCP configuration.
// The error wraps ErrMCPFile and says what was expected.
func ParseMCPFile(b []byte) (MCPFile, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return MCPFile{}, fmt.Errorf("%w: not a JSON object: %v", ErrMCPFile, err)
	}
	if raw, ok := top["result"]; ok {
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil || res["tools"] == nil {
			return MCPFile{}, fmt.Errorf("%w: \"result\" holds no \"tools\" list (is it the answer to tools/list?)", ErrMCPFile)
		}
		top = res
	} else if raw, ok := top["error"]; ok && top["tools"] == nil {
		return MCPFile{}, fmt.Errorf("%w: the file is a JSON-RPC error answer (%s), not a tools/list result", ErrMCPFile, clipWhy(string(raw)))
	}
	if raw, ok := top["tools"]; ok && top["mcpServers"] == nil {
		tools, err := parseMCPTools(raw, "")
		if err != nil {
			return MCPFile{}, err
		}
		return MCPFile{Kind: MCPFileToolsList, Servers: []MCPServer{}, Tools: tools}, nil
	}
	f := MCPFile{Kind: MCPFileConfig, Servers: []MCPServer{}}
	found := false
	add := func(raw json.RawMessage, scope, where string) error {
		found = true
		return f.addServers(raw, scope, where)
	}
	for _, key := range []string{"mcpServers", "servers"} {
		if raw, ok := top[key]; ok {
			if err := add(raw, "", key); err != nil {
				return MCPFile{}, err
			}
		}
	}
	if raw, ok := top["projects"]; ok {
		var projects map[string]map[string]json.RawMessage
		if json.Unmarshal(raw, &projects) == nil {
			dirs := make([]string, 0, len(projects))
			for d := range projects {
				dirs = append(dirs, d)
			}
			sort.Strings(dirs)
			for _, d := range dirs {
				if raw, ok := projects[d]["mcpServers"]; ok {
					if err := add(raw, d, "projects."+d+".mcpServers"); err != nil {
						return MCPFile{}, err
					}
				}
			}
		}
	}
	if !found {
		return MCPFile{}, fmt.Errorf("%w: expected {\"result\":{\"tools\":[…]}}, {\"tools\":[…]} or a configuration with \"mcpServers\"", ErrMCPFile)
	}
	return f, nil
}

func parseMCPTools(raw json.RawMessage, server string) ([]MCPTool, error) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: \"tools\" is not a list of objects: %v", ErrMCPFile, err)
	}
	if len(list) > maxMCPFileTools {
		return nil, fmt.Errorf("%w: %d tools, more than the %d this check reads", ErrMCPFile, len(list), maxMCPFileTools)
	}
	out := make([]MCPTool, 0, len(list))
	for i, t := range list {
		var name, desc string
		if err := jsonString(t["name"], &name); err != nil || name == "" {
			return nil, fmt.Errorf("%w: tool %d has no \"name\" string", ErrMCPFile, i)
		}
		if err := jsonString(t["description"], &desc); err != nil {
			return nil, fmt.Errorf("%w: tool %q: \"description\" is not a string", ErrMCPFile, clipWhy(name))
		}
		tool := MCPTool{Server: server, Name: name, Description: desc}
		for _, k := range []string{"inputSchema", "input_schema", "parameters"} {
			if raw, ok := t[k]; ok {
				var schema any
				if err := json.Unmarshal(raw, &schema); err == nil && schema != nil {
					tool.InputSchema = schema
				}
				break
			}
		}
		out = append(out, tool)
	}
	return out, nil
}

// jsonString decodes raw into s; an absent or null value is "".
func jsonString(raw json.RawMessage, s *string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, s)
}

func (f *MCPFile) addServers(raw json.RawMessage, scope, where string) error {
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return fmt.Errorf("%w: %q is not an object of server entries: %v", ErrMCPFile, clipWhy(where), err)
	}
	if len(f.Servers)+len(servers) > maxMCPServers {
		return fmt.Errorf("%w: more than %d servers", ErrMCPFile, maxMCPServers)
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := servers[n]
		sv := MCPServer{Name: n, Scope: scope}
		_ = jsonString(e["type"], &sv.Type)
		_ = jsonString(e["command"], &sv.Command)
		_ = json.Unmarshal(e["args"], &sv.Args)
		for _, k := range []string{"url", "httpUrl", "serverUrl"} {
			if sv.URL == "" {
				_ = jsonString(e[k], &sv.URL)
			}
		}
		if raw, ok := e["tools"]; ok {
			tools, err := parseMCPTools(raw, n)
			if err != nil {
				return fmt.Errorf("server %q: %w", clipWhy(n), err)
			}
			if len(f.Tools)+len(tools) > maxMCPFileTools {
				return fmt.Errorf("%w: more than %d tools", ErrMCPFile, maxMCPFileTools)
			}
			sv.Tools = len(tools)
			f.Tools = append(f.Tools, tools...)
		}
		var desc string
		if jsonString(e["description"], &desc) == nil && strings.TrimSpace(desc) != "" {
			// a server's own description reaches the model in clients
			// that list servers; it is scanned as a tool named for the
			// server
			sv.Tools++
			f.Tools = append(f.Tools, MCPTool{Server: n, Name: n, Description: desc})
		}
		f.Servers = append(f.Servers, sv)
	}
	return nil
}

// MCPToolResult is the scan of one tool: the findings the risk processor
// records for it on a context.loaded event.
type MCPToolResult struct {
	Server string      `json:"server,omitempty"`
	Tool   string      `json:"tool"`
	Level  events.Risk `json:"level"`
	ScanResult
}

// MCPReport is ScanMCP's answer.
type MCPReport struct {
	MCPFile
	// Verdict is the worst verdict of the tools ("clean" with none).
	Verdict string          `json:"verdict"`
	Level   events.Risk     `json:"level"`
	Results []MCPToolResult `json:"tools"`
}

// ScanMCP scans every tool of f, in order, as the risk processor scans a
// context.loaded event of source "mcp" recording it, with the injection
// analyzer on. Tools are folded into one fresh memory as one conversation,
// so a tool listed twice with two descriptions is a rug pull, as it would
// be live.
func ScanMCP(f MCPFile) MCPReport {
	m := NewMCPMemory()
	rep := MCPReport{MCPFile: f, Verdict: VerdictClean, Level: events.RiskLow, Results: make([]MCPToolResult, 0, len(f.Tools))}
	rank := map[string]int{VerdictClean: 0, VerdictSuspicious: 1, VerdictInjection: 2}
	for i, t := range f.Tools {
		data := map[string]any{"source": SourceMCP, "server": t.Server, "tool": t.Name, "content": t.Description}
		if t.InputSchema != nil {
			data["input_schema"] = t.InputSchema
		}
		rec := events.Record{Seq: uint64(i + 1), Event: events.Event{Kind: events.KindContextLoaded, Conversation: "vigil-scan-mcp", Data: data}}
		r, _ := m.StepContext(&rec, true)
		rep.Results = append(rep.Results, MCPToolResult{Server: t.Server, Tool: t.Name, Level: r.Level(), ScanResult: r})
		if rank[r.Verdict] > rank[rep.Verdict] {
			rep.Verdict, rep.Level = r.Verdict, r.Level()
		}
	}
	return rep
}
