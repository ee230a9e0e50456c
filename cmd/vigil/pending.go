package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// pendingAction is one action waiting for a person, as vigil pending lists it.
type pendingAction struct {
	ID           string          `json:"id"`
	Conversation string          `json:"conversation"`
	Command      string          `json:"command"`
	Tool         string          `json:"tool,omitempty"`
	Level        events.Risk     `json:"level"`
	Reasons      []events.Reason `json:"reasons"`
	Shape        string          `json:"shape,omitempty"`
	Agent        string          `json:"agent,omitempty"`
	Backend      string          `json:"backend,omitempty"`
	Timeout      string          `json:"timeout,omitempty"`
	// Seq is the log sequence of the action; Time the action's time.
	Seq  uint64 `json:"seq"`
	Time string `json:"time"`
	// Digest is the gate's digest of the action as stored: a verdict names
	// it, with Seq, so that it decides exactly this action.
	Digest string `json:"digest,omitempty"`
}

// readPending folds the gate's outputs in VIGIL_DERIVED: requested minus
// decided, per action and log position. It needs no read model.
func readPending(ctx context.Context, cl *client.Client, conversation string) ([]pendingAction, error) {
	subject := events.GatePrefix + ">"
	if conversation != "" {
		subject = events.GateSubject(conversation)
	}
	type key struct {
		id  string
		seq uint64
	}
	waiting := map[key]pendingAction{}
	err := natsutil.ReadStream(ctx, cl.JetStream(), natsutil.ReadOptions{Stream: events.StreamDerived, Subjects: []string{subject}},
		func(r natsutil.RawRecord) error {
			d, err := events.DecodeDerived(r.Data)
			if err != nil {
				return nil
			}
			switch d.Kind {
			case events.KindGateRequested:
				req, err := events.DerivedDataAs[events.GateRequested](&d)
				if err != nil {
					return nil
				}
				waiting[key{req.ActionID, req.LogSeq}] = pendingAction{
					ID: req.ActionID, Conversation: d.Conversation, Command: req.Command, Tool: req.Tool,
					Level: req.Level, Reasons: req.Reasons, Shape: req.Shape, Agent: req.Agent,
					Backend: req.Backend, Timeout: req.Timeout, Seq: req.LogSeq, Time: d.Time,
					Digest: req.Digest,
				}
			case events.KindGateDecided:
				gd, err := events.DerivedDataAs[events.GateDecided](&d)
				if err != nil {
					return nil
				}
				delete(waiting, key{gd.ActionID, gd.LogSeq})
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read gate outputs: %w", err)
	}
	out := make([]pendingAction, 0, len(waiting))
	for _, p := range waiting {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b pendingAction) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// findPending returns the pending action id, or an error that says what to do.
func findPending(ctx context.Context, cl *client.Client, id string) (pendingAction, error) {
	ps, err := readPending(ctx, cl, "")
	if err != nil {
		return pendingAction{}, err
	}
	for _, p := range ps {
		if p.ID == id {
			return p, nil
		}
	}
	return pendingAction{}, fmt.Errorf("no action %s is waiting for a decision (it was decided, expired, or never existed); `vigil pending` lists the ones that are", id)
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
