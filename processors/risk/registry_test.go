package risk

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

func TestShellRuleRegistry(t *testing.T) {
	s := mustScorer(t, events.DefaultConfig())
	declared := map[string]*ShellRule{}
	for _, r := range ShellRules() {
		if _, dup := declared[r.ID]; dup {
			t.Errorf("%s declared twice", r.ID)
		}
		declared[r.ID] = r
		if r.Doc == "" || len(r.Levels) == 0 || r.Category == "" || r.Analyzer == "" {
			t.Errorf("%s: incomplete declaration", r.ID)
		}
		if len(r.Fires) == 0 && r.Category != catParser && !r.Action {
			t.Errorf("%s: no example that fires", r.ID)
		}
		if len(r.Quiet) == 0 && !r.Action {
			t.Errorf("%s: no example that must not fire", r.ID)
		}
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
				if re.Analyzer != r.Analyzer {
					t.Errorf("%s: %q reports it under analyzer %s, declared %s", r.ID, cmd, re.Analyzer, r.Analyzer)
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
	docsBegin = "<!-- shell-rules:begin (generated from processors/risk/shellrules.go by go test -run ShellRuleDocs -update) -->"
	docsEnd   = "<!-- shell-rules:end -->"
)

// shellRulesTable renders the registry as the rule table of docs/risk.md.
func shellRulesTable() string {
	var b strings.Builder
	cat := ""
	for _, r := range ShellRules() {
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
			ex = "`" + strings.ReplaceAll(strings.ReplaceAll(trimArg(r.Fires[0]), "|", `\|`), "\n", "⏎") + "`"
			if strings.ContainsAny(r.Fires[0], "\x1b\r") {
				ex = "(control characters)"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, strings.Join(lv, " / "), r.Analyzer, strings.ReplaceAll(r.Doc, "|", `\|`), ex)
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
	t.Errorf("%s: the shell rule table differs from ShellRules (rerun with -update after reviewing)", path)
}

const (
	selfDocsBegin = "<!-- self-rules:begin (generated from processors/risk/selfprotect_rules.go by go test -run SelfRuleDocs -update) -->"
	selfDocsEnd   = "<!-- self-rules:end -->"
)

// selfRulesTable renders the self-protection registry as a table.
func selfRulesTable() string {
	var b strings.Builder
	b.WriteString("\n| rule | level | what it means | e.g. |\n| --- | --- | --- | --- |\n")
	for _, r := range SelfRules() {
		ex := ""
		if len(r.Fires) > 0 {
			e := r.Fires[0]
			if c, ok := e.Args["command"].(string); ok && e.Tool == "bash" {
				ex = "`" + strings.ReplaceAll(trimArg(c), "|", `\|`) + "`"
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
	t.Errorf("%s: the self-protection table differs from SelfRules (rerun with -update after reviewing)", path)
}

// switchLabels returns the string case labels of the top-level switches of
// function fn in file.
func switchLabels(t *testing.T, file, fn string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		for _, st := range fd.Body.List {
			sw, ok := st.(*ast.SwitchStmt)
			if !ok {
				continue
			}
			for _, cc := range sw.Body.List {
				for _, e := range cc.(*ast.CaseClause).List {
					if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
						s, _ := strconv.Unquote(bl.Value)
						names[s] = true
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("no switch labels in %s %s", file, fn)
	}
	return names
}

// TestRuledCommands: ruledCmds names every program commandRules switches
// on, and nothing that no rule judges by name.
func TestRuledCommands(t *testing.T) {
	rules := switchLabels(t, "cmdrules.go", "commandRules")
	judged := map[string]bool{}
	for n := range rules {
		judged[n] = true
		if !ruledCmds()[n] {
			t.Errorf("commandRules judges %q, missing from ruledCmds", n)
		}
	}
	for n := range switchLabels(t, "execute.go", "execute") {
		judged[n] = true
	}
	for n := range switchLabels(t, "flags.go", "writeFlags") {
		judged[n] = true
	}
	for n := range interpreters {
		judged[n] = true
	}
	for n := range wrapperOptArgs {
		judged[n] = true
	}
	for n := range ruledCmds() {
		if !judged[n] {
			t.Errorf("ruledCmds lists %q, which no rule judges by name", n)
		}
	}
}
