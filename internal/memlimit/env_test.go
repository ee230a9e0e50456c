package memlimit

import (
	"os"
	"testing"
)

// unsetenv removes GOMEMLIMIT for the rest of the test (t.Setenv before it
// restores the old value).
func unsetenv(t *testing.T) {
	t.Helper()
	if err := os.Unsetenv("GOMEMLIMIT"); err != nil {
		t.Fatal(err)
	}
}
