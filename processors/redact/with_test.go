package redact

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// heldoutTexts returns the texts of the held-out secrets suites, secret
// and clean lines alike.
func heldoutTexts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"heldout_secrets.jsonl", "heldout_secrets2.jsonl", "heldout_secrets3.jsonl"} {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var h heldoutSecret
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, rot13(h.Text))
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestWithIsNew: a Redactor derived with With redacts every text as one
// New builds for the same settings, whatever the settings the first was
// built with, and building it while the first scans is safe (-race).
func TestWithIsNew(t *testing.T) {
	texts := append(heldoutTexts(t), "deploy with acme_0123456789abcdefghijklmn and TKT-123456-SECRET", "SERVICE_TOKEN="+tok40, "keep "+ghp)
	settings := []events.RedactionSettings{
		{},
		{ExtraRules: []events.RedactionRule{
			{Name: "acme-token", Regex: `\bacme_[a-z0-9]{24}\b`, Keywords: []string{"ACME_"}},
			{Name: "ticket-secret", Regex: `TKT-(\d{6})-SECRET`},
		}, Allow: []string{ghp}},
		{EntropyThreshold: 7.9},
		{ExtraRules: []events.RedactionRule{{Name: "always-on", Regex: `zz[0-9]{4}zz`}}},
	}
	redactAll := func(r *Redactor) []string {
		out := make([]string, len(texts))
		for i, s := range texts {
			out[i], _ = r.RedactString(s)
		}
		return out
	}
	for i, from := range settings {
		base, err := New(Config{Settings: from})
		if err != nil {
			t.Fatal(err)
		}
		for j, to := range settings {
			fresh, err := New(Config{Settings: to})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(func() { redactAll(base) }) // the one in force keeps scanning
			derived, err := base.With(Config{Settings: to})
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			want, got := redactAll(fresh), redactAll(derived)
			for k := range texts {
				if got[k] != want[k] {
					t.Fatalf("settings %d then With(settings %d): %q redacted to %q, New gives %q", i, j, texts[k], got[k], want[k])
				}
			}
			if !slices.Equal(derived.Rules(), fresh.Rules()) {
				t.Fatalf("settings %d then With(settings %d): rules differ from New's", i, j)
			}
		}
	}
	base, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := base.With(Config{Settings: events.RedactionSettings{ExtraRules: []events.RedactionRule{{Name: "broken", Regex: `(`}}}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("With of a broken rule: %v, want ErrInvalidConfig", err)
	}
}
