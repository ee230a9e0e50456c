package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/pairinglog"
	"github.com/vigil-dev/vigil/processors/pairing"
)

func newPairingCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairing",
		Short: "Pair browsers as approver devices: list, approve or deny a code, revoke, clear pending",
		Long: `A browser that opens /pair on the HTTP API gets an 8-character code. Read it
on that device and run vigil pairing approve web CODE: the browser becomes an
approver session with a name. Codes expire after 1 hour; one request per
client every 10 minutes; at most 3 pending; 5 failed approvals or denials
lock pairing out for 1 hour. Every step is an event in the log.

These commands need admin credentials, and approve and deny need the node's
pairing key (DATA/creds/pairing.key): run them on the node's host with
--data DIR, or give the key with --pairing-key FILE.`,
	}
	var keyFile string
	cmd.PersistentFlags().StringVar(&keyFile, "pairing-key", "", "the node's pairing key (default DATA/creds/pairing.key)")
	cmd.AddCommand(newPairingListCmd(c), newPairingDecideCmd(c, &keyFile, true), newPairingDecideCmd(c, &keyFile, false),
		newPairingRevokeCmd(c), newPairingClearCmd(c))
	return cmd
}

// pairingAdmin connects as admin and folds the log's pairing events with
// the processor's fold; the caller closes the client.
func (c *cli) pairingAdmin(ctx context.Context) (*client.Client, *pairinglog.Reader, error) {
	cl, err := c.connect(ctx, natsutil.RoleAdmin)
	if err != nil {
		return nil, nil, err
	}
	r := pairinglog.NewReader(cl.JetStream())
	if err := r.Sync(ctx); err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, r, nil
}

// pairingListing is what vigil pairing list --json prints.
type pairingListing struct {
	Requests []pairing.Request `json:"requests"`
	Lockout  pairing.Lockout   `json:"lockout"`
}

func newPairingListCmd(c *cli) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pending requests and paired devices (--all: and how the others ended)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, r, err := c.pairingAdmin(cmd.Context())
			if err != nil {
				return err
			}
			defer cl.Close()
			out := pairingListing{Requests: []pairing.Request{}}
			r.Current(func(f *pairing.Fold) {
				for _, q := range f.Requests() {
					if all || q.State == pairing.StatePending || q.State == pairing.StateApproved {
						out.Requests = append(out.Requests, q)
					}
				}
				out.Lockout = f.Lock()
			})
			if asJSON || !isTerminal(c.stdout) {
				return json.NewEncoder(c.stdout).Encode(out)
			}
			printPairing(c.stdout, out, time.Now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&all, "all", false, "also list denied, expired, revoked and refused requests")
	return cmd
}

func printPairing(w io.Writer, l pairingListing, now time.Time) {
	if l.Lockout.Locked {
		fmt.Fprintf(w, "pairing is LOCKED OUT until %s (too many failed approvals)\n", l.Lockout.Until.Local().Format(time.DateTime))
	}
	if len(l.Requests) == 0 {
		fmt.Fprintln(w, "no pairing request is pending and no device is paired")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST\tSTATE\tNAME\tREQUESTED\tEXPIRES\tBY\tREASON")
	for _, q := range l.Requests {
		expires := "-"
		if q.State == pairing.StatePending {
			expires = "in " + q.ExpiresAt.Sub(now).Round(time.Second).String()
			if !q.ExpiresAt.After(now) {
				expires = "expired"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s ago\t%s\t%s\t%s\n", q.ID, q.State, q.Name,
			now.Sub(q.RequestedAt).Round(time.Second), expires, q.By, q.Reason)
	}
	tw.Flush()
}

func newPairingDecideCmd(c *cli, keyFile *string, approve bool) *cobra.Command {
	var name, reason, by string
	verb, kind := "deny", events.KindPairingDenied
	if approve {
		verb, kind = "approve", events.KindPairingApproved
	}
	cmd := &cobra.Command{
		Use:   verb + " web CODE",
		Short: map[bool]string{true: "Approve a browser's code: it becomes an approver session", false: "Deny a browser's code"}[approve],
		Long: `Give the code shown on the device you are pairing (case, spaces and dashes do
not matter). A code that matches no open request counts as a failure: 5 within
an hour lock pairing out for an hour. Exit 0 when the code matched, 1 otherwise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != pairing.PlatformWeb {
				return fmt.Errorf("platform %q: only %q (a browser on the HTTP API's /pair) can be paired", args[0], pairing.PlatformWeb)
			}
			code, err := pairing.NormalizeCode(args[1])
			if err != nil {
				return err
			}
			if approve && name != "" && !pairing.ValidName(name) {
				return fmt.Errorf("--name: 1-%d printable characters", pairing.MaxNameLen)
			}
			key, err := c.pairingKey(*keyFile)
			if err != nil {
				return err
			}
			cl, r, err := c.pairingAdmin(cmd.Context())
			if err != nil {
				return err
			}
			defer cl.Close()
			// Name the request the code matches, for whoever reads the
			// log; the fold itself goes by the code's hash.
			user := ""
			hash := pairing.HashCode(key, code)
			r.Current(func(f *pairing.Fold) {
				for _, q := range f.Pending() {
					if q.CodeHash == hash {
						user = q.ID
					}
				}
			})
			if by == "" {
				by = "cli:" + operatorName()
			}
			res, err := cl.Append(cmd.Context(), pairinglog.AttemptEvent(kind, key, pairing.PlatformWeb, code, user, name, by, reason))
			if err != nil {
				return fmt.Errorf("%s %s: %w", verb, pairing.FormatCode(code), err)
			}
			o, err := r.OutcomeAt(cmd.Context(), res.Seq)
			if err != nil {
				return err
			}
			return c.reportAttempt(verb, code, res.Seq, o)
		},
	}
	if approve {
		cmd.Flags().StringVar(&name, "name", "", "the device's name, recorded as the approver of what it decides (default device-<request>)")
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded)")
	cmd.Flags().StringVar(&by, "approver", "", "who decides (default cli:$VIGIL_APPROVER or $USER)")
	return cmd
}

func (c *cli) reportAttempt(verb, code string, seq uint64, o pairing.Outcome) error {
	switch o.Result {
	case pairing.ResultApproved:
		fmt.Fprintf(c.stdout, "paired: request %s is the approver device %q (log seq %d); its browser's session starts at its next poll\n", o.Request, o.Name, seq)
		return nil
	case pairing.ResultDenied:
		fmt.Fprintf(c.stdout, "denied: request %s (log seq %d)\n", o.Request, seq)
		return nil
	case pairing.ResultLocked:
		return fmt.Errorf("pairing is locked out (%s); nothing was %sd; the lockout ends an hour after it began (vigil pairing list)", o.Reason, verb)
	case pairing.ResultFailed:
		return fmt.Errorf("no open pairing request has the code %s (log seq %d): %d failed attempt(s) within the hour, %d lock pairing out; check the code on the device",
			pairing.FormatCode(code), seq, o.Failures, pairing.MaxFailures)
	}
	return fmt.Errorf("%s %s: the log says %s (%s)", verb, pairing.FormatCode(code), o.Result, o.Reason)
}

// pairingKey reads the pairing key from file, or from the data
// directory's credentials.
func (c *cli) pairingKey(file string) ([]byte, error) {
	if file != "" {
		return pairinglog.LoadKeyFile(file)
	}
	key, err := pairinglog.LoadKey(datadir.New(c.data()).Creds().Dir())
	if errors.Is(err, pairinglog.ErrNoKey) && c.natsURL != "" {
		return nil, fmt.Errorf("%w: with --nats, give the node's key with --pairing-key FILE", err)
	}
	return key, err
}

func newPairingRevokeCmd(c *cli) *cobra.Command {
	var reason, by string
	cmd := &cobra.Command{
		Use:   "revoke DEVICE",
		Short: "End a paired device (by name or request id), or cancel a pending request by id",
		Long: `The device's browser sessions end on every node that follows the log, and it
can start no new one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, r, err := c.pairingAdmin(cmd.Context())
			if err != nil {
				return err
			}
			defer cl.Close()
			var target pairing.Request
			found := false
			r.Current(func(f *pairing.Fold) {
				if target, found = f.FindDevice(args[0]); found {
					return
				}
				if q, ok := f.Get(args[0]); ok && q.State == pairing.StatePending {
					target, found = q, true
				}
			})
			if !found {
				return fmt.Errorf("no paired device or pending request %q; vigil pairing list shows them", args[0])
			}
			if by == "" {
				by = "cli:" + operatorName()
			}
			res, err := cl.Append(cmd.Context(), pairinglog.RevokeEvent(target.ID, by, reason))
			if err != nil {
				return fmt.Errorf("revoke %s: %w", target.ID, err)
			}
			o, err := r.OutcomeAt(cmd.Context(), res.Seq)
			if err != nil {
				return err
			}
			if o.Result != pairing.ResultRevoked {
				return fmt.Errorf("revoke %s: the log says %s", target.ID, o.Result)
			}
			what := "pending request " + target.ID + " cancelled"
			if target.State == pairing.StateApproved {
				what = fmt.Sprintf("device %q (request %s) revoked", target.Name, target.ID)
			}
			fmt.Fprintf(c.stdout, "%s (log seq %d)\n", what, res.Seq)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded)")
	cmd.Flags().StringVar(&by, "approver", "", "who revokes (default cli:$VIGIL_APPROVER or $USER)")
	return cmd
}

func newPairingClearCmd(c *cli) *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "clear-pending",
		Short: "Cancel every pending pairing request",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, r, err := c.pairingAdmin(cmd.Context())
			if err != nil {
				return err
			}
			defer cl.Close()
			var pending []pairing.Request
			r.Current(func(f *pairing.Fold) { pending = f.Pending() })
			if len(pending) == 0 {
				fmt.Fprintln(c.stdout, "no pairing request is pending")
				return nil
			}
			if by == "" {
				by = "cli:" + operatorName()
			}
			evs := make([]events.Event, len(pending))
			for i, q := range pending {
				evs[i] = pairinglog.RevokeEvent(q.ID, by, "cleared (vigil pairing clear-pending)")
			}
			if _, err := cl.AppendBatch(cmd.Context(), evs); err != nil {
				return fmt.Errorf("clear the pending requests: %w", err)
			}
			fmt.Fprintf(c.stdout, "%d pending pairing request(s) cancelled\n", len(pending))
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "approver", "", "who clears (default cli:$VIGIL_APPROVER or $USER)")
	return cmd
}
