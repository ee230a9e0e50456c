package datadir

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// distinctNames are the entries of a data or credentials directory whose
// names mean nothing else: a string literal holding one (alone, or as a
// component of a path: "creds/pairing.key"; prose, which has spaces, may
// name them) anywhere outside this package builds a data-directory path
// by hand.
var distinctNames = []string{
	ServeInfoFile, LockFile, StreamsFile, RedactionSeenFile, ContinuityFile,
	IngestIndexDir, SignerFile, VerifierFile, PairingKeyFile, FleetCAFile,
	FleetCAKeyFile, nodeCertName + ".pem", nodeCertName + ".key", "_meta_",
	ProjectionsDir + ".lock",
}

// joinedNames are entries whose names are ordinary words too ("creds" is a
// command, "projections" a log attribute): they are hand-built paths only
// as (a path component of) an argument of filepath.Join or path.Join, an
// operand of +, or the value of a constant or variable named for a path
// (its name holds Dir, File or Path: SnapshotDir, DirName).
var joinedNames = []string{
	JetStreamDir, ProjectionsDir, SnapshotsDir, TLSDir, AuditDir, "creds",
	".nk", TokenExt, NATSCredsExt,
}

// allowed are the packages (directories) outside this package that may
// hold a name, each with the names it may hold. Every pair must still
// occur (a stale entry fails), so the list cannot grow quietly.
var allowed = map[string][]string{
	// The names a client reads are public, below client (see the
	// package doc): this package takes them from there.
	"client/transport": {ServeInfoFile, "creds", ".nk", FleetCAFile},
	// The self-protection rules recognise Vigil's files in the agent's
	// own commands (a pure fold over the agent's text: it builds no path
	// and opens none).
	"processors/risk/shell": {ServeInfoFile, PairingKeyFile, SignerFile, FleetCAKeyFile},
}

// finding is a name found in a file, at a position.
type finding struct {
	pos  token.Position
	name string
}

// handBuilt returns the data-directory names f holds as literals.
func handBuilt(fset *token.FileSet, f *ast.File) []finding {
	var out []finding
	report := func(lit *ast.BasicLit, names []string) {
		if lit.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return
		}
		isPath := !strings.ContainsAny(s, " \t\n")
		for _, n := range names {
			if s == n || isPath && slices.Contains(strings.Split(s, "/"), n) {
				out = append(out, finding{fset.Position(lit.Pos()), n})
			}
		}
	}
	joined := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Join" {
				if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "filepath" || pkg.Name == "path") {
					for _, a := range n.Args {
						if lit, ok := a.(*ast.BasicLit); ok {
							joined[lit] = true
						}
					}
				}
			}
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if lit, ok := v.(*ast.BasicLit); ok && i < len(n.Names) && pathName(n.Names[i].Name) {
					joined[lit] = true
				}
			}
		case *ast.BinaryExpr:
			if n.Op == token.ADD {
				for _, a := range []ast.Expr{n.X, n.Y} {
					if lit, ok := a.(*ast.BasicLit); ok {
						joined[lit] = true
					}
				}
			}
		case *ast.BasicLit:
			report(n, distinctNames)
			if joined[n] {
				report(n, joinedNames)
			}
		}
		return true
	})
	return out
}

// pathName reports whether a constant or variable is named for a path.
func pathName(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "dir") || strings.Contains(l, "file") || strings.Contains(l, "path")
}

// TestNoHandBuiltPaths: no non-test Go file outside this package names an
// entry of a data directory; each asks a Layout or a Creds for its path.
func TestNoHandBuiltPaths(t *testing.T) {
	root := moduleRoot(t)
	seen := map[string]map[string]bool{}
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) ||
				rel == "internal/datadir" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		pkg := path.Dir(rel)
		for _, fd := range handBuilt(fset, f) {
			if slices.Contains(allowed[pkg], fd.name) {
				if seen[pkg] == nil {
					seen[pkg] = map[string]bool{}
				}
				seen[pkg][fd.name] = true
				continue
			}
			t.Errorf("%s:%d: %q is a data-directory entry built by hand: use internal/datadir's Layout or Creds", rel, fd.pos.Line, fd.name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d non-test files under %s: the walk missed the tree", files, root)
	}
	for pkg, names := range allowed {
		for _, n := range names {
			if !seen[pkg][n] {
				t.Errorf("allowed[%q] lists %q, which the package no longer holds: drop it from the list", pkg, n)
			}
		}
	}
}

// TestHandBuilt: the check finds what it is for, and leaves the same
// words where they are no path.
func TestHandBuilt(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"join", `filepath.Join(dir, "serve.json")`, []string{ServeInfoFile}},
		{"join generic", `filepath.Join(dataDir, "jetstream", "x")`, []string{JetStreamDir}},
		{"path.Join", `path.Join(d, "creds")`, []string{"creds"}},
		{"concat", `dir + "/creds"`, []string{"creds"}},
		{"concat path", `dir + "/audit/x"`, []string{AuditDir}},
		{"prose", `fl.String("out", "", "instead of DIR/audit/signer.key")`, nil},
		{"prose join", `filepath.Join(d, "the creds dir")`, nil},
		{"concat ext", `string(r) + ".token"`, []string{TokenExt}},
		{"concat name", `credsDir + "/" + "pairing.key"`, []string{PairingKeyFile}},
		{"literal anywhere", `os.Stat("streams.json")`, []string{StreamsFile}},
		{"component", `[]string{"audit/signer.key"}`, []string{SignerFile}},
		{"nats meta", `filepath.Join(d, "jetstream", "jetstream", "$SYS", "_js_", "_meta_")`, []string{JetStreamDir, JetStreamDir, "_meta_"}},
		{"generic word", `cobra.Command{Use: "creds", Short: "projections"}`, nil},
		{"log attr", `log.With("component", "projections")`, nil},
		{"other file", `filepath.Join(dir, "settings.json")`, nil},
		{"named", `x; const snapDir = "snapshots"`, []string{SnapshotsDir}},
		{"named otherwise", `x; const Name = "audit"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\nvar _ = "+tt.src+"\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fd := range handBuilt(fset, f) {
				got = append(got, fd.name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("handBuilt(%s) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
