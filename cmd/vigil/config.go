package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/configlog"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors/gate"
)

func newConfigCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Set and show the analyzer and gate configuration (a config event in the log)",
		Long: `The configuration that decides is an event in the log, so every decision is
made, and replayed, under the config in force at its log position. With no
config event ever appended, the built-in default is in force: mode risky
with threshold HIGH, the rules, policy and injection analyzers on, the LLM
hint off. See docs/gate.md for every field and the combinations refused.`,
	}
	cmd.AddCommand(newConfigSetCmd(c), newConfigShowCmd(c))
	return cmd
}

func newConfigSetCmd(c *cli) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "set FILE|-",
		Short: "Validate a configuration (YAML or JSON) and append it as a config event",
		Long: `Reads a whole configuration (YAML or JSON; unknown fields are errors),
validates it as one, compiles its policy and deny rules, and appends it as a
config event on the control subject. Incoherent combinations are refused
with a message naming each field and what to do; nothing is appended then.

version may be left out: it becomes one more than the version in force for
the same scope. A version that does not increase is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			input, err := readInput(c, args[0])
			if err != nil {
				return err
			}
			cfg, err := parseConfigFile(args[0], input)
			if err != nil {
				return err
			}
			cl, err := c.connect(cmd.Context(), natsutil.RoleAdmin)
			if err != nil {
				return err
			}
			defer cl.Close()
			res, err := setConfig(cmd.Context(), cl, args[0], cfg, false)
			if err != nil {
				return err
			}
			if asJSON {
				return gateJSON(c.stdout, res)
			}
			fmt.Fprintf(c.stdout, "config v%d (%s) appended at log seq %d as event %s\n", res.Version, res.Scope, res.Seq, res.ID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// configSetResult is what config set (and serve --config) did.
type configSetResult struct {
	Appended bool   `json:"appended"`
	ID       string `json:"id,omitempty"`
	Seq      uint64 `json:"seq,omitempty"`
	Version  int64  `json:"version"`
	Scope    string `json:"scope"`
	// Unchanged says the config in force already was this one (serve --config).
	Unchanged bool `json:"unchanged,omitempty"`
}

// parseConfigFile decodes a configuration in YAML or JSON, refusing
// unknown fields (a misspelt field would otherwise be silently dropped).
func parseConfigFile(name string, b []byte) (events.Config, error) {
	var cfg events.Config
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return cfg, fmt.Errorf("%s: empty; write a configuration in YAML or JSON (see docs/gate.md)", name)
	}
	if trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return cfg, fmt.Errorf("%s: not a configuration: %v (field names are in docs/gate.md)", name, err)
		}
		return cfg, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s: not a configuration: %v (field names are in docs/gate.md)", name, err)
	}
	return cfg, nil
}

// configError lists every problem of a configuration, one per line.
func configError(name string, version int64, err error) error {
	var ref *configlog.RefusedError
	if !errors.As(err, &ref) {
		ref = configlog.Refused(version, err)
	}
	lines := make([]string, len(ref.Problems))
	for i, p := range ref.Problems {
		lines[i] = "  " + p.Reason
		if p.Field != "(config)" {
			lines[i] = fmt.Sprintf("  %s: %s", p.Field, p.Reason)
		}
	}
	return fmt.Errorf("%s: config v%d refused, nothing appended:\n%s", name, ref.Version, strings.Join(lines, "\n"))
}

// setConfig validates cfg and appends it. With onlyIfChanged it appends
// nothing when the config in force for its scope is already the same
// (whatever its version).
func setConfig(ctx context.Context, cl *client.Client, name string, cfg events.Config, onlyIfChanged bool) (configSetResult, error) {
	res := configSetResult{Scope: configlog.ScopeLabel(cfg)}
	h, err := configlog.ReadHistory(ctx, cl.JetStream(), cfg.Conversation, 0)
	if err != nil {
		return res, err
	}
	cur, curVersion := h.SameScope(cfg)
	if onlyIfChanged && cur != nil && configlog.Same(*cur, cfg) {
		res.Unchanged, res.Version = true, cur.Version
		return res, nil
	}
	ev, cfg, err := configlog.Prepare(configlog.Request{Config: cfg, InForce: curVersion, Agent: operatorName(),
		Check: func(c events.Config) error { _, err := gate.NewRiskScorer(c.WithDefaults()); return err }})
	res.Version = cfg.Version
	if err != nil {
		return res, configError(name, cfg.Version, err)
	}
	r, err := cl.Append(ctx, ev)
	if err != nil {
		return res, fmt.Errorf("%s: append config v%d: %w", name, cfg.Version, err)
	}
	res.Appended, res.ID, res.Seq = true, ev.ID, r.Seq
	return res, nil
}

// applyConfigFile is what `vigil serve --config FILE` does once the node is
// up: append FILE's configuration unless the one in force for its scope is
// already the same. cl needs admin or service credentials.
func applyConfigFile(ctx context.Context, cl *client.Client, path string, w io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	cfg, err := parseConfigFile(path, b)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	res, err := setConfig(ctx, cl, path, cfg, true)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	if res.Unchanged {
		fmt.Fprintf(w, "config in force (v%d, %s) already matches %s; nothing appended\n", res.Version, res.Scope, path)
	} else {
		fmt.Fprintf(w, "config v%d (%s) from %s appended at log seq %d\n", res.Version, res.Scope, path, res.Seq)
	}
	return nil
}

func newConfigShowCmd(c *cli) *cobra.Command {
	var (
		conversation string
		at           uint64
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the configuration in force (for a conversation, at a log position)",
		Long: `Prints the configuration in force now, or at log sequence --at, for the whole
log or for --conversation (a conversation config overrides the global one),
with unset fields shown as the gate reads them, and whether agents should
ask their LLM for security_risk under it. YAML by default; --json for JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if conversation != "" && !events.ValidToken(conversation) {
				return fmt.Errorf("--conversation %q: a conversation id is 1-128 letters, digits, - _ : @", conversation)
			}
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			h, err := configlog.ReadHistory(cmd.Context(), cl.JetStream(), conversation, at)
			if err != nil {
				return err
			}
			shown := h.Show(conversation, at)
			if asJSON {
				return gateJSON(c.stdout, shown)
			}
			return printConfigYAML(c.stdout, shown)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&conversation, "conversation", "", "the conversation whose config to show (default: the global one)")
	fl.Uint64Var(&at, "at", 0, "show the config in force at this log sequence (default: now)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printConfigYAML(w io.Writer, s configlog.Shown) error {
	where := "globally"
	if s.Conversation != "" {
		where = "for conversation " + s.Conversation
	}
	when := "now"
	if s.At > 0 {
		when = fmt.Sprintf("at log seq %d", s.At)
	}
	fmt.Fprintf(w, "# config in force %s, %s\n", where, when)
	if s.Source == configlog.SourceDefault {
		fmt.Fprintf(w, "# source: the built-in default: no config event was ever appended\n")
		fmt.Fprintf(w, "#   (mode risky, threshold HIGH; rules, policy and injection analyzers on; LLM hint off)\n")
	} else {
		fmt.Fprintf(w, "# source: config event %s at log seq %d, version %d, scope %s\n", s.EventID, s.Seq, s.Config.Version, s.Config.Scope)
	}
	if s.SecurityRisk.Ask {
		fmt.Fprintf(w, "# security_risk: agents should ask their LLM for it (optional field): %s\n", events.SecurityRiskSchema)
	} else {
		fmt.Fprintf(w, "# security_risk: not asked (analyzers.llm_hint is off); one sent anyway is recorded and ignored\n")
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(s.Config); err != nil {
		return err
	}
	return enc.Close()
}

// gateJSON writes v as indented JSON.
func gateJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// operatorName names the person or operator behind a control event: $USER
// (or $VIGIL_APPROVER when set).
func operatorName() string {
	for _, k := range []string{"VIGIL_APPROVER", "USER", "LOGNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "operator"
}
