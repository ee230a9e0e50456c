package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// mapJSONLines reads JSON lines from in and writes one JSON value per
// non-blank input line to out, in order: the value f returns for that line
// (n is the 1-based line number). f never fails a line: it returns a value
// carrying the error, so outputs stay aligned with inputs for scripts.
func mapJSONLines(in io.Reader, out io.Writer, what string, f func(n int, line []byte) any) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	w := bufio.NewWriter(out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := enc.Encode(f(n, []byte(line))); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s --jsonl: reading stdin: %w", what, err)
	}
	return nil
}

// inputName is the FILE argument of a command that reads FILE or stdin.
func inputName(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "-"
}
