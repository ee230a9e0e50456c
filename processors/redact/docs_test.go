package redact

import (
	"os"
	"strings"
	"testing"
)

// TestEveryRuleDocumented: each rule of Vigil's own set has its row in
// docs/redaction.md (the vendored gitleaks rules are listed by gitleaks).
func TestEveryRuleDocumented(t *testing.T) {
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/redaction.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ri := range r.Rules() {
		if ri.Source != "gitleaks" && !strings.Contains(string(doc), "`"+ri.ID+"`") {
			t.Errorf("rule %s (%s) has no row in docs/redaction.md: %s", ri.ID, ri.Source, ri.Description)
		}
	}
}
