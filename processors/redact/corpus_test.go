package redact

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The secrets corpus lives in the shared folder beside the repository
// (shared/corpora/secrets.jsonl, see its README.md). The test is skipped
// when it is not there. Run with -redact.misses to print every miss and
// false positive (the printed lines hold corpus secrets: debugging only).
var showMisses = flag.Bool("redact.misses", false, "print corpus misses and false positives")

const corpusRel = "../../../shared/corpora/secrets.jsonl"

type corpusLine struct {
	Text   string  `json:"text"`
	Secret *string `json:"secret"`
	Kind   string  `json:"kind"`
	Expect string  `json:"expect"`
}

func TestCorpusSecrets(t *testing.T) {
	path := os.Getenv("VIGIL_SECRETS_CORPUS")
	if path == "" {
		path = filepath.FromSlash(corpusRel)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("secrets corpus not found at %s (set VIGIL_SECRETS_CORPUS): %v", path, err)
	}
	defer f.Close()
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var pos, caught, neg, flagged int
	byKind := map[string][2]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
		var l corpusLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s line %d: %v", path, n, err)
		}
		out, fs := r.RedactString(l.Text)
		switch l.Expect {
		case "secret":
			if l.Secret == nil {
				t.Fatalf("%s line %d: a secret line without a secret", path, n)
			}
			pos++
			k := byKind[l.Kind]
			k[0]++
			if !strings.Contains(out, *l.Secret) {
				caught++
				k[1]++
			} else if *showMisses {
				t.Logf("MISS line %d [%s]: %q -> %q %v", n, l.Kind, l.Text, out, fs)
			}
			byKind[l.Kind] = k
		case "clean":
			neg++
			if len(fs) > 0 {
				flagged++
				if *showMisses {
					t.Logf("FP line %d [%s]: %q -> %q", n, l.Kind, l.Text, out)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if pos == 0 || neg == 0 {
		t.Fatalf("corpus %s has %d secret and %d clean lines; want both", path, pos, neg)
	}
	recall := float64(caught) / float64(pos)
	fp := float64(flagged) / float64(neg)
	t.Logf("secrets corpus: recall %.2f%% (%d/%d secrets fully removed), false positives %.2f%% (%d/%d clean lines)",
		100*recall, caught, pos, 100*fp, flagged, neg)
	if *showMisses {
		for k, v := range byKind {
			if v[0] != v[1] {
				t.Logf("kind %s: %d/%d", k, v[1], v[0])
			}
		}
	}
	if recall < 0.98 {
		t.Errorf("recall %.2f%% < 98%%", 100*recall)
	}
	if fp > 0.02 {
		t.Errorf("false positives %.2f%% > 2%%", 100*fp)
	}
}
