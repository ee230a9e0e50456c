package risk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// FuzzExecConfigWrite: any content written to a file tools run from is
// judged without panicking, and is at least MEDIUM.
func FuzzExecConfigWrite(f *testing.F) {
	for _, s := range []string{"[core]\n\tfsmonitor = x\n", `{"scripts":{"a":"b"}}`, "all:\n\tx\n", `{"cells":[{"cell_type":"code","source":"!ls"}]}`, "- run: |\n    x\n", "{"} {
		f.Add(s)
	}
	s, err := NewScorer(events.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	paths := []string{".git/config", "package.json", "Makefile", "a.ipynb", ".github/workflows/x.yml", ".vscode/tasks.json", ".envrc"}
	f.Fuzz(func(t *testing.T, content string) {
		for _, p := range paths {
			ev := &events.Event{Kind: events.KindAction, Data: map[string]any{"tool": "Write", "args": map[string]any{"file_path": p, "content": content}}}
			if a := s.ScoreAction(ev, Env{}); a.Level.Rank() < events.RiskMedium.Rank() {
				t.Fatalf("%s: %s", p, a.Level)
			}
		}
	})
}

// FuzzEditorSettings: any content written to editor settings is judged
// without panicking, and a settings object that names git's binary is at
// least MEDIUM.
func FuzzEditorSettings(f *testing.F) {
	for _, s := range []string{`{"git.path": "/tmp/git"}`, `{"editor.formatOnSave": true}`, `{"terminal.integrated.env.linux": {"A": "b"}}`, "{", `{"a": {"b.path": ""}}`} {
		f.Add(s)
	}
	s, err := NewScorer(events.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, content string) {
		ev := &events.Event{Kind: events.KindAction, Data: map[string]any{"tool": "Write", "args": map[string]any{"file_path": ".vscode/settings.json", "content": content}}}
		a := s.ScoreAction(ev, Env{})
		var m map[string]any
		if err := json.Unmarshal([]byte(content), &m); err != nil {
			return // JSON with comments, or not JSON: no claim beyond not panicking
		}
		if v, ok := m["git.path"].(string); ok && strings.TrimSpace(v) != "" && a.Level.Rank() < events.RiskMedium.Rank() {
			t.Fatalf("settings naming git's binary %q: %s", v, a.Level)
		}
	})
}
