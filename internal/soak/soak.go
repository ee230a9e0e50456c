// Package soak gates Vigil's long tests: load and crash tests that take
// tens of seconds to minutes (process kills mid-load, dozens of concurrent
// publishers, fleets). They run when VIGIL_SOAK=1, as CI (.ci/run) sets
// it; a developer's `go test ./...` skips them and stays fast. The paths
// they exercise have fast tests of their own (function-field fakes, small
// real nodes); a soak is the evidence under load, not the only test.
//
// The package imports nothing of Vigil, so any package's internal tests
// may use it.
//
// On the data path: tests: which of the long tests run.
package soak

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the soaks on.
const Env = "VIGIL_SOAK"

// Enabled reports whether soaks run (VIGIL_SOAK=1).
func Enabled() bool { return os.Getenv(Env) == "1" }

// Require skips t unless soaks run, saying why and how to run it.
func Require(t testing.TB, why string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("a soak (%s): runs with %s=1, as CI sets it", why, Env)
	}
}
