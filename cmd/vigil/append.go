package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

func newAppendCmd(c *cli) *cobra.Command {
	var conversation string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "append [FILE|-]",
		Short: "Append events (one JSON event or JSON lines) to the log",
		Long: `Append events to the log through the ingest service. The input is one JSON
event, or JSON lines (one event per line). The whole input is validated
first: if any event is malformed, the error names its line, nothing is
appended, and the exit status is 1. An event without an id gets a ULID and
one without a time gets the current time. Prints {"id":…,"seq":…} per event.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := inputName(args)
			input, err := readInput(c, name)
			if err != nil {
				return err
			}
			evs, err := parseEvents(name, input, conversation, time.Now())
			if err != nil {
				return err
			}
			if len(evs) == 0 {
				return fmt.Errorf("%s: no events in the input", name)
			}
			if timeout <= 0 {
				return fmt.Errorf("--timeout %v: give a positive duration, e.g. 30s", timeout)
			}
			o := client.Options{URL: c.natsURL, CredsFile: c.creds, Role: natsutil.RoleAdmin, Name: "vigil-cli", Timeout: timeout}
			if c.natsURL == "" {
				o.DataDir = c.data()
			}
			cl, err := client.Connect(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer cl.Close()
			rs, err := cl.AppendBatch(cmd.Context(), evs)
			for _, r := range rs {
				b, _ := json.Marshal(map[string]any{"id": r.ID, "seq": r.Seq})
				fmt.Fprintf(c.stdout, "%s\n", b)
			}
			if err != nil {
				return fmt.Errorf("%s: %w (events before it were stored; re-run with the same input to retry: stored ids are not stored twice)", name, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&conversation, "conversation", "", "conversation for events that name none")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up on a request after this long; an attempt unanswered for "+
		client.DefaultAttemptTimeout.String()+" (a node or stream leader lost) is sent again with the same ids, stored once")
	return cmd
}

func readInput(c *cli, name string) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// parseEvents decodes one JSON event or a sequence of them (JSON lines or
// concatenated objects) and validates every one; errors name the line.
func parseEvents(name string, input []byte, conversation string, now time.Time) ([]events.Event, error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	var out []events.Event
	entropy := ulid.DefaultEntropy()
	for {
		start := skipSpace(input, int(dec.InputOffset()))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		line := lineOf(input, start)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not valid JSON: %v (one event per line)", name, line, err)
		}
		ev, err := events.DecodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if ev.Conversation == "" && ev.Kind.IsAgent() {
			ev.Conversation = conversation
		}
		if ev.ID == "" {
			ev.ID = ulid.MustNew(ulid.Timestamp(now), entropy).String()
		}
		if ev.Time.IsZero() {
			ev.Time = now.UTC()
		}
		if err := ev.Validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		out = append(out, ev)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func lineOf(b []byte, off int) int {
	if off > len(b) {
		off = len(b)
	}
	return bytes.Count(b[:off], []byte{'\n'}) + 1
}
