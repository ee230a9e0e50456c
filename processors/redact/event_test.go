package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/events"
)

func testEvent(data map[string]any) *events.Event {
	return &events.Event{
		V: 1, ID: "01JD000000000000000000TEST", Kind: events.KindAction,
		Conversation: "c-42", Agent: "coder-1", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		Data: data,
	}
}

func TestRedactEventPathsAndOffsets(t *testing.T) {
	r := newTestRedactor(t)
	cmd := "export GITHUB_TOKEN=" + ghp + " && gh repo list"
	argsJSON := `{"command": "curl -H 'Authorization: Bearer ` + tok40 + `' https://api.example.com"}`
	ev := testEvent(map[string]any{
		"tool":     "bash",
		"args":     map[string]any{"command": cmd, "timeout": int64(30)},
		"raw_args": argsJSON, // OpenHands sends tool arguments as a JSON string
		"env":      map[string]any{"DB_PASSWORD": pw1, "HOME": "/home/dev"},
		"argv":     []any{"mysql", "-u", "root", "-p" + pw2, "shop"},
		"headers":  map[string]any{ghp: "as a key"},
		"blob":     []byte("aws_secret_access_key = " + awsSec),
		"nested":   []any{map[string]any{"deep": []any{"ok", "token: " + tok40}}},
	})
	ev.Extra = map[string]any{"note": "key " + ghp}
	before, _ := json.Marshal(ev)

	out, redacted := r.RedactEvent(ev)
	if !redacted {
		t.Fatal("nothing redacted")
	}
	after, _ := json.Marshal(ev)
	if !bytes.Equal(before, after) {
		t.Fatal("RedactEvent changed its input")
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{ghp, tok40, pw1, pw2, awsSec} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("secret %q survives in %s", s[:8], b)
		}
	}
	if out.ID != ev.ID || out.Kind != ev.Kind || out.Conversation != ev.Conversation || out.Agent != ev.Agent || !out.Time.Equal(ev.Time) {
		t.Error("envelope changed")
	}
	if out.Data["args"].(map[string]any)["timeout"] != int64(30) || out.Data["env"].(map[string]any)["HOME"] != "/home/dev" {
		t.Error("non-secret data changed")
	}

	paths := map[string]events.Redaction{}
	for _, rd := range out.Redactions {
		paths[rd.Path] = rd
	}
	for _, want := range []string{
		"data.args.command", "data.raw_args", "data.env.DB_PASSWORD", "data.argv[3]", "data.blob",
		"data.nested[0].deep[1]", "note", `data.headers["[REDACTED:github-pat]"]#key`,
	} {
		if _, ok := paths[want]; !ok {
			t.Errorf("no redaction at %s; have %v", want, slices.Collect(mapKeys(paths)))
		}
	}
	// Offsets are into the original string.
	rd := paths["data.args.command"]
	if cmd[rd.Start:rd.End] != ghp {
		t.Errorf("offsets %d:%d give %q, want the token", rd.Start, rd.End, cmd[rd.Start:rd.End])
	}
	rd = paths["data.env.DB_PASSWORD"]
	if pw1[rd.Start:rd.End] != pw1 {
		t.Errorf("env value offsets %d:%d", rd.Start, rd.End)
	}
	if got := out.Data["argv"].([]any); got[0] != "mysql" || got[3] != "-p[REDACTED:cli-password]" {
		t.Errorf("argv = %v", got)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestRedactEventClean(t *testing.T) {
	r := newTestRedactor(t)
	ev := testEvent(map[string]any{"tool": "bash", "args": map[string]any{"command": "go test ./..."}})
	ev.Redactions = []events.Redaction{{Rule: "earlier", Path: "data.x"}}
	out, redacted := r.RedactEvent(ev)
	if redacted {
		t.Fatalf("clean event redacted: %v", out.Redactions)
	}
	if !reflect.DeepEqual(out, ev.Clone()) {
		t.Fatal("clean event changed")
	}
}

func TestRedactEventKeepsEarlierRedactions(t *testing.T) {
	r := newTestRedactor(t)
	ev := testEvent(map[string]any{"tool": "bash", "args": map[string]any{"command": "echo " + ghp}})
	ev.Redactions = []events.Redaction{{Rule: "earlier", Path: "data.x", Start: 1, End: 2}}
	out, _ := r.RedactEvent(ev)
	if len(out.Redactions) != 2 || out.Redactions[0].Rule != "earlier" || out.Redactions[1].Rule != "github-pat" {
		t.Fatalf("redactions = %v", out.Redactions)
	}
	if len(ev.Redactions) != 1 {
		t.Fatal("input's redactions changed")
	}
}

// Replay compares bytes: the same event must always give the same output.
func TestRedactEventDeterministic(t *testing.T) {
	r := newTestRedactor(t)
	data := map[string]any{}
	for i, c := range secretCases() {
		data[c.name] = c.text
		data["k"+string(rune('a'+i%26))+c.name] = map[string]any{"v": c.text, "list": []any{c.text, "x"}}
	}
	ev := testEvent(data)
	first, _ := r.RedactEvent(ev)
	want, err := first.MarshalMsgpack()
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		r2 := newTestRedactor(t)
		again, _ := r2.RedactEvent(ev)
		got, _ := again.MarshalMsgpack()
		if !bytes.Equal(got, want) {
			t.Fatal("redaction is not deterministic")
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newTestRedactor(t)
	cases := secretCases()
	want := make([]string, len(cases))
	for i, c := range cases {
		want[i], _ = r.RedactString(c.text)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 50 {
				i := (g*7 + n) % len(cases)
				if got, _ := r.RedactString(cases[i].text); got != want[i] {
					t.Errorf("goroutine %d: different output for %s", g, cases[i].name)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestExtraRulesAllowAndThreshold(t *testing.T) {
	acme := "acme_" + randFrom(tr, lower+digits, 24)
	r, err := New(Config{Settings: events.RedactionSettings{
		ExtraRules: []events.RedactionRule{
			{Name: "acme-token", Regex: `\bacme_[a-z0-9]{24}\b`, Keywords: []string{"ACME_"}},
			{Name: "ticket-secret", Regex: `TKT-(\d{6})-SECRET`},
		},
		Allow: []string{ghp},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out, fs := r.RedactString("deploy with " + acme + " and TKT-123456-SECRET, keep " + ghp)
	if strings.Contains(out, acme) || strings.Contains(out, "123456") || !strings.Contains(out, ghp) {
		t.Fatalf("out = %q (%v)", out, fs)
	}
	if !strings.Contains(out, "[REDACTED:acme-token]") || !strings.Contains(out, "TKT-[REDACTED:ticket-secret]-SECRET") {
		t.Fatalf("markers missing: %q", out)
	}

	// The threshold tunes Vigil's secret-assignment rule (gitleaks' rules
	// keep their own entropy floors).
	text := "SERVICE_TOKEN=" + tok40
	if _, fs := newTestRedactor(t).RedactString(text); len(fs) != 1 || fs[0].Rule != "secret-assignment" {
		t.Fatalf("default threshold: %v", fs)
	}
	strict, err := New(Config{Settings: events.RedactionSettings{EntropyThreshold: 7.9}})
	if err != nil {
		t.Fatal(err)
	}
	if _, fs := strict.RedactString(text); len(fs) == 1 && fs[0].Rule == "secret-assignment" {
		t.Fatalf("threshold 7.9: secret-assignment still fires: %v", fs)
	}
}

func TestConfigValidation(t *testing.T) {
	cfg := Config{Settings: events.RedactionSettings{
		EntropyThreshold: -1,
		ExtraRules: []events.RedactionRule{
			{Name: "", Regex: `x+`},
			{Name: "bad name!", Regex: `y+`},
			{Name: "github-pat", Regex: `z+`},
			{Name: "dup", Regex: `a+`},
			{Name: "dup", Regex: `b+`},
			{Name: "broken", Regex: `(`},
			{Name: "empty-match", Regex: `a*`},
			{Name: "blank-keyword", Regex: `c+`, Keywords: []string{" "}},
		},
		Allow: []string{""},
	}}
	_, err := New(cfg)
	if err == nil {
		t.Fatal("invalid settings accepted")
	}
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"entropy_threshold", "extra_rules[0].name", `"bad name!"`, `(rule "github-pat"): is already a built-in rule`,
		`extra_rules[4].name (rule "dup")`, `(rule "broken"): does not compile`, `(rule "empty-match"): matches the empty string`,
		`extra_rules[7].keywords[0]`, "redaction.allow[0]",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Error("no ConfigError in the chain")
	}
}

func TestRulesAndSkipped(t *testing.T) {
	r := newTestRedactor(t)
	rules := r.Rules()
	if !slices.IsSortedFunc(rules, func(a, b RuleInfo) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("rules not sorted")
	}
	sources := map[string]int{}
	for _, ru := range rules {
		sources[ru.Source]++
	}
	if sources["gitleaks"] < 200 || sources["vigil"] < 20 {
		t.Errorf("rule counts by source: %v", sources)
	}
	sk := r.Skipped()
	if len(sk) == 0 {
		t.Fatal("no skipped rules reported")
	}
	for _, s := range sk {
		if s.Reason == "" {
			t.Errorf("rule %s skipped without a reason", s.ID)
		}
	}
}

// The vendored rule file must parse with no key the loader ignores, and
// every rule but the documented path-only ones must compile with Go regexp.
func TestVendoredRulesLoad(t *testing.T) {
	gf, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	rules, global, skipped := gf.rules, gf.global, gf.skipped
	if len(rules) < 210 || len(global) == 0 {
		t.Fatalf("%d rules, %d global allowlists", len(rules), len(global))
	}
	for _, s := range skipped {
		if !strings.HasPrefix(s.Reason, "needs a file path") {
			t.Errorf("rule %s skipped: %s", s.ID, s.Reason)
		}
	}
}

// Events built in Go may hold types the codec never produces; they are
// redacted through their JSON form, never passed through unredacted.
func TestRedactEventTypedValues(t *testing.T) {
	r := newTestRedactor(t)
	type header struct{ Name, Value string }
	ev := testEvent(map[string]any{
		"tool":    "http",
		"headers": []map[string]any{{"Authorization": "Bearer " + tok40}},
		"typed":   []header{{Name: "X-Api-Key", Value: "key " + ghp}},
		"env":     map[string]string{"DB_PASSWORD": pw1},
	})
	out, _ := r.RedactEvent(ev)
	b, _ := json.Marshal(out)
	for _, s := range []string{tok40, ghp, pw1} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("secret survives: %s", b)
		}
	}
}
