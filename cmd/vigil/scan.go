package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/processors/risk"
)

// newScanCmd: `vigil scan FILE…` and `vigil scan --jsonl`, the context-file
// injection scanner, offline.
func newScanCmd(c *cli) *cobra.Command {
	var jsonl bool
	cmd := &cobra.Command{
		Use:   "scan [FILE…]",
		Short: "Scan context files (AGENTS.md, .cursorrules …) for prompt injection, offline",
		Long: "scan reports instructions to ignore prior instructions, hidden HTML comments and CSS text,\n" +
			"invisible Unicode, requests for secrets, dangerous commands in code spans, role-play overrides.\n" +
			"With --jsonl it reads {\"text\": …, \"path\": …} per line on stdin and writes\n" +
			"{\"verdict\": \"injection\"|\"clean\", \"findings\": […]} per line. The exit status is 3 when a\n" +
			"file looks like an injection.",
		Example: "  vigil scan AGENTS.md .cursorrules\n  jq -c '{text: .}' docs.json | vigil scan --jsonl",
		RunE: func(cmd *cobra.Command, args []string) error {
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
				r := risk.Scan(string(b), p)
				printScan(c.stdout, p, string(b), r)
				found = found || r.Verdict == risk.VerdictInjection
			}
			if found {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonl, "jsonl", false, "read {\"text\",\"path\"} JSON lines on stdin, write one verdict per line")
	return cmd
}

func scanJSONL(in io.Reader, out io.Writer) error {
	return mapJSONLines(in, out, "scan", func(n int, line []byte) any {
		var req struct {
			Text string `json:"text"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return map[string]any{"verdict": "clean", "findings": []risk.Finding{}, "error": fmt.Sprintf("line %d: not JSON: %v", n, err)}
		}
		return risk.Scan(req.Text, req.Path)
	})
}

func printScan(w io.Writer, path, text string, r risk.ScanResult) {
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
