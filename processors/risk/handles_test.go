package risk

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// typedPackage type-checks the package's own (non-test) files, importing
// its dependencies from the build cache's export data.
func typedPackage(t *testing.T) (*token.FileSet, []*ast.File, *types.Package, *types.Info) {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Skipf("go list -export: %v", err)
	}
	export := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if p := strings.SplitN(l, "\t", 2); len(p) == 2 {
			export[p[0]] = p[1]
		}
	}
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(export[path])
	})}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check("github.com/vigil-dev/vigil/processors/risk", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	return fset, files, pkg, info
}

// TestRuleHandles reads every emit site through the type checker: a
// finding's rule (the rule field of a finding literal, and the rule
// parameter of every function that passes it on) is a declaration, never
// a string; every package-level declaration is listed in its registry
// once and emitted somewhere; a policy rule (named by the config) is made
// in one place only.
func TestRuleHandles(t *testing.T) {
	fset, files, pkg, info := typedPackage(t)
	scope := pkg.Scope()
	named := func(n string) types.Type { return scope.Lookup(n).Type() }
	shellT, selfT, injT := types.NewPointer(named("ShellRule")), types.NewPointer(named("SelfRule")), types.NewPointer(named("InjectRule"))
	declT, policyT := named("ruleDecl"), named("policyRule")
	isHandle := func(tp types.Type) bool {
		return types.Identical(tp, shellT) || types.Identical(tp, selfT) || types.Identical(tp, injT)
	}
	// the declarations: package-level variables of a handle type
	decls := map[types.Object]bool{}
	for _, n := range scope.Names() {
		if v, ok := scope.Lookup(n).(*types.Var); ok && isHandle(v.Type()) {
			decls[v] = true
		}
	}
	// the registries' lists
	listed := map[types.Object]int{}
	inList := map[*ast.Ident]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			tv := info.Types[cl]
			sl, ok := tv.Type.(*types.Slice)
			if !ok || !isHandle(sl.Elem()) && !types.Identical(sl.Elem(), named("SelfRule")) {
				return true
			}
			for _, e := range cl.Elts {
				if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.MUL {
					e = u.X
				} else if st, ok := e.(*ast.StarExpr); ok {
					e = st.X
				}
				if id, ok := e.(*ast.Ident); ok {
					listed[info.Uses[id]]++
					inList[id] = true
				}
			}
			return true
		})
	}
	used := map[types.Object]bool{}
	policySites := 0
	for id, obj := range info.Uses {
		if decls[obj] && !inList[id] {
			used[obj] = true
		}
	}
	checkRule := func(e ast.Expr, where string) {
		tp := info.Types[e].Type
		switch {
		case tp == nil:
			t.Errorf("%s: the rule %s has no type", where, types.ExprString(e))
		case isHandle(tp) || types.Identical(tp, declT):
		case types.Identical(tp, policyT):
			policySites++
		default:
			t.Errorf("%s: the rule %s is a %s, not a declaration", where, types.ExprString(e), tp)
		}
	}
	findingT := named("finding")
	sites := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || !types.Identical(info.Types[cl].Type, findingT) {
				return true
			}
			for _, el := range cl.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "rule" {
					sites++
					checkRule(kv.Value, fset.Position(kv.Pos()).String())
				}
			}
			return true
		})
	}
	if sites < 50 {
		t.Fatalf("found only %d finding literals; the walk is broken", sites)
	}
	if policySites != 1 {
		t.Errorf("%d finding literals take a policyRule; only the config's policy rules may", policySites)
	}
	// every parameter that carries a rule is typed as a declaration
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			var ft *ast.FuncType
			switch x := n.(type) {
			case *ast.FuncDecl:
				ft = x.Type
			case *ast.FuncLit:
				ft = x.Type
			default:
				return true
			}
			for _, fld := range ft.Params.List {
				for _, nm := range fld.Names {
					if nm.Name == "rule" {
						tp := info.Defs[nm].Type()
						if !isHandle(tp) && !types.Identical(tp, declT) {
							t.Errorf("%s: parameter rule is a %s, not a declaration", fset.Position(nm.Pos()), tp)
						}
					}
				}
			}
			return true
		})
	}
	for obj := range decls {
		switch {
		case listed[obj] == 0:
			t.Errorf("%s is declared but not in its registry", obj.Name())
		case listed[obj] > 1:
			t.Errorf("%s is listed %d times", obj.Name(), listed[obj])
		}
		if !used[obj] {
			t.Errorf("%s is declared, and no source emits it", obj.Name())
		}
	}
	if len(decls) != len(ShellRules())+len(SelfRules())+len(InjectRules()) {
		t.Errorf("%d declarations, %d registry entries", len(decls), len(ShellRules())+len(SelfRules())+len(InjectRules()))
	}
	// the public shapes carry an id as a string: a Finding's or a
	// Reason's Rule is a declaration's ID (or another finding's)
	findingPub, reasonT := named("Finding"), types.Type(nil)
	for _, imp := range pkg.Imports() {
		if imp.Path() == "github.com/vigil-dev/vigil/events" {
			reasonT = imp.Scope().Lookup("Reason").Type()
		}
	}
	pub := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			tp := info.Types[cl].Type
			if !types.Identical(tp, findingPub) && (reasonT == nil || !types.Identical(tp, reasonT)) {
				return true
			}
			for _, el := range cl.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok || kv.Key.(*ast.Ident).Name != "Rule" {
					continue
				}
				pub++
				ok = false
				switch v := kv.Value.(type) {
				case *ast.SelectorExpr:
					// decl.ID, or f.Rule of a Finding already made
					ok = v.Sel.Name == "ID" && isHandle(info.Types[v.X].Type) ||
						v.Sel.Name == "Rule" && types.Identical(info.Types[v.X].Type, findingPub)
				case *ast.CallExpr:
					// f.id() of a finding
					if se, isSel := v.Fun.(*ast.SelectorExpr); isSel {
						ok = se.Sel.Name == "id" && types.Identical(info.Types[se.X].Type, findingT)
					}
				}
				if !ok {
					t.Errorf("%s: Rule %s is not a declaration's ID", fset.Position(kv.Pos()), types.ExprString(kv.Value))
				}
			}
			return true
		})
	}
	if pub < 4 {
		t.Errorf("found only %d Finding and Reason literals; the walk is broken", pub)
	}
}
