package shell

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestShellRuleDecls: every declaration is complete, declared once, and
// has examples that fire and that must not (TestShellRuleRegistry, in the
// scorer's package, runs them).
func TestShellRuleDecls(t *testing.T) {
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
	}
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
