package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// pendingAction is one action waiting for a person, as vigil pending lists it.
type pendingAction = client.PendingAction

// readPending lists the actions waiting for a person (client.Client.Pending).
func readPending(ctx context.Context, cl *client.Client, conversation string) ([]pendingAction, error) {
	return cl.Pending(ctx, conversation)
}

// findPending returns the pending action id, or an error that says what to do.
func findPending(ctx context.Context, cl *client.Client, id string) (pendingAction, error) {
	return cl.FindPending(ctx, id)
}

func newPendingCmd(c *cli) *cobra.Command {
	var (
		asJSON       bool
		conversation string
	)
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List the actions waiting for a person's decision",
		Long: `Lists the actions the gate holds for a person, oldest first: id,
conversation, command, level and reasons. Decide with vigil approve / vigil
deny. JSON lines (one waiting action per line) with --json or when the output
is not a terminal.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			ps, err := readPending(cmd.Context(), cl, conversation)
			if err != nil {
				return err
			}
			if asJSON || !isTerminal(c.stdout) {
				enc := json.NewEncoder(c.stdout)
				for _, p := range ps {
					if err := enc.Encode(p); err != nil {
						return err
					}
				}
				return nil
			}
			printPending(c.stdout, ps, time.Now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines")
	cmd.Flags().StringVar(&conversation, "conversation", "", "only this conversation")
	return cmd
}

func printPending(w io.Writer, ps []pendingAction, now time.Time) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no action is waiting for a decision")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCONVERSATION\tLEVEL\tWAITING\tCOMMAND\tREASONS")
	for _, p := range ps {
		age := "?"
		if t, err := time.Parse(time.RFC3339Nano, p.Time); err == nil {
			age = now.Sub(t).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Conversation, p.Level, age, truncate(p.Command, 60), reasonList(p.Reasons, 2))
	}
	tw.Flush()
}

// reasonList names the first n reasons.
func reasonList(rs []events.Reason, n int) string {
	var parts []string
	for i, r := range rs {
		if i == n {
			parts = append(parts, fmt.Sprintf("+%d", len(rs)-n))
			break
		}
		parts = append(parts, r.Analyzer+"/"+r.Rule)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
