package risk

import (
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
