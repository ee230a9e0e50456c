package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanTree is a false-positive audit, not a unit test: with
// VIGIL_REDACT_SCAN_ROOT set it redacts every source and text file under
// that directory (skipping tests, test vectors and JSON fixtures, which hold
// key material on purpose) and logs each finding with its context, so that
// rules can be reviewed against real code and documentation.
func TestScanTree(t *testing.T) {
	root := os.Getenv("VIGIL_REDACT_SCAN_ROOT")
	if root == "" {
		t.Skip("set VIGIL_REDACT_SCAN_ROOT to audit findings on a directory tree")
	}
	r := newTestRedactor(t)
	exts := map[string]bool{".go": true, ".md": true, ".yaml": true, ".yml": true, ".sh": true, ".py": true, ".txt": true, ".toml": true}
	files, lines, total := 0, 0, 0
	byRule := map[string]int{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.Contains(p, "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(p)] || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "vectors") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 4<<20 {
			return nil
		}
		files++
		s := string(b)
		lines += strings.Count(s, "\n")
		_, fs := r.RedactString(s)
		for _, f := range fs {
			total++
			byRule[f.Rule]++
			a, e := max(0, f.Start-60), min(len(s), f.End+20)
			t.Logf("%s [%s] %q", p, f.Rule, s[a:e])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d lines, %d findings: %v", files, lines, total, byRule)
}
