package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// Exit statuses of vigil gate.
const (
	gateExitAllow   = 0
	gateExitError   = 1
	gateExitDeny    = 2
	gateExitTimeout = 3
)

func newGateCmd(c *cli) *cobra.Command {
	var (
		timeout      time.Duration
		conversation string
		keep         bool
	)
	cmd := &cobra.Command{
		Use:   "gate [FILE|-]",
		Short: "Append one action, wait for the gate's decision, print it",
		Long: `For agents and scripts: appends one action event (JSON; "kind" may be left
out, an id is generated when absent), waits for the gate's decision on it
and prints it as JSON: id, outcome (allow or deny), by (rule, mode, session,
allowlist, sandbox, human, timeout), level and reasons.

Exit status: 0 allowed, 2 denied, 3 no decision within --timeout (treat as
denied: the action is withdrawn, so the log records it denied by timeout,
unless --keep-pending), 1 error (not gated: do not run the action).

Without --timeout it waits for the gate's own end: a person's decision or
the config's approval timeout, after which the action is denied. Uses the
agent credentials of the data directory, or --nats/--creds.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := inputName(args)
			input, err := readInput(c, name)
			if err != nil {
				return err
			}
			ev, err := parseGateInput(name, input, conversation, time.Now())
			if err != nil {
				return err
			}
			cl, err := c.connect(cmd.Context(), natsutil.RoleAgent)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			if isTerminal(c.stderr) {
				fmt.Fprintf(c.stderr, "gating %s …\n", ev.ID)
			}
			why := "vigil gate was interrupted before a decision (fail closed)"
			if timeout > 0 {
				why = fmt.Sprintf("vigil gate stopped waiting after %s (fail closed)", timeout)
			}
			var requested *events.GateRequested
			res, err := cl.GateAndWait(ctx, ev, &client.GateOptions{
				Withdraw: !keep, WithdrawReason: why,
				OnRequested: func(r events.GateRequested) {
					requested = &r
					fmt.Fprintf(c.stderr, "waiting for a person: %s is %s (%s); `vigil approve %s` or `vigil deny %s`\n",
						ev.ID, r.Level, reasonList(r.Reasons, 3), ev.ID, ev.ID)
				},
			})
			switch {
			case err == nil:
			case errors.Is(err, client.ErrNoDecision):
				// No decision carries no level: the gate's request has it.
				if requested != nil && res.Level == "" {
					res.Level, res.Reasons = requested.Level, requested.Reasons
				}
				gateJSON(c.stdout, res)
				return &exitError{code: gateExitTimeout, err: fmt.Errorf("no decision on %s: denied (fail closed): %v", ev.ID, err)}
			default:
				return &exitError{code: gateExitError, err: err}
			}
			if err := gateJSON(c.stdout, res); err != nil {
				return err
			}
			if res.Outcome != events.OutcomeAllow {
				return &exitError{code: gateExitDeny}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&timeout, "timeout", 0, "stop waiting after this long and treat the action as denied (exit 3)")
	fl.StringVar(&conversation, "conversation", "", "conversation of an action that names none")
	fl.BoolVar(&keep, "keep-pending", false, "on --timeout, leave the action pending for a person instead of withdrawing it")
	return cmd
}

// parseGateInput reads one action event. "kind" defaults to action; the id
// and time are filled when absent.
func parseGateInput(name string, input []byte, conversation string, now time.Time) (events.Event, error) {
	v, err := events.DecodeJSONValue(input)
	if err != nil {
		return events.Event{}, fmt.Errorf("%s: not one JSON action: %v", name, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return events.Event{}, fmt.Errorf("%s: not one JSON action (an object with data.tool and data.args)", name)
	}
	if _, ok := m["kind"]; !ok {
		m["kind"] = string(events.KindAction)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return events.Event{}, err
	}
	ev, err := events.DecodeJSON(b)
	if err != nil {
		return events.Event{}, fmt.Errorf("%s: %v", name, err)
	}
	if ev.Kind != events.KindAction {
		return events.Event{}, fmt.Errorf("%s: a %s event; vigil gate gates actions (use vigil append for other events)", name, ev.Kind)
	}
	if ev.Conversation == "" {
		ev.Conversation = conversation
	}
	if ev.ID == "" {
		ev.ID = ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	}
	if ev.Time.IsZero() {
		ev.Time = now.UTC()
	}
	if err := ev.Validate(); err != nil {
		return events.Event{}, fmt.Errorf("%s: %v", name, err)
	}
	return ev, nil
}
