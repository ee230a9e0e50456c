package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/processors/redact"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// newScanCmd: `vigil scan FILE…` and `vigil scan --jsonl`, the context-file
// injection scanner, offline.
func newScanCmd(c *cli) *cobra.Command {
	var jsonl, asJSON bool
	var mcp []string
	cmd := &cobra.Command{
		Use:   "scan [FILE…]",
		Short: "Scan context files (AGENTS.md, .cursorrules …) for prompt injection, offline",
		Long: "scan reports instructions to ignore prior instructions, hidden HTML comments and CSS text,\n" +
			"invisible Unicode, requests for secrets, dangerous commands in code spans, role-play overrides.\n" +
			"With --jsonl it reads {\"text\": …, \"path\": …} per line on stdin and writes\n" +
			"{\"verdict\": \"injection\"|\"clean\", \"findings\": […]} per line. The exit status is 3 when a\n" +
			"file looks like an injection.\n\n" +
			"With --mcp FILE it reads an MCP server's tools/list answer ({\"result\":{\"tools\":[…]}} or\n" +
			"{\"tools\":[…]}) or a client's MCP configuration (\"mcpServers\" of .mcp.json, ~/.claude.json,\n" +
			"Gemini's settings.json), lists the servers and commands, and scans every tool description it\n" +
			"holds as the risk processor scans a context.loaded event of that tool; it starts no server.\n" +
			"--json writes the report as one JSON object. The exit status is 3 when a tool looks like an injection.",
		Example: "  vigil scan AGENTS.md .cursorrules\n  jq -c '{text: .}' docs.json | vigil scan --jsonl\n" +
			"  vigil scan --mcp tools.json\n  vigil scan --mcp .mcp.json --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(mcp) > 0 {
				if jsonl || len(args) > 0 {
					return fmt.Errorf("scan: --mcp reads the files it names; give no other FILEs and no --jsonl")
				}
				return scanMCP(c.stdout, mcp, asJSON)
			}
			if asJSON {
				return fmt.Errorf("scan: --json goes with --mcp FILE (for context files use --jsonl)")
			}
			if jsonl {
				if len(args) > 0 {
					return fmt.Errorf("scan: give either FILEs or --jsonl input on stdin, not both")
				}
				return scanJSONL(c.stdin, c.stdout)
			}
			if len(args) == 0 {
				return fmt.Errorf("scan: name the files to scan, e.g. vigil scan AGENTS.md, or use --jsonl")
			}
			found := false
			for _, p := range args {
				b, err := os.ReadFile(p)
				if err != nil {
					return fmt.Errorf("scan: %w", err)
				}
				r := inject.Scan(string(b), p)
				printScan(c.stdout, p, string(b), r)
				found = found || r.Verdict == inject.VerdictInjection
			}
			if found {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonl, "jsonl", false, "read {\"text\",\"path\"} JSON lines on stdin, write one verdict per line")
	cmd.Flags().StringArrayVar(&mcp, "mcp", nil, "scan an MCP tools/list answer or MCP client configuration `FILE` (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --mcp: write the report as JSON")
	return cmd
}

func scanJSONL(in io.Reader, out io.Writer) error {
	return mapJSONLines(in, out, "scan", func(n int, line []byte) any {
		var req struct {
			Text string `json:"text"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return map[string]any{"verdict": "clean", "findings": []inject.Finding{}, "error": fmt.Sprintf("line %d: not JSON: %v", n, err)}
		}
		return inject.Scan(req.Text, req.Path)
	})
}

func printScan(w io.Writer, path, text string, r inject.ScanResult) {
	fmt.Fprintf(w, "%s: %s\n", path, r.Verdict)
	for _, f := range r.Findings {
		line := 1 + strings.Count(text[:min(f.Span[0], len(text))], "\n")
		strength := "weak"
		if f.Strong {
			strength = "strong"
		}
		excerpt := ""
		if f.Span[0] < f.Span[1] && f.Span[1] <= len(text) {
			excerpt = strings.ReplaceAll(text[f.Span[0]:f.Span[1]], "\n", " ")
			if len(excerpt) > 60 {
				excerpt = excerpt[:60] + "…"
			}
			excerpt = fmt.Sprintf(" %q", excerpt)
		}
		fmt.Fprintf(w, "  line %d [%d,%d) %s (%s): %s%s\n", line, f.Span[0], f.Span[1], f.Rule, strength, f.Detail, excerpt)
	}
}

// maxMCPFile bounds what `vigil scan --mcp` reads of one file.
const maxMCPFile = 32 << 20

// scanMCP reads each MCP file, scans its tools (inject.ScanMCP, the
// processor's own fold) and prints the report: human text, or with asJSON
// one JSON object per file. Server arguments and URLs go through the
// redactor first: a configuration often carries a token on its command
// line. Exit status 3 when a tool of any file is an injection.
func scanMCP(w io.Writer, files []string, asJSON bool) error {
	red, err := redact.New(redact.Config{})
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	found := false
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, p := range files {
		b, err := readBounded(p, maxMCPFile)
		if err != nil {
			return fmt.Errorf("scan --mcp %s: %w", p, err)
		}
		f, err := inject.ParseMCPFile(b)
		if err != nil {
			return fmt.Errorf("scan --mcp %s: %w; give the JSON answer of tools/list or a client configuration with \"mcpServers\"", p, err)
		}
		for i := range f.Servers {
			sv := &f.Servers[i]
			for j, a := range sv.Args {
				sv.Args[j], _ = red.RedactString(a)
			}
			sv.Command, _ = red.RedactString(sv.Command)
			sv.URL, _ = red.RedactString(sv.URL)
		}
		rep := inject.ScanMCP(f)
		found = found || rep.Verdict == inject.VerdictInjection
		if asJSON {
			if err := enc.Encode(struct {
				File string `json:"file"`
				inject.MCPReport
			}{p, rep}); err != nil {
				return err
			}
			continue
		}
		printMCP(w, p, rep)
	}
	if found {
		return &exitError{code: 3}
	}
	return nil
}

func readBounded(p string, max int64) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d MiB", max>>20)
	}
	return b, nil
}

// printMCP writes one file's report for a person: every string in it may
// come from the server being checked, so each goes through display.
func printMCP(w io.Writer, path string, rep inject.MCPReport) {
	fmt.Fprintf(w, "%s: %s (%s, %d servers, %d tools)\n", display.Field(path, 0, true), rep.Verdict, rep.Kind, len(rep.Servers), len(rep.Results))
	for _, sv := range rep.Servers {
		where := sv.Command
		if len(sv.Args) > 0 {
			where += " " + strings.Join(sv.Args, " ")
		}
		if sv.URL != "" {
			where = strings.TrimSpace(where + " " + sv.URL)
		}
		scope := ""
		if sv.Scope != "" {
			scope = " (project " + display.Field(sv.Scope, 60, false) + ")"
		}
		inline := "no tool descriptions inline"
		if sv.Tools > 0 {
			inline = fmt.Sprintf("%d descriptions inline", sv.Tools)
		}
		fmt.Fprintf(w, "  server %s%s: %s; %s\n", display.Field(sv.Name, 60, false), scope, display.Field(where, 160, false), inline)
	}
	for i, t := range rep.Results {
		rules := make([]string, 0, len(t.Findings))
		for _, f := range t.Findings {
			rules = append(rules, f.Rule)
		}
		name := display.Field(t.Tool, 60, false)
		if t.Server != "" {
			name = display.Field(t.Server, 40, false) + "/" + name
		}
		fmt.Fprintf(w, "  %s  %s\n", display.Line(string(t.Level), uniqStrings(rules)...), name)
		text := inject.ToolText(rep.Tools[i].Description, rep.Tools[i].InputSchema)
		for _, f := range t.Findings {
			strength := "weak"
			if f.Strong {
				strength = "strong"
			}
			excerpt := ""
			if f.Span[0] < f.Span[1] && f.Span[1] <= len(text) {
				excerpt = " " + display.Clip(text[f.Span[0]:f.Span[1]], 100)
			}
			fmt.Fprintf(w, "    %s (%s): %s%s\n", display.Field(f.Rule, 64, false), strength, display.Field(f.Detail, 200, false), excerpt)
		}
	}
}

func uniqStrings(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
