package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// maxJSONValue bounds one JSON value of a streamed input: no event can be
// stored that large (a request is at most 1 MiB), and the bound keeps the
// memory of a stream bounded whatever its input.
const maxJSONValue = 16 << 20

// errValueTooLarge: a JSON value of the input is over maxJSONValue bytes.
var errValueTooLarge = fmt.Errorf("a JSON value over %d MiB (no event is that large; is the input JSON lines?)", maxJSONValue>>20)

// jsonValues reads a stream of JSON values (JSON lines, concatenated or
// pretty-printed values) one at a time and says on which line each starts.
// It holds one value and the decoder's read-ahead, never the input, and
// looks at each input byte a bounded number of times: memory is bounded
// and time linear in the input, whatever its length.
type jsonValues struct {
	dec *json.Decoder
	lt  *lineTracker
}

func newJSONValues(r io.Reader) *jsonValues {
	lt := &lineTracker{r: r, limit: maxJSONValue}
	return &jsonValues{dec: json.NewDecoder(lt), lt: lt}
}

// next returns the next value and the 1-based line it starts on; io.EOF
// after the last one. On a malformed value the line is where it starts.
func (v *jsonValues) next() (json.RawMessage, int, error) {
	prevEnd := v.dec.InputOffset()
	v.lt.advance(prevEnd)
	var raw json.RawMessage
	err := v.dec.Decode(&raw)
	if errors.Is(err, io.EOF) {
		v.lt.advance(math.MaxInt64) // the trailing space
		return nil, 0, io.EOF
	}
	if err != nil {
		v.lt.advance(v.lt.skipSpace(prevEnd))
		return nil, v.lt.lines + 1, err
	}
	v.lt.advance(v.dec.InputOffset() - int64(len(raw)))
	return raw, v.lt.lines + 1, nil
}

// offset is how many input bytes the values returned so far span.
func (v *jsonValues) offset() int64 { return v.dec.InputOffset() }

// lineTracker passes a reader through to the JSON decoder and keeps what
// the decoder read but the line count has not covered yet: the current
// value and the decoder's read-ahead.
type lineTracker struct {
	r     io.Reader
	limit int
	buf   []byte // input from base - start on; buf[start:] is from base on
	start int
	base  int64 // input offset of buf[start]
	lines int   // newlines before base
	// counted is how many bytes were scanned for newlines: each input
	// byte once (tests check the scan is linear).
	counted int64
}

func (t *lineTracker) Read(p []byte) (int, error) {
	if len(t.buf)-t.start > t.limit {
		return 0, errValueTooLarge
	}
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// advance counts the newlines before input offset off and forgets that input.
func (t *lineTracker) advance(off int64) {
	k := int(off - t.base)
	if k <= 0 {
		return
	}
	k = min(k, len(t.buf)-t.start)
	t.lines += bytes.Count(t.buf[t.start:t.start+k], []byte{'\n'})
	t.counted += int64(k)
	t.start += k
	t.base += int64(k)
	// Compact once the forgotten prefix is the larger part: amortised
	// linear, and the buffer stays about the size of a value.
	if t.start > 4096 && t.start > len(t.buf)/2 {
		n := copy(t.buf, t.buf[t.start:])
		t.buf, t.start = t.buf[:n], 0
	}
}

// skipSpace returns the offset of the first byte at or after off that is
// not JSON whitespace, among the bytes read so far.
func (t *lineTracker) skipSpace(off int64) int64 {
	i := t.start + int(off-t.base)
	for i >= t.start && i < len(t.buf) && isJSONSpace(t.buf[i]) {
		i++
	}
	return t.base + int64(i-t.start)
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\r' || b == '\t' }
