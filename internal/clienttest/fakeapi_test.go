package clienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// step is one tool call the scripted model makes.
type step struct {
	Tool  string
	Input map[string]any
}

// scenario is what the scripted model does in a conversation whose first
// user turn says "scenario=NAME": one tool call per turn, then a final
// text that echoes the last tool result it got.
type scenario struct {
	Steps []step
	Final string
}

// toolResult is what a client sent back for a tool call.
type toolResult struct {
	Error bool
	Text  string
	// ID is the tool_use id it answers (Anthropic), "" for Gemini.
	ID string
}

// fakeModel is a scripted model API on loopback: the Anthropic Messages
// API (for Claude Code, ANTHROPIC_BASE_URL) and the Gemini API (for
// Gemini CLI, GOOGLE_GEMINI_BASE_URL). It keeps no conversation state:
// the step to play is the number of tool calls already in the request,
// so client retries are harmless. "{{tuid:N}}" in a step's input is the
// tool_use id of step N (Anthropic).
type fakeModel struct {
	srv *httptest.Server

	mu      sync.Mutex
	scen    map[string]scenario
	results map[string][]toolResult
}

func newFakeModel(t *testing.T) *fakeModel {
	m := &fakeModel{scen: map[string]scenario{}, results: map[string][]toolResult{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *fakeModel) URL() string { return m.srv.URL }

func (m *fakeModel) set(name string, s scenario) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scen[name] = s
}

// resultsOf is every tool result the clients sent in scenario name.
func (m *fakeModel) resultsOf(name string) []toolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.results[name])
}

func (m *fakeModel) record(name string, rs []toolResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.results[name] = append(m.results[name], rs...)
}

func (m *fakeModel) lookup(name string) (scenario, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.scen[name]
	return s, ok
}

var scenarioRE = regexp.MustCompile(`scenario=([A-Za-z0-9_.-]+)`)

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.Contains(path, "/v1/models"):
		writeJSON(w, map[string]any{"data": []any{map[string]any{"type": "model", "id": "claude-sonnet-4-5", "display_name": "fake"}}, "has_more": false})
	case r.Method == http.MethodGet && strings.Contains(path, "/models"):
		writeJSON(w, map[string]any{"models": []any{map[string]any{"name": "models/gemini-2.5-pro"}, map[string]any{"name": "models/gemini-2.5-flash"}}})
	case strings.HasSuffix(path, "/v1/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case strings.HasSuffix(path, "/v1/messages"):
		m.anthropic(w, body)
	case strings.HasSuffix(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case strings.HasSuffix(path, ":generateContent"), strings.HasSuffix(path, ":streamGenerateContent"):
		m.gemini(w, body, strings.HasSuffix(path, ":streamGenerateContent"))
	default:
		writeJSON(w, map[string]any{})
	}
}

// --- Anthropic Messages API ---------------------------------------------

type aMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type aBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	ToolUseID string          `json:"tool_use_id"`
}

func blocksOf(raw json.RawMessage) ([]aBlock, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil, s
	}
	var bs []aBlock
	json.Unmarshal(raw, &bs)
	return bs, ""
}

func textOf(raw json.RawMessage) string {
	bs, s := blocksOf(raw)
	if bs == nil {
		return s
	}
	var out []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			out = append(out, b.Text)
		case "tool_result":
			out = append(out, textOf(b.Content))
		}
	}
	return strings.Join(out, "\n")
}

func (m *fakeModel) anthropic(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string     `json:"model"`
		Stream   bool       `json:"stream"`
		Messages []aMessage `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	if req.Model == "" {
		req.Model = "claude-sonnet-4-5"
	}
	name := ""
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			if mm := scenarioRE.FindStringSubmatch(textOf(msg.Content)); mm != nil {
				name = mm[1]
				break
			}
		}
	}
	hasBash := slices.ContainsFunc(req.Tools, func(t struct {
		Name string `json:"name"`
	}) bool {
		return t.Name == "Bash"
	})
	sc, ok := m.lookup(name)
	var blocks []map[string]any
	stop := "end_turn"
	if !ok || !hasBash {
		// Side requests (titles, summaries, prefix checks): short text.
		blocks = []map[string]any{{"type": "text", "text": "ok"}}
	} else {
		var ids []string
		for _, msg := range req.Messages {
			if msg.Role != "assistant" {
				continue
			}
			bs, _ := blocksOf(msg.Content)
			for _, b := range bs {
				if b.Type == "tool_use" {
					ids = append(ids, b.ID)
				}
			}
		}
		var last []toolResult
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" {
			bs, _ := blocksOf(req.Messages[n-1].Content)
			for _, b := range bs {
				if b.Type == "tool_result" {
					last = append(last, toolResult{Error: b.IsError, Text: textOf(b.Content), ID: b.ToolUseID})
				}
			}
		}
		m.record(name, last)
		done := len(ids)
		if done < len(sc.Steps) {
			st := sc.Steps[done]
			raw, _ := json.Marshal(st.Input)
			s := string(raw)
			for i, id := range ids {
				s = strings.ReplaceAll(s, fmt.Sprintf("{{tuid:%d}}", i), id)
			}
			var input map[string]any
			json.Unmarshal([]byte(s), &input)
			id := fmt.Sprintf("toolu_fake%s_%d_%08x", strings.NewReplacer("-", "", ".", "").Replace(name), done, rand.Uint32())
			blocks = []map[string]any{{"type": "tool_use", "id": id, "name": st.Tool, "input": input}}
			stop = "tool_use"
		} else {
			var echo []string
			for _, r := range last {
				if r.Error {
					echo = append(echo, "[error] "+r.Text)
				} else {
					echo = append(echo, r.Text)
				}
			}
			blocks = []map[string]any{{"type": "text", "text": sc.Final + " LAST_TOOL_RESULT<<" + strings.Join(echo, " | ") + ">>"}}
		}
	}
	mid := fmt.Sprintf("msg_fake_%016x", rand.Uint64())
	if !req.Stream {
		writeJSON(w, map[string]any{"id": mid, "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 20}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "close")
	ev := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": mid, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	ev("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		if b["type"] == "text" {
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			in, _ := json.Marshal(b["input"])
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// --- Gemini API -----------------------------------------------------------

type gPart struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     json.RawMessage `json:"functionCall,omitempty"`
	FunctionResponse json.RawMessage `json:"functionResponse,omitempty"`
}

func (m *fakeModel) gemini(w http.ResponseWriter, body []byte, stream bool) {
	var req struct {
		Contents []struct {
			Role  string  `json:"role"`
			Parts []gPart `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	name := ""
	for _, c := range req.Contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if mm := scenarioRE.FindStringSubmatch(p.Text); mm != nil && name == "" {
				name = mm[1]
			}
		}
	}
	hasShell := false
	for _, t := range req.Tools {
		for _, fd := range t.FunctionDeclarations {
			hasShell = hasShell || fd.Name == "run_shell_command"
		}
	}
	sc, ok := m.lookup(name)
	var parts []map[string]any
	if !ok || !hasShell {
		// Side requests (next speaker, router): JSON that fits their schemas.
		side, _ := json.Marshal(map[string]any{"reasoning": "done", "next_speaker": "user", "model_choice": "flash",
			"complexity_reasoning": "simple", "complexity_score": 10})
		parts = []map[string]any{{"text": string(side)}}
	} else {
		done := 0
		for _, c := range req.Contents {
			if c.Role == "model" && slices.ContainsFunc(c.Parts, func(p gPart) bool { return len(p.FunctionCall) > 0 }) {
				done++
			}
		}
		var last []toolResult
		if n := len(req.Contents); n > 0 {
			for _, p := range req.Contents[n-1].Parts {
				if len(p.FunctionResponse) > 0 {
					last = append(last, toolResult{Error: strings.Contains(string(p.FunctionResponse), `"error"`), Text: string(p.FunctionResponse)})
				}
			}
		}
		m.record(name, last)
		if done < len(sc.Steps) {
			st := sc.Steps[done]
			parts = []map[string]any{{"functionCall": map[string]any{"name": st.Tool, "args": st.Input}}}
		} else {
			var echo []string
			for _, r := range last {
				echo = append(echo, r.Text)
			}
			parts = []map[string]any{{"text": sc.Final + " LAST_TOOL_RESULT<<" + strings.Join(echo, " | ") + ">>"}}
		}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-fake",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Connection", "close")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}
