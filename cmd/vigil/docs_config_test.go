package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/gate"
)

// checkConfig loads b as `vigil config set NAME` does: strict parsing (a
// misspelt field is an error), the whole-config validation, and the CEL
// rules compiled.
func checkConfig(name string, b []byte) error {
	cfg, err := parseConfigFile(name, b)
	if err != nil {
		return err
	}
	if err := events.ValidateConfig(cfg); err != nil {
		return configError(name, cfg.Version, err)
	}
	if _, err := gate.NewRiskScorer(cfg.WithDefaults()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// docBlock is one fenced code block of a Markdown file.
type docBlock struct {
	file string
	line int    // of the opening fence, from 1
	info string // the fence's info string ("yaml config")
	body string
}

// docBlocks returns the fenced code blocks of a Markdown file.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out  []docBlock
		cur  *docBlock
		body strings.Builder
		n    int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &docBlock{file: path, line: n, info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
			body.Reset()
		case cur != nil && trimmed == "```":
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: code block never closed", path, cur.line)
	}
	return out
}

// yamlConfigKeys and jsonConfigKeys are top-level keys only a
// configuration has: a YAML (or unlabelled) block that holds one at the
// start of a line, or a JSON block that holds one anywhere, is a
// configuration and must be marked as one.
var (
	yamlConfigKeys = regexp.MustCompile(`(?m)^(analyzers|confirmation|policy_rules|deny_rules|approval_timeout|sandbox):`)
	jsonConfigKeys = regexp.MustCompile(`"(analyzers|confirmation|policy_rules|deny_rules|approval_timeout)"\s*:`)
)

// requestBody is a JSON body a shell block sends with curl -d '…'.
var requestBody = regexp.MustCompile(`-d '(\{[^']*\})'`)

// configBodies returns the configurations a shell block sends to the HTTP
// API (a curl -d body with a configuration key).
func configBodies(b docBlock) []string {
	if lang, _, _ := strings.Cut(b.info, " "); lang != "sh" && lang != "bash" {
		return nil
	}
	var out []string
	for _, m := range requestBody.FindAllStringSubmatch(b.body, -1) {
		if jsonConfigKeys.MatchString(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// looksLikeConfig reports whether an unmarked block holds a configuration.
func looksLikeConfig(b docBlock) bool {
	switch lang, _, _ := strings.Cut(b.info, " "); lang {
	case "", "yaml", "yml":
		return yamlConfigKeys.MatchString(b.body)
	case "json":
		return jsonConfigKeys.MatchString(b.body)
	}
	return false
}

// TestDocsConfigsAreValid validates every configuration the docs show, as
// `vigil config set` would, so a page cannot teach a config the validator
// refuses. A configuration is a fenced block whose info string is
// "yaml config" or "json config", or a JSON body a shell block sends with
// curl -d (PUT /v1/config); a block that looks like a configuration (it
// has a top-level configuration key) but is not marked fails the test, so
// a new one cannot be left out by forgetting the mark.
func TestDocsConfigsAreValid(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("docs: %v %v", paths, err)
	}
	checked := 0
	for _, p := range paths {
		for _, b := range docBlocks(t, p) {
			where := fmt.Sprintf("%s:%d", filepath.ToSlash(strings.TrimPrefix(p, filepath.Join("..", "..")+string(filepath.Separator))), b.line)
			fields := strings.Fields(b.info)
			marked := len(fields) == 2 && fields[1] == "config" && (fields[0] == "yaml" || fields[0] == "json")
			for _, body := range configBodies(b) {
				checked++
				if err := checkConfig(where+" (a request body)", []byte(body)); err != nil {
					t.Errorf("%v", err)
				}
			}
			if !marked {
				if looksLikeConfig(b) {
					t.Errorf("%s: a block that looks like a configuration (```%s): mark it ```yaml config or ```json config so TestDocsConfigsAreValid checks it", where, b.info)
				}
				continue
			}
			checked++
			body := []byte(b.body)
			if fields[0] == "json" && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
				t.Errorf("%s: a json config block must hold one JSON object", where)
				continue
			}
			if err := checkConfig(where, body); err != nil {
				t.Errorf("%v", err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no ```yaml config block in docs/: docs/gate.md has one")
	}
}

// TestDocBlocks: the block reader finds marked blocks, their lines, and
// what they hold.
func TestDocBlocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.md")
	md := "# T\n\n```yaml config\nversion: 1\n```\n\ntext\n\n  ```sh\n  echo hi\n  ```\n"
	sh := docBlock{info: "sh", body: `curl -X PUT -d '{"confirmation":{"mode":"never"}}' "$API/v1/config"` + "\ncurl -d '{\"id\":\"a1\"}' \"$API/v1/events\"\n"}
	if got := configBodies(sh); len(got) != 1 || got[0] != `{"confirmation":{"mode":"never"}}` {
		t.Fatalf("configBodies = %q", got)
	}
	if err := os.WriteFile(p, []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	got := docBlocks(t, p)
	want := []docBlock{
		{file: p, line: 3, info: "yaml config", body: "version: 1\n"},
		{file: p, line: 9, info: "sh", body: "  echo hi\n"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("docBlocks = %+v, want %+v", got, want)
	}
}

// TestCheckConfigRefuses: the check the docs go through refuses what
// `vigil config set` refuses (so a docs block that passes is a real
// config): a misspelt field, an incoherent combination, a CEL rule that
// does not compile.
func TestCheckConfigRefuses(t *testing.T) {
	for name, b := range map[string]string{
		"misspelt":   "confirmaton: {mode: risky}\n",
		"incoherent": "analyzers: {rules: false, policy: false, injection: false}\nconfirmation: {mode: risky}\n",
		"bad cel":    "policy_rules:\n  - {name: x, expr: 'command.nosuch(', level: HIGH}\n",
		"json typo":  `{"analyzerz": {}}`,
	} {
		if err := checkConfig(name, []byte(b)); err == nil {
			t.Errorf("%s: accepted:\n%s", name, b)
		}
	}
	if err := checkConfig("minimal", []byte("analyzers: {rules: true}\nconfirmation: {mode: risky}\n")); err != nil {
		t.Errorf("a minimal config refused: %v", err)
	}
}
