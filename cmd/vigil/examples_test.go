package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/gate"
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
		cfg, err := parseConfigFile(p, b)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := events.ValidateConfig(cfg); err != nil {
			t.Errorf("%s: %v", p, configError(p, cfg.Version, err))
			continue
		}
		if _, err := gate.NewRiskScorer(cfg.WithDefaults()); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
