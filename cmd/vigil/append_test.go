package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/internal/natsutil"
	"github.com/vigil-dev/vigil/internal/node"
)

// naiveLine is the line offset off is on, counted from the start.
func naiveLine(b []byte, off int) int { return bytes.Count(b[:off], []byte{'\n'}) + 1 }

// TestJSONValuesLines: each value is returned with the line it starts on,
// and a malformed one with the line where it starts.
func TestJSONValuesLines(t *testing.T) {
	cases := []struct {
		name    string
		input   string
		lines   []int
		errLine int // 0: no error
	}{
		{"jsonl", "{\"a\":1}\n{\"a\":2}\n", []int{1, 2}, 0},
		{"crlf and blank lines", "\r\n\r\n{\"a\":1}\r\n\r\n{\"a\":2}", []int{3, 5}, 0},
		{"pretty", "{\n  \"a\": 1,\n  \"b\": [\n 1\n]\n}\n{\"c\":2}", []int{1, 7}, 0},
		{"concatenated on one line", `{"a":1}{"a":2} {"a":3}`, []int{1, 1, 1}, 0},
		{"value spanning lines then an error", "{\"a\":\n1}\n\n  {oops}", []int{1}, 4},
		{"truncated", "{\"a\":1}\n{\"a\":", []int{1}, 2},
		{"empty", "", nil, 0},
		{"only space", "\n \n\t", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newJSONValues(strings.NewReader(tc.input))
			var got []int
			for {
				_, line, err := v.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					if tc.errLine == 0 || line != tc.errLine {
						t.Fatalf("error %v on line %d, want line %d", err, line, tc.errLine)
					}
					break
				}
				got = append(got, line)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.lines) {
				t.Fatalf("lines %v, want %v", got, tc.lines)
			}
		})
	}
}

// FuzzJSONValues: the streaming decoder returns the values a plain
// json.Decoder returns, each with the line a count from the start gives,
// and scans each input byte for newlines at most once.
func FuzzJSONValues(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"a\":2}\n", "\r\n{\"a\":\n[1,2]}  {}\n\n{oops}", `"x" 1 2 [3]`, "{\"a\":", "\n\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.NewDecoder(bytes.NewReader(b))
		v := newJSONValues(bytes.NewReader(b))
		for i := 0; ; i++ {
			var w json.RawMessage
			werr := want.Decode(&w)
			raw, line, err := v.next()
			if (werr == nil) != (err == nil) {
				t.Fatalf("value %d: error %v, json.Decoder %v", i, err, werr)
			}
			if err != nil {
				break
			}
			if !bytes.Equal(raw, w) {
				t.Fatalf("value %d: %q, json.Decoder %q", i, raw, w)
			}
			start := int(want.InputOffset()) - len(w)
			if wl := naiveLine(b, start); line != wl {
				t.Fatalf("value %d at offset %d: line %d, want %d", i, start, line, wl)
			}
		}
		if v.lt.counted > int64(len(b)) {
			t.Fatalf("scanned %d bytes for newlines of a %d-byte input", v.lt.counted, len(b))
		}
	})
}

// genInput is a generated JSON-lines input of n events, made as it is
// read (the test never holds it): event i has id "imp-<i>" (or none).
type genInput struct {
	n, i  int
	ids   bool
	pend  []byte
	bytes int64
}

func (g *genInput) line(i int) []byte {
	id := ""
	if g.ids {
		id = fmt.Sprintf(`"id":"imp-%d",`, i)
	}
	if i%3 == 0 {
		return fmt.Appendf(nil, `{%s"kind":"action","conversation":"c-%d","agent":"coder-1","data":{"tool":"bash","args":{"command":"ls -la /tmp/%d"},"security_risk":"LOW"}}`+"\n", id, i%50, i)
	}
	return fmt.Appendf(nil, `{%s"kind":"message","conversation":"c-%d","data":{"role":"user","content":"message number %d of the import, with some words to make it a realistic length"}}`+"\n", id, i%50, i)
}

func (g *genInput) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.pend) == 0 {
			if g.i == g.n {
				break
			}
			g.pend = g.line(g.i)
			g.i++
		}
		k := copy(p[n:], g.pend)
		g.pend = g.pend[k:]
		n += k
	}
	g.bytes += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestAppendCheckBoundedMemory: checking a large generated input holds one
// event at a time (the decoder's window stays small and the heap does not
// grow with the input) and counts lines in one pass (each byte once).
func TestAppendCheckBoundedMemory(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	g := &genInput{n: n, ids: true}
	v := newJSONValues(g)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	maxWindow := 0
	count, lastLine := 0, 0
	for {
		raw, line, err := v.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := events.DecodeJSON(raw); err != nil {
			t.Fatal(err)
		}
		count, lastLine = count+1, line
		maxWindow = max(maxWindow, cap(v.lt.buf))
		if count%20_000 == 0 {
			runtime.GC() // the live heap, not garbage a GC has not reached yet
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if count != n || lastLine != n {
		t.Fatalf("%d events, last on line %d; want %d, %d", count, lastLine, n, n)
	}
	if v.lt.counted != g.bytes {
		t.Fatalf("scanned %d bytes for newlines of a %d-byte input: want each byte once", v.lt.counted, g.bytes)
	}
	if maxWindow > 256<<10 {
		t.Fatalf("the line tracker held %d bytes of a %d-byte input: want a window of a few events", maxWindow, g.bytes)
	}
	// The live heap (measured after a GC) holds nothing that grows with
	// the input.
	if grown := int64(peak) - int64(base); n >= 100_000 && grown > g.bytes/4 {
		t.Fatalf("heap grew by %d bytes checking a %d-byte input", grown, g.bytes)
	}
	t.Logf("%d events, %d bytes: window %d bytes, heap growth %d bytes", n, g.bytes, maxWindow, int64(peak)-int64(base))
}

// TestAppendResume: an import interrupted after some batches, re-run with
// the same file after VIGIL_LOG's own JetStream duplicate window has
// passed (a second here), stores every event exactly once; the re-run
// answers the ones stored already by id, with their seq (the ingest
// service's id index keeps them for --dedup-window).
func TestAppendResume(t *testing.T) {
	dir := t.TempDir()
	const jsWindow = time.Second
	s, err := node.Start(t.Context(), node.Config{DataDir: dir, NATSListen: "127.0.0.1:-1", Durability: natsutil.DurabilityInterval,
		DedupWindow: time.Hour, LogStreamWindow: jsWindow, NoProcessors: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	const n, batch = 1000, 100
	file := filepath.Join(t.TempDir(), "import.jsonl")
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, &genInput{n: n, ids: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	cl, err := client.Connect(t.Context(), client.Options{DataDir: dir, Role: natsutil.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(t.Context())
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out1 bytes.Buffer
	cnt, err := storeEvents(ctx, cl, storeOptions{name: file, in: f, now: time.Now(), total: n, batch: batch, out: &out1,
		afterBatch: func(stored int) {
			if stored >= 3*batch {
				cancel()
			}
		}})
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "re-run") {
		t.Fatalf("interrupted import: err %v, want it canceled and saying how to resume", err)
	}
	if cnt.stored != 3*batch || strings.Count(out1.String(), "\n") != 3*batch {
		t.Fatalf("interrupted import stored %d and printed %d lines, want %d", cnt.stored, strings.Count(out1.String(), "\n"), 3*batch)
	}

	time.Sleep(3 * jsWindow) // JetStream forgets the ids; the index does not
	out2, stderr, code := runCLI(t, "", "append", file, "--data", dir)
	if code != 0 {
		t.Fatalf("resumed import: exit %d: %s", code, stderr)
	}
	seqOf := map[string]uint64{}
	dups := 0
	for i, line := range strings.Split(strings.TrimSpace(out2), "\n") {
		var r struct {
			ID        string `json:"id"`
			Seq       uint64 `json:"seq"`
			Duplicate bool   `json:"duplicate"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("imp-%d", i); r.ID != want {
			t.Fatalf("result %d names %q, want %q", i, r.ID, want)
		}
		if r.Duplicate != (i < 3*batch) {
			t.Fatalf("result %d: duplicate %v", i, r.Duplicate)
		}
		if r.Duplicate {
			dups++
		}
		seqOf[r.ID] = r.Seq
	}
	if len(seqOf) != n || dups != 3*batch {
		t.Fatalf("resumed import answered %d ids (%d duplicates), want %d (%d)", len(seqOf), dups, n, 3*batch)
	}
	// The first run's answers are the second run's for the same ids.
	for _, line := range strings.Split(strings.TrimSpace(out1.String()), "\n") {
		var r struct {
			ID  string `json:"id"`
			Seq uint64 `json:"seq"`
		}
		json.Unmarshal([]byte(line), &r)
		if seqOf[r.ID] != r.Seq {
			t.Fatalf("%s: seq %d, then %d", r.ID, r.Seq, seqOf[r.ID])
		}
	}
	// The log holds each event once.
	out, stderr, code := runCLI(t, "", "tail", "--data", dir, "--json")
	if code != 0 {
		t.Fatalf("tail: exit %d: %s", code, stderr)
	}
	stored := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			ID string `json:"id"`
		}
		json.Unmarshal([]byte(line), &r)
		if strings.HasPrefix(r.ID, "imp-") {
			stored[r.ID]++
		}
	}
	for i := range n {
		if id := fmt.Sprintf("imp-%d", i); stored[id] != 1 {
			t.Fatalf("%s is stored %d times", id, stored[id])
		}
	}
}

// TestAppendInterruptedWhileReading: a signal while standard input blocks
// (a pipe that stays open) stops the command; nothing is stored.
func TestAppendInterruptedWhileReading(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}` + "\n"))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"append", "--data", t.TempDir()}, pr, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "nothing was stored") || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
