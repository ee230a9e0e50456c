package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/display"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func newTailCmd(c *cli) *cobra.Command {
	var (
		o         client.TailOptions
		asJSON    bool
		decisions bool
		full      bool
	)
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Print the canonical log",
		Long: `Print VIGIL_LOG in log order: as JSON lines (each the JSON envelope plus
"seq") with --json or when the output is not a terminal, else one line per
event. Without --follow it prints what is there and exits.

On a terminal, what the agent wrote is shown through one filter
(docs/security.md, "What a person sees"): control characters, escape
sequences, bidi and invisible characters appear as escapes such as \x1b or
\u202e, never interpreted; a long command or message is cut in the middle
("… N bytes not shown …"), never at its end, and --full shows it whole.
Each line names the credential the event was sent with ([agent],
[runtime], [approver], [admin]); a message the agent credential sent as
role user is marked as the agent's claim, not the user's words.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Count < 0 {
				return fmt.Errorf("--count %d: give a positive number (or 0 for all)", o.Count)
			}
			cl, err := c.connect(cmd.Context(), natsutil.RoleAdmin)
			if err != nil {
				return err
			}
			defer cl.Close()
			w := bufio.NewWriter(c.stdout)
			defer w.Flush()
			jsonOut := asJSON || !isTerminal(c.stdout)
			var dec map[uint64]string
			if decisions {
				if dec, err = tailDecisions(cmd.Context(), cl.JetStream(), o.Conversation); err != nil {
					return err
				}
			}
			return cl.Tail(cmd.Context(), o, func(r events.Record) error {
				if jsonOut {
					if err := writeRecordJSON(w, r); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(w, "%6d  %s  %-12s %-20s %-10s %s%s\n", r.Seq, r.Event.Time.Format("2006-01-02T15:04:05Z07:00"),
						display.Field(r.Event.SubjectToken(), 40, full), display.Field(string(r.Event.Kind), 32, false), "["+string(sentWith(&r.Event))+"]",
						decisionColumn(dec, r), summary(&r.Event, full))
				}
				if o.Follow {
					return w.Flush()
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&o.From, "from", 0, "first log sequence to print")
	fl.IntVar(&o.Count, "count", 0, "print at most N events (0: all)")
	fl.StringVar(&o.Conversation, "conversation", "", "only this conversation")
	fl.BoolVar(&o.Follow, "follow", false, "keep printing new events until interrupted")
	fl.BoolVar(&full, "full", false, "show each command and message whole (else cut in the middle)")
	fl.BoolVar(&asJSON, "json", false, "JSON lines (the default when not on a terminal)")
	fl.BoolVar(&decisions, "decisions", false, "show each action's gate decision ([allow by mode], [deny by human], [pending]) in the text output")
	return cmd
}

// writeRecordJSON writes the envelope's JSON with "seq" added.
func writeRecordJSON(w io.Writer, r events.Record) error {
	b, err := json.Marshal(r.Event)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, `{"seq":%s,`, strconv.FormatUint(r.Seq, 10)); err != nil {
		return err
	}
	if _, err := w.Write(b[1:]); err != nil {
		return err
	}
	_, err = w.Write([]byte{'\n'})
	return err
}

// sentWith is the credential class ev arrived with, as the log stamped
// it; agent for events stored before origins existed.
func sentWith(ev *events.Event) events.Origin {
	if ev.Origin == "" {
		return events.OriginAgent
	}
	return ev.Origin
}

// summaryWidth is how wide tail shows a command or a message without
// --full.
const summaryWidth = 96

// summary is a short human description of an event, every field the
// agent wrote through display.
func summary(ev *events.Event, full bool) string {
	field := func(s string) string { return display.Field(s, summaryWidth, full) }
	switch ev.Kind {
	case events.KindAction:
		if cmd, ok := ev.Args()["command"].(string); ok {
			return display.Field(ev.Tool(), 40, false) + ": " + field(cmd)
		}
		return display.Field(ev.Tool(), 40, false)
	case events.KindMessage:
		s, _ := ev.Data["content"].(string)
		role := display.Field(ev.StringField("role"), 16, false)
		if ev.StringField("role") == "user" && !sentWith(ev).Trusted() {
			role = "user (the agent credential's claim, not the user's words)"
		}
		return role + ": " + field(s)
	case events.KindContextLoaded, events.KindConversationStarted:
		return field(ev.StringField("path") + ev.StringField("backend"))
	case events.KindApprovalDecision:
		return display.Field(ev.StringField("verdict"), 16, false) + " " + field(ev.StringField("action_id"))
	}
	return ""
}
