package risk

import (
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	eachFinding(files, info, findingT, func(_ *ast.CompositeLit, _, rule ast.Expr) {
		if rule != nil {
			sites++
			checkRule(rule, fset.Position(rule.Pos()).String())
		}
	})
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

// TestRuleAnalyzers reads every emit site through the type checker and
// checks that the analyzer it reports a rule under is one its declaration
// names (a shell rule's Analyzer or Also; selfprotect for a
// self-protection rule, injection for an injection rule). A site's rule
// is followed back to the declarations it can be: a declaration itself,
// a parameter (every call's argument), a local variable (every value
// assigned to it) or a function's result (every value it returns).
func TestRuleAnalyzers(t *testing.T) {
	fset, files, pkgs, info := typedPackages(t)
	lookup := func(pkg, n string) types.Type {
		return pkgs["github.com/vigil-dev/vigil/processors/risk"+pkg].Scope().Lookup(n).Type()
	}
	shellT, selfT, injT := types.NewPointer(lookup("/shell", "ShellRule")), types.NewPointer(lookup("/shell", "SelfRule")), types.NewPointer(lookup("/inject", "InjectRule"))
	declT, policyT, findingT := lookup("/core", "Decl"), lookup("", "policyRule"), lookup("/core", "Finding")
	byID := map[string]*shell.ShellRule{}
	for _, r := range shell.ShellRules() {
		byID[r.ID] = r
	}
	// the analyzers each declaration may be reported under
	allowed := map[types.Object][]string{}
	// what flows into each variable: assignments and definitions, and
	// the arguments of calls to each function value or declaration
	assigned := map[types.Object][]ast.Expr{}
	returns := map[types.Object][][]ast.Expr{}
	params := map[types.Object][]*types.Var{}
	var calls []*ast.CallExpr
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				for i, nm := range x.Names {
					obj := info.Defs[nm]
					if i < len(x.Values) {
						assigned[obj] = append(assigned[obj], x.Values[i])
					}
					if obj == nil || i >= len(x.Values) {
						continue
					}
					switch tp := obj.Type(); {
					case types.Identical(tp, selfT):
						allowed[obj] = []string{"selfprotect"}
					case types.Identical(tp, injT):
						allowed[obj] = []string{"injection"}
					case types.Identical(tp, shellT):
						id := ""
						if u, ok := x.Values[i].(*ast.UnaryExpr); ok {
							if cl, ok := u.X.(*ast.CompositeLit); ok {
								for _, el := range cl.Elts {
									if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "ID" {
										id = constant.StringVal(info.Types[kv.Value].Value)
									}
								}
							}
						}
						r := byID[id]
						if r == nil {
							t.Errorf("%s: %s's id %q is not in shell.ShellRules", fset.Position(nm.Pos()), nm.Name, id)
							continue
						}
						allowed[obj] = append([]string{r.Analyzer}, r.Also...)
					}
				}
			case *ast.AssignStmt:
				if len(x.Lhs) == len(x.Rhs) {
					for i, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							obj := info.Defs[id]
							if obj == nil {
								obj = info.Uses[id]
							}
							assigned[obj] = append(assigned[obj], x.Rhs[i])
							if fl, ok := x.Rhs[i].(*ast.FuncLit); ok {
								params[obj] = funcParams(info, fl.Type)
								returns[obj] = funcReturns(fl.Body)
							}
						}
					}
				} else if len(x.Rhs) == 1 {
					// a, b := f(): each takes f's result at its index
					for i, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							obj := info.Defs[id]
							if obj == nil {
								obj = info.Uses[id]
							}
							assigned[obj] = append(assigned[obj], &resultExpr{call: x.Rhs[0], index: i})
						}
					}
				}
			case *ast.FuncDecl:
				obj := info.Defs[x.Name]
				params[obj] = funcParams(info, x.Type)
				if x.Body != nil {
					returns[obj] = funcReturns(x.Body)
				}
			case *ast.CallExpr:
				calls = append(calls, x)
			}
			return true
		})
	}
	// arguments: a parameter takes every call's argument at its index
	paramOf := map[types.Object]struct {
		fn    types.Object
		index int
	}{}
	for fn, ps := range params {
		for i, p := range ps {
			if p != nil {
				paramOf[p] = struct {
					fn    types.Object
					index int
				}{fn, i}
			}
		}
	}
	calleeOf := func(e ast.Expr) types.Object {
		switch fn := e.(type) {
		case *ast.Ident:
			return info.Uses[fn]
		case *ast.SelectorExpr:
			return info.Uses[fn.Sel]
		}
		return nil
	}
	callsOf := map[types.Object][]*ast.CallExpr{}
	for _, c := range calls {
		callee := calleeOf(c.Fun)
		callsOf[callee] = append(callsOf[callee], c)
		ps := params[callee]
		for i, a := range c.Args {
			if i < len(ps) && ps[i] != nil {
				assigned[ps[i]] = append(assigned[ps[i]], a)
			}
		}
	}
	// decls follows e back to the declarations it can be; open says a
	// value could not be followed (an error: every site must resolve).
	var decls func(e ast.Expr, seen map[types.Object]bool) (out []types.Object, open []string)
	decls = func(e ast.Expr, seen map[types.Object]bool) (out []types.Object, open []string) {
		switch x := e.(type) {
		case *ast.ParenExpr:
			return decls(x.X, seen)
		case *ast.Ident:
			if x.Name == "nil" {
				return nil, nil
			}
			obj := info.Uses[x]
			if obj == nil {
				obj = info.Defs[x]
			}
			if _, ok := allowed[obj]; ok {
				return []types.Object{obj}, nil
			}
			if seen[obj] {
				return nil, nil
			}
			seen[obj] = true
			vals := assigned[obj]
			if len(vals) == 0 {
				return nil, []string{x.Name}
			}
			for _, v := range vals {
				o, op := decls(v, seen)
				out, open = append(out, o...), append(open, op...)
			}
			return out, open
		case *resultExpr:
			ce, ok := x.call.(*ast.CallExpr)
			if !ok {
				return nil, []string{types.ExprString(x.call)}
			}
			callee := calleeOf(ce.Fun)
			if seen[callee] && x.index == 0 {
				return nil, nil
			}
			rs, ok := returns[callee]
			if !ok {
				return nil, []string{types.ExprString(ce.Fun)}
			}
			for _, r := range rs {
				if x.index < len(r) {
					o, op := decls(r[x.index], seen)
					out, open = append(out, o...), append(open, op...)
				}
			}
			return out, open
		case *ast.CallExpr:
			if tv := info.Types[x.Fun]; tv.IsType() {
				if types.Identical(tv.Type, policyT) {
					return nil, nil // the config's policy rule
				}
			}
			return decls(&resultExpr{call: x, index: 0}, seen)
		case *ast.SelectorExpr:
			// another finding's rule (f.Rule) keeps that finding's
			// analyzer; a package's exported declaration is itself
			if obj := info.Uses[x.Sel]; obj != nil {
				if _, ok := allowed[obj]; ok {
					return []types.Object{obj}, nil
				}
			}
			if types.Identical(info.Types[x.X].Type, findingT) && x.Sel.Name == "Rule" {
				return nil, nil
			}
			return nil, []string{types.ExprString(x)}
		}
		return nil, []string{types.ExprString(e)}
	}
	sites, checked, byDecl := 0, 0, 0
	// check resolves the analyzer: a constant, or a parameter of the
	// function whose other parameter is the rule, when each call is
	// checked with its own pair of arguments
	var check func(where string, an, rule ast.Expr)
	check = func(where string, an, rule ast.Expr) {
		if se, ok := an.(*ast.SelectorExpr); ok && se.Sel.Name == "Analyzer" && isIdent(rule) && types.ExprString(se.X) == types.ExprString(rule) {
			byDecl++ // rule.Analyzer: the declaration's own
			return
		}
		if av := info.Types[an].Value; av != nil && av.Kind() == constant.String {
			analyzer := constant.StringVal(av)
			ds, open := decls(rule, map[types.Object]bool{})
			for _, o := range open {
				t.Errorf("%s: the rule %s flows from %s, which this test cannot follow", where, types.ExprString(rule), o)
			}
			for _, d := range ds {
				checked++
				if !slices.Contains(allowed[d], analyzer) {
					t.Errorf("%s: %s is reported under analyzer %s; its declaration names %v", where, d.Name(), analyzer, allowed[d])
				}
			}
			return
		}
		ai, aok := an.(*ast.Ident)
		ri, rok := rule.(*ast.Ident)
		if aok && rok {
			pa, okA := paramOf[info.Uses[ai]]
			pr, okR := paramOf[info.Uses[ri]]
			if okA && okR && pa.fn == pr.fn && len(callsOf[pa.fn]) > 0 {
				for _, c := range callsOf[pa.fn] {
					check(fset.Position(c.Pos()).String(), c.Args[pa.index], c.Args[pr.index])
				}
				return
			}
		}
		t.Errorf("%s: the analyzer %s is neither a constant nor a parameter beside the rule's", where, types.ExprString(an))
	}
	eachFinding(files, info, findingT, func(cl *ast.CompositeLit, an, rule ast.Expr) {
		if rule == nil {
			return
		}
		sites++
		if tp := info.Types[rule].Type; types.Identical(tp, declT) && !isIdent(rule) {
			return
		}
		check(fset.Position(cl.Pos()).String(), an, rule)
	})
	if sites < 50 || checked < 100 || byDecl == 0 {
		t.Fatalf("followed %d rules from %d finding literals (%d report their declaration's analyzer); the walk is broken", checked, sites, byDecl)
	}
}

// eachFinding calls fn with every core.Finding literal of files and its
// Analyzer and Rule values (nil when the literal leaves one out).
func eachFinding(files []*ast.File, info *types.Info, findingT types.Type, fn func(cl *ast.CompositeLit, analyzer, rule ast.Expr)) {
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || !types.Identical(info.Types[cl].Type, findingT) {
				return true
			}
			var an, rule ast.Expr
			for _, el := range cl.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					switch kv.Key.(*ast.Ident).Name {
					case "Analyzer":
						an = kv.Value
					case "Rule":
						rule = kv.Value
					}
				}
			}
			fn(cl, an, rule)
			return true
		})
	}
}

// resultExpr stands for the index-th result of a call with several.
type resultExpr struct {
	ast.Expr
	call  ast.Expr
	index int
}

func isIdent(e ast.Expr) bool { _, ok := e.(*ast.Ident); return ok }

func funcParams(info *types.Info, ft *ast.FuncType) []*types.Var {
	var ps []*types.Var
	for _, fld := range ft.Params.List {
		for _, nm := range fld.Names {
			ps = append(ps, info.Defs[nm].(*types.Var))
		}
		if len(fld.Names) == 0 {
			ps = append(ps, nil)
		}
	}
	return ps
}

// funcReturns lists the results of every return statement of body (not
// of the function literals inside it).
func funcReturns(body *ast.BlockStmt) [][]ast.Expr {
	var out [][]ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			out = append(out, x.Results)
		}
		return true
	})
	return out
}
