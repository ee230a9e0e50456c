package core_test

import (
	"regexp"
	"testing"

	// the scorer imports every analyzer, whose expressions register here
	_ "github.com/vigil-dev/vigil/processors/risk"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// TestLazyRegexpsCompile compiles every rule expression, as init did
// before they became lazy: a wrong one fails here, not in a user's command.
func TestLazyRegexpsCompile(t *testing.T) {
	lazy := core.RegisteredRegexps()
	if len(lazy) == 0 {
		t.Fatal("no lazy expressions registered")
	}
	for _, l := range lazy {
		if _, err := regexp.Compile(l.String()); err != nil {
			t.Errorf("%s: %v", l, err)
		}
		if l.Get().String() != l.String() {
			t.Errorf("%s compiled as %s", l, l.Get())
		}
	}
}
