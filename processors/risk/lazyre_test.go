package risk

import (
	"regexp"
	"testing"
)

// TestLazyRegexpsCompile compiles every rule expression, as init did
// before they became lazy: a wrong one fails here, not in a user's command.
func TestLazyRegexpsCompile(t *testing.T) {
	if len(lazyREs) == 0 {
		t.Fatal("no lazy expressions registered")
	}
	for _, l := range lazyREs {
		if _, err := regexp.Compile(l.expr); err != nil {
			t.Errorf("%s: %v", l.expr, err)
		}
		if l.get().String() != l.expr {
			t.Errorf("%s compiled as %s", l.expr, l.get())
		}
	}
}
