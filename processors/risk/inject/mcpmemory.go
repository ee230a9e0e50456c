package inject

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

// MCPMemory is the fold state both the risk processor and the gate keep
// about MCP tools: the digest of each tool's description and schema when
// first seen (to find a rug pull), and, per conversation, the tools whose
// description was judged an injection, changed since first seen, or could
// not be remembered. A call of such a tool in that conversation is HIGH
// (mcp-tool-tainted): the description is what the model read before it
// chose the call.
//
// The memory is bounded per server (maxToolsPerServer) and each
// conversation may introduce at most maxServersPerConv new servers, so a
// flood of descriptions from one conversation fills only its own quota and
// never stops the memory remembering the tools of others. A tool the
// memory has no room for is tainted in the conversation that sent it:
// what Vigil cannot remember it cannot vouch for. All bounds count records,
// so the outcome is the same in every replay; the state encodes
// deterministically (maps, sorted by the snapshot encoder).
type MCPMemory struct {
	seen       map[string]mcpSeen
	perServer  map[string]int // derived from seen
	newServers map[string]int
	taint      map[string]map[string]string
}

const (
	maxToolsPerServer = 512
	maxServersPerConv = 16
	maxMCPTools       = 65536
	maxTaintPerConv   = 1024
	taintAll          = "\x00*" // the conversation's taint list overflowed: every MCP call
)

// MCPMemoryState is MCPMemory's snapshot form: sorted lists, so the same
// memory always encodes to the same bytes.
type MCPMemoryState struct {
	Seen       []MCPSeenEntry  `msgpack:"seen,omitempty"`        // by key
	NewServers []MCPConvCount  `msgpack:"new_servers,omitempty"` // by conversation
	Taint      []MCPTaintEntry `msgpack:"taint,omitempty"`       // by conversation, then key
}

// MCPSeenEntry is one remembered tool: key is server NUL tool.
type MCPSeenEntry struct {
	Key    string `msgpack:"k"`
	Digest string `msgpack:"d"`
	Seq    uint64 `msgpack:"s"`
}

// MCPConvCount is how many servers a conversation introduced.
type MCPConvCount struct {
	Conv string `msgpack:"c"`
	N    int    `msgpack:"n"`
}

// MCPTaintEntry is one tool tainted in a conversation, and why.
type MCPTaintEntry struct {
	Conv string `msgpack:"c"`
	Key  string `msgpack:"k"`
	Why  string `msgpack:"w"`
}

// NewMCPMemory returns an empty memory.
func NewMCPMemory() *MCPMemory {
	return &MCPMemory{seen: map[string]mcpSeen{}, perServer: map[string]int{}, newServers: map[string]int{}, taint: map[string]map[string]string{}}
}

// State returns the memory's state for a snapshot.
func (m *MCPMemory) State() MCPMemoryState {
	var st MCPMemoryState
	for _, k := range slices.Sorted(maps.Keys(m.seen)) {
		s := m.seen[k]
		st.Seen = append(st.Seen, MCPSeenEntry{Key: k, Digest: s.Digest, Seq: s.Seq})
	}
	for _, c := range slices.Sorted(maps.Keys(m.newServers)) {
		st.NewServers = append(st.NewServers, MCPConvCount{Conv: c, N: m.newServers[c]})
	}
	for _, c := range slices.Sorted(maps.Keys(m.taint)) {
		for _, k := range slices.Sorted(maps.Keys(m.taint[c])) {
			st.Taint = append(st.Taint, MCPTaintEntry{Conv: c, Key: k, Why: m.taint[c][k]})
		}
	}
	return st
}

// SetState replaces the memory with a snapshot's.
func (m *MCPMemory) SetState(st MCPMemoryState) error {
	if len(st.Seen) > maxMCPTools {
		return fmt.Errorf("mcp memory: %d tools, more than %d", len(st.Seen), maxMCPTools)
	}
	n := NewMCPMemory()
	for _, e := range st.Seen {
		n.seen[e.Key] = mcpSeen{Digest: e.Digest, Seq: e.Seq}
		n.perServer[serverOf(e.Key)]++
	}
	for _, e := range st.NewServers {
		n.newServers[e.Conv] = e.N
	}
	for _, e := range st.Taint {
		t := n.taint[e.Conv]
		if t == nil {
			t = map[string]string{}
			n.taint[e.Conv] = t
		}
		if len(t) > maxTaintPerConv {
			return fmt.Errorf("mcp memory: conversation %.64q taints more than %d tools", e.Conv, maxTaintPerConv)
		}
		t[e.Key] = e.Why
	}
	*m = *n
	return nil
}

func serverOf(key string) string {
	if i := strings.IndexByte(key, 0); i >= 0 {
		return key[:i]
	}
	return key
}

// Forget drops what the memory holds for a conversation gone idle (its
// taints and its server quota; the digests stay, they are not its).
func (m *MCPMemory) Forget(conv string) {
	delete(m.taint, conv)
	delete(m.newServers, conv)
}

// Observe records that conversation conv was shown tool of server with
// digest at log seq. It returns the first sighting (when there was one) and
// whether the memory holds the tool now.
func (m *MCPMemory) Observe(conv string, seq uint64, server, tool, digest string) (first mcpSeen, seen, held bool) {
	key := mcpKey(server, tool)
	if f, ok := m.seen[key]; ok {
		return f, true, true
	}
	if len(m.seen) >= maxMCPTools || m.perServer[server] >= maxToolsPerServer {
		return mcpSeen{}, false, false
	}
	if m.perServer[server] == 0 {
		if m.newServers[conv] >= maxServersPerConv {
			return mcpSeen{}, false, false
		}
		m.newServers[conv]++
	}
	m.seen[key] = mcpSeen{Digest: digest, Seq: seq}
	m.perServer[server]++
	return mcpSeen{}, false, true
}

// Taint marks tool of server as not to be called in conv without a person.
func (m *MCPMemory) Taint(conv, server, tool, why string) {
	t := m.taint[conv]
	if t == nil {
		t = map[string]string{}
		m.taint[conv] = t
	}
	key := mcpKey(server, tool)
	if _, ok := t[key]; ok {
		return
	}
	if len(t) >= maxTaintPerConv {
		t[taintAll] = "more MCP tools were flagged in this conversation than Vigil remembers one by one"
		return
	}
	t[key] = clipWhy(why)
}

func clipWhy(s string) string {
	if len(s) > 256 {
		return strings.ToValidUTF8(s[:256], "") + "…"
	}
	return s
}

// mcpCallName splits an action's tool name into the MCP server and tool:
// mcp__server__tool (Claude Code), mcp:server/tool, mcp:tool.
func mcpCallName(name string) (server, tool string, ok bool) {
	switch {
	case strings.HasPrefix(name, "mcp__"):
		rest := name[5:]
		if i := strings.Index(rest, "__"); i >= 0 {
			return rest[:i], rest[i+2:], true
		}
		return "", rest, true
	case strings.HasPrefix(name, "mcp:"):
		rest := name[4:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[:i], rest[i+1:], true
		}
		return "", rest, true
	}
	return "", "", false
}

// Tainted returns why a call of the action's tool is HIGH in conv, if it is.
func (m *MCPMemory) Tainted(conv, actionTool string) (string, bool) {
	t := m.taint[conv]
	if len(t) == 0 {
		return "", false
	}
	server, tool, ok := mcpCallName(actionTool)
	if !ok {
		// a client may call an MCP tool by its bare name
		server, tool = "", actionTool
	}
	if why, ok := t[taintAll]; ok {
		return why, true
	}
	if why, ok := t[mcpKey(server, tool)]; ok {
		return why, true
	}
	for k, why := range t { // a bounded list (maxTaintPerConv); any match is the same answer
		s, tl := serverOf(k), k[strings.IndexByte(k, 0)+1:]
		if tl == tool && (server == "" || s == "" || strings.EqualFold(s, server)) {
			return why, true
		}
	}
	return "", false
}

// Raise adds the mcp-tool-tainted reason to an assessment of an action in
// conv when its tool is tainted there, and raises it to HIGH.
func (m *MCPMemory) Raise(conv, actionTool string, level events.Risk, reasons []events.Reason) (events.Risk, []events.Reason) {
	why, ok := m.Tainted(conv, actionTool)
	if !ok {
		return level, reasons
	}
	r := events.Reason{Analyzer: core.AnalyzerTool, Rule: shell.RuleMCPToolTainted.ID, Level: events.RiskHigh,
		Detail: "this conversation was shown a description of the tool that " + why + "; a person decides every call of it"}
	return events.RiskHigh, append([]events.Reason{r}, reasons...)
}

// StepContext folds a context.loaded record holding an MCP tool's
// description (data.source "mcp"): it remembers the digest, and taints the
// tool in the record's conversation when the description changed since
// first seen, could not be remembered, or (scan set) scans as an
// injection. It returns the scan result (clean when scan is off) and what
// the record describes.
func (m *MCPMemory) StepContext(rec *events.Record, scan bool) (ScanResult, string) {
	ev := &rec.Event
	content := ev.StringField("content")
	server, tool := ev.StringField("server"), ev.StringField("tool")
	if tool == "" {
		tool = ev.StringField("path")
	}
	schema := ev.Data["input_schema"]
	digest := ToolDigest(content, schema)
	first, seen, held := m.Observe(ev.Conversation, rec.Seq, server, tool, digest)
	what := fmt.Sprintf("MCP tool %q of server %q", clipWhy(tool), clipWhy(server))
	changed := seen && first.Digest != digest
	switch {
	case changed:
		m.Taint(ev.Conversation, server, tool, fmt.Sprintf("differs from the one first seen at log seq %d (a rug pull)", first.Seq))
	case !held:
		m.Taint(ev.Conversation, server, tool, "Vigil had no room to remember (its memory of this server or this conversation's servers is full), so a later change could not be told")
	}
	if !scan {
		return ScanResult{Verdict: VerdictClean}, what
	}
	s := &scanner{}
	text := ToolText(content, schema)
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	s.scan(text, 0)
	s.toolRules(tool, text)
	if changed {
		s.add(injMcpToolChanged, fmt.Sprintf("the description or schema differs from the one first seen at log seq %d (digest %.12s, now %.12s)", first.Seq, first.Digest, digest),
			0, len(content), true)
	}
	r := s.result()
	if r.Verdict == VerdictInjection {
		m.Taint(ev.Conversation, server, tool, "was judged a prompt injection")
	}
	return r, what
}
