package transport_test

import (
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

const module = "github.com/vigil-dev/vigil"

// TestPublicPackagesDoNotImportInternal is the layering guard of issue 13:
// internal/ is used only from above. No package outside internal/ and cmd/
// (events, processors, projections, replay, client, schemas …) may import
// a package under internal/ in its non-test files; what they share with
// the node belongs in a public package below them (as this package holds
// the log reader). Tests may use internal helpers (testnode): they run
// from above. Every .go file is read whatever its build tags.
func TestPublicPackagesDoNotImportInternal(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if first, _, _ := strings.Cut(rel, "/"); first == "internal" || first == "cmd" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if isInternal(ip) {
				bad = append(bad, path.Join(module, path.Dir(rel))+" ("+rel+") imports "+ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("read only %d non-test files under %s: the walk missed the public packages", checked, root)
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Errorf("%s: public packages may not import internal/ (move the shared part into a public package below both)", b)
	}
}

// isInternal reports whether an import path is one of the module's
// internal packages.
func isInternal(ip string) bool {
	rest, ok := strings.CutPrefix(ip, module+"/")
	return ok && slices.Contains(strings.Split(rest, "/"), "internal")
}

func TestIsInternal(t *testing.T) {
	for ip, want := range map[string]bool{
		module + "/internal/natsutil":       true,
		module + "/internal/ingest":         true,
		module + "/client/internal/x":       true,
		module + "/client/transport":        false,
		module + "/events":                  false,
		module + "x/internal/y":             false,
		"golang.org/x/tools/internal/event": false,
		"internal/abi":                      false,
	} {
		if got := isInternal(ip); got != want {
			t.Errorf("isInternal(%q) = %v, want %v", ip, got, want)
		}
	}
}

// moduleRoot is the directory of the module's go.mod, above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			if !strings.Contains(string(b), "module "+module+"\n") {
				t.Fatalf("%s/go.mod is not module %s", dir, module)
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
