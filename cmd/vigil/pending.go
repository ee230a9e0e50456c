package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/client/transport"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// pendingRow is a line of vigil pending's table: the waiting action with
// its whole command and the credential class it was stored with ("" when
// the log could not be read for it).
type pendingRow struct {
	client.PendingAction
	Credential events.Origin
}

// withStoredCommand is p with its whole command (display.Command) and its
// credential read from the action stored at p.Seq; p as it is, with no
// credential, when that cannot be read.
func withStoredCommand(ctx context.Context, cl *client.Client, p client.PendingAction) pendingRow {
	r := pendingRow{PendingAction: p}
	if s, ok := storedFacts(ctx, cl, p); ok {
		r.Credential = s.credential
		if s.command != "" {
			r.Command = s.command
		}
	}
	return r
}

// withStoredAction is withStoredCommand, the credential class the stored
// action arrived with ("" when it cannot be read), and its conversation's
// placement (nil when the log cannot be read for it).
func withStoredAction(ctx context.Context, cl *client.Client, p client.PendingAction) (client.PendingAction, events.Origin, *display.Placement) {
	s, ok := storedFacts(ctx, cl, p)
	if !ok {
		return p, "", nil
	}
	if s.command != "" {
		p.Command = s.command
	}
	var pl *display.Placement
	if x, ok := storedPlacement(ctx, cl, s.ev, p.Seq); ok {
		pl = &x
	}
	return p, s.credential, pl
}

// stored is what the action stored at a pending action's seq says of
// itself: the event, its whole command (display.Command; "" when it names
// none) and the credential class it was sent with (sentWith).
type stored struct {
	ev         events.Event
	command    string
	credential events.Origin
}

// storedFacts reads the action stored at p.Seq; false when the log could
// not be read for it or the record there is not p's.
func storedFacts(ctx context.Context, cl *client.Client, p client.PendingAction) (stored, bool) {
	ev, ok := storedAction(ctx, cl, p)
	if !ok {
		return stored{}, false
	}
	return stored{ev: ev, command: display.Command(ev.Tool(), ev.Args()), credential: sentWith(&ev)}, true
}

// placementScan bounds how many of a conversation's first records are read
// for its conversation.started (as the page reads them).
const placementScan = 1000

// storedPlacement is the placement of the action ev stored at seq: whether
// a runtime credential's conversation.started attested its conversation,
// agent and backend (display.PlacementOf over the conversation's first
// records), and whether the log could be read for it.
func storedPlacement(ctx context.Context, cl *client.Client, ev events.Event, seq uint64) (display.Placement, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := cl.JetStream().Stream(ctx, events.StreamLog)
	if err != nil {
		return display.Placement{}, false
	}
	// A plain ephemeral consumer, fetched from repeatedly: an ordered one
	// makes a new consumer for every fetch and deletes the one before,
	// which an approver's credentials may not do.
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: events.LogSubject(ev.Conversation),
		AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: transport.ReaderInactive, Replicas: 1, MemoryStorage: true})
	if err != nil {
		return display.Placement{}, false
	}
	var recs []events.Record
	for len(recs) < placementScan {
		batch, err := cons.FetchNoWait(min(256, placementScan-len(recs)))
		if err != nil {
			return display.Placement{}, false
		}
		n, done := 0, false
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil || meta.Sequence.Stream >= seq {
				done = true
				continue
			}
			if e, err := events.DecodeMsgpack(m.Data()); err == nil {
				recs = append(recs, events.Record{Seq: meta.Sequence.Stream, Event: e})
			}
			if meta.NumPending == 0 {
				done = true
			}
		}
		if done || n == 0 {
			break
		}
	}
	return display.PlacementOf(&ev, seq, recs), true
}

// storedAction is the action stored at p.Seq, if it is p's.
func storedAction(ctx context.Context, cl *client.Client, p client.PendingAction) (events.Event, bool) {
	st, err := cl.JetStream().Stream(ctx, events.StreamLog)
	if err != nil {
		return events.Event{}, false
	}
	m, err := st.GetMsg(ctx, p.Seq)
	if err != nil {
		return events.Event{}, false
	}
	ev, err := events.DecodeMsgpack(m.Data)
	if err != nil || ev.ID != p.ID || ev.Kind != events.KindAction {
		return events.Event{}, false
	}
	return ev, true
}

// pendingLine is one line of vigil pending --json: the waiting action as
// GET /v1/pending lists it, its command the stored one (whole: these are
// the exact bytes), the gate's summary in summary.
type pendingLine struct {
	client.PendingAction
	Summary       string `json:"summary"`
	CommandStored bool   `json:"command_stored"`
	CommandBytes  int    `json:"command_bytes"`
	// Credential is the class of credential the stored action arrived
	// with (agent for actions stored without one); absent when the log
	// could not be read. With the agent's, conversation and agent are its
	// claims (vigil approve says whether a runtime attested them).
	Credential events.Origin `json:"credential,omitempty"`
}

func pendingLineOf(ctx context.Context, cl *client.Client, p client.PendingAction) pendingLine {
	l := pendingLine{PendingAction: p, Summary: p.Command}
	if s, ok := storedFacts(ctx, cl, p); ok {
		l.Credential = s.credential
		if s.command != "" {
			l.Command, l.CommandStored = s.command, true
		}
	}
	l.CommandBytes = len(l.Command)
	return l
}

func newPendingCmd(c *cli) *cobra.Command {
	var (
		asJSON       bool
		full         bool
		conversation string
	)
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List the actions waiting for a person's decision",
		Long: `Lists the actions the gate holds for a person, oldest first: level and
reasons first, then id, conversation, agent, how long it has waited and the
command. Decide with vigil approve / vigil deny. JSON lines (one waiting
action per line, the exact bytes) with --json or when the output is not a
terminal: "command" is the stored command, whole ("summary" the gate's,
cut at 400 bytes; "command_stored" false if the log could not be read);
"credential" is the credential the action was sent with.

What the agent wrote is shown through one filter (docs/security.md,
"What a person sees"): control characters, escape sequences, bidi and
invisible characters appear as escapes such as \x1b or \u202e, never
interpreted. A long command is cut in the middle, never at its end:
its head, "… N bytes not shown …", and its tail; --full shows it whole.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect(cmd.Context(), natsutil.RoleApprover)
			if err != nil {
				return err
			}
			defer cl.Close()
			ps, err := cl.Pending(cmd.Context(), conversation)
			if err != nil {
				return err
			}
			if asJSON || !isTerminal(c.stdout) {
				enc := json.NewEncoder(c.stdout)
				for _, p := range ps {
					if err := enc.Encode(pendingLineOf(cmd.Context(), cl, p)); err != nil {
						return err
					}
				}
				return nil
			}
			rows := make([]pendingRow, len(ps))
			for i := range ps {
				rows[i] = withStoredCommand(cmd.Context(), cl, ps[i])
			}
			printPending(c.stdout, rows, time.Now(), full)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines")
	cmd.Flags().BoolVar(&full, "full", false, "show each command whole (the table cuts a long one in the middle)")
	cmd.Flags().StringVar(&conversation, "conversation", "", "only this conversation")
	return cmd
}

// pendingCommandWidth is how wide vigil pending shows a command without
// --full: its head and tail around the bytes not shown.
const pendingCommandWidth = 72

// printPending writes the table of waiting actions: what Vigil concluded
// (level, reasons) first, then the credential each was sent with (with
// the agent's, conversation and agent are its claims), every field the
// agent wrote through display.
func printPending(w io.Writer, ps []pendingRow, now time.Time, full bool) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no action is waiting for a decision")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tREASONS\tSENT WITH\tID\tCONVERSATION\tAGENT\tWAITING\tCOMMAND")
	for _, p := range ps {
		age := "?"
		if t, err := time.Parse(time.RFC3339Nano, p.Time); err == nil {
			age = now.Sub(t).Round(time.Second).String()
		}
		sent := "?"
		switch p.Credential {
		case "":
		case events.OriginAgent:
			sent = "agent (claims)"
		default:
			sent = display.Field(string(p.Credential), 16, false)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", display.Field(string(p.Level), 16, false), reasonList(p.Reasons, 2), sent,
			display.Field(p.ID, 40, full), display.Field(p.Conversation, 40, full), display.Field(p.Agent, 40, full), age,
			display.Field(actionText(p.PendingAction), pendingCommandWidth, full))
	}
	tw.Flush()
}

// actionText is what a waiting action does: its command, else its tool.
func actionText(p client.PendingAction) string {
	if p.Command != "" {
		return p.Command
	}
	return p.Tool
}

// reasonList names the first n reasons (analyzer/rule, through display).
func reasonList(rs []events.Reason, n int) string {
	var parts []string
	for i, r := range rs {
		if i == n {
			parts = append(parts, fmt.Sprintf("+%d", len(rs)-n))
			break
		}
		parts = append(parts, display.Field(r.Analyzer+"/"+r.Rule, 48, false))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
