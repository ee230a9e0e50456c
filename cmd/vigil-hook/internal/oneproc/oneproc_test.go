package oneproc

import (
	"os"
	"runtime"
	"testing"
)

// TestOneP: imported, the package leaves the process one P unless
// $GOMAXPROCS names a number.
func TestOneP(t *testing.T) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("$GOMAXPROCS is set: the runtime's value stands")
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS = %d, want 1", n)
	}
}
