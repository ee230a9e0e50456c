package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesAreValidConfigs loads every policy in examples/ as `vigil
// config set` does: strict parsing (a misspelt field is an error), the
// whole-config validation, and the CEL rules compiled.
func TestExamplesAreValidConfigs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if len(paths) < 4 {
		t.Fatalf("examples: %v", paths)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkConfig(p, b); err != nil {
			t.Error(err)
		}
	}
}
