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

	"github.com/vigil-dev/vigil/processors/risk/inject"
	"github.com/vigil-dev/vigil/processors/risk/shell"
)

// rulePackages are the packages that declare or emit rules, in
// dependency order: the directory (relative to this one) and import path.
var rulePackages = []struct{ dir, path string }{
	{"core", "github.com/vigil-dev/vigil/processors/risk/core"},
	{"shell", "github.com/vigil-dev/vigil/processors/risk/shell"},
	{"inject", "github.com/vigil-dev/vigil/processors/risk/inject"},
	{".", "github.com/vigil-dev/vigil/processors/risk"},
}

// typedPackages type-checks the own (non-test) files of rulePackages into
// one types.Info, each importing the others as checked here and every
// other dependency from the build cache's export data.
func typedPackages(t *testing.T) (*token.FileSet, []*ast.File, map[string]*types.Package, *types.Info) {
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
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(export[path])
	})
	pkgs := map[string]*types.Package{}
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if p, ok := pkgs[path]; ok {
			return p, nil
		}
		return gc.Import(path)
	})}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	var all []*ast.File
	for _, rp := range rulePackages {
		names, _ := filepath.Glob(filepath.Join(rp.dir, "*.go"))
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
		pkg, err := conf.Check(rp.path, fset, files, info)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[rp.path] = pkg
		all = append(all, files...)
	}
	return fset, all, pkgs, info
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// TestRuleHandles reads every emit site of every analyzer and of the
// scorer through the type checker: a finding's rule (the Rule field of a
// core.Finding literal, and the rule parameter of every function that
// passes it on) is a declaration, never a string; every package-level
// declaration is listed in its registry once and emitted somewhere; a
// policy rule (named by the config) is made in one place only.
func TestRuleHandles(t *testing.T) {
	fset, files, pkgs, info := typedPackages(t)
	lookup := func(pkg, n string) types.Type {
		return pkgs["github.com/vigil-dev/vigil/processors/risk"+pkg].Scope().Lookup(n).Type()
	}
	shellT, selfT, injT := types.NewPointer(lookup("/shell", "ShellRule")), types.NewPointer(lookup("/shell", "SelfRule")), types.NewPointer(lookup("/inject", "InjectRule"))
	declT, policyT := lookup("/core", "Decl"), lookup("", "policyRule")
	isHandle := func(tp types.Type) bool {
		return types.Identical(tp, shellT) || types.Identical(tp, selfT) || types.Identical(tp, injT)
	}
	// the declarations: package-level variables of a handle type
	decls := map[types.Object]bool{}
	for _, pkg := range pkgs {
		scope := pkg.Scope()
		for _, n := range scope.Names() {
			if v, ok := scope.Lookup(n).(*types.Var); ok && isHandle(v.Type()) {
				decls[v] = true
			}
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
			if !ok || !isHandle(sl.Elem()) && !types.Identical(sl.Elem(), lookup("/shell", "SelfRule")) {
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
	findingT := lookup("/core", "Finding")
	sites := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || !types.Identical(info.Types[cl].Type, findingT) {
				return true
			}
			for _, el := range cl.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Rule" {
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
	if len(decls) != len(shell.ShellRules())+len(shell.SelfRules())+len(inject.InjectRules()) {
		t.Errorf("%d declarations, %d registry entries", len(decls), len(shell.ShellRules())+len(shell.SelfRules())+len(inject.InjectRules()))
	}
	// the public shapes carry an id as a string: a Finding's or a
	// Reason's Rule is a declaration's ID (or another finding's)
	findingPub, reasonT := lookup("/inject", "Finding"), types.Type(nil)
	for _, imp := range pkgs["github.com/vigil-dev/vigil/processors/risk"].Imports() {
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
					// f.ID() of a core.Finding
					if se, isSel := v.Fun.(*ast.SelectorExpr); isSel {
						ok = se.Sel.Name == "ID" && types.Identical(info.Types[se.X].Type, findingT)
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
