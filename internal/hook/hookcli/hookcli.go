// Package hookcli is the hook's command line: the flags an agent client's
// hook settings give it, what the hook knows about Vigil's installation,
// and the connection to the node with the agent credential. Both `vigil
// hook CLIENT` and the small `vigil-hook CLIENT` binary run it, so an
// installed hook behaves the same whichever binary its settings name.
//
// It fails closed: a flag the hook cannot use still yields the client's
// deny answer (never a usage error, which the clients treat as a
// non-blocking failure: the tool would run), and an unknown client exits
// 2, which every client treats as a block.
package hookcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/pflag"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/hook"
	hooksettings "github.com/vigil-dev/vigil/internal/hook/settings"
)

// BinaryName is the file name of the hook's own binary (cmd/vigil-hook):
// `vigil hook install` writes it into the clients' settings when it lies
// beside the vigil binary.
const BinaryName = "vigil-hook"

// Beside is the path of the hook's binary in bin's directory, and whether
// an executable regular file is there.
func Beside(bin string) (string, bool) {
	p := filepath.Join(filepath.Dir(bin), BinaryName)
	return p, Executable(p)
}

// Executable reports whether path is a regular file with an execute bit.
func Executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// VigilName is the file name of Vigil's main binary.
const VigilName = "vigil"

// Help is `vigil hook --help`, `vigil help hook` and `vigil-hook --help`.
const Help = `A command hook for agent clients: an agent client (Claude Code, Gemini CLI,
Cursor, the OpenHands SDK) runs it on each tool call. It reads the
client's hook JSON on standard input, records the call in Vigil (an action
before the tool runs, an observation with its redacted output after),
gates actions, and answers in the client's own format on standard output.

Set it up:
  vigil hook install claude-code|gemini|cursor [--project|--user]
                         merge the hooks into the client's settings, with
                         the hook binary's absolute path and data directory
  vigil hook doctor      say whether each installed hook reaches a node
  docs/hooks.md          settings for each client, OpenHands included

What the client runs (vigil-hook CLIENT is the same hook in a small binary
that starts several times faster; install names it when it lies beside
vigil, else vigil hook CLIENT):
  vigil-hook claude-code   PreToolUse / PostToolUse / SessionStart /
                           PermissionDenied / Stop / SessionEnd
  vigil-hook gemini        BeforeTool / AfterTool / SessionStart
  vigil-hook cursor        beforeShellExecution / beforeMCPExecution /
                           beforeReadFile / preToolUse / after…
  vigil-hook openhands     the OpenHands SDK's PreToolUse / PostToolUse

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

// Env is what the process gives the hook: its streams, the defaults of
// --data, --nats and --creds (vigil's global flags, when `vigil --data D
// hook …` named them), and the name usage messages give the command.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Data           string // "" : $VIGIL_DATA or the default data directory
	NATS, Creds    string
	// Name is the command as the person typed it: "vigil hook" or
	// "vigil-hook".
	Name string
	// Executable is this binary's path ("": os.Executable).
	Executable string
}

// Run parses args (CLIENT and the hook's flags), runs one hook call and
// returns the process's exit status.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Name == "" {
		env.Name = "vigil hook"
	}
	fs := pflag.NewFlagSet(env.Name, pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var (
		o                             hook.Options
		budget                        time.Duration
		onPending, onUnreach, onAllow string
		allowBelow, logLevel          string
		maxOutput                     int
		help                          bool
	)
	dataDir, natsURL, creds := env.Data, env.NATS, env.Creds
	fs.DurationVar(&budget, "budget", 50*time.Second, "")
	fs.StringVar(&onPending, "on-pending", "", "")
	fs.StringVar(&onUnreach, "on-unreachable", hook.Deny, "")
	fs.StringVar(&onAllow, "on-allow", hook.Allow, "")
	fs.StringVar(&allowBelow, "allow-below", string(events.RiskMedium), "")
	fs.IntVar(&maxOutput, "max-output", hook.DefaultMaxOutput, "")
	fs.StringVar(&dataDir, "data", dataDir, "")
	fs.StringVar(&natsURL, "nats", natsURL, "")
	fs.StringVar(&creds, "creds", creds, "")
	fs.StringVar(&logLevel, "log-level", "info", "") // accepted; the hook logs nothing but its diagnostics
	fs.BoolVarP(&help, "help", "h", false, "")
	perr := fs.Parse(args)
	if help {
		fmt.Fprintf(env.Stdout, "Usage: %s claude-code|gemini|cursor|openhands [flags]\n       vigil hook install|doctor …\n\n%s\n", env.Name, Help)
		return 0
	}
	clientName := ""
	if fs.NArg() > 0 {
		clientName = fs.Arg(0)
	}
	if !slices.Contains(hook.Clients, clientName) {
		fmt.Fprintf(env.Stderr, "%s: client %q: use one of %s (blocking with exit 2)\n", env.Name, clientName, strings.Join(hook.Clients, ", "))
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
	if dataDir == "" {
		dataDir = client.DefaultDataDir()
	}
	o.MaxOutput = maxOutput
	o.AllowBelow = events.Risk(strings.ToUpper(allowBelow))
	o.Budget, o.OnPending, o.OnUnreachable, o.OnAllow = budget, onPending, onUnreach, onAllow
	if onAllow == "client" {
		o.OnAllow = hook.Defer
	}
	o.Stderr = env.Stderr
	o.NewID = func() string { return ulid.Make().String() }
	if dir, err := os.UserCacheDir(); err == nil {
		o.StateDir = filepath.Join(dir, "vigil", "hooks")
	}
	o.Self = self(env.Executable, clientName, dataDir, natsURL)
	if perr != nil {
		// The settings are wrong: say so, and fail closed.
		fmt.Fprintf(env.Stderr, "%s %s: %v\n", env.Name, clientName, perr)
		o.Connect = func(context.Context) (hook.Gater, func(), error) {
			return nil, nil, fmt.Errorf("vigil hook misconfigured: %v", perr)
		}
		o.OnUnreachable = hook.Deny
		return hook.Run(ctx, clientName, env.Stdin, env.Stdout, o)
	}
	o.Connect = func(ctx context.Context) (hook.Gater, func(), error) {
		opts := client.Options{URL: natsURL, CredsFile: creds, Role: events.RoleAgent, Name: "vigil-hook-" + clientName, Timeout: 5 * time.Second}
		if natsURL == "" {
			opts.DataDir = dataDir
		}
		cl, err := client.Connect(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		return cl, cl.Close, nil
	}
	return hook.Run(ctx, clientName, env.Stdin, env.Stdout, o)
}

// self is what the hook knows about Vigil's installation, for the
// self-protection rules: this binary and Vigil's other binary beside it
// (vigil beside vigil-hook, vigil-hook beside vigil), the data directory,
// the client's settings files (user, project in the working directory,
// system), the node's HTTP address, pid and credentials directory from
// serve.json, and $HOME.
func self(exe, clientName, dataDir, natsURL string) hook.Self {
	var s hook.Self
	if exe == "" {
		exe, _ = os.Executable()
	}
	if exe != "" {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		s.Binaries = append(s.Binaries, exe)
		for _, name := range []string{VigilName, BinaryName} {
			p := filepath.Join(filepath.Dir(exe), name)
			if p == exe {
				continue
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				s.Binaries = append(s.Binaries, p)
			}
		}
	}
	s.Home = os.Getenv("HOME")
	if natsURL == "" {
		s.AddServe(dataDir)
	}
	wd, _ := os.Getwd()
	if slices.Contains(hooksettings.Clients(), clientName) {
		s.Settings = append(s.Settings, hooksettings.Paths(clientName, wd)...)
		if p, err := hooksettings.SystemPath(clientName); err == nil {
			s.Settings = append(s.Settings, p)
		}
	}
	return s
}
