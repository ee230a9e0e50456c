package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fake GitHub token, built at run time so no literal key sits in the repo.
var fakeGHP = "ghp" + "_" + "Xq7Lm2Rt9Vb4Nk8Pz3Wc6Hy1Js5Dg0FaTu4E"

func TestRedactJSONLines(t *testing.T) {
	in := `{"text": "export GITHUB_TOKEN=` + fakeGHP + `"}` + "\n" +
		"\n" +
		`{"text": "nothing to see"}` + "\n" +
		`{"v": 1, "id": "e1", "kind": "action", "conversation": "c", "time": "2026-11-22T10:00:00Z", "data": {"tool": "bash", "args": {"command": "echo ` + fakeGHP + `"}}}` + "\n"
	out, errOut, code := runCLI(t, in, "redact", "--jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, fakeGHP) {
		t.Fatalf("token in output: %s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %d: %s", len(lines), out)
	}
	var first struct {
		Text     string `json:"text"`
		Findings []struct {
			Rule, Path string
			Start, End int
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Text != "export GITHUB_TOKEN=[REDACTED:github-pat]" || len(first.Findings) != 1 ||
		first.Findings[0].Path != "text" || first.Findings[0].Start != len("export GITHUB_TOKEN=") {
		t.Fatalf("first line: %+v", first)
	}
	if lines[1] != `{"text":"nothing to see","findings":[]}` {
		t.Fatalf("second line: %s", lines[1])
	}
	var third struct {
		Event    map[string]any   `json:"event"`
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &third); err != nil {
		t.Fatal(err)
	}
	if third.Event["id"] != "e1" || len(third.Findings) != 1 || third.Findings[0]["path"] != "data.args.command" {
		t.Fatalf("event line: %s", lines[2])
	}
}

// Labelled lines ({"text", "secret", "kind", …}, as in a test corpus) are
// text: the other fields are not echoed, so the label cannot leak.
func TestRedactLabelledText(t *testing.T) {
	in := `{"text": "GITHUB_TOKEN=` + fakeGHP + `", "secret": "` + fakeGHP + `", "kind": "github-pat", "expect": "secret"}` + "\n"
	out, errOut, code := runCLI(t, in, "redact", "--jsonl")
	if code != 0 || strings.Contains(out, fakeGHP) || !strings.HasPrefix(out, `{"text":"GITHUB_TOKEN=[REDACTED:github-pat]","findings":[`) {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestRedactErrorsNameTheLine(t *testing.T) {
	in := `{"text": "ok"}` + "\n" + `{"text": "secret ` + fakeGHP + `"` + "\n"
	out, errOut, code := runCLI(t, in, "redact", "--jsonl")
	if code == 0 {
		t.Fatal("bad JSON accepted")
	}
	if !strings.Contains(errOut, "-:2:") {
		t.Fatalf("error does not name line 2: %q", errOut)
	}
	if strings.Contains(errOut, fakeGHP) || strings.Contains(out, fakeGHP) {
		t.Fatal("the error or output quotes the secret")
	}
	if !strings.Contains(out, `"text":"ok"`) {
		t.Fatalf("line 1 not written before the error: %q", out)
	}
}

func TestRedactFileAndText(t *testing.T) {
	dir := t.TempDir()
	jl := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(jl, []byte(`{"text": "token `+fakeGHP+`"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", "redact", jl)
	if code != 0 || !strings.Contains(out, `"findings":[{"rule":"github-pat"`) {
		t.Fatalf("file (auto JSON lines): exit %d, out %q, err %q", code, out, errOut)
	}
	log := filepath.Join(dir, "build.log")
	if err := os.WriteFile(log, []byte("step 1\nusing "+fakeGHP+"\nok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, "", "redact", log)
	if code != 0 || out != "step 1\nusing [REDACTED:github-pat]\nok\n" || !strings.Contains(errOut, "1 secrets removed (github-pat ×1)") {
		t.Fatalf("file (text): exit %d, out %q, err %q", code, out, errOut)
	}
	if _, _, code := runCLI(t, "", "redact", "--jsonl", "--text"); code == 0 {
		t.Fatal("--jsonl --text accepted")
	}
	out, _, code = runCLI(t, "", "redact", "--rules")
	if code != 0 || !strings.Contains(out, "github-pat") || !strings.Contains(out, "password-assignment") {
		t.Fatalf("--rules: %q", out[:min(len(out), 200)])
	}
}
