package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/hook/hookcli"
)

func newHookCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:                "hook CLIENT",
		Short:              "Gate an agent client's tool calls (Claude Code, Gemini CLI, Cursor, OpenHands)",
		Long:               hookcli.Help,
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

// runHook runs the hook (hookcli.Run) with vigil's global flags as the
// defaults of its own: it parses its flags itself, so that a mistake in a
// client's settings still produces a fail-closed answer instead of a usage
// error (which the clients would treat as a non-blocking failure: the tool
// would run).
func (c *cli) runHook(ctx context.Context, args []string) int {
	return hookcli.Run(ctx, args, hookcli.Env{Stdin: c.stdin, Stdout: c.stdout, Stderr: c.stderr,
		Data: c.dataDir, NATS: c.natsURL, Creds: c.creds, Name: "vigil hook"})
}
