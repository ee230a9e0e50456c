package risk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

func TestShellRuleRegistry(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	// that every declaration is complete and has its examples is
	// TestShellRuleDecls's (processors/risk/shell)
	for _, r := range shell.ShellRules() {
		for _, cmd := range r.Fires {
			a := s.ScoreCommand(cmd, Env{})
			ok := false
			for _, re := range a.Reasons {
				if re.Rule != r.ID {
					continue
				}
				for _, l := range r.Levels {
					if re.Level == l {
						ok = true
					}
				}
				if re.Analyzer != r.Analyzer && !slices.Contains(r.Also, re.Analyzer) {
					t.Errorf("%s: %q reports it under analyzer %s, declared %s (also %v)", r.ID, cmd, re.Analyzer, r.Analyzer, r.Also)
				}
			}
			if !ok {
				t.Errorf("%s must fire on %q at %v: %s %s", r.ID, cmd, r.Levels, a.Level, reasonsBrief(a))
			}
		}
		for _, cmd := range r.Quiet {
			a := s.ScoreCommand(cmd, Env{})
			for _, re := range a.Reasons {
				if re.Rule == r.ID {
					t.Errorf("%s must not fire on %q: %s", r.ID, cmd, re.Detail)
				}
			}
		}
	}
	// that every emit site takes a declaration, and every declaration is
	// emitted, is TestRuleHandles's

}

const (
	docsBegin = "<!-- shell-rules:begin (generated from processors/risk/shell/shellrules.go by go test ./processors/risk -run ShellRuleDocs -update) -->"
	docsEnd   = "<!-- shell-rules:end -->"
)

// shellRulesTable renders the registry as the rule table of docs/risk.md.
func shellRulesTable() string {
	var b strings.Builder
	cat := ""
	for _, r := range shell.ShellRules() {
		if r.Category != cat {
			cat = r.Category
			fmt.Fprintf(&b, "\n**%s**\n\n| rule | level | analyzer | what it means | e.g. |\n| --- | --- | --- | --- | --- |\n", cat)
		}
		var lv []string
		for _, l := range r.Levels {
			lv = append(lv, string(l))
		}
		sort.Sort(sort.Reverse(sort.StringSlice(lv)))
		ex := ""
		if len(r.Fires) > 0 {
			ex = "`" + strings.ReplaceAll(strings.ReplaceAll(core.TrimArg(r.Fires[0]), "|", `\|`), "\n", "⏎") + "`"
			if strings.ContainsAny(r.Fires[0], "\x1b\r") {
				ex = "(control characters)"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, strings.Join(lv, " / "), strings.Join(append([]string{r.Analyzer}, r.Also...), ", "), strings.ReplaceAll(r.Doc, "|", `\|`), ex)
	}
	return b.String()
}

// TestShellRuleDocs: docs/risk.md's shell rule table is the registry's.
func TestShellRuleDocs(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "risk.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("docs not available: %v", err)
	}
	s := string(doc)
	i, j := strings.Index(s, docsBegin), strings.Index(s, docsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, docsBegin, docsEnd)
	}
	want := docsBegin + "\n" + shellRulesTable() + "\n" + docsEnd
	got := s[i : j+len(docsEnd)]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j+len(docsEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the shell rule table differs from shell.ShellRules (rerun with -update after reviewing)", path)
}

const (
	selfDocsBegin = "<!-- self-rules:begin (generated from processors/risk/shell/selfprotect_rules.go by go test ./processors/risk -run SelfRuleDocs -update) -->"
	selfDocsEnd   = "<!-- self-rules:end -->"
)

// selfRulesTable renders the self-protection registry as a table.
func selfRulesTable() string {
	var b strings.Builder
	b.WriteString("\n| rule | level | what it means | e.g. |\n| --- | --- | --- | --- |\n")
	for _, r := range shell.SelfRules() {
		ex := ""
		if len(r.Fires) > 0 {
			e := r.Fires[0]
			if c, ok := e.Args["command"].(string); ok && e.Tool == "bash" {
				ex = "`" + strings.ReplaceAll(core.TrimArg(c), "|", `\|`) + "`"
			} else {
				ex = e.Tool
			}
		}
		fmt.Fprintf(&b, "| `%s` | HIGH | %s | %s |\n", r.ID, strings.ReplaceAll(r.Doc, "|", `\|`), ex)
	}
	return b.String()
}

// TestSelfRuleDocs: docs/risk.md's self-protection table is the registry's.
func TestSelfRuleDocs(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "risk.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("docs not available: %v", err)
	}
	s := string(doc)
	i, j := strings.Index(s, selfDocsBegin), strings.Index(s, selfDocsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, selfDocsBegin, selfDocsEnd)
	}
	want := selfDocsBegin + "\n" + selfRulesTable() + "\n" + selfDocsEnd
	if s[i:j+len(selfDocsEnd)] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j+len(selfDocsEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the self-protection table differs from shell.SelfRules (rerun with -update after reviewing)", path)
}
