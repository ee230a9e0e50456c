package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/inject"
)

// newScoreCmd: `vigil score 'CMD'` and `vigil score --jsonl`. Offline: no
// server, the built-in rules under the default config (or --config FILE).
func newScoreCmd(c *cli) *cobra.Command {
	var jsonl bool
	var configFile, workspace, backend string
	cmd := &cobra.Command{
		Use:   "score [COMMAND]",
		Short: "Score a shell command or events offline, without a server",
		Long: "score prints the risk level of a shell command with the parsed view: the commands found\n" +
			"(including those inside bash -c, eval, $(…), ssh, find -exec) and the rules that decided.\n" +
			"With --jsonl it reads one JSON object per line on stdin, either a whole event or\n" +
			"{\"command\": \"…\"}, and writes {\"level\": …, \"reasons\": […]} per line, in order.\n" +
			"Events are folded per conversation in input order as the gate folds them: a file the\n" +
			"agent wrote that tools run from raises a later command that runs it, and an MCP tool\n" +
			"whose description was an injection, or changed, raises a later call of it.\n\n" +
			"It runs offline (no server) under the default config, or --config FILE (a config\n" +
			"event's data as JSON).\n\n" +
			"Exit status: 0 when a COMMAND scores LOW, MEDIUM or UNKNOWN; 3 when it scores HIGH,\n" +
			"so a script can test it (vigil score \"$cmd\" >/dev/null || echo risky); 1 on an\n" +
			"error. With --jsonl: 0 (each line carries its level), 1 on an error.",
		Example: "  vigil score 'rm -rf \"$HOME\"'\n  jq -c '{command: .}' cmds.json | vigil score --jsonl",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadScoreConfig(configFile)
			if err != nil {
				return err
			}
			s, err := risk.NewScorer(cfg)
			if err != nil {
				return fmt.Errorf("--config %s: %w", configFile, err)
			}
			env := risk.Env{Workspace: workspace, Backend: backend}
			if jsonl {
				if len(args) > 0 {
					return fmt.Errorf("score: give either a COMMAND or --jsonl input on stdin, not both")
				}
				return scoreJSONL(c.stdin, c.stdout, s, env)
			}
			if len(args) == 0 {
				return fmt.Errorf("score: give a command to score, e.g. vigil score 'rm -rf ./build', or use --jsonl")
			}
			a := s.ScoreCommand(args[0], env)
			printAssessment(c.stdout, s, args[0], a)
			if a.Level == events.RiskHigh {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&jsonl, "jsonl", false, "read JSON lines on stdin ({\"command\": …} or whole events), write one result per line")
	f.StringVar(&configFile, "config", "", "score under this config file (JSON or YAML config event data) instead of the default")
	f.StringVar(&workspace, "workspace", "", "the agent's workspace directory: paths outside it score higher")
	f.StringVar(&backend, "backend", "", "the backend the command runs on (local, docker, ssh …), for policy rules")
	return cmd
}

func loadScoreConfig(path string) (events.Config, error) {
	if path == "" {
		return events.DefaultConfig(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return events.Config{}, fmt.Errorf("--config: %w", err)
	}
	cfg := events.DefaultConfig()
	if err := json.Unmarshal(b, &cfg); err != nil {
		return events.Config{}, fmt.Errorf("--config %s: not a JSON config (%v); write the config event's data as JSON", path, err)
	}
	return cfg, nil
}

type scoreLine struct {
	Level   events.Risk     `json:"level"`
	Reasons []events.Reason `json:"reasons"`
	Shape   string          `json:"shape,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// scoreJSONL scores one input line per output line, in order. A line that
// does not decode gets {"level":"UNKNOWN","error":…} so outputs stay aligned.
func scoreJSONL(in io.Reader, out io.Writer, s *risk.Scorer, env risk.Env) error {
	f := &scoreFold{written: risk.NewWrittenFiles(), mcp: inject.NewMCPMemory()}
	return mapJSONLines(in, out, "score", func(n int, line []byte) any {
		res := scoreOne(s, env, n, line, f)
		if res.Reasons == nil {
			res.Reasons = []events.Reason{}
		}
		return res
	})
}

// scoreFold is what scoring a stream remembers across its lines, per
// conversation, as the risk processor does: the files written that tools
// run from, and the MCP tools whose descriptions were judged.
type scoreFold struct {
	written *risk.WrittenFiles
	mcp     *inject.MCPMemory
}

// scoreOne scores one input line: {"command": …} or a whole event; f (nil:
// none) folds whole events across lines, line n standing for the log seq.
func scoreOne(s *risk.Scorer, env risk.Env, n int, line []byte, f *scoreFold) scoreLine {
	var probe struct {
		Command *string `json:"command"`
		Kind    string  `json:"kind"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return scoreLine{Level: events.RiskUnknown, Error: fmt.Sprintf("line %d: not JSON: %v", n, err)}
	}
	if probe.Command != nil && probe.Kind == "" {
		a := s.ScoreCommand(*probe.Command, env)
		return scoreLine{Level: a.Level, Reasons: a.Reasons, Shape: s.Shape(a)}
	}
	ev, err := events.DecodeJSON(line)
	switch {
	case err != nil:
		return scoreLine{Level: events.RiskUnknown, Error: fmt.Sprintf("line %d: %v", n, err)}
	case ev.Kind == events.KindContextLoaded:
		r := inject.Scan(ev.StringField("content"), ev.StringField("path"))
		if f != nil && ev.StringField("source") == "mcp" {
			rec := events.Record{Seq: uint64(n), Event: ev}
			r, _ = f.mcp.StepContext(&rec, true)
		}
		res := scoreLine{Level: events.RiskLow}
		if r.Verdict == inject.VerdictInjection {
			res.Level = events.RiskHigh
		}
		for _, f := range r.Findings {
			res.Reasons = append(res.Reasons, events.Reason{Analyzer: core.AnalyzerInjection, Rule: f.Rule, Detail: f.Detail, Span: []int{f.Span[0], f.Span[1]}})
		}
		return res
	default:
		a := s.ScoreAction(&ev, env)
		if f != nil && ev.Kind == events.KindAction {
			a.Level, a.Reasons = f.mcp.Raise(ev.Conversation, ev.Tool(), a.Level, a.Reasons)
			fe := risk.EffectsOf(a)
			a.Level, a.Reasons = f.written.Raise(ev.Conversation, fe, a.Level, a.Reasons)
			f.written.Observe(ev.Conversation, uint64(n), fe, a.Level)
		}
		return scoreLine{Level: a.Level, Reasons: a.Reasons, Shape: s.Shape(a)}
	}
}

// printAssessment is the human summary: level, the commands found and the
// reasons, highest first.
func printAssessment(w io.Writer, s *risk.Scorer, input string, a risk.Assessment) {
	fmt.Fprintf(w, "%s  %s\n", a.Level, s.Shape(a))
	if a.View.ParseError != "" {
		fmt.Fprintf(w, "  parse: %s\n", a.View.ParseError)
	}
	if len(a.View.Commands) > 0 {
		fmt.Fprintln(w, "commands found:")
		for _, c := range a.View.Commands {
			indent := strings.Repeat("  ", c.Depth+1)
			line := c.Name
			if len(c.Argv) > 0 {
				line += " " + strings.Join(quoteArgs(c.Argv), " ")
			}
			if len(line) > 100 {
				line = line[:100] + "…"
			}
			var notes []string
			if c.Sudo {
				notes = append(notes, "as root")
			}
			if len(c.Via) > 0 {
				notes = append(notes, "via "+strings.Join(c.Via, " → "))
			}
			if len(notes) > 0 {
				line += "   (" + strings.Join(notes, "; ") + ")"
			}
			fmt.Fprintf(w, "%s%s\n", indent, line)
		}
	}
	if len(a.View.Hosts) > 0 {
		fmt.Fprintf(w, "hosts: %s\n", strings.Join(a.View.Hosts, ", "))
	}
	if len(a.Reasons) > 0 {
		fmt.Fprintln(w, "why:")
		for _, r := range a.Reasons {
			lvl := string(r.Level)
			if lvl == "" {
				lvl = "-"
			}
			fmt.Fprintf(w, "  %-6s %s/%s: %s\n", lvl, r.Analyzer, r.Rule, r.Detail)
		}
	} else {
		fmt.Fprintln(w, "why: no rule fired")
	}
	_ = input
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\|&;<>()*?") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return out
}
