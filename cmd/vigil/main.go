// Command vigil is Vigil's binary: the server (`vigil serve`),
// the client commands built on the client package, the hooks (also built
// alone as cmd/vigil-hook), the offline analyzers,
// and the benchmarks. Run `vigil --help` for the list.
//
// Adding a command: write cmd/vigil/<name>.go with
// `func new<Name>Cmd(c *cli) *cobra.Command` and add it to the list in
// newRootCmd. Read input from c.stdin, write to c.stdout/c.stderr (never
// os.Stdout), return errors (wrap them in exitError for a specific exit
// status), and use c.connect to reach a server.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/internal/hook"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is the state every command shares: its streams and global flags.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dataDir        string
	natsURL        string
	creds          string
	tlsCA          string
	logLevel       string
}

// exitError carries a specific exit status. A nil err prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// run executes the command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) > 1 && args[0] == "hook" && slices.Contains(hook.Clients, args[1]) {
		// An agent client runs the hook on every tool call: skip building
		// the whole command tree (its flags cost ~0.5 ms), as the hook
		// parses its own flags anyway (see runHook).
		c.logLevel = "info"
		return c.runHook(ctx, args[1:])
	}
	root := newRootCmd(c)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "vigil: %s\n", display.Text(ee.err.Error()))
		}
		return ee.code
	}
	// An error may echo what an agent wrote (an id, a name): through
	// display, as every other surface.
	fmt.Fprintf(stderr, "vigil: %s\n", display.Text(err.Error()))
	return 1
}

func newRootCmd(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:           "vigil",
		Short:         "Vigil: an event-sourced security log for AI coding agents",
		Long:          "Vigil records every agent event in NATS JetStream, redacts secrets before anything is stored,\nscores risk, gates actions, and keeps a tamper-evident audit trail that replays exactly.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&c.dataDir, "data", "", "data directory of the server (default $VIGIL_DATA or the XDG data directory)")
	pf.StringVar(&c.natsURL, "nats", "", "NATS URL of a Vigil server or cluster (instead of --data)")
	pf.StringVar(&c.creds, "creds", "", "NATS credentials file (.creds or nkey seed) to use with --nats")
	pf.StringVar(&c.tlsCA, "tls-ca", "", "CA file to verify the server's TLS certificate with (default: fleet-ca.pem beside --creds, or the node's, with --data)")
	pf.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	commands := []func(*cli) *cobra.Command{
		newServeCmd,
		newStatusCmd,
		newAppendCmd,
		newTailCmd,
		newVersionCmd,
		newBenchCmd,
		newScoreCmd,
		newScanCmd,
		newConfigCmd,
		newGateCmd,
		newPendingCmd,
		newApproveCmd,
		newDenyCmd,
		newAllowlistCmd,
		newHookCmd,
		newAuditCmd,
		newReplayCmd,
		newProjectionsCmd,
		newRedactCmd,
		newCredsCmd,
		newTokenCmd,
		newPairingCmd,
		newSetupCmd,
	}
	for _, nc := range commands {
		root.AddCommand(nc(c))
	}
	addAuditKeyCreate(root, c)
	return root
}

// data returns the data directory in use.
func (c *cli) data() string {
	if c.dataDir != "" {
		return c.dataDir
	}
	return client.DefaultDataDir()
}

// connect reaches the server named by the global flags, as role when the
// credentials come from the data directory.
func (c *cli) connect(ctx context.Context, role natsutil.Role) (*client.Client, error) {
	o := client.Options{URL: c.natsURL, CredsFile: c.creds, TLSCA: c.tlsCA, Role: role, Name: "vigil-cli"}
	if c.natsURL == "" {
		o.DataDir = c.data()
	}
	return client.Connect(ctx, o)
}

// logger returns a text logger on stderr at the chosen level.
func (c *cli) logger() (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", c.logLevel)
	}
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// isTerminal reports whether w is a terminal (human output) or a pipe (JSON).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
