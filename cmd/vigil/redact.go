package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/redact"
)

// maxRedactLine bounds one JSON line of `vigil redact` (an event with a
// large observation can be big; 64 MiB is far above what ingest accepts).
const maxRedactLine = 64 << 20

func newRedactCmd(c *cli) *cobra.Command {
	var (
		jsonl, text, listRules bool
	)
	cmd := &cobra.Command{
		Use:   "redact [--jsonl | --text] [FILE|-]",
		Short: "Remove secrets from text or events, offline",
		Long: `Redact secrets the way the ingest service does before anything is stored:
each secret becomes [REDACTED:<rule>]. Runs offline; no server is needed.

Input is FILE, or standard input when FILE is - or absent.

With --jsonl, every line is a JSON object, and one JSON object is written
per line, in the same order (blank lines are skipped):
  {"text": "..."}         -> {"text": "<redacted>", "findings": [{"rule", "path", "start", "end"}]}
  an event (with data or v)
                          -> {"event": <redacted event>, "findings": [...]}
An object with a "text" string and no data or v is text; its other fields
are not copied to the output.
Offsets are bytes of the original string at "path" ("text", or a path in
the event such as "data.args.command"). An error names the line and stops;
lines before it have been written.

With --text, the whole input is text: the redacted text is written as it
is, and a summary of the findings goes to standard error.

Without either, the input is read as JSON lines when its first non-blank
line is a JSON object, and as text otherwise.

--rules lists the rules (id, source, description) and exits.`,
		Example: `  echo '{"text": "export GITHUB_TOKEN=ghp_…"}' | vigil redact --jsonl
  vigil redact --jsonl events.jsonl > redacted.jsonl
  vigil redact --text build.log > build.redacted.log`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonl && text {
				return errors.New("--jsonl and --text exclude each other; give one")
			}
			r, err := redact.New(redact.Config{})
			if err != nil {
				return err
			}
			if listRules {
				return printRules(c.stdout, r)
			}
			name := "-"
			if len(args) == 1 {
				name = args[0]
			}
			in, closeIn, err := openInput(c, name)
			if err != nil {
				return err
			}
			defer closeIn()
			br := bufio.NewReaderSize(in, 1<<16)
			if !jsonl && !text {
				jsonl = looksLikeJSONLines(br)
			}
			w := bufio.NewWriter(c.stdout)
			defer w.Flush()
			if jsonl {
				return redactJSONLines(r, br, w, name)
			}
			return redactText(r, br, w, c.stderr, name)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&jsonl, "jsonl", false, `input is JSON lines ({"text": …} or events); output is JSON lines`)
	fl.BoolVar(&text, "text", false, "input is plain text; output is the redacted text")
	fl.BoolVar(&listRules, "rules", false, "list the redaction rules and exit")
	return cmd
}

func openInput(c *cli, name string) (io.Reader, func(), error) {
	if name == "-" {
		return c.stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	return f, func() { f.Close() }, nil
}

// looksLikeJSONLines peeks at the first non-blank line: a JSON object means
// JSON lines.
func looksLikeJSONLines(br *bufio.Reader) bool {
	b, _ := br.Peek(1 << 16)
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	} else if len(b) == 1<<16 {
		return true // a long first line starting with {: assume an object
	}
	return json.Valid(bytes.TrimSpace(b))
}

type redactFinding struct {
	Rule  string `json:"rule"`
	Path  string `json:"path"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

func redactJSONLines(r *redact.Redactor, br *bufio.Reader, w *bufio.Writer, name string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			out, perr := redactLine(r, line)
			if perr != nil {
				return fmt.Errorf("%s:%d: %w", name, n, perr)
			}
			if werr := enc.Encode(out); werr != nil {
				return fmt.Errorf("%s:%d: write: %w", name, n, werr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// readLine returns the next line without its newline, at most
// maxRedactLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxRedactLine {
			return nil, fmt.Errorf("line longer than %d MiB; split the input", maxRedactLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

// redactLine redacts one JSON object: {"text": …} or an event. Errors never
// quote the input (it may hold a secret).
func redactLine(r *redact.Redactor, line []byte) (any, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, errors.New("not a JSON object; give {\"text\": \"…\"} or an event, one per line")
	}
	// An event has data or v; an object with a "text" string and neither
	// is text (other fields, such as a corpus's labels, are not echoed).
	_, hasData := probe["data"]
	_, hasV := probe["v"]
	_, hasKind := probe["kind"]
	_, hasID := probe["id"]
	_, hasText := probe["text"]
	isEvent := hasData || hasV || !hasText && (hasKind || hasID)
	if raw, ok := probe["text"]; ok && !isEvent {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New(`"text" must be a string`)
		}
		red, fs := r.RedactString(s)
		out := struct {
			Text     string          `json:"text"`
			Findings []redactFinding `json:"findings"`
		}{Text: red, Findings: make([]redactFinding, 0, len(fs))}
		for _, f := range fs {
			out.Findings = append(out.Findings, redactFinding{Rule: f.Rule, Path: "text", Start: f.Start, End: f.End})
		}
		return out, nil
	}
	if !isEvent {
		return nil, errors.New(`neither {"text": …} nor an event (an object with kind, data, id or v)`)
	}
	ev, err := events.DecodeJSON(line)
	if err != nil {
		return nil, err
	}
	red, _ := r.RedactEvent(&ev)
	out := struct {
		Event    events.Event    `json:"event"`
		Findings []redactFinding `json:"findings"`
	}{Event: red, Findings: []redactFinding{}}
	for _, rd := range red.Redactions[len(ev.Redactions):] {
		out.Findings = append(out.Findings, redactFinding{Rule: rd.Rule, Path: rd.Path, Start: rd.Start, End: rd.End})
	}
	return out, nil
}

func redactText(r *redact.Redactor, br *bufio.Reader, w *bufio.Writer, stderr io.Writer, name string) error {
	b, err := io.ReadAll(io.LimitReader(br, maxRedactLine+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxRedactLine {
		return fmt.Errorf("%s: larger than %d MiB; split it, or give JSON lines with --jsonl", name, maxRedactLine>>20)
	}
	s := string(b)
	out, fs := r.RedactString(s)
	if _, err := w.WriteString(out); err != nil {
		return err
	}
	counts := map[string]int{}
	var order []string
	for _, f := range fs {
		if counts[f.Rule] == 0 {
			order = append(order, f.Rule)
		}
		counts[f.Rule]++
	}
	parts := make([]string, len(order))
	for i, rule := range order {
		parts[i] = fmt.Sprintf("%s ×%d", rule, counts[rule])
	}
	if len(fs) == 0 {
		fmt.Fprintf(stderr, "vigil redact: %s: no secrets found\n", name)
	} else {
		fmt.Fprintf(stderr, "vigil redact: %s: %d secrets removed (%s)\n", name, len(fs), strings.Join(parts, ", "))
	}
	return nil
}

func printRules(w io.Writer, r *redact.Redactor) error {
	bw := bufio.NewWriter(w)
	for _, ru := range r.Rules() {
		fmt.Fprintf(bw, "%-44s %-8s %s\n", ru.ID, ru.Source, ru.Description)
	}
	for _, s := range r.Skipped() {
		fmt.Fprintf(bw, "%-44s %-8s not run: %s\n", s.ID, "gitleaks", s.Reason)
	}
	return bw.Flush()
}
