package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/hook"
	"github.com/vigil-dev/vigil/internal/hook/install"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// hookHelp is `vigil hook --help` (the hook parses its own flags, so it
// prints this itself) and `vigil help hook`.
const hookHelp = `A command hook for agent clients: an agent client (Claude Code, Gemini CLI,
Cursor, the OpenHands SDK) runs it on each tool call. It reads the
client's hook JSON on standard input, records the call in Vigil (an action
before the tool runs, an observation with its redacted output after),
gates actions, and answers in the client's own format on standard output.

Set it up:
  vigil hook install claude-code|gemini|cursor [--project|--user]
                         merge the hooks into the client's settings, with
                         this binary's absolute path and data directory
  vigil hook doctor      say whether each installed hook reaches a node
  docs/hooks.md          settings for each client, OpenHands included

What the client runs:
  vigil hook claude-code   PreToolUse / PostToolUse / SessionStart /
                           PermissionDenied
  vigil hook gemini        BeforeTool / AfterTool / SessionStart
  vigil hook cursor        beforeShellExecution / beforeMCPExecution /
                           beforeReadFile / preToolUse / after…
  vigil hook openhands     the OpenHands SDK's PreToolUse / PostToolUse

Flags (after CLIENT):
  --budget D             wait at most D for a decision; keep it under the
                         client's hook timeout (default 50s)
  --on-pending ask|deny  when the budget runs out first: ask the person in
                         the client (Claude Code, Cursor; the reason names
                         the level and rules), or deny and withdraw the
                         action (default: ask for Claude Code, deny elsewhere)
  --on-unreachable deny|ask|allow
                         when Vigil cannot be reached (default deny)
  --allow-below LEVEL    Vigil's allow is answered "allow" (skipping the
                         client's own prompt) only for actions below LEVEL
                         (default MEDIUM: LOW ones); MEDIUM, HIGH and
                         UNKNOWN actions Vigil let through are left to the
                         client's own permission rules, so the hook never
                         supervises less than the client alone. A person's
                         approval in Vigil is always answered allow.
  --on-allow allow|client
                         client: leave every allowed call to the client's
                         own rules (default allow, as --allow-below says)
  --max-output BYTES     record at most this much of a tool's output; the
                         rest is cut with a marker giving its size and
                         sha256 (default 262144)
  --data DIR, --nats URL --creds FILE
                         how to reach Vigil (agent credentials); a client
                         does not inherit VIGIL_DATA from your shell, so
                         name the data directory (install does)

Exit status and answers: it fails closed. A payload it cannot read, an
internal error or Vigil unreachable is a deny (exit 0, a deny answer), and
if it cannot even write its answer it exits 2, which every client treats
as a block.`

func newHookCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:                "hook CLIENT",
		Short:              "Gate an agent client's tool calls (Claude Code, Gemini CLI, Cursor, OpenHands)",
		Long:               hookHelp,
		DisableFlagParsing: true,
		// A hook must answer even when its settings are wrong (see runHook).
		RunE: func(cmd *cobra.Command, args []string) error {
			code := c.runHook(cmd.Context(), args)
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.AddCommand(newHookInstallCmd(c), newHookDoctorCmd(c))
	return cmd
}

// runHook parses its own flags so that a mistake in a client's settings
// still produces a fail-closed answer instead of a usage error (which the
// clients would treat as a non-blocking failure: the tool would run).
func (c *cli) runHook(ctx context.Context, args []string) int {
	fs := pflag.NewFlagSet("hook", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	var (
		o                             hook.Options
		budget                        time.Duration
		onPending, onUnreach, onAllow string
		allowBelow                    string
		maxOutput                     int
		help                          bool
	)
	fs.DurationVar(&budget, "budget", 50*time.Second, "")
	fs.StringVar(&onPending, "on-pending", "", "")
	fs.StringVar(&onUnreach, "on-unreachable", hook.Deny, "")
	fs.StringVar(&onAllow, "on-allow", hook.Allow, "")
	fs.StringVar(&allowBelow, "allow-below", string(events.RiskMedium), "")
	fs.IntVar(&maxOutput, "max-output", hook.DefaultMaxOutput, "")
	fs.StringVar(&c.dataDir, "data", c.dataDir, "")
	fs.StringVar(&c.natsURL, "nats", c.natsURL, "")
	fs.StringVar(&c.creds, "creds", c.creds, "")
	fs.StringVar(&c.logLevel, "log-level", c.logLevel, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	perr := fs.Parse(args)
	if help {
		fmt.Fprintf(c.stdout, "Usage: vigil hook claude-code|gemini|cursor|openhands [flags]\n       vigil hook install|doctor …\n\n%s\n", hookHelp)
		return 0
	}
	clientName := ""
	if fs.NArg() > 0 {
		clientName = fs.Arg(0)
	}
	if !slices.Contains(hook.Clients, clientName) {
		fmt.Fprintf(c.stderr, "vigil hook: client %q: use one of %s (blocking with exit 2)\n", clientName, strings.Join(hook.Clients, ", "))
		return 2
	}
	switch {
	case perr != nil:
		perr = fmt.Errorf("flags: %v", perr)
	case fs.NArg() > 1:
		perr = fmt.Errorf("unexpected arguments %q", fs.Args()[1:])
	case onPending != "" && onPending != hook.Ask && onPending != hook.Deny:
		perr = fmt.Errorf("--on-pending %q: use ask or deny", onPending)
	case onUnreach != hook.Deny && onUnreach != hook.Ask && onUnreach != hook.Allow:
		perr = fmt.Errorf("--on-unreachable %q: use deny, ask or allow", onUnreach)
	case onAllow != hook.Allow && onAllow != "client":
		perr = fmt.Errorf("--on-allow %q: use allow or client", onAllow)
	case !slices.Contains([]events.Risk{events.RiskLow, events.RiskMedium, events.RiskHigh}, events.Risk(strings.ToUpper(allowBelow))):
		perr = fmt.Errorf("--allow-below %q: use LOW, MEDIUM or HIGH", allowBelow)
	case maxOutput < 1<<10 || maxOutput > 2<<20:
		perr = fmt.Errorf("--max-output %d: use 1024 to 2097152 bytes (the server refuses a message over 4 MiB)", maxOutput)
	}
	o.MaxOutput = maxOutput
	o.AllowBelow = events.Risk(strings.ToUpper(allowBelow))
	o.Budget, o.OnPending, o.OnUnreachable, o.OnAllow = budget, onPending, onUnreach, onAllow
	if onAllow == "client" {
		o.OnAllow = hook.Defer
	}
	o.Stderr = c.stderr
	o.NewID = func() string { return ulid.Make().String() }
	if dir, err := os.UserCacheDir(); err == nil {
		o.StateDir = filepath.Join(dir, "vigil", "hooks")
	}
	o.Self = c.hookSelf(clientName)
	if perr != nil {
		// The settings are wrong: say so, and fail closed.
		fmt.Fprintf(c.stderr, "vigil hook %s: %v\n", clientName, perr)
		o.Connect = func(context.Context) (hook.Gater, func(), error) {
			return nil, nil, fmt.Errorf("vigil hook misconfigured: %v", perr)
		}
		o.OnUnreachable = hook.Deny
		return hook.Run(ctx, clientName, c.stdin, c.stdout, o)
	}
	o.Connect = func(ctx context.Context) (hook.Gater, func(), error) {
		opts := client.Options{URL: c.natsURL, CredsFile: c.creds, Role: natsutil.RoleAgent, Name: "vigil-hook-" + clientName, Timeout: 5 * time.Second}
		if c.natsURL == "" {
			opts.DataDir = c.data()
		}
		cl, err := client.Connect(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		return cl, cl.Close, nil
	}
	return hook.Run(ctx, clientName, c.stdin, c.stdout, o)
}

// hookSelf is what the hook knows about Vigil's installation, for the
// self-protection rules: this binary, the data directory, the client's
// settings files (user, project in the working directory, system), the
// node's HTTP address, pid and credentials directory from serve.json, and
// $HOME.
func (c *cli) hookSelf(clientName string) hook.Self {
	var s hook.Self
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		s.Binary = exe
	}
	s.Home = os.Getenv("HOME")
	if c.natsURL == "" {
		s.AddServe(c.data())
	}
	wd, _ := os.Getwd()
	if slices.Contains(install.Clients(), clientName) {
		s.Settings = append(s.Settings, install.SettingsPaths(clientName, wd)...)
		if p, err := install.SystemSettingsPath(clientName); err == nil {
			s.Settings = append(s.Settings, p)
		}
	}
	return s
}
