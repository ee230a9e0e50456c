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
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func newTailCmd(c *cli) *cobra.Command {
	var (
		o         client.TailOptions
		asJSON    bool
		decisions bool
	)
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Print the canonical log",
		Long: `Print VIGIL_LOG in log order: as JSON lines (each the JSON envelope plus
"seq") with --json or when the output is not a terminal, else one line per
event. Without --follow it prints what is there and exits.`,
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
					fmt.Fprintf(w, "%6d  %s  %-12s %-20s %s%s\n", r.Seq, r.Event.Time.Format("2006-01-02T15:04:05Z07:00"),
						r.Event.SubjectToken(), r.Event.Kind, decisionColumn(dec, r), summary(&r.Event))
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

// summary is a short human description of an event.
func summary(ev *events.Event) string {
	switch ev.Kind {
	case events.KindAction:
		if cmd, ok := ev.Args()["command"].(string); ok {
			return ev.Tool() + ": " + truncate(cmd, 80)
		}
		return ev.Tool()
	case events.KindMessage:
		s, _ := ev.Data["content"].(string)
		return truncate(s, 80)
	case events.KindContextLoaded, events.KindConversationStarted:
		return ev.StringField("path") + ev.StringField("backend")
	case events.KindApprovalDecision:
		return ev.StringField("verdict") + " " + ev.StringField("action_id")
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
