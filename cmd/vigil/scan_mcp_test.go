package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/display"
)

var updateMCP = flag.Bool("update-mcp", false, "rewrite testdata/mcp/*.golden")

// TestScanMCP runs `vigil scan --mcp` on the files of testdata/mcp: the
// human report is compared with its golden file (rewrite with
// -update-mcp), the exit status with the verdict, and --json must decode
// with the same verdict.
func TestScanMCP(t *testing.T) {
	cases := []struct {
		file    string
		code    int
		verdict string
	}{
		{"tools_list.json", 3, "injection"},
		{"bare_tools.json", 0, "clean"},
		{"claude_config.json", 0, "clean"},
		{"gemini_settings.json", 3, "injection"},
		{"hostile_names.json", 3, "injection"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p := filepath.Join("testdata", "mcp", c.file)
			out, errOut, code := runCLI(t, "", "scan", "--mcp", p)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
				if !display.Safe(line) {
					t.Errorf("unescaped output line %q", line)
				}
			}
			golden := strings.TrimSuffix(p, ".json") + ".golden"
			if *updateMCP {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-mcp)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s:\n%s", golden, out)
			}
			jout, _, jcode := runCLI(t, "", "scan", "--mcp", p, "--json")
			if jcode != c.code {
				t.Fatalf("--json: exit %d, want %d", jcode, c.code)
			}
			var rep struct {
				File    string `json:"file"`
				Kind    string `json:"kind"`
				Verdict string `json:"verdict"`
				Servers []struct {
					Name string `json:"name"`
				} `json:"servers"`
				Tools []struct {
					Tool     string `json:"tool"`
					Verdict  string `json:"verdict"`
					Level    string `json:"level"`
					Findings []struct {
						Rule string `json:"rule"`
					} `json:"findings"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(jout), &rep); err != nil {
				t.Fatalf("--json: %v: %q", err, jout)
			}
			if rep.Verdict != c.verdict || rep.File != p {
				t.Fatalf("--json: verdict %q file %q, want %q %q", rep.Verdict, rep.File, c.verdict, p)
			}
		})
	}
}

func TestScanMCPSecretsInArgsAreRedacted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".mcp.json")
	secret := "ghp_R8kZ2mQ7vXw4Lp9sT1nB6yH3cJ0dF5gA2eK8"
	if err := os.WriteFile(p, []byte(`{"mcpServers":{"gh":{"command":"gh-mcp","args":["--token","`+secret+`"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"scan", "--mcp", p}, {"scan", "--mcp", p, "--json"}} {
		out, _, code := runCLI(t, "", args...)
		if code != 0 || strings.Contains(out, secret) || !strings.Contains(out, "gh-mcp") {
			t.Fatalf("%v: exit %d, output %q", args, code, out)
		}
	}
}

func TestScanMCPErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		args       []string
		want       []string
	}{
		{"missing", "", []string{"scan", "--mcp", filepath.Join(dir, "nope.json")}, []string{"nope.json", "no such file"}},
		{"not json", "{\"tools\": [", nil, []string{"bad.json", "not a JSON object", "tools/list"}},
		{"rpc error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, nil, []string{"bad.json", "JSON-RPC error"}},
		{"tool without name", `{"tools":[{"description":"x"}]}`, nil, []string{"bad.json", "no \"name\""}},
		{"neither", `{"theme":"dark"}`, nil, []string{"bad.json", "mcpServers"}},
		{"with FILEs", "", []string{"scan", "--mcp", "x.json", "AGENTS.md"}, []string{"--mcp"}},
		{"json without mcp", "", []string{"scan", "--json", "AGENTS.md"}, []string{"--json goes with --mcp"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args == nil {
				p := filepath.Join(dir, "bad.json")
				if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
					t.Fatal(err)
				}
				args = []string{"scan", "--mcp", p}
			}
			out, errOut, code := runCLI(t, "", args...)
			if code != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}
