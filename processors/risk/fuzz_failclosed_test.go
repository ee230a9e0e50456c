package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// FuzzFoldCode: folding never panics, stays bounded in size, and folding
// what it folded changes nothing more than folding once would find.
func FuzzFoldCode(f *testing.F) {
	for _, s := range []string{`os.system("r""m -rf /")`, `getattr(os,"sys"+"tem")("id")`, `shutil.rmtree(chr(47))`, `system qw(rm -rf /)`,
		`system "rm", "-rf", "/"`, `__import__("os").system("x")`, `chr(0x2f) + chr(1114111)`, `qw{`, `"a" "`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		out, _ := foldCode(code)
		if len(out) > 4*len(code)+16 {
			t.Fatalf("folded %d bytes into %d", len(code), len(out))
		}
	})
}

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
