package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

type decideFlags struct {
	scope       string
	reason      string
	approver    string
	asJSON      bool
	interactive bool
	wait        time.Duration
}

func newApproveCmd(c *cli) *cobra.Command {
	var f decideFlags
	cmd := &cobra.Command{
		Use:   "approve [ID]",
		Short: "Approve a waiting action (once, for the session, or always)",
		Long: `Approves the action ID, which must be waiting for a decision (vigil pending):
  --scope once     this action only (the default)
  --scope session  this action, and every later one of the same shape in the
                   same conversation (shape: the command name plus the rule
                   that fired, never the raw string; see docs/gate.md)
  --scope always   this action, and every later one of the same shape in any
                   conversation, through a global allowlist entry that
                   vigil allowlist list shows and vigil allowlist revoke ends
Deny rules still win over session and always approvals.

With no ID, on a terminal, walks the queue: for each waiting action it shows
its level and rules first, then its conversation, agent, the credential that
sent it, whether a runtime credential attested the conversation, agent and
backend (its placement; else they are the agent's claims) and its whole
command (never cut), and asks [o]nce [s]ession [a]lways [d]eny (Enter denies) or
[q]uit (leave it waiting). With an ID it shows the action the same way before
the decision. What the agent wrote is shown through one filter
(docs/security.md, "What a person sees"): control characters, escape
sequences, bidi and invisible characters appear as escapes such as \x1b or
\u202e, never interpreted.

The verdict names the action's log seq and digest as vigil pending shows
them, so it decides exactly that action: if another action waits under the
same id, the gate refuses the verdict and raises an alert.

Needs approver (or admin) credentials: an approval sent with agent
credentials is refused and raises an alert.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			if len(args) == 0 {
				if !f.interactive && !isTerminalReader(c.stdin) {
					return errors.New("approve: give an action ID (vigil pending lists them), or run on a terminal to walk the queue")
				}
				return c.walkPending(cmd.Context(), cl, f)
			}
			verdict, err := scopeVerdict(f.scope)
			if err != nil {
				return err
			}
			return c.decideOne(cmd.Context(), cl, args[0], verdict, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scope, "scope", "once", "once, session or always")
	addDecideFlags(cmd, &f)
	fl.BoolVar(&f.interactive, "interactive", false, "walk the queue even when standard input is not a terminal")
	fl.MarkHidden("interactive")
	return cmd
}

func newDenyCmd(c *cli) *cobra.Command {
	var f decideFlags
	cmd := &cobra.Command{
		Use:   "deny ID",
		Short: "Deny a waiting action",
		Long: `Denies the action ID, which must be waiting for a decision (vigil pending
lists what waits, with each action's level and reasons). The agent waiting
on it (vigil gate, a hook, GateAndWait) gets deny at once and must not run
the action; the log records the decision by human, with --approver and
--reason. A deny is for this action only: the same command asked again
waits again (to refuse a kind of action for good, add a deny rule to the
config: docs/gate.md).

The verdict names the action's log seq and digest as vigil pending shows
them, so it decides exactly that action. Needs approver (or admin)
credentials: a decision sent with agent credentials is refused and raises
an alert.

Exit status: 0 when the denial is recorded in the log (the output says
whether the gate confirmed it within --wait); 1 when the action is not
waiting (unknown, already decided or expired) or on an error.`,
		Example: `  vigil pending
  vigil deny 01JD8Z… --reason "not on the production database"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			return c.decideOne(cmd.Context(), cl, args[0], events.VerdictDeny, f)
		},
	}
	addDecideFlags(cmd, &f)
	return cmd
}

func addDecideFlags(cmd *cobra.Command, f *decideFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.reason, "reason", "", "why (recorded with the decision)")
	fl.StringVar(&f.approver, "approver", "", "who decides (default $VIGIL_APPROVER or $USER)")
	fl.BoolVar(&f.asJSON, "json", false, "print the decision as JSON")
	fl.DurationVar(&f.wait, "wait", 10*time.Second, "how long to wait for the gate to confirm the decision")
}

func scopeVerdict(scope string) (events.Verdict, error) {
	switch v := events.Verdict(scope); v {
	case events.VerdictOnce, events.VerdictSession, events.VerdictAlways:
		return v, nil
	}
	return "", fmt.Errorf("--scope %q: use once, session or always (vigil deny ID denies)", scope)
}

func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (c *cli) decideOne(ctx context.Context, cl *client.Client, id string, verdict events.Verdict, f decideFlags) error {
	p, err := cl.FindPending(ctx, id)
	if err != nil {
		return err
	}
	if !f.asJSON {
		shown, sentWith, placed := withStoredAction(ctx, cl, p)
		printAction(c.stdout, shown, sentWith, placed)
	}
	d, err := decide(ctx, cl, p, verdict, f)
	if err != nil {
		return err
	}
	if f.asJSON {
		return gateJSON(c.stdout, d)
	}
	printDecision(c.stdout, d)
	return nil
}

func printDecision(w io.Writer, d client.Decision) {
	id := display.Escape(d.ID)
	if !d.Confirmed {
		fmt.Fprintf(w, "%s: %s recorded at log seq %d; the gate has not confirmed it yet (is vigil serve running?)\n", id, display.Escape(string(d.Verdict)), d.Seq)
		return
	}
	fmt.Fprintf(w, "%s: %s → %s (by %s)", id, display.Escape(string(d.Verdict)), display.Escape(string(d.Outcome)), display.Escape(d.By))
	if d.EntryID != "" {
		fmt.Fprintf(w, ", allowlist entry %s", display.Escape(d.EntryID))
	}
	if d.Note != "" {
		fmt.Fprintf(w, "; %s", display.Escape(d.Note))
	}
	fmt.Fprintln(w)
	if len(d.Released) > 0 {
		ids := make([]string, len(d.Released))
		for i, r := range d.Released {
			ids[i] = display.Escape(r)
		}
		fmt.Fprintf(w, "  also let through: %s\n", strings.Join(ids, ", "))
	}
}

// maxShownReasons is how many reasons printAction lists; it says how many
// more there are.
const maxShownReasons = 8

// printAction shows a waiting action before a person decides on it: what
// Vigil concluded first (level and rules), then where it comes from, then
// the whole command, never cut; every field the agent wrote goes through
// display, so no escape sequence, bidi or invisible character in it can
// redraw, reorder or hide what is shown.
//
// sentWith is the credential class the stored action arrived with ("":
// it could not be read): with the agent's, the conversation, agent and
// backend shown are what the agent claims. placed is the conversation's
// placement (nil: the log could not be read for it): whether a runtime
// credential attested the conversation, agent and backend, or they are
// the agent's claims.
func printAction(w io.Writer, p client.PendingAction, sentWith events.Origin, placed *display.Placement) {
	rules := make([]string, 0, len(p.Reasons))
	for _, r := range p.Reasons {
		rules = append(rules, r.Analyzer+"/"+r.Rule)
	}
	fmt.Fprintf(w, "level %s\n", display.Line(string(p.Level), rules...))
	fmt.Fprintf(w, "  action        %s (log seq %d)\n", display.Field(p.ID, 0, true), p.Seq)
	fmt.Fprintf(w, "  conversation  %s\n", display.Field(p.Conversation, 0, true))
	fmt.Fprintf(w, "  agent         %s\n", display.Field(p.Agent, 0, true))
	if p.Backend != "" {
		fmt.Fprintf(w, "  backend       %s\n", display.Escape(p.Backend))
	}
	switch {
	case sentWith == "":
		fmt.Fprintf(w, "  sent with     (not known: the stored action could not be read)\n")
	case sentWith.Trusted():
		fmt.Fprintf(w, "  sent with     the %s credential\n", display.Escape(string(sentWith)))
	default:
		fmt.Fprintf(w, "  sent with     the agent credential (conversation, agent and backend are its claims)\n")
	}
	if placed == nil {
		fmt.Fprintf(w, "  placement     (not known: the conversation could not be read)\n")
	} else {
		fmt.Fprintf(w, "  placement     %s\n", placed.Describe(func(s string) string { return display.Field(s, 0, true) }))
	}
	if p.Tool != "" {
		fmt.Fprintf(w, "  tool          %s\n", display.Escape(p.Tool))
	}
	fmt.Fprintf(w, "  command       %s\n", display.Field(p.Command, 0, true))
	if len(p.Command) > 0 {
		fmt.Fprintf(w, "                (%d bytes, shown whole)\n", len(p.Command))
	}
	for i, r := range p.Reasons {
		if i == maxShownReasons {
			fmt.Fprintf(w, "  … %d more reasons (vigil pending --json lists them all)\n", len(p.Reasons)-maxShownReasons)
			break
		}
		fmt.Fprintf(w, "  - %s %s", display.Field(string(r.Level), 16, false), display.Field(r.Analyzer+"/"+r.Rule, 96, false))
		if r.Detail != "" {
			fmt.Fprintf(w, ": %s", display.Field(r.Detail, 200, false))
		}
		fmt.Fprintln(w)
	}
}

// decide records the verdict on p and waits for the gate to act on it
// (client.Client.Decide).
func decide(ctx context.Context, cl *client.Client, p client.PendingAction, verdict events.Verdict, f decideFlags) (client.Decision, error) {
	approver := f.approver
	if approver == "" {
		approver = operatorName()
	}
	return cl.Decide(ctx, p, verdict, client.DecideOptions{Approver: approver, Reason: f.reason, Wait: f.wait})
}

// walkPending asks about each waiting action in turn.
func (c *cli) walkPending(ctx context.Context, cl *client.Client, f decideFlags) error {
	in := bufio.NewReader(c.stdin)
	skipped := map[string]bool{}
	for {
		ps, err := cl.Pending(ctx, "")
		if err != nil {
			return err
		}
		var p *client.PendingAction
		for i := range ps {
			if !skipped[ps[i].ID] {
				p = &ps[i]
				break
			}
		}
		if p == nil {
			fmt.Fprintln(c.stdout, "no more actions waiting for a decision")
			return nil
		}
		fmt.Fprintln(c.stdout)
		shown, sentWith, placed := withStoredAction(ctx, cl, *p)
		printAction(c.stdout, shown, sentWith, placed)
		var verdict events.Verdict
		for verdict == "" {
			fmt.Fprintf(c.stdout, "[o]nce [s]ession [a]lways [d]eny [q]uit (Enter: deny)? ")
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				fmt.Fprintln(c.stdout)
				return nil // end of input: leave the rest waiting
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "o", "once":
				verdict = events.VerdictOnce
			case "s", "session":
				verdict = events.VerdictSession
			case "a", "always":
				verdict = events.VerdictAlways
			case "", "d", "deny":
				verdict = events.VerdictDeny
			case "q", "quit":
				return nil
			default:
				fmt.Fprintln(c.stdout, "answer o, s, a, d or q")
			}
		}
		d, err := decide(ctx, cl, *p, verdict, f)
		if err != nil {
			fmt.Fprintf(c.stderr, "vigil: %s\n", display.Text(err.Error()))
			skipped[p.ID] = true
			continue
		}
		printDecision(c.stdout, d)
		if !d.Confirmed {
			skipped[p.ID] = true
		}
	}
}
