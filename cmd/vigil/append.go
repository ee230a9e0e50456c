package main

import (
	"bufio"
	"bytes"
	"context"
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
one without a time gets the current time. Prints {"id":…,"seq":…} per event
as it is stored ("duplicate":true when its id was stored already).

Inputs of any length stream in bounded memory: a FILE is read twice (once
to check, once to store); standard input is kept in an unlinked temporary
file between the two. Events are stored in batches of up to 1,000, each
all or nothing. Interrupted (SIGINT, SIGTERM) or failed part-way, re-run
with the same input to resume: an event whose id is stored already is not
stored again (within the server's --dedup-window, 1 hour by default), it
is answered with its seq. Events without an id get new ids on every run,
so give them ids to make an import resumable. On a terminal, progress
goes to stderr.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name := inputName(args)
			if timeout <= 0 {
				return fmt.Errorf("--timeout %v: give a positive duration, e.g. 30s", timeout)
			}
			in, err := openAppendInput(c, name)
			if err != nil {
				return err
			}
			defer in.Close()
			var prog *progress
			if isTerminal(c.stderr) {
				prog = &progress{w: c.stderr, start: time.Now()}
			}
			now := time.Now()
			total, err := checkInput(ctx, in, conversation, now, prog)
			if err != nil {
				return err
			}
			if total == 0 {
				return fmt.Errorf("%s: no events in the input", name)
			}
			o := client.Options{URL: c.natsURL, CredsFile: c.creds, Role: natsutil.RoleAdmin, Name: "vigil-cli", Timeout: timeout}
			if c.natsURL == "" {
				o.DataDir = c.data()
			}
			cl, err := client.Connect(ctx, o)
			if err != nil {
				return err
			}
			defer cl.Close()
			r, err := in.reopen()
			if err != nil {
				return err
			}
			_, err = storeEvents(ctx, cl, storeOptions{name: name, in: r, conversation: conversation, now: now,
				total: total, batch: natsutil.MaxBatchMessages, out: c.stdout, progress: prog})
			return err
		},
	}
	cmd.Flags().StringVar(&conversation, "conversation", "", "conversation for events that name none")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up on a request after this long; an attempt unanswered for "+
		client.DefaultAttemptTimeout.String()+" (a node or stream leader lost) is sent again with the same ids, stored once")
	return cmd
}

// appendInput is the input of `vigil append`, readable twice in bounded
// memory: a regular file is opened again; anything else (standard input, a
// pipe) is copied to an unlinked temporary file while it is checked.
type appendInput struct {
	name   string
	src    io.Reader // what the check reads
	file   *os.File  // the regular file, or nil
	spool  *os.File  // the copy of a stream, or nil
	spoolW *bufio.Writer
}

func openAppendInput(c *cli, name string) (*appendInput, error) {
	in := &appendInput{name: name}
	var src io.Reader = c.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if fi.Mode().IsRegular() {
			in.file, in.src = f, f
			return in, nil
		}
		in.file, src = f, f // a FIFO or device: read once, like stdin
	}
	sp, err := os.CreateTemp("", "vigil-append-*.jsonl")
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("%s: a temporary file for the input: %w", name, err)
	}
	os.Remove(sp.Name()) // gone with the process, however it ends
	in.spool, in.spoolW = sp, bufio.NewWriterSize(sp, 1<<20)
	in.src = io.TeeReader(src, in.spoolW)
	return in, nil
}

// reopen returns the input from its start, for the second pass.
func (in *appendInput) reopen() (io.Reader, error) {
	f := in.file
	if in.spool != nil {
		if err := in.spoolW.Flush(); err != nil {
			return nil, fmt.Errorf("%s: the temporary copy of the input: %w", in.name, err)
		}
		f = in.spool
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read %s again: %w", in.name, err)
	}
	return bufio.NewReaderSize(f, 1<<16), nil
}

func (in *appendInput) Close() error {
	if in.spool != nil {
		in.spool.Close()
	}
	if in.file != nil {
		in.file.Close()
	}
	return nil
}

// checkInput validates every event of the input (the first pass) and
// returns how many there are. It returns when ctx is done even while a
// read blocks (standard input from a pipe that stays open).
func checkInput(ctx context.Context, in *appendInput, conversation string, now time.Time, prog *progress) (int, error) {
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n := 0
		err := eachEvent(ctx, in.name, in.src, conversation, now, func(_ events.Event, _ int, v *jsonValues) error {
			n++
			if prog != nil && n%1024 == 0 {
				prog.report(false, "checked %d events (%s)", n, mib(v.offset()))
			}
			return nil
		})
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		if prog != nil && r.err == nil {
			prog.report(true, "checked %d events", r.n)
		}
		return r.n, r.err
	case <-ctx.Done():
		return 0, fmt.Errorf("%s: interrupted while checking the input; nothing was stored: %w", in.name, ctx.Err())
	}
}

// eachEvent decodes and validates the events of r in order and calls f
// with each and the line it starts on; the first malformed event stops it
// with an error naming its line. It holds one event at a time.
func eachEvent(ctx context.Context, name string, r io.Reader, conversation string, now time.Time, f func(ev events.Event, line int, v *jsonValues) error) error {
	v := newJSONValues(r)
	entropy := ulid.DefaultEntropy()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, line, err := v.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, errValueTooLarge) {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: not valid JSON: %v (one event per line)", name, line, err)
		}
		ev, err := events.DecodeJSON(raw)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, line, err)
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
			return fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if err := f(ev, line, v); err != nil {
			return err
		}
	}
}

// parseEvents decodes one JSON event or a sequence of them (JSON lines or
// concatenated objects) and validates every one; errors name the line.
func parseEvents(name string, input []byte, conversation string, now time.Time) ([]events.Event, error) {
	var out []events.Event
	err := eachEvent(context.Background(), name, bytes.NewReader(input), conversation, now, func(ev events.Event, _ int, _ *jsonValues) error {
		out = append(out, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// storeOptions configure storeEvents.
type storeOptions struct {
	name         string
	in           io.Reader
	conversation string
	now          time.Time
	total        int // events in the input (for progress)
	batch        int
	out          io.Writer
	progress     *progress
	// afterBatch, when set, is called after each batch is stored (tests).
	afterBatch func(stored int)
}

// storeCounts is what storeEvents stored.
type storeCounts struct {
	stored, duplicates int
}

// storeEvents is the second pass: it decodes the input again and stores
// it in batches of opt.batch events, each all or nothing, printing each
// stored event's id and seq as its batch is acknowledged.
func storeEvents(ctx context.Context, cl *client.Client, opt storeOptions) (storeCounts, error) {
	var cnt storeCounts
	w := bufio.NewWriter(opt.out)
	defer w.Flush()
	batch := make([]events.Event, 0, opt.batch)
	lines := make([]int, 0, opt.batch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		rs, err := cl.AppendBatch(ctx, batch)
		for _, r := range rs {
			m := map[string]any{"id": r.ID, "seq": r.Seq}
			if r.Duplicate {
				m["duplicate"] = true
				cnt.duplicates++
			}
			b, _ := json.Marshal(m)
			w.Write(b)
			w.WriteByte('\n')
		}
		cnt.stored += len(rs)
		if ferr := w.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("write the results: %w", ferr)
		}
		if err != nil {
			at := lines[min(len(rs), len(lines)-1)]
			var re *client.RefusedError
			if errors.As(err, &re) && re.Index >= 0 && re.Index < len(lines) {
				at = lines[re.Index]
			}
			return fmt.Errorf("%s:%d: %w (%d events before it were stored; re-run with the same input to resume: an event whose id is stored already is not stored twice)",
				opt.name, at, err, cnt.stored)
		}
		if opt.progress != nil {
			opt.progress.report(false, "stored %d of %d events (%d stored already)", cnt.stored, opt.total, cnt.duplicates)
		}
		if opt.afterBatch != nil {
			opt.afterBatch(cnt.stored)
		}
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	err := eachEvent(ctx, opt.name, opt.in, opt.conversation, opt.now, func(ev events.Event, line int, _ *jsonValues) error {
		batch = append(batch, ev)
		lines = append(lines, line)
		if len(batch) == opt.batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: interrupted after %d events were stored; re-run with the same input to resume (events with an id are stored once): %w", opt.name, cnt.stored, ctx.Err())
	}
	if opt.progress != nil && err == nil {
		opt.progress.report(true, "stored %d events (%d of them stored already) in %s", cnt.stored, cnt.duplicates, time.Since(opt.progress.start).Round(time.Millisecond))
	}
	return cnt, err
}

// progress writes a one-line status to a terminal, at most every 200 ms.
type progress struct {
	w     io.Writer
	start time.Time
	last  time.Time
}

func (p *progress) report(final bool, format string, args ...any) {
	now := time.Now()
	if !final && now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(p.w, "\r\x1b[K"+format+end, args...)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

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
