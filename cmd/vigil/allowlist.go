package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/allowlistlog"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/processors/gate"
)

func newAllowlistCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "allowlist",
		Short: "Review and revoke the global allowlist (approvals --scope always)",
		Long: `The allowlist is the set of allowlist.changed events in the log: each entry
allows, in every conversation, the actions of one command shape that would
otherwise wait for a person (deny rules still win). vigil approve --scope
always adds one; vigil allowlist revoke ends one.`,
	}
	cmd.AddCommand(newAllowlistListCmd(c), newAllowlistRevokeCmd(c))
	return cmd
}

// readAllowlist folds the log's allowlist.changed events with the gate's
// own fold, so it lists exactly what the gate applies.
func readAllowlist(ctx context.Context, cl *client.Client) ([]gate.Entry, error) {
	al := gate.NewAllowlist()
	err := natsutil.ReadStream(ctx, cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamLog},
		func(r natsutil.RawRecord) error {
			ev, err := events.DecodeMsgpack(r.Data)
			if err != nil || ev.Kind != events.KindAllowlistChanged {
				return nil
			}
			al.Apply(&events.Record{Seq: r.Seq, Subject: r.Subject, Raw: r.Data, Event: ev})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	return al.Entries(), nil
}

func newAllowlistListCmd(c *cli) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the allowlist entries in force",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			es, err := readAllowlist(cmd.Context(), cl)
			if err != nil {
				return err
			}
			if asJSON || !isTerminal(c.stdout) {
				return gateJSON(c.stdout, es)
			}
			if len(es) == 0 {
				fmt.Fprintln(c.stdout, "the allowlist is empty")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ENTRY\tSHAPE\tBY\tFOR ACTION\tLOG SEQ\tREASON")
			for _, e := range es {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", e.ID, e.Shape, e.By, e.ActionID, e.Seq, e.Reason)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newAllowlistRevokeCmd(c *cli) *cobra.Command {
	var reason, approver string
	cmd := &cobra.Command{
		Use:   "revoke ENTRY",
		Short: "Revoke an allowlist entry",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			es, err := readAllowlist(cmd.Context(), cl)
			if err != nil {
				return err
			}
			var found *gate.Entry
			for i := range es {
				if es[i].ID == args[0] {
					found = &es[i]
				}
			}
			if found == nil {
				return fmt.Errorf("no allowlist entry %s is in force; `vigil allowlist list` shows the entries", args[0])
			}
			if approver == "" {
				approver = operatorName()
			}
			ev, err := allowlistlog.RevokeEvent(allowlistlog.Revoke{EntryID: found.ID, By: approver, Reason: reason})
			if err != nil {
				return fmt.Errorf("revoke %s: %w", found.ID, err)
			}
			r, err := cl.Append(cmd.Context(), ev)
			if err != nil {
				return fmt.Errorf("revoke %s: %w", found.ID, err)
			}
			fmt.Fprintf(c.stdout, "allowlist entry %s (shape %s) revoked at log seq %d\n", found.ID, found.Shape, r.Seq)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded)")
	cmd.Flags().StringVar(&approver, "approver", "", "who revokes (default $VIGIL_APPROVER or $USER)")
	return cmd
}
