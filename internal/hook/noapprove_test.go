package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No answer a model reads names the command that approves: people see it
// on their own surfaces (vigil pending, the approval page).
func TestAnswersNeverNameTheApproveCommand(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "answer when") && strings.Contains(line, "vigil approve") {
				t.Errorf("%s: an answer names `vigil approve`: %s", f, line)
			}
		}
	}
}
