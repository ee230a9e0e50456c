package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/testnode"
)

func TestParseEvents(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		input   string
		want    int
		wantErr string
	}{
		{"one pretty event", "{\n  \"kind\": \"message\",\n  \"conversation\": \"c\",\n  \"data\": {\"role\": \"user\", \"content\": \"hi\"}\n}\n", 1, ""},
		{"jsonl", `{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}` + "\n" + `{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}` + "\n", 2, ""},
		{"blank lines", "\n\n" + `{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}` + "\n\n", 1, ""},
		{"bad json on line 3", `{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}` + "\n\n{oops}\n", 0, "in.jsonl:3: not valid JSON"},
		{"invalid event on line 2", `{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}` + "\n" + `{"kind":"action","conversation":"c","data":{}}`, 0, "in.jsonl:2: events: invalid event: field \"data.tool\""},
		{"unknown kind", `{"kind":"nope","conversation":"c"}`, 0, "in.jsonl:1: events: invalid event: field \"kind\""},
		{"missing conversation", `{"kind":"message","data":{"role":"user","content":"x"}}`, 0, "field \"conversation\""},
		{"top-level array", `[1]`, 0, "in.jsonl:1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := parseEvents("in.jsonl", []byte(tc.input), "", now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tc.want {
				t.Fatalf("got %d events, want %d", len(evs), tc.want)
			}
			for _, ev := range evs {
				if ev.ID == "" || ev.Time.IsZero() {
					t.Fatalf("id or time not filled: %+v", ev)
				}
			}
		})
	}
}

func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestAppendTailEndToEnd drives the CLI against a real embedded server.
func TestAppendTailEndToEnd(t *testing.T) {
	dir := t.TempDir()
	testnode.StartNode(t, testnode.Options{Dir: dir})

	input := `{"id":"e1","kind":"action","conversation":"c-42","agent":"coder-1","data":{"tool":"bash","args":{"command":"ls -la"},"security_risk":"LOW","future_field":{"x":1}}}
{"id":"e2","kind":"message","conversation":"c-43","data":{"role":"user","content":"hi"}}
`
	out, stderr, code := runCLI(t, input, "append", "--data", dir)
	if code != 0 {
		t.Fatalf("append exit %d: %s", code, stderr)
	}
	if want := "{\"id\":\"e1\",\"seq\":1}\n{\"id\":\"e2\",\"seq\":2}\n"; out != want {
		t.Fatalf("append printed %q, want %q", out, want)
	}
	// A malformed input appends nothing and names the line.
	_, stderr, code = runCLI(t, `{"kind":"message","conversation":"c","data":{"role":"user","content":"x"}}`+"\n"+`not json`, "append", "--data", dir)
	if code != 1 || !strings.Contains(stderr, "-:2:") {
		t.Fatalf("bad input: exit %d, stderr %q", code, stderr)
	}
	out, stderr, code = runCLI(t, "", "tail", "--data", dir, "--json")
	if code != 0 {
		t.Fatalf("tail exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("tail printed %d lines, want 2 (nothing from the bad input): %s", len(lines), out)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	data := first["data"].(map[string]any)
	if first["seq"] != float64(1) || first["id"] != "e1" || data["future_field"] == nil {
		t.Fatalf("first record %v: want seq 1, id e1, unknown field kept", first)
	}
	out, _, _ = runCLI(t, "", "tail", "--data", dir, "--conversation", "c-43")
	if !strings.Contains(out, `"id":"e2"`) || strings.Contains(out, `"id":"e1"`) {
		t.Fatalf("--conversation filter: %s", out)
	}
	out, _, _ = runCLI(t, "", "tail", "--data", dir, "--from", "2", "--count", "1")
	if !strings.Contains(out, `"seq":2`) || strings.Count(out, "\n") != 1 {
		t.Fatalf("--from/--count: %s", out)
	}
}

func TestClientErrorsNameWhatToDo(t *testing.T) {
	_, stderr, code := runCLI(t, "", "tail", "--data", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "vigil serve") {
		t.Fatalf("no server: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "serve", "--durability", "sometimes", "--data", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "fsync") {
		t.Fatalf("bad durability: exit %d, stderr %q", code, stderr)
	}
}

func TestServeRefusesBadFleetFlagsAtOnce(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "", "serve", "--replicas", "7", "--cluster", "vigil", "--nats", "nats://127.0.0.1:1", "--data", dir)
	if code != 1 || !strings.Contains(stderr, "--replicas 7: use 1 on a single host, 3 (or 5) in a fleet") ||
		!strings.Contains(stderr, "--nats attaches to an existing one: use one of them") {
		t.Fatalf("bad fleet flags: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(datadir.New(dir).Audit()); !os.IsNotExist(err) {
		t.Fatalf("a refused serve created the audit key: %v", err)
	}
	_, stderr, code = runCLI(t, "", "serve", "--replicas", "0", "--data", dir)
	if code != 1 || !strings.Contains(stderr, "--replicas 0:") {
		t.Fatalf("--replicas 0: exit %d, stderr %q", code, stderr)
	}
}
